"""History-based deletion: forget what keeps informing bad executions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import State, StateReader, register_part
from solar_core.basics.validation import check_nonnegative_int, check_score
from solar_core.policies.deletion.base import DeletionPolicy
from solar_core.policies.eviction.base import F64, Rows, Slots


@register_part
class HistoryDeletion(DeletionPolicy):
    """Delete an item once more than ``n`` rated steps have used it and their mean quality is
    at most ``beta`` (the study's ``phi_hist``).

    >>> from solar_core import SolarMemory
    >>> m = SolarMemory("fifo", capacity=None, dim=2, deletion=HistoryDeletion(n=1, beta=0.5))
    >>> bad = m.add("misleading", embedding=[1, 0]).item_id
    >>> for quality in (0.0, 0.2):
    ...     _ = m.retrieve(embedding=[1, 0], k=1)
    ...     m.feedback(score=quality)
    >>> m.add("next", embedding=[0, 1]).deleted
    (('m1', 'history: mean downstream quality 0.10 <= 0.5 over 2 uses'),)
    """

    name = "history"
    param_names = "n beta"
    zeroed = False  # an empty slot's rows are stored as they are
    #: the rated qualities of the steps that used it, and how many
    rows = {"sum": Rows("_sum", np.float64, 0.0), "uses": Rows("_uses", np.int64, 0)}
    _sum: F64
    _uses: npt.NDArray[np.int64]

    def __init__(self, n: int = 5, beta: float = 0.5) -> None:
        super().__init__()
        self.n = check_nonnegative_int(n, "n")
        self.beta = check_score(beta, "beta")
        self._dirty: set[int] = set()  # slots rated since the last sweep: the only candidates

    def _more_state(self) -> State:
        """``dirty``: the stored slots rated since the last sweep (sorted)."""
        return {"dirty": sorted(self._dirty)}

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        store = self.store
        dirty = reader.integers("dirty", 0, store.high_water - 1)
        if (rows["_sum"] > rows["_uses"]).any():  # each use adds a quality in [0, 1]
            raise reader.fail("sum exceeds uses (a slot's mean quality above 1)")
        if len(set(dirty)) != len(dirty):
            raise reader.fail("dirty names a slot twice")
        if dirty and not store.active_full[np.asarray(dirty, dtype=np.int64)].all():
            raise reader.fail("dirty names an empty slot (a removed item leaves it)")
        return {"_dirty": set(dirty)}

    def on_insert(self, slot: int, step: int) -> None:
        self._sum[slot] = 0.0
        self._uses[slot] = 0

    def on_remove(self, slot: int) -> None:
        self._dirty.discard(slot)

    def on_feedback(self, slots: Slots, score: float) -> None:
        for slot in slots.tolist():
            self._sum[slot] += score
            self._uses[slot] += 1
            self._dirty.add(slot)

    def sweep(self, step: int) -> list[tuple[int, str]]:
        if not self._dirty:
            return []
        out = []
        for slot in sorted(self._dirty):
            uses = int(self._uses[slot])
            mean = self.mean_quality(slot)
            if uses > self.n and mean is not None and mean <= self.beta:
                reason = f"history: mean downstream quality {mean:.2f} <= {self.beta:g}"
                out.append((slot, f"{reason} over {uses} uses"))
        self._dirty.clear()
        return out

    def clear(self) -> None:
        super().clear()
        self._dirty.clear()

    def mean_quality(self, slot: int) -> float | None:
        uses = int(self._uses[slot])
        return float(self._sum[slot]) / uses if uses else None

    def describe(self, slot: int) -> Mapping[str, float]:
        info = {"uses": float(self._uses[slot])}
        mean = self.mean_quality(slot)
        if mean is not None:
            info["mean_quality"] = mean
        return info
