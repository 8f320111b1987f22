"""The deletion-policy interface: hooks in, a list of items to delete out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

from solar_core.policies.eviction.base import Slots, SlotState

if TYPE_CHECKING:
    from solar_core.retrieval.item_table import ItemTable


class DeletionPolicy(SlotState, ABC):
    """Decides, after each step, which stored items to delete: the memory calls the hooks as
    an eviction policy's, and :meth:`sweep` at the end of every ``add``."""

    name: ClassVar[str] = "base"

    def bind(self, store: ItemTable) -> None:
        """Attach to ``store`` (one memory per policy object)."""
        self._attach(store)

    def on_insert(self, slot: int, step: int) -> None:
        """``slot`` now holds a new item, stored at ``step``."""

    def on_remove(self, slot: int) -> None:
        """``slot`` was emptied (evicted, removed or deleted)."""

    def on_retrieve(self, slots: Slots, step: int) -> None:
        """A recorded retrieval at ``step`` returned ``slots``."""

    def on_feedback(self, slots: Slots, score: float) -> None:
        """The retrieval that returned ``slots`` informed a step of quality ``score``."""

    @abstractmethod
    def sweep(self, step: int) -> list[tuple[int, str]]:
        """The slots to delete now, each with the reason (in deletion order)."""

    def clear(self) -> None:
        """Forget every item."""
        self._empty(slice(None))

    def describe(self, slot: int) -> Mapping[str, float]:
        """What the policy knows of the item in ``slot``."""
        return {}
