"""Any LlamaIndex ``BaseEmbedding`` as a SOLAR embedder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from llama_index.core.base.embeddings.base import BaseEmbedding

from solar_core.salience import model_name_of


class LlamaIndexEmbedder:
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

    def __init__(self, embed_model: BaseEmbedding, dim: int | None = None) -> None:
        if not isinstance(embed_model, BaseEmbedding):
            raise TypeError(
                f"embed_model must be a LlamaIndex BaseEmbedding, got {type(embed_model).__name__}"
            )
        self.embed_model = embed_model
        self._dim = dim if dim is not None else len(embed_model.get_query_embedding("probe"))

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def model_name(self) -> str | None:
        """The wrapped model's name (``HuggingFaceEmbedding.model_name``), for messages."""
        return model_name_of(self.embed_model)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = self.embed_model.get_text_embedding_batch(list(texts))
        return np.asarray(vectors, dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vectors = [self.embed_model.get_query_embedding(t) for t in texts]
        return np.asarray(vectors, dtype=np.float32)

    def __repr__(self) -> str:
        return f"LlamaIndexEmbedder({type(self.embed_model).__name__}, dim={self._dim})"


def to_embedder(embedder: object) -> object:
    """``embedder=`` as ``solar_core`` understands it: LlamaIndex ``BaseEmbedding`` gets wrapped."""
    if isinstance(embedder, BaseEmbedding):
        return LlamaIndexEmbedder(embedder)
    return embedder
