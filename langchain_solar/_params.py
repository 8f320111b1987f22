"""The LangChain adapters' memory parameters: ``solar_core``'s, plus LangChain ``Embeddings``."""

from __future__ import annotations

from typing import ClassVar

from solar_core import CHAT_POLICY
from solar_core.integrations.params import MemoryParams

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
