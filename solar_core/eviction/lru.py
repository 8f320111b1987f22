"""Least recently used."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from ..registry import stored
from .base import Cosines, OrderedEviction, Query, Slots


class LruEviction(OrderedEviction):
    """Evict the item least recently retrieved (an insert counts as a use).

    Items retrieved together are touched in insertion order, so among them the oldest insert is
    the least recent: the same tie-break as the SOLAR reference runner, where every hit of a step
    gets the same timestamp and ties go to the earliest insert. On cyclic topics recency is an
    anti-signal (the paper's LRU 0.38 vs FIFO 0.90 at m/K = 1).
    """

    #: its state as a snapshot holds it (attribute -> stored name, see solar_core.registry)
    snapshot_names: ClassVar[dict[str, str]] = stored("_last_use _recency _seq _uses")

    name = "lru"

    def __init__(self) -> None:
        super().__init__()
        self._recency: dict[int, int] = {}  # slot -> insert sequence, least recent first
        self._last_use: dict[int, int] = {}  # slot -> use counter at its latest insert/touch
        self._seq = 0
        self._uses = 0

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
