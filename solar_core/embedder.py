"""The :class:`Embedder` protocol and the resolution of ``embedder=`` arguments."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-norm float32 rows.

    ``embed(texts)`` returns an array of shape ``(len(texts), dim)``. Rows need not be normalised:
    the memory normalises and validates everything it is given. An embedder for an asymmetric
    model (one that encodes search queries differently from documents) may also define
    ``embed_queries(texts)``, with the same contract: retrievals then use it.
    """

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


def resolve_embedder(embedder: object) -> Embedder:
    """Turn ``None`` / ``"minilm"`` / ``"hash"`` / an :class:`Embedder` into an embedder.

    >>> resolve_embedder("hash").dim
    256
    >>> resolve_embedder("bert")
    Traceback (most recent call last):
    ...
    ValueError: unknown embedder 'bert'; use 'minilm', 'hash' or an object with dim and embed()
    """
    if embedder is None or embedder == "minilm":
        from .minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    if embedder == "hash":
        from .hash_embedder import HashEmbedder

        return HashEmbedder()
    if isinstance(embedder, str):
        raise ValueError(
            f"unknown embedder {embedder!r}; use 'minilm', 'hash' or an object with dim and embed()"
        )
    if isinstance(embedder, Embedder):
        dim = embedder.dim
        if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
            raise ValueError(f"embedder.dim must be a positive int, got {dim!r}")
        return embedder
    raise TypeError(
        f"embedder must be None, 'minilm', 'hash' or an Embedder (dim + embed()), "
        f"got {type(embedder).__name__}"
    )
