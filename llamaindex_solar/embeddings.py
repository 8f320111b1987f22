"""Any LlamaIndex ``BaseEmbedding`` as a SOLAR embedder."""

from __future__ import annotations

from llama_index.core.base.embeddings.base import BaseEmbedding

from solar_core.integrations.wrapped_embedder import WrappedEmbedder


class LlamaIndexEmbedder(WrappedEmbedder):
    """Wraps a LlamaIndex ``BaseEmbedding`` into ``solar_core``'s ``Embedder`` protocol.

    Stored experiences are embedded with ``get_text_embedding_batch`` and retrieval queries with
    ``get_query_embedding``, so models with query instructions work as intended. Pass the model
    explicitly: LlamaIndex's ``Settings.embed_model`` default needs the OpenAI packages.

    Args:
        embed_model: the LlamaIndex embedding model.
        dim: its output dimension; when omitted it is measured once with one query embedding.

    Example:
        >>> from llama_index.core.embeddings import MockEmbedding
        >>> embedder = LlamaIndexEmbedder(MockEmbedding(embed_dim=8))
        >>> embedder.dim, embedder.embed(["a", "b"]).shape
        (8, (2, 8))
    """

    model_attribute = "embed_model"

    def __init__(self, embed_model: BaseEmbedding, dim: int | None = None) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            raise TypeError(
                f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}"
            )
        self.embed_model = embed_model
        super().__init__(dim)

    def _documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_model.get_text_embedding_batch(texts)

    def _query(self, text: str) -> list[float]:
        return self.embed_model.get_query_embedding(text)


def to_embedder(embedder: object) -> object:
    """``embedder=`` as ``solar_core`` understands it: LlamaIndex ``BaseEmbedding`` gets wrapped."""
    if isinstance(embedder, BaseEmbedding):
        return LlamaIndexEmbedder(embedder)
    return embedder
