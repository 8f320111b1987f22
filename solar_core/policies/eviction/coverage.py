"""Coverage eviction: keep the items that recent queries could least do without."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import State, StateReader, register_part
from solar_core.basics.validation import MAX_WINDOW, check_nonnegative, check_size
from solar_core.policies.admission.base import (
    F32,
    AdmissionPolicy,
    Candidate,
    Verdict,
    params_of,
    plain,
)
from solar_core.policies.eviction.base import (
    F64,
    Cosines,
    EvictionPolicy,
    Query,
    Rows,
    Selection,
    Slots,
    Victim,
    argmin_slot,
    grow_array,
    read_slot,
)


@register_part
class CoverageEviction(EvictionPolicy, AdmissionPolicy):
    """``solar-adaptive``: admit what serves the recent queries better than what it would
    displace; evict the item whose loss they would feel least (docs/DESIGN.md,
    "solar-adaptive"). Over a ring of the last ``window`` queries (``window_per_slot`` x
    capacity, at most ``max_window``), an item's value is the sum of its margins over the
    runner-up on the queries it serves best; a candidate's :meth:`gain` must beat
    ``(1 + hysteresis)`` x its victim's value, or be positive during a regime shift."""

    name = "coverage"
    #: each slot's value and insert serial
    rows = {"value": Rows("_value", np.float64), "serial": Rows("_serial", np.int64, 1, "seq")}
    _value: F64
    _serial: npt.NDArray[np.int64]
    _pending: tuple[int, F32] | None
    _weakest: tuple[int, int, float] | None
    _last_slots: Slots | None
    _fast_miss: float | None
    score_names = ("gain", "bar")  # a candidate's gain against the weakest item's value

    def __init__(
        self,
        window: int | None = None,
        *,
        window_per_slot: int = 16,
        max_window: int = 256,
        shift: float = 1.0,
        fast: float = 0.2,
        slow: float = 0.02,
        min_rise: float = 0.05,
        use_feedback: bool = True,
        hysteresis: float = 0.5,
    ) -> None:
        super().__init__()
        check_nonnegative(hysteresis=hysteresis)
        self.hysteresis = hysteresis
        self.window_per_slot = check_size(window_per_slot, "window_per_slot", MAX_WINDOW)
        self.max_window = check_size(max_window, "max_window", MAX_WINDOW)
        self.fixed_window = None if window is None else check_size(window, "window", MAX_WINDOW)
        check_nonnegative(shift=shift, fast=fast, slow=slow, min_rise=min_rise)
        for name, rate in (("fast", fast), ("slow", slow)):
            if not 0.0 < rate <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], got {rate}")
        if slow >= fast:
            raise ValueError(f"slow must be < fast (slow={slow}, fast={fast})")
        if not isinstance(use_feedback, bool):
            raise TypeError(f"use_feedback must be a bool, got {use_feedback!r}")
        self.min_rise = min_rise
        self.shift = shift
        self.fast = fast
        self.slow = slow
        self.use_feedback = use_feedback
        self.window = self.fixed_window or max_window
        self._nudge: F64 = np.zeros(0)  # 1e-12 * serial: the oldest leaves first on ties
        self._seq = 0
        self._dim = 0
        self._pending = None  # (serial it is for, sims to the ring)
        self._weakest = None  # (version, slot, value)
        self._version = 0
        self._reset_ring()

    def bind(self, store: Any, rng: np.random.Generator) -> None:
        super().bind(store, rng)
        capacity = self.store.capacity
        if self.fixed_window is None:
            self.window = (
                self.max_window
                if capacity is None
                else min(self.window_per_slot * capacity, self.max_window)
            )
        self._dim = self.store.dim
        self._reset_ring()

    def _reset_ring(self) -> None:
        size = self.window
        self._queries: F32 = np.zeros((size, self._dim), dtype=np.float32)
        self._best = np.zeros(size, dtype=np.float32)  # best similarity each query got
        self._margin = np.zeros(size)  # what its best item adds over the runner-up
        self._owner = np.full(size, -1, dtype=np.int64)  # slot of that item (-1: none)
        self._owner_serial = np.zeros(size, dtype=np.int64)  # that item's insert serial
        self._count = 0
        self._head = 0
        self._last = -1  # ring row of the latest query
        self._last_slots = None  # the slots array of the latest retrieval
        self._fast_miss = None
        self._slow_miss = 0.0
        self._deviation = 0.0

    def reserve(self, slots: int) -> None:
        super().reserve(slots)
        self._nudge = grow_array(self._nudge, slots, 0.0)

    def resized(self, capacity: int) -> None:
        # The ring keeps the queries it learned from: its window, made from the old capacity,
        # becomes a parameter of its own (a memory rebuilt from the parameters has the same).
        self.fixed_window = self.window

    def params(self) -> dict[str, Any]:
        return {"window": plain(self.fixed_window)} | params_of(
            self, "window_per_slot max_window shift fast slow min_rise use_feedback hysteresis"
        )

    @property
    def last_slots(self) -> Slots | None:
        """The slots array of the latest retrieval: only a rating of this very array counts (a
        memory loading its state makes its latest retrieval hold the loaded one)."""
        return self._last_slots

    def _more_state(self) -> State:
        """The query ring in ring order (a row whose owner left is written as owner -1, serial
        0, margin 0), the counters, the miss averages, ``pending`` and ``weakest`` (or nulls).
        Made again, not stored: the nudges, the latest query's row and the window."""
        n = self._count
        owner, owner_serial = self._owner[:n].copy(), self._owner_serial[:n].copy()
        margin = self._margin[:n].copy()
        dead = ~self._owned(n)
        owner[dead], owner_serial[dead], margin[dead] = -1, 0, 0.0
        pending = self._pending
        pending_ok = pending is not None and pending[0] == self._seq + 1 and len(pending[1]) == n
        weakest = self._weakest
        return {
            "queries": self._queries[:n].copy(),
            "best": self._best[:n].copy(),
            "margin": margin,
            "owner": owner,
            "owner_serial": owner_serial,
            "head": self._head,
            "seq": self._seq,
            "version": self._version,
            "fast_miss": self._fast_miss,
            "slow_miss": self._slow_miss,
            "deviation": self._deviation,
            "last_slots": None if self._last_slots is None else self._last_slots.copy(),
            "pending": pending[1].copy() if pending is not None and pending_ok else None,
            "weakest": weakest[1] if weakest is not None and weakest[0] == self._version else None,
        }

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        store, window, dim = self.store, self.window, self._dim
        value, serial = rows["_value"], rows["_serial"]
        active = store.active_slots()
        if len(np.unique(serial[active])) != len(active):
            raise reader.fail("serial must give every stored slot its own sequence number")
        seq, version = reader.integer("seq"), reader.integer("version")
        # Unit vectors and their cosines, with room for rounding (a forged magnitude overflows)
        queries = reader.array("queries", np.float32, (None, dim), lo=-1.5, hi=1.5)
        n = len(queries)
        if n > window:
            raise reader.fail(f"queries must hold at most {window} rows, got {n}")
        best = reader.array("best", np.float32, (n,), lo=-3.0, hi=3.0)
        margin = reader.array("margin", np.float64, (n,), lo=0.0, hi=4.0)
        owner = reader.array("owner", np.int64, (n,), lo=-1, hi=store.high_water - 1)
        owner_serial = reader.array("owner_serial", np.int64, (n,), lo=0, hi=seq)
        dead = owner < 0
        if (owner_serial[dead] != 0).any() or (margin[dead] != 0.0).any():
            raise reader.fail("a ring row without an owner must have owner_serial 0, margin 0")
        if (owner_serial[~dead] < 1).any() or (serial[owner[~dead]] != owner_serial[~dead]).any():
            raise reader.fail("a ring row's owner_serial must be its (stored) owner's serial")
        expected = np.bincount(owner[~dead], margin[~dead], minlength=len(value))
        if not np.allclose(expected[active], value[active], atol=1e-6):
            raise reader.fail("value must be the sum of the margins of the rows each slot owns")
        head = reader.integer("head", 0, window - 1)
        if n < window and head != n:
            raise reader.fail(f"head must be {n} while the ring fills, got {head}")
        fast_miss = reader.number("fast_miss", -2.0, 4.0, optional=True)
        slow_miss = reader.number("slow_miss", -2.0, 4.0)
        deviation = reader.number("deviation", 0.0, 6.0)
        if (fast_miss is None) != (n == 0) or (n == 0 and (slow_miss or deviation)):
            raise reader.fail("the miss averages start with the first query (null, 0, 0 before)")
        last_slots = None
        if reader.value("last_slots") is not None:
            last_slots = reader.array("last_slots", np.int64, (None,), lo=0)
        pending = None
        if reader.value("pending") is not None:
            pending = (seq + 1, reader.array("pending", np.float32, (n,), lo=-3.0, hi=3.0))
        weakest = read_slot(reader, "weakest", store)
        rest = window - n
        return {
            "_seq": seq,
            "_version": version,
            "_nudge": 1e-12 * serial,  # as on_insert makes it: the same doubles
            "_queries": np.concatenate([queries, np.zeros((rest, dim), np.float32)]),
            "_best": np.concatenate([best, np.zeros(rest, np.float32)]),
            "_margin": np.concatenate([margin, np.zeros(rest)]),
            "_owner": np.concatenate([owner, np.full(rest, -1, np.int64)]),
            "_owner_serial": np.concatenate([owner_serial, np.zeros(rest, np.int64)]),
            "_count": n,
            "_head": head,
            "_last": (head - 1) % window if n else -1,
            "_fast_miss": fast_miss,
            "_slow_miss": slow_miss,
            "_deviation": deviation,
            "_last_slots": last_slots,
            "_pending": pending,
            "_weakest": None if weakest is None else (version, weakest, float(value[weakest])),
        }

    def on_retrieve(
        self, slots: Slots, step: int, query: Query = None, cosines: Cosines = None
    ) -> None:
        if query is None or cosines is None:
            raise ValueError("CoverageEviction learns from the query: pass its vector and cosines")
        scores = cosines
        self._version += 1
        self._pending = None  # similarities to the ring are stale once the ring moves
        head = self._head
        value, serial = self._value, self._serial
        if self._count == self.window:  # the oldest query leaves: its best item loses the credit
            old = int(self._owner[head])
            if old >= 0 and serial[old] == self._owner_serial[head]:
                value[old] -= self._margin[head]
        else:
            self._count += 1
        self._queries[head] = query
        self._last_slots = slots
        if scores:
            best = scores[0]
            slot = int(slots[0])
            if len(scores) > 1:
                second = scores[1]
            else:  # k = 1 (or exclude=) hides the runner-up
                second = self._runner_up(query, slot)
            margin = best - second if best > second else 0.0
            self._owner[head] = slot
            self._owner_serial[head] = serial[slot]
            value[slot] += margin
        else:
            best = margin = 0.0
            self._owner[head] = -1
            self._owner_serial[head] = 0  # (a row without an owner holds zeros: one state)
        self._best[head] = best
        self._margin[head] = margin
        self._last = head
        self._head = head + 1 if head + 1 < self.window else 0
        miss = 1.0 - best
        if self._fast_miss is None:
            self._fast_miss = self._slow_miss = miss
        else:
            self._fast_miss += self.fast * (miss - self._fast_miss)
            self._deviation += self.slow * (abs(miss - self._slow_miss) - self._deviation)
            self._slow_miss += self.slow * (miss - self._slow_miss)

    def _runner_up(self, query: F32, top: int) -> float:
        """The best similarity to ``query`` of any stored item but ``top`` (0.0 if none)."""
        if len(self.store) < 2:
            return 0.0
        sims = self.store.similarities(query)
        sims[top] = -np.inf
        return float(sims.max())

    @property
    def shifting(self) -> bool:
        """Whether the latest queries miss markedly more than the long-run average."""
        if self.shift <= 0 or self._fast_miss is None:
            return False
        # A long stable stretch's deviation decays to ~0: the rise needs a floor
        rise = self.shift * self._deviation
        return self._fast_miss > self._slow_miss + (rise if rise > self.min_rise else self.min_rise)

    def on_feedback(self, slots: Slots, reward: float) -> None:
        # The latest query's best item keeps `reward` of its margin (only the latest retrieval
        # maps to a known ring row: the very array on_retrieve got)
        last = self._last
        if not self.use_feedback or last < 0 or not len(slots) or slots is not self._last_slots:
            return
        slot = int(slots[0])
        if slot != self._owner[last] or self._serial[slot] != self._owner_serial[last]:
            return  # an older retrieval, or a changed memory: nothing reliable to rescale
        self._version += 1
        new = self._margin[last] * reward
        self._value[slot] += new - self._margin[last]
        self._margin[last] = new

    def gain(self, vector: F32) -> float:
        """``sum(max(0, cos(vector, q) - best(q)))`` over the remembered queries (the
        similarities are kept for the insert that may follow)."""
        sims: F32 = self._queries[: self._count].dot(vector)
        self._pending = (self._seq + 1, sims)
        return self.gain_of(sims)

    def gain_of(self, sims: F32) -> float:
        """:meth:`gain` from the similarities to the remembered queries."""
        diff = sims - self._best[: len(sims)]
        return float(diff[diff > 0.0].sum())

    def victim(self, step: int) -> Victim:
        cached = self._weakest  # unchanged since it was named: no need to look again
        if cached is not None and cached[0] == self._version:
            return Victim(cached[1], cached[2])
        return super().victim(step)

    def _victim(self, step: int, slots: Selection) -> Victim:
        values = self._value[slots]
        # Lowest value, oldest insert among (near-)equals: the nudge stays far under any margin
        slot = argmin_slot(values + self._nudge[slots], slots)
        value = float(self._value[slot])
        self._weakest = (self._version, slot, value)
        return Victim(slot, value)

    def _admit(self, candidate: Candidate) -> Verdict:
        verdict = self._judge(candidate)
        if not verdict.admitted:  # no insert follows: a keyed or updated one must not read it
            self._pending = None
        return verdict

    def _judge(self, candidate: Candidate) -> Verdict:
        if candidate.refused is not None:
            return Verdict(False, candidate.refused)
        vector = candidate.vector
        if vector is None:
            raise RuntimeError("CoverageEviction decides on a candidate's vector: give one")
        sims: F32 = self._queries[: self._count].dot(vector)  # as gain() keeps them
        self._pending = (self._seq + 1, sims)
        if candidate.capacity is None or candidate.size < candidate.capacity:
            return Verdict(True, "free slot")
        if self.shifting:
            gain = self.gain_of(sims)
            if gain > 0.0:
                return Verdict(True, "regime shift", None, gain, 0.0)
        victim = candidate.victim
        value = 0.0 if victim is None or victim.score is None else victim.score
        if value <= 0.0:
            return Verdict(True, "victim worthless", None, None, 0.0)
        gain = self.gain_of(sims)
        bar = (1.0 + self.hysteresis) * value
        if gain > bar:
            return Verdict(True, "gain > value", None, gain, bar)
        return Verdict(False, "gain <= value", None, gain, bar)

    def on_insert(self, slot: int, step: int) -> None:
        self._version += 1
        self._seq += 1
        serial = self._seq
        self._serial[slot] = serial
        self._nudge[slot] = 1e-12 * serial
        self._value[slot] = 0.0
        n = self._count
        pending, self._pending = self._pending, None
        if n == 0:
            return
        if pending is not None and pending[0] == serial and len(pending[1]) == n:
            sims = pending[1]
        else:
            sims = self._queries[:n].dot(self.store.matrix[slot])
        best = self._best[:n]
        better = (sims > best).nonzero()[0]
        if len(better) == 0:
            return
        # The new item now serves these queries best: their previous best items lose the credit
        # (a handful of rows: scalar updates beat np.subtract.at)
        value, serials = self._value, self._serial
        owner_serial, margins = self._owner_serial, self._margin
        for row, owner in zip(better.tolist(), self._owner[better].tolist(), strict=True):
            if owner >= 0 and serials[owner] == owner_serial[row]:
                value[owner] -= margins[row]
        margin = sims[better].astype(np.float64) - best[better]  # float64, as the ring keeps it
        self._margin[better] = margin
        best[better] = sims[better]
        self._owner[better] = slot
        self._owner_serial[better] = serial
        self._value[slot] = float(margin.sum())

    def on_remove(self, slot: int, evicted: bool) -> None:
        self._version += 1
        self._weakest = None  # stale now (and a loaded state holds none)
        rows = (self._owner[: self._count] == slot).nonzero()[0]
        if len(rows):
            rows = rows[self._owner_serial[rows] == self._serial[slot]]
            # those queries fall back to their runner-up, `margin` worse
            self._best[rows] -= self._margin[rows]
            self._owner[rows] = -1
            self._owner_serial[rows] = 0
            self._margin[rows] = 0.0
        self._empty(slot)
        self._nudge[slot] = 0.0  # (1e-12 * serial, as a loaded policy makes it)

    def clear(self) -> None:
        self._empty(slice(None))
        self._nudge[:] = 0.0
        self._pending = None
        self._weakest = None
        self._version += 1
        self._reset_ring()

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"value": float(self._value[slot])}

    def _owned(self, n: int) -> npt.NDArray[np.bool_]:
        """Which of the first ``n`` ring rows still have their owner (not a later item)."""
        owner = self._owner[:n]
        live = owner >= 0
        live[live] = self._serial[owner[live]] == self._owner_serial[:n][live]
        return live

    def check_invariants(self) -> None:
        slots = self.store.active_slots()
        value = self._value[slots]
        if not np.isfinite(value).all():
            raise AssertionError("non-finite coverage value")
        n = self._count
        owners, live = self._owner[:n], self._owned(n)
        expected = np.bincount(owners[live], self._margin[:n][live], minlength=len(self._value))
        if not np.allclose(expected[slots], value, atol=1e-6):
            raise AssertionError("coverage values disagree with the query ring")
