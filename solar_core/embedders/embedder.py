"""The :class:`Embedder` protocol and the resolution of ``embedder=`` arguments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """``embed(texts)``: float32 rows of shape ``(len(texts), dim)`` (the memory normalises and
    checks them); an asymmetric model may also define ``embed_queries(texts)`` for retrievals."""

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


def resolve_embedder(embedder: object) -> Embedder:
    """``None`` (static), a name, an :class:`Embedder` or a framework's model as an embedder."""
    if embedder is None or embedder == "static":
        from solar_core.embedders.static_embedder import StaticEmbedder

        return StaticEmbedder()
    if embedder == "minilm":
        from solar_core.embedders.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if embedder == "hash":
        from solar_core.embedders.hash_embedder import HashEmbedder

        return HashEmbedder()
    if isinstance(embedder, str):
        raise ValueError(
            f"unknown embedder {embedder!r}; use 'static', 'minilm', 'hash' or an object with "
            "dim and embed()"
        )
    if isinstance(embedder, Embedder):
        dim = embedder.dim
        if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
            raise ValueError(f"embedder.dim must be a positive int, got {dim!r}")
        return embedder
    framework = FrameworkEmbedder.wrap(embedder)
    if framework is not None:
        return framework
    raise TypeError(
        "embedder must be None, 'static', 'minilm', 'hash', an Embedder (dim + embed()), a "
        f"LangChain Embeddings or a LlamaIndex BaseEmbedding; got {type(embedder).__name__}"
    )


#: (documents batch, single query) of LangChain's ``Embeddings``, LlamaIndex's ``BaseEmbedding``
_PROTOCOLS = (
    ("embed_documents", "embed_query"),
    ("get_text_embedding_batch", "get_query_embedding"),
)


class FrameworkEmbedder:
    """A LangChain ``Embeddings`` or LlamaIndex ``BaseEmbedding`` as an :class:`Embedder`,
    recognised by its methods (:data:`_PROTOCOLS`); the dimension is measured with one query.

    >>> class Letters:  # any object with LangChain's two methods
    ...     def embed_query(self, text): return [text.count("a"), text.count("b")]
    ...     def embed_documents(self, texts): return [self.embed_query(t) for t in texts]
    >>> embedder = resolve_embedder(Letters())
    >>> embedder.dim, embedder.embed(["ab", "bb"]).tolist()
    (2, [[1.0, 1.0], [0.0, 2.0]])
    """

    def __init__(self, model: object, documents: str, query: str) -> None:
        self.model = model
        self._documents = getattr(model, documents)
        self._query = getattr(model, query)
        probe = np.asarray(self._query("dimension probe"), dtype=np.float32)
        if probe.ndim != 1 or len(probe) < 1:
            raise ValueError(
                f"{type(model).__name__}.{query} must return one vector, got shape {probe.shape}"
            )
        self._dim = len(probe)

    @classmethod
    def wrap(cls, model: object) -> FrameworkEmbedder | None:
        """``model`` wrapped if it speaks one of the frameworks' protocols, else ``None``."""
        for documents, query in _PROTOCOLS:
            if callable(getattr(model, documents, None)) and callable(getattr(model, query, None)):
                return cls(model, documents, query)
        return None

    @property
    def dim(self) -> int:
        return self._dim

    # No reshape: the memory's own check reports a wrong shape as returned.
    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self._documents(list(texts)), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray([self._query(t) for t in texts], dtype=np.float32)

    def __repr__(self) -> str:
        return f"FrameworkEmbedder({type(self.model).__name__}, dim={self._dim})"
