"""An embedder wrapper that embeds each distinct text once."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from solar_core.embedders.embedder import Embedder


class CachedEmbedder:
    """Memoises another :class:`~solar_core.Embedder`, text by text."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self._cache: dict[str, npt.NDArray[np.float32]] = {}
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self.inner.dim

    def __len__(self) -> int:
        return len(self._cache)

    def prime(self, texts: Iterable[str]) -> None:
        """Embed every not-yet-cached text of ``texts`` in one batched call."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            rows = np.asarray(self.inner.embed(missing), dtype=np.float32)
            with self._lock:
                self._cache.update(zip(missing, rows, strict=True))

    def __getstate__(self) -> dict[str, object]:
        return {"inner": self.inner, "_cache": dict(self._cache)}  # a lock cannot be pickled

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.prime(texts)
        with self._lock:
            return np.stack([self._cache[t] for t in texts]).astype(np.float32, copy=False)
