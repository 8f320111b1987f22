"""Periodic deletion: forget what the last period never (or hardly) used."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import StateReader, register_part
from solar_core.basics.validation import check_k, check_nonnegative_int
from solar_core.policies.deletion.base import DeletionPolicy
from solar_core.policies.eviction.base import Rows, Slots


@register_part
class PeriodicDeletion(DeletionPolicy):
    """Every ``window`` steps, delete the items retrieved at most ``alpha`` times in the last
    ``window`` steps, among those stored for at least ``window`` steps (the study's
    ``phi_per``).

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
    param_names = "window alpha"
    zeroed = False  # an empty slot's rows are stored as they are
    #: retrievals since stored, ``count`` at the last sweep, the step it was stored at
    rows = {
        "count": Rows("_count", np.int64, 0),
        "mark": Rows("_mark", np.int64, 0),
        "born": Rows("_born", np.int64, 0),
    }
    _count: npt.NDArray[np.int64]
    _mark: npt.NDArray[np.int64]
    _born: npt.NDArray[np.int64]

    def __init__(self, window: int = 500, alpha: int = 0) -> None:
        super().__init__()
        self.window = check_k(window, "window")
        self.alpha = check_nonnegative_int(alpha, "alpha")

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        if (rows["_mark"] > rows["_count"]).any():  # a mark is a count once reached
            raise reader.fail("mark exceeds count (retrievals at the last sweep > retrievals)")
        return {}

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

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"retrievals": float(self._count[slot])}
