"""Any LangChain :class:`~langchain_core.embeddings.Embeddings` as a SOLAR embedder."""

from __future__ import annotations

from langchain_core.embeddings import Embeddings

from solar_core.integrations.wrapped_embedder import WrappedEmbedder


class LangChainEmbedder(WrappedEmbedder):
    """Wraps a LangChain ``Embeddings`` into ``solar_core``'s ``Embedder`` protocol.

    Stored experiences are embedded with ``embed_documents`` and retrieval queries with
    ``embed_query``, so asymmetric models (query/passage instructions) work as intended. The memory
    normalises the vectors, so the model need not.

    Args:
        embeddings: the LangChain embeddings model.
        dim: its output dimension; when omitted it is measured once with one ``embed_query`` call.

    You rarely build one yourself: every adapter accepts an ``Embeddings`` as ``embedder=`` and
    wraps it.

    Example:
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> embedder = LangChainEmbedder(DeterministicFakeEmbedding(size=8))
        >>> embedder.dim, embedder.embed(["a", "b"]).shape
        (8, (2, 8))
    """

    model_attribute = "embeddings"

    def __init__(self, embeddings: Embeddings, dim: int | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            raise TypeError(
                f"embeddings must be a langchain_core Embeddings, got {type(embeddings).__name__}"
            )
        self.embeddings = embeddings
        super().__init__(dim)

    def _documents(self, texts: list[str]) -> list[list[float]]:
        return self.embeddings.embed_documents(texts)

    def _query(self, text: str) -> list[float]:
        return self.embeddings.embed_query(text)


def to_embedder(embedder: object) -> object:
    """``embedder=`` as ``solar_core`` understands it: LangChain ``Embeddings`` get wrapped."""
    if isinstance(embedder, Embeddings):
        return LangChainEmbedder(embedder)
    return embedder
