"""First in, first out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from solar_core.basics.state import MOST_COUNT, State, StateReader, register_part
from solar_core.policies.eviction.base import OrderedEviction, read_order


@register_part
class FifoEviction(OrderedEviction):
    """Evict the item inserted longest ago; retrievals change nothing."""

    name = "fifo"

    def __init__(self) -> None:
        super().__init__()
        self._order: dict[int, int] = {}  # slot -> insert step, oldest first

    def _more_state(self) -> State:
        return {
            "order": np.fromiter(self._order, np.int64, len(self._order)),
            "steps": np.fromiter(self._order.values(), np.int64, len(self._order)),
        }

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        order = read_order(reader, "order", self.store)
        steps = reader.array("steps", np.int64, (len(order),), lo=-MOST_COUNT, hi=MOST_COUNT)
        return {"_order": dict(zip(order.tolist(), steps.tolist(), strict=True))}

    def on_insert(self, slot: int, step: int) -> None:
        self._order[slot] = step

    def on_remove(self, slot: int, evicted: bool) -> None:
        del self._order[slot]

    def _ranking(self, step: int) -> Iterable[int]:
        return self._order

    def clear(self) -> None:
        self._order.clear()

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"inserted_step": float(self._order[slot])}

    def check_invariants(self) -> None:
        if set(self._order) != set(self.store.active_slots().tolist()):
            raise AssertionError("FIFO order disagrees with the store")
