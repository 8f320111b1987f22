"""The LangChain adapters' memory parameters: ``solar_core``'s, plus LangChain ``Embeddings``."""

from __future__ import annotations

from typing import Any, ClassVar

from solar_core import CHAT_POLICY, SolarMemory
from solar_core.fusion import DEFAULT_RETRIEVAL
from solar_core.integrations.params import MemoryParams
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore, Scope

from .embeddings import to_embedder


class SolarParams(MemoryParams):
    """``memory=`` or ``policy``/``capacity``/``embedder``/``seed``/``retrieval``/``min_score``;
    ``embedder`` may also be any LangChain ``Embeddings``."""

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        return to_embedder(embedder)


class SolarChatParams(SolarParams):
    """:class:`SolarParams` of a chat memory: ``policy=None`` is
    :data:`~solar_core.presets.CHAT_POLICY`."""

    default_policy: ClassVar[str] = CHAT_POLICY


def build_memory(
    policy: str | None = None,
    capacity: int | None = DEFAULT_CAPACITY,
    embedder: object = None,
    seed: int | None = None,
    retrieval: str = DEFAULT_RETRIEVAL,
    min_score: float | str | None = "auto",
    *,
    chat: bool = False,
) -> SolarMemory:
    """A new memory; ``embedder`` may also be a LangChain ``Embeddings``; ``chat``: a chat
    adapter's (``policy=None`` is the chat policy)."""
    params = SolarChatParams if chat else SolarParams
    return params.build_memory(policy, capacity, embedder, seed, retrieval, min_score)


def open_store(
    store: object, build: dict[str, Any], *, chat: bool = False
) -> tuple[MemoryStore, bool]:
    """An adapter's ``store=`` (see
    :meth:`~solar_core.integrations.params.MemoryParams.open_store`); ``embedder`` may be a
    framework embedding model; ``chat``: new scopes of a store it opens get the chat policy."""
    return (SolarChatParams if chat else SolarParams).open_store(store, build)


def existing_memory(store: MemoryStore, scope: Scope) -> SolarMemory | None:
    """``scope``'s memory if it exists (:meth:`MemoryStore.existing`): never creates it."""
    return store.existing(scope)
