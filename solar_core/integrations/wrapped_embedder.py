"""A framework's embedding model as ``solar_core``'s ``Embedder``: what the LangChain and
LlamaIndex wrappers share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from solar_core.policies.salience import model_name_of


class WrappedEmbedder(ABC):
    """Stored experiences are embedded with :meth:`_documents` and retrieval queries with
    :meth:`_query`, so asymmetric models (query and passage instructions) work as intended.
    ``dim`` is measured with one query when not given. A subclass sets its model's attribute
    (:attr:`model_attribute`, whose name shows in messages) before calling ``__init__``."""

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
        """The wrapped model's name when it says it, for messages."""
        return model_name_of(getattr(self, self.model_attribute))

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray(self._documents(list(texts)), dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.asarray([self._query(t) for t in texts], dtype=np.float32)

    def __repr__(self) -> str:
        model = type(getattr(self, self.model_attribute)).__name__
        return f"{type(self).__name__}({model}, dim={self._dim})"
