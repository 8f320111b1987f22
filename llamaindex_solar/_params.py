"""The LlamaIndex adapters' memory parameters: ``solar_core``'s, plus LlamaIndex embeddings."""

from __future__ import annotations

from solar_core.adapter_params import MemoryParams

from .embeddings import to_embedder


class SolarParams(MemoryParams):
    """``memory=`` or ``policy``/``capacity``/``embedder``/``seed``; ``embedder`` may also be any
    LlamaIndex ``BaseEmbedding``."""

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        return to_embedder(embedder)
