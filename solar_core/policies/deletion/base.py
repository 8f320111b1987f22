"""The deletion-policy interface: hooks in, a list of items to delete out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import numpy.typing as npt

from solar_core.policies.admission.base import StagedState

if TYPE_CHECKING:
    from solar_core.retrieval.item_table import ItemTable

Slots = npt.NDArray[np.int64]


class DeletionPolicy(StagedState, ABC):
    """Decides, after each step, which stored items to delete.

    The memory calls the hooks as it calls an eviction policy's: :meth:`on_insert`,
    :meth:`on_remove` (after any removal, its own included), :meth:`on_retrieve` and
    :meth:`on_feedback` (``score`` is the step's quality in [0, 1]). It calls :meth:`sweep` at the
    end of every ``add``, and deletes the slots returned, each with its reason; the step's
    :class:`~solar_core.Decision` lists them in ``deleted``.

    Its explicit state (:class:`~solar_core.policies.admission.base.StagedState`): per-slot arrays
    hold the store's first ``high_water`` slots; ``load_state`` runs on a policy bound to a
    store holding the same items, and makes them as long as the store's slots.
    """

    name: ClassVar[str] = "base"

    def __init__(self) -> None:
        self._store: ItemTable | None = None

    def bind(self, store: ItemTable) -> None:
        """Attach to ``store`` (one memory per policy object)."""
        if self._store is not None and self._store is not store:
            raise ValueError(
                f"this {type(self).__name__} already serves another memory: create one per memory"
            )
        self._store = store
        self.reserve(store.slots)

    @property
    def bound(self) -> bool:
        """Whether a memory already uses this policy."""
        return self._store is not None

    @property
    def store(self) -> ItemTable:
        if self._store is None:
            raise RuntimeError(f"{type(self).__name__} is not bound to a memory")
        return self._store

    def reserve(self, slots: int) -> None:
        """Make per-slot state hold at least ``slots`` slots."""

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if its state cannot serve its memory's slots."""

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

    def describe(self, slot: int) -> Mapping[str, float]:
        """What the policy knows of the item in ``slot``."""
        return {}
