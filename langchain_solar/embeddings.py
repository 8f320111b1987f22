"""Any LangChain :class:`~langchain_core.embeddings.Embeddings` as a SOLAR embedder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings

from solar_core.salience import model_name_of


class LangChainEmbedder:
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

    def __init__(self, embeddings: Embeddings, dim: int | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            raise TypeError(
                f"embeddings must be a langchain_core Embeddings, got {type(embeddings).__name__}"
            )
        self.embeddings = embeddings
        self._dim = dim if dim is not None else len(embeddings.embed_query("dimension probe"))

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def model_name(self) -> str | None:
        """The wrapped model's name when it says it (``HuggingFaceEmbeddings.model_name``, an
        OpenAI-style ``model``), for messages."""
        return model_name_of(self.embeddings)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self.embeddings.embed_documents(list(texts)), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray([self.embeddings.embed_query(t) for t in texts], dtype=np.float32)

    def __repr__(self) -> str:
        return f"LangChainEmbedder({type(self.embeddings).__name__}, dim={self._dim})"


def to_embedder(embedder: object) -> object:
    """``embedder=`` as ``solar_core`` understands it: LangChain ``Embeddings`` get wrapped."""
    if isinstance(embedder, Embeddings):
        return LangChainEmbedder(embedder)
    return embedder
