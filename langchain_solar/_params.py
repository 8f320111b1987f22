"""The LangChain adapters' memory parameters: ``solar_core``'s, plus LangChain ``Embeddings``."""

from __future__ import annotations

from typing import Any

from solar_core import SolarMemory
from solar_core.integrations.params import MemoryParams
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore, Scope

from .embeddings import to_embedder


class SolarParams(MemoryParams):
    """``memory=`` or ``policy``/``capacity``/``embedder``/``seed``; ``embedder`` may also be any
    LangChain ``Embeddings``."""

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        return to_embedder(embedder)


def build_memory(
    policy: str | None = None,
    capacity: int | None = DEFAULT_CAPACITY,
    embedder: object = None,
    seed: int | None = None,
) -> SolarMemory:
    """A new memory; ``embedder`` may also be a LangChain ``Embeddings``."""
    return SolarParams.build_memory(policy, capacity, embedder, seed)


def open_store(store: object, build: dict[str, Any]) -> tuple[MemoryStore, bool]:
    """An adapter's ``store=`` (see
    :meth:`~solar_core.integrations.params.MemoryParams.open_store`); ``embedder`` may be a
    framework embedding model."""
    return SolarParams.open_store(store, build)


def existing_memory(store: MemoryStore, scope: Scope) -> SolarMemory | None:
    """``scope``'s memory if it exists (:meth:`MemoryStore.existing`): never creates it."""
    return store.existing(scope)
