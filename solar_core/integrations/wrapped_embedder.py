"""A framework's embedding model as ``solar_core``'s ``Embedder``: what the LangChain and
LlamaIndex wrappers share. A wrapper says how its framework embeds stored texts and a query,
and which attribute holds the model (its name shows in fingerprints and messages).

>>> class Letters(WrappedEmbedder):
...     '''Each text as the counts of a, b and c in it.'''
...     model_attribute = "counter"
...     def __init__(self) -> None:
...         self.counter = str.count
...         super().__init__(None)
...     def _documents(self, texts):
...         return [[t.count(ch) for ch in "abc"] for t in texts]
...     def _query(self, text):
...         return self._documents([text])[0]
>>> embedder = Letters()
>>> embedder.dim, embedder.embed(["abc", "cc"]).tolist()
(3, [[1.0, 1.0, 1.0], [0.0, 0.0, 2.0]])
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from solar_core.policies.salience import model_name_of


class WrappedEmbedder(ABC):
    """Stored experiences are embedded with :meth:`_documents` and retrieval queries with
    :meth:`_query`, so asymmetric models (query and passage instructions) work as intended;
    the memory normalises the vectors, so the model need not. ``dim`` is measured with one query
    when not given. A subclass sets the model's attribute before calling ``__init__``."""

    #: the attribute that holds the framework's model
    model_attribute: ClassVar[str]

    def __init__(self, dim: int | None) -> None:
        self._dim = dim if dim is not None else len(self._query("dimension probe"))

    @abstractmethod
    def _documents(self, texts: list[str]) -> Sequence[Sequence[float]]:
        """The framework's vectors of stored texts."""

    @abstractmethod
    def _query(self, text: str) -> Sequence[float]:
        """The framework's vector of a query."""

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def model_name(self) -> str | None:
        """The wrapped model's name when it says it (``HuggingFaceEmbeddings.model_name``, an
        OpenAI-style ``model``), for messages."""
        return model_name_of(getattr(self, self.model_attribute))

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self._documents(list(texts)), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray([self._query(t) for t in texts], dtype=np.float32)

    def __repr__(self) -> str:
        model = type(getattr(self, self.model_attribute)).__name__
        return f"{type(self).__name__}({model}, dim={self._dim})"
