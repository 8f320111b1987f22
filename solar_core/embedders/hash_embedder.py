"""A deterministic, dependency-free embedder for tests and offline examples."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

_TOKEN = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Signed feature hashing of lower-cased words and word bigrams into ``dim`` buckets (blake2b:
    the same vector on every machine). No notion of synonyms: for tests, not quality.

    >>> emb = HashEmbedder(dim=64)
    >>> v = emb.embed(["retry on 429", "retry on 429 errors", "bake bread"])
    >>> v.shape, v.dtype.name
    ((3, 64), 'float32')
    >>> bool(v[0] @ v[1] > 0.5 > abs(v[0] @ v[2]))
    True
    """

    def __init__(self, dim: int = 256) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ValueError(f"dim must be an int >= 8, got {dim!r}")
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _TOKEN.findall(text.lower())
            bigrams = [f"{a} {b}" for a, b in zip(words, words[1:], strict=False)]
            for feature in words + bigrams if words else [text]:  # never a zero row
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self._dim
                sign = 1.0 if digest[4] & 1 else -1.0
                out[row, bucket] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out

    def __repr__(self) -> str:
        return f"HashEmbedder(dim={self._dim})"
