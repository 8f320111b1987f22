"""The past values of keyed facts: an item a newer one of its key superseded leaves the memory's
slots at once and is kept here, outside the capacity, for ``as_of`` and ``include_superseded``
look-ups. A bounded memory keeps as many past values as it holds items; when one more comes, the
longest-superseded goes first."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from solar_core.basics.records import Record
from solar_core.basics.state import State, StateReader
from solar_core.basics.validation import FloatVector
from solar_core.engine.record_state import read_records, record_columns


class History:
    """Superseded values by id, in the order they were superseded; at most ``limit`` of them
    (``None``: every one).

    >>> history = History(limit=1, dim=2)
    >>> old = Record("I live in Berlin", {}, 1, 0.0, key="home", superseded_at=5.0)
    >>> history.keep("m1", old, np.ones(2, np.float32))
    []
    >>> history.keep("m2", old, np.ones(2, np.float32)), list(history.ids())
    (['m1'], ['m2'])
    """

    def __init__(self, limit: int | None, dim: int) -> None:
        self.limit, self.dim = limit, dim
        self._past: dict[str, tuple[Record, FloatVector]] = {}

    def __len__(self) -> int:
        return len(self._past)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._past

    def ids(self) -> list[str]:
        return list(self._past)

    def get(self, item_id: str) -> tuple[Record, FloatVector]:
        return self._past[item_id]

    def entries(self) -> list[tuple[str, Record, FloatVector]]:
        """Every past value: ``(id, record, unit vector)``, the longest-superseded first."""
        return [(item_id, r, v) for item_id, (r, v) in self._past.items()]

    def keep(self, item_id: str, record: Record, vector: FloatVector) -> list[str]:
        """Keep a value that was just superseded; returns the ids it pushed out, if any."""
        self._past[item_id] = (record, vector)
        return self._trim()

    def resize(self, limit: int | None) -> list[str]:
        self.limit = limit
        return self._trim()

    def _trim(self) -> list[str]:
        dropped = []
        while self.limit is not None and len(self._past) > self.limit:
            oldest = next(iter(self._past))
            del self._past[oldest]
            dropped.append(oldest)
        return dropped

    def remove(self, item_id: str) -> None:
        del self._past[item_id]

    def clear(self) -> None:
        self._past.clear()

    def check_invariants(self, stored: Mapping[str, Any]) -> None:
        assert self.limit is None or len(self._past) <= self.limit, "too many past values"
        assert not stored.keys() & self._past.keys(), "a past value's id is stored as current"
        for record, vector in self._past.values():
            assert record.superseded_at is not None, "a past value was never superseded"
            assert vector.shape == (self.dim,), "a past value's vector has another size"
            assert abs(float(vector.dot(vector)) - 1.0) < 1e-4, "a past value's vector is no unit"

    def state(self) -> State:
        records = [r for r, _ in self._past.values()]
        vectors = [v for _, v in self._past.values()]
        return {
            "id": list(self._past),
            "vectors": np.asarray(vectors, np.float32).reshape(len(vectors), self.dim),
            **record_columns(records),
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        read = StateReader(state, "the history's state")
        ids = read.listed("id")
        n = len(ids)
        if any(type(i) is not str or not i for i in ids) or len(set(ids)) != n:
            raise read.fail("a past value has a bad or repeated id")
        vectors = read.array("vectors", np.float32, (n, self.dim))
        if n and not np.allclose(np.einsum("ij,ij->i", vectors, vectors), 1.0, atol=1e-4):
            raise read.fail("a past value's vector is not a unit vector")
        records = read_records(read, [True] * n, where="past value {}".format)
        read.done()
        if self.limit is not None and n > self.limit:
            raise read.fail(f"{n} past values, more than the {self.limit} kept")
        if any(r.superseded_at is None for r in records.values()):
            raise read.fail("a past value was never superseded")
        self._past = {ids[i]: (records[i], vectors[i].copy()) for i in range(n)}
