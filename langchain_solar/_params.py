"""The LangChain adapters' memory parameters: ``solar_core``'s, plus LangChain ``Embeddings``."""

from __future__ import annotations

from solar_core import SolarMemory
from solar_core.adapter_params import MemoryParams

from .embeddings import to_embedder


class SolarParams(MemoryParams):
    """``memory=`` or ``policy``/``capacity``/``embedder``/``seed``; ``embedder`` may also be any
    LangChain ``Embeddings``."""

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        return to_embedder(embedder)


def build_memory(
    policy: str = "solar",
    capacity: int | None = 50,
    embedder: object = None,
    seed: int | None = None,
) -> SolarMemory:
    """A new memory; ``embedder`` may also be a LangChain ``Embeddings``."""
    return SolarParams.build_memory(policy, capacity, embedder, seed)
