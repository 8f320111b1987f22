"""Periodic deletion: forget what the last period never (or hardly) used."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import register_part
from solar_core.basics.validation import check_k, check_nonnegative_int
from solar_core.policies.admission.base import reader_of
from solar_core.policies.deletion.base import DeletionPolicy, Slots
from solar_core.policies.eviction.base import grow_array


@register_part
class PeriodicDeletion(DeletionPolicy):
    """Every ``window`` steps, delete the items retrieved at most ``alpha`` times in the last
    ``window`` steps, among those stored for at least ``window`` steps.

    This is the study's ``phi_per``, ``fr_t - fr_t' <= alpha`` with ``t' = t - window``. It is a
    forgetting curve that looks at popularity only, never at quality. The memory can then hold
    at most about ``alpha * window * k`` old items. The study's RegAgent setting is
    ``window=500, alpha=0``.

    >>> from solar_core import SolarMemory
    >>> m = SolarMemory("fifo", capacity=None, dim=2, deletion=PeriodicDeletion(window=2))
    >>> a = m.add("used", embedding=[1, 0]).item_id
    >>> b = m.add("unused", embedding=[0, 1]).item_id
    >>> _ = m.retrieve(embedding=[1, 0.1], k=1)
    >>> m.add("third", embedding=[1, 1]).deleted      # step 3: the first sweep after step 2
    ()
    >>> _ = m.retrieve(embedding=[1, 0.1], k=1)
    >>> m.add("fourth", embedding=[-1, 0]).deleted     # step 4: "unused" had 2 steps, no use
    (('m2', 'periodic: retrieved 0 times in the last 2 steps (alpha 0)'),)
    """

    name = "periodic"

    def __init__(self, window: int = 500, alpha: int = 0) -> None:
        super().__init__()
        self.window = check_k(window, "window")
        self.alpha = check_nonnegative_int(alpha, "alpha")
        self._count: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # retrievals, ever
        self._mark: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # count at last sweep
        self._born: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)  # step stored

    def reserve(self, slots: int) -> None:
        self._count = grow_array(self._count, slots, 0)
        self._mark = grow_array(self._mark, slots, 0)
        self._born = grow_array(self._born, slots, 0)

    def check_invariants(self) -> None:
        if min(len(a) for a in (self._count, self._mark, self._born)) < self.store.slots:
            raise AssertionError(f"{type(self).__name__}: per-slot arrays shorter than the store")

    def on_insert(self, slot: int, step: int) -> None:
        self._count[slot] = 0
        self._mark[slot] = 0
        self._born[slot] = step

    def on_retrieve(self, slots: Slots, step: int) -> None:
        for slot in slots.tolist():
            self._count[slot] += 1

    def sweep(self, step: int) -> list[tuple[int, str]]:
        if step % self.window:
            return []
        active = self.store.active_slots()
        recent = self._count[active] - self._mark[active]
        old = step - self._born[active] >= self.window
        doomed = active[old & (recent <= self.alpha)]
        out = [
            (
                int(slot),
                f"periodic: retrieved {int(self._count[slot] - self._mark[slot])} times in the "
                f"last {self.window} steps (alpha {self.alpha})",
            )
            for slot in doomed.tolist()
        ]
        self._mark[active] = self._count[active]
        return out

    def clear(self) -> None:
        self._count[:] = 0
        self._mark[:] = 0
        self._born[:] = 0

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"retrievals": float(self._count[slot])}

    # -- explicit state (see solar_core.basics.state) ----------------------------------------------
    def params(self) -> dict[str, Any]:
        return {"window": self.window, "alpha": self.alpha}

    def state(self) -> dict[str, Any]:
        """Per slot, for the store's first ``high_water`` slots (int64): ``count``
        (retrievals since stored), ``mark`` (``count`` at the last sweep) and ``born`` (the
        step it was stored at)."""
        high = 0 if self._store is None else self._store.high_water
        return {
            "count": self._count[:high].copy(),
            "mark": self._mark[:high].copy(),
            "born": self._born[:high].copy(),
        }

    def checked_state(self, state: Mapping[str, Any]) -> Callable[[], None]:
        store = self.store
        reader = reader_of(self, state)
        high, slots = store.high_water, store.slots
        count = reader.array("count", np.int64, (high,), lo=0)
        mark = reader.array("mark", np.int64, (high,), lo=0)
        born = reader.array("born", np.int64, (high,), lo=0)
        reader.done()
        if (mark > count).any():  # a mark is a count once reached; counts only grow
            raise reader.fail("mark exceeds count (retrievals at the last sweep > retrievals)")

        def assign() -> None:
            self._count = grow_array(count, slots, 0)
            self._mark = grow_array(mark, slots, 0)
            self._born = grow_array(born, slots, 0)

        return assign
