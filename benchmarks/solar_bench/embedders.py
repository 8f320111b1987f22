"""The text embedders a benchmark can run with (``--embedder``), each under its cache name.

``static`` is the library's default (torch-free); ``minilm`` needs the ``minilm`` extra;
``hash`` is meaningless but instant (smoke tests). The others are the candidates the default was
chosen from (``benchmarks/embedder_choice.py``): ``wordllama`` (its wheel ships its weights) and
``model2vec:FOLDER``, a static model distilled with ``model2vec`` and saved in FOLDER.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.embedders.embedder import Embedder

F32 = npt.NDArray[np.float32]
NAMES = ("static", "minilm", "hash", "wordllama", "model2vec:FOLDER")


class WordLlamaEmbedder:
    """WordLlama's ``l2_supercat`` (256-d) from the weights in its own wheel; nothing fetched."""

    def __init__(self, dim: int = 256) -> None:
        import wordllama
        from wordllama import WordLlama

        folder = Path(wordllama.__file__).parent
        self.model: Any = WordLlama.load(cache_dir=folder, dim=dim, disable_download=True)
        self._dim = dim

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> F32:
        return np.asarray(self.model.embed(list(texts), norm=True), dtype=np.float32)


class Model2VecEmbedder:
    """A ``model2vec`` static model saved in ``folder`` (through the ``model2vec`` package)."""

    def __init__(self, folder: str) -> None:
        from model2vec import StaticModel

        self.model: Any = StaticModel.from_pretrained(folder)
        self._dim = int(self.model.dim)

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> F32:
        return np.asarray(self.model.encode(list(texts), normalize=True), dtype=np.float32)


def embedder_for(name: str) -> tuple[Callable[[], Embedder], str]:
    """The factory of embedder ``name`` and the name its vectors are cached under.

    >>> embedder_for("hash")[1]
    'hash-384'
    >>> embedder_for("bert")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: unknown embedder 'bert'; use one of static, minilm, hash, wordllama, ...
    """
    if name == "minilm":
        from solar_core.embedders.minilm import MiniLMEmbedder

        return MiniLMEmbedder, "all-MiniLM-L6-v2"
    if name == "static":
        from solar_core.embedders.static_embedder import StaticEmbedder

        return StaticEmbedder, f"static-{StaticEmbedder.MODEL}"
    if name == "hash":
        from solar_core.embedders.hash_embedder import HashEmbedder

        return (lambda: HashEmbedder(dim=384)), "hash-384"
    if name == "wordllama":
        return WordLlamaEmbedder, "wordllama-l2-256"
    if name.startswith("model2vec:"):
        folder = name.split(":", 1)[1]
        return (lambda: Model2VecEmbedder(folder)), f"model2vec-{Path(folder).name}"
    raise ValueError(f"unknown embedder {name!r}; use one of {', '.join(NAMES)}")
