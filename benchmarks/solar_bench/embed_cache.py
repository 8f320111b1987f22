"""Embed each distinct text once and keep the vectors on disk, outside the repository.

The cache is one ``.npz`` per embedder (``<dir>/<name>.npz``: blake2b keys of the texts and their
float32 unit vectors). The folder is ``$SOLAR_BENCH_CACHE`` if set, else
``~/.cache/solar-memory``; ``--cache-dir`` overrides both.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from solar_core.embedders.embedder import Embedder

F32 = npt.NDArray[np.float32]
BATCH = 64


def default_cache_dir() -> Path:
    env = os.environ.get("SOLAR_BENCH_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "solar-memory"


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


class EmbeddingCache:
    """``vectors(texts)`` embeds only the texts not seen before (in batches of 64) and saves them.

    >>> import tempfile
    >>> from solar_core import HashEmbedder
    >>> folder = tempfile.mkdtemp()
    >>> cache = EmbeddingCache(lambda: HashEmbedder(dim=8), "hash-8", folder)
    >>> cache.vectors(["a", "b"])["a"].shape, cache.embedded
    ((8,), 2)
    >>> again = EmbeddingCache(lambda: HashEmbedder(dim=8), "hash-8", folder)
    >>> _ = again.vectors(["a", "b"]); again.embedded   # read from disk: nothing re-embedded
    0
    """

    def __init__(
        self, make_embedder: Callable[[], Embedder], name: str, folder: str | Path | None = None
    ) -> None:
        self.make_embedder = make_embedder  # called only if some text is missing (loading is slow)
        self.path = Path(folder if folder is not None else default_cache_dir()) / f"{name}.npz"
        self.embedded = 0
        self._store: dict[str, F32] = {}
        if self.path.exists():
            with np.load(self.path) as npz:
                self._store = dict(zip(npz["keys"].tolist(), npz["vectors"], strict=True))

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts that :meth:`vectors` would have to embed, in first-seen order."""
        return list(dict.fromkeys(t for t in texts if _key(t) not in self._store))

    def vectors(
        self, texts: Sequence[str], progress: Callable[[int], None] | None = None
    ) -> dict[str, F32]:
        """A vector for every text (from disk when known).

        ``progress(n)`` is called after each batch with the number of texts it embedded: a first
        run on real data embeds thousands of texts with a model, for most of a minute.
        """
        missing = self.missing(texts)
        if missing:
            embedder = self.make_embedder()
            for start in range(0, len(missing), BATCH):
                batch = missing[start : start + BATCH]
                rows = np.asarray(embedder.embed(batch), dtype=np.float32)
                for text, row in zip(batch, rows, strict=True):
                    self._store[_key(text)] = row
                if progress is not None:
                    progress(len(batch))
            self.embedded += len(missing)
            self._save()
        return {t: self._store[_key(t)] for t in texts}

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp.npz")
        keys = np.asarray(list(self._store))
        np.savez(tmp, keys=keys, vectors=np.stack(list(self._store.values())))
        os.replace(tmp, self.path)  # atomic: a crash never leaves a half-written cache


class LookupEmbedder:
    """Serves precomputed vectors as a SOLAR embedder: the adapter benchmarks give it to every
    memory, so a text is embedded once ever. A text that was not precomputed is a bench bug:
    it raises ``KeyError``.

    >>> lookup = LookupEmbedder({"a": np.array([1.0, 0.0], np.float32)})
    >>> lookup.dim, lookup.embed(["a"]).tolist()
    (2, [[1.0, 0.0]])
    """

    def __init__(self, vectors: dict[str, F32]) -> None:
        self.vectors = vectors
        self.dim = len(next(iter(vectors.values())))

    def embed(self, texts: Sequence[str]) -> F32:
        return np.stack([self.vectors[t] for t in texts])
