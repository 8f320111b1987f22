"""Utility eviction: the study's capacity-bounded deletion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import MOST_COUNT, State, register_part
from solar_core.basics.validation import check_positive, check_score
from solar_core.policies.eviction.base import (
    EvictionPolicy,
    Selection,
    Slots,
    Victim,
    grow_array,
    lowest,
    plain,
    read_slot_rows,
    reader_of,
    slot_rows,
)


@register_part
class UtilityEviction(EvictionPolicy):
    """Evict the item whose past retrievals led to the worst steps.

    An item's utility is the mean quality of the rated steps it informed, with a Laplace prior:
    ``(prior * strength + sum of scores) / (strength + uses)``. A new item starts at ``prior``.
    The victim has the lowest utility, and the oldest insert goes first among ties. This is how
    the experience-following study bounds memory size: when full, "remove the single record of
    lowest utility". Compose it by hand:
    ``SolarMemory(eviction=UtilityEviction(), deletion=...)``.

    >>> from solar_core import SolarMemory
    >>> m = SolarMemory(eviction=UtilityEviction(), capacity=2, dim=2)
    >>> good, bad = m.add("good", embedding=[1, 0]).item_id, m.add("bad", embedding=[0, 1]).item_id
    >>> _ = m.retrieve(embedding=[0, 1], k=1); m.feedback(score=0.0)
    >>> m.add("new", embedding=[1, 1]).evicted == bad
    True
    """

    name = "utility"

    def __init__(self, prior: float = 0.5, strength: float = 1.0) -> None:
        super().__init__()
        check_positive(strength=strength)
        self.prior = check_score(prior, "prior")
        self.strength = float(strength)
        self._sum: npt.NDArray[np.float64] = np.zeros(0)
        self._uses: npt.NDArray[np.float64] = np.zeros(0)
        self._serial: npt.NDArray[np.float64] = np.zeros(0)
        self._seq = 0

    # -- explicit state (see solar_core.basics.state) ----------------------------------------------
    def params(self) -> dict[str, Any]:
        return {"prior": plain(self.prior), "strength": plain(self.strength)}

    def state(self) -> State:
        """Per slot (below the high-water mark; 0 for empty slots): ``sum`` of the scores of
        the rated steps it informed, ``uses`` their number, ``serial`` its insert sequence
        number (a float, as the tie-break adds it); ``seq`` the sequence counter."""
        store = self.store
        return {
            "sum": slot_rows(store, self._sum, 0.0),
            "uses": slot_rows(store, self._uses, 0.0),
            "serial": slot_rows(store, self._serial, 0.0),
            "seq": self._seq,
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        reader, store = reader_of(self, state), self.store
        seq = reader.integer("seq")
        uses = read_slot_rows(reader, "uses", store, np.float64, 0.0, lo=0.0, hi=MOST_COUNT)
        total = read_slot_rows(reader, "sum", store, np.float64, 0.0, lo=0.0, hi=MOST_COUNT)
        serial = read_slot_rows(reader, "serial", store, np.float64, 0.0, lo=1.0, hi=seq)
        # A count of ratings, each scored in [0, 1]; serials are whole sequence numbers
        if (total > uses).any() or (uses != np.floor(uses)).any():
            raise reader.fail("uses must be whole numbers, and sum at most uses")
        if (serial != np.floor(serial)).any():
            raise reader.fail("serial must hold whole sequence numbers")
        reader.done()
        self._sum, self._uses, self._serial, self._seq = total, uses, serial, seq

    def reserve(self, slots: int) -> None:
        self._sum = grow_array(self._sum, slots, 0.0)
        self._uses = grow_array(self._uses, slots, 0.0)
        self._serial = grow_array(self._serial, slots, 0.0)

    def on_insert(self, slot: int, step: int) -> None:
        self._seq += 1
        self._sum[slot] = 0.0
        self._uses[slot] = 0.0
        self._serial[slot] = self._seq

    def on_feedback(self, slots: Slots, reward: float) -> None:
        for slot in slots.tolist():
            self._sum[slot] += reward
            self._uses[slot] += 1.0

    def on_remove(self, slot: int, evicted: bool) -> None:
        self._sum[slot] = 0.0
        self._uses[slot] = 0.0
        self._serial[slot] = 0.0  # (as a state writes an empty slot's rows)

    def utility(self, slots: Slots | slice) -> npt.NDArray[np.float64]:
        prior = self.prior * self.strength
        out: npt.NDArray[np.float64] = (prior + self._sum[slots]) / (
            self.strength + self._uses[slots]
        )
        return out

    def _victim(self, step: int, slots: Selection) -> Victim:
        # Ties by insert order: nudges far below any utility difference (1 / (strength + uses)).
        scores = self.utility(slots) + 1e-12 * self._serial[slots]
        return lowest(scores, slots)

    def clear(self) -> None:
        self._sum[:] = 0.0
        self._uses[:] = 0.0
        self._serial[:] = 0.0

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"utility": float(self.utility(np.asarray([slot]))[0]), "rated": self._uses[slot]}
