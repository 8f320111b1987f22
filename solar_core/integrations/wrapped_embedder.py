"""A framework's embedding model as an ``Embedder``: what the adapters' wrappers share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from solar_core.embedders.embedder import FrameworkEmbedder
from solar_core.policies.salience import model_name_of


class WrappedEmbedder(FrameworkEmbedder, ABC):
    """Stored texts go through :meth:`_documents`, queries through :meth:`_query`; ``dim`` is
    measured with one query when not given. A subclass sets :attr:`model_attribute` first."""

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
    def model_name(self) -> str | None:
        """The wrapped model's name when it says it, for messages."""
        return model_name_of(getattr(self, self.model_attribute))

    def __repr__(self) -> str:
        model = type(getattr(self, self.model_attribute)).__name__
        return f"{type(self).__name__}({model}, dim={self._dim})"
