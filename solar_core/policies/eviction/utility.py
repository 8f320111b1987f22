"""Utility eviction: the study's capacity-bounded deletion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from solar_core.basics.state import MOST_COUNT, StateReader, register_part
from solar_core.basics.validation import check_positive, check_score
from solar_core.policies.eviction.base import (
    F64,
    EvictionPolicy,
    Rows,
    Selection,
    Slots,
    Victim,
    lowest,
)


@register_part
class UtilityEviction(EvictionPolicy):
    """Evict the lowest utility, ``(prior * strength + sum of ratings) / (strength + uses)``:
    the mean quality of the rated steps it informed (the oldest insert first among ties; the
    experience-following study's capacity bound).

    >>> from solar_core import SolarMemory
    >>> m = SolarMemory(eviction=UtilityEviction(), capacity=2, dim=2)
    >>> good, bad = m.add("good", embedding=[1, 0]).item_id, m.add("bad", embedding=[0, 1]).item_id
    >>> _ = m.retrieve(embedding=[0, 1], k=1); m.feedback(score=0.0)
    >>> m.add("new", embedding=[1, 1]).evicted == bad
    True
    """

    name = "utility"
    param_names = "prior strength"
    #: ratings' sum, their number, the insert serial (a float, as the tie-break adds it)
    rows = {
        "sum": Rows("_sum", np.float64, 0.0, MOST_COUNT),
        "uses": Rows("_uses", np.float64, 0.0, MOST_COUNT),
        "serial": Rows("_serial", np.float64, 1.0, "seq"),
    }
    _sum: F64
    _uses: F64
    _serial: F64
    counters = ("seq",)

    def __init__(self, prior: float = 0.5, strength: float = 1.0) -> None:
        super().__init__()
        check_positive(strength=strength)
        self.prior = check_score(prior, "prior")
        self.strength = float(strength)
        self._seq = 0

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        total, uses, serial = rows["_sum"], rows["_uses"], rows["_serial"]
        # A count of ratings, each scored in [0, 1]; serials are whole sequence numbers
        if (total > uses).any() or (uses != np.floor(uses)).any():
            raise reader.fail("uses must be whole numbers, and sum at most uses")
        if (serial != np.floor(serial)).any():
            raise reader.fail("serial must hold whole sequence numbers")
        return {}

    def on_insert(self, slot: int, step: int) -> None:
        self._seq += 1
        self._sum[slot] = 0.0
        self._uses[slot] = 0.0
        self._serial[slot] = self._seq

    def on_feedback(self, slots: Slots, reward: float) -> None:
        for slot in slots.tolist():
            self._sum[slot] += reward
            self._uses[slot] += 1.0

    def utility(self, slots: Slots | slice) -> F64:
        out: F64 = (self.prior * self.strength + self._sum[slots]) / (
            self.strength + self._uses[slots]
        )
        return out

    def _victim(self, step: int, slots: Selection) -> Victim:
        # Ties by insert order: nudges far below any utility difference (1 / (strength + uses)).
        scores = self.utility(slots) + 1e-12 * self._serial[slots]
        return lowest(scores, slots)

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"utility": float(self.utility(np.asarray([slot]))[0]), "rated": self._uses[slot]}
