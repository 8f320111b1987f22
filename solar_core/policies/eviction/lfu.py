"""Least frequently used."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import StateReader, register_part
from solar_core.policies.eviction.base import (
    Cosines,
    EvictionPolicy,
    Query,
    Rows,
    Selection,
    Slots,
    Victim,
    argmin_slot,
)

TieBreak = Literal["insertion", "recency"]
#: the most retrievals a count may hold: the victim's key shifts it 32 bits into an int64
MOST_RETRIEVALS = 2**31 - 1


@register_part
class LfuEviction(EvictionPolicy):
    """Evict the item retrieved the fewest times since it was stored; among equal counts the
    earliest inserted (``tie_break="insertion"``, as SOLAR's reference runner) or the one that
    reached its count earliest (``"recency"``, as ``cachetools.LFUCache``)."""

    name = "lfu"
    param_names = "tie_break"
    #: retrievals since insert, the tie-break sequence number, the insert sequence number
    rows = {
        "count": Rows("_count", np.int64, 0, MOST_RETRIEVALS),
        "order": Rows("_order", np.int64, 1, "seq"),
        "inserted": Rows("_inserted", np.int64, 1, "seq"),
    }
    _count: npt.NDArray[np.int64]
    _order: npt.NDArray[np.int64]
    _inserted: npt.NDArray[np.int64]
    counters = ("seq",)

    def __init__(self, tie_break: TieBreak = "insertion") -> None:
        super().__init__()
        if tie_break not in ("insertion", "recency"):
            raise ValueError(f"tie_break must be 'insertion' or 'recency', got {tie_break!r}")
        self.tie_break = tie_break
        self._seq = 0

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        active = self.store.active_slots()
        if len(np.unique(rows["_order"][active])) != len(active):
            raise reader.fail("order must give every stored slot its own sequence number")
        return {}

    def on_insert(self, slot: int, step: int) -> None:
        self._seq += 1
        self._count[slot] = 0
        self._order[slot] = self._seq
        self._inserted[slot] = self._seq

    def on_retrieve(
        self, slots: Slots, step: int, query: Query = None, cosines: Cosines = None
    ) -> None:
        if len(slots) == 0:
            return
        count = self._count
        for slot in slots.tolist():  # a few distinct slots: scalar updates beat fancy indexing
            count[slot] += 1
        if self.tie_break == "recency":
            # simultaneous hits touched in insertion order, as LRU does
            for slot in slots[np.argsort(self._inserted[slots], kind="stable")]:
                self._seq += 1
                self._order[slot] = self._seq

    def _victim(self, step: int, slots: Selection) -> Victim:
        # One int64 key orders by count, then by sequence: a single vectorised argmin.
        key = (self._count[slots] << 32) + self._order[slots]
        slot = argmin_slot(key, slots)
        return Victim(slot, float(self._count[slot]))

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"count": float(self._count[slot])}

    def check_invariants(self) -> None:
        slots = self.store.active_slots()
        if (self._count[slots] < 0).any():
            raise AssertionError("negative LFU count")
        if len(set(self._order[slots].tolist())) != len(slots):
            raise AssertionError("LFU tie-break sequence numbers collide")
