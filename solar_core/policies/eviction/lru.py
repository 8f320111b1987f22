"""Least recently used."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from solar_core.basics.state import State, StateReader, register_part
from solar_core.policies.eviction.base import Cosines, OrderedEviction, Query, Slots, read_order


@register_part
class LruEviction(OrderedEviction):
    """Evict the item least recently retrieved or inserted; items retrieved together are
    touched in insertion order (the SOLAR reference runner's tie-break)."""

    name = "lru"

    def __init__(self) -> None:
        super().__init__()
        self._recency: dict[int, int] = {}  # slot -> insert sequence, least recent first
        self._last_use: dict[int, int] = {}  # slot -> use counter at its latest insert/touch
        self._seq = 0
        self._uses = 0

    def _more_state(self) -> State:
        n = len(self._recency)
        return {
            "order": np.fromiter(self._recency, np.int64, n),
            "inserted": np.fromiter(self._recency.values(), np.int64, n),
            "last_use": np.fromiter(map(self._last_use.__getitem__, self._recency), np.int64, n),
            "seq": self._seq,
            "uses": self._uses,
        }

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        order = read_order(reader, "order", self.store)
        seq, uses = reader.integer("seq"), reader.integer("uses")
        n = len(order)
        inserted = reader.array("inserted", np.int64, (n,), lo=1, hi=seq)
        last_use = reader.array("last_use", np.int64, (n,), lo=1, hi=uses)
        if len(np.unique(inserted)) != n or len(np.unique(last_use)) != n:
            raise reader.fail("inserted and last_use must hold distinct numbers")
        slots = order.tolist()
        uses_of = dict(zip(slots, last_use.tolist(), strict=True))
        # (kept in the order the items were stored, as on_insert adds them and a touch keeps)
        stored = [self.store.slot_of(item_id) for item_id in self.store.ids()]
        return {
            "_recency": dict(zip(slots, inserted.tolist(), strict=True)),
            "_last_use": {slot: uses_of[slot] for slot in stored},
            "_seq": seq,
            "_uses": uses,
        }

    def on_insert(self, slot: int, step: int) -> None:
        self._seq += 1
        self._uses += 1
        self._recency[slot] = self._seq
        self._last_use[slot] = self._uses

    def on_retrieve(
        self, slots: Slots, step: int, query: Query = None, cosines: Cosines = None
    ) -> None:
        recency = self._recency
        for slot in sorted(slots.tolist(), key=recency.__getitem__):
            recency[slot] = recency.pop(slot)  # move to the most-recent end
            self._uses += 1
            self._last_use[slot] = self._uses

    def on_remove(self, slot: int, evicted: bool) -> None:
        del self._recency[slot]
        del self._last_use[slot]

    def _ranking(self, step: int) -> Iterable[int]:
        return self._recency

    def clear(self) -> None:
        self._recency.clear()
        self._last_use.clear()

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"last_use": float(self._last_use[slot])}  # larger = more recently used

    def check_invariants(self) -> None:
        if set(self._recency) != set(self.store.active_slots().tolist()):
            raise AssertionError("LRU order disagrees with the store")
