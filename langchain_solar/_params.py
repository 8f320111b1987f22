"""The LangChain adapters' memory parameters: ``solar_core``'s, plus LangChain ``Embeddings``."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from solar_core import CHAT_POLICY, SolarMemory
from solar_core.integrations.params import MemoryParams

from .embeddings import to_embedder


class SolarParams(MemoryParams, BaseModel):
    """``memory=`` or ``policy``/``capacity``/``embedder``/``seed``/``retrieval``/``min_score``;
    ``embedder`` may also be any LangChain ``Embeddings``."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    memory: SolarMemory = Field(default=None, exclude=True)  # type: ignore[assignment]
    """The SOLAR memory."""

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        return to_embedder(embedder)


class SolarChatParams(SolarParams):
    """:class:`SolarParams` of a chat memory: ``policy=None`` is
    :data:`~solar_core.policies.presets.CHAT_POLICY`; ``extractor=`` and ``extract=`` are
    building parameters too (:data:`~solar_core.integrations.params.EXTRACT_DEFAULTS`)."""

    default_policy: ClassVar[str] = CHAT_POLICY
    extracts: ClassVar[bool] = True  # extractor= and extract= build the memory too
