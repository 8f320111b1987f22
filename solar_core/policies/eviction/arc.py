"""Adaptive Replacement Cache (Megiddo & Modha, FAST 2003), with retrievals as hits."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from solar_core.basics.records import content_key
from solar_core.basics.state import (
    State,
    Stateful,
    StateReader,
    build,
    part_of,
    prefixed,
    register_part,
    spec,
)
from solar_core.policies.admission.base import (
    AdmissionPolicy,
    AlwaysAdmit,
    Candidate,
    Verdict,
    run_stages,
    staged,
)
from solar_core.policies.eviction.base import Cosines, OrderedEviction, Query, Slots

if TYPE_CHECKING:
    from solar_core.retrieval.item_table import ItemTable


@register_part
class ArcEviction(OrderedEviction, AdmissionPolicy):
    """ARC over the memory's items (docs/DESIGN.md, "ARC with explicit deletes"), in the
    paper's notation (``T1``, ``T2`` of slots, ``B1``, ``B2`` of content keys, target ``p``). It
    sees every request, so it is its memory's admission policy too and asks its ``gate``
    (default: store everything). ``capacity``: the paper's ``c`` (``None``: the memory's)."""

    name = "arc"

    def __init__(self, capacity: int | None = None, gate: AdmissionPolicy | None = None) -> None:
        super().__init__()
        if gate is not None and (not isinstance(gate, AdmissionPolicy) or gate is self):
            raise TypeError(f"gate must be another AdmissionPolicy, got {type(gate).__name__}")
        self.gate: AdmissionPolicy = AlwaysAdmit() if gate is None else gate
        if capacity is not None and (
            isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1
        ):
            raise ValueError("arc needs a finite capacity >= 1")
        self.c = capacity or 0
        self.p = 0.0
        self.t1: dict[int, None] = {}  # slot -> None, LRU first
        self.t2: dict[int, None] = {}
        self.b1: dict[str, None] = {}  # content key -> None, LRU first
        self.b2: dict[str, None] = {}
        self._key: dict[int, str] = {}  # slot -> content key of the stored item
        self._into_t2 = False  # set by _prepare_insert: a ghost hit goes straight to T2
        self._in_b2 = False
        self._drop_t1_lru = False  # case IV(A) with B1 empty: T1's LRU leaves without a ghost

    def params(self) -> dict[str, Any]:
        return {"capacity": self.c or None, "gate": spec(cast(Stateful, self.gate))}

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> ArcEviction:
        given = dict(params)
        gate = given.pop("gate", None)
        return cls(**given, gate=None if gate is None else build(gate, "ArcEviction's gate"))

    def _more_state(self) -> State:
        """The lists, LRU first; ``p``; what an admitted offer's case left for its insert; the
        gate's state under ``gate.``. The stored items' content keys are their texts'."""
        return {
            "t1": np.fromiter(self.t1, np.int64, len(self.t1)),
            "t2": np.fromiter(self.t2, np.int64, len(self.t2)),
            "b1": list(self.b1),
            "b2": list(self.b2),
            "p": self.p,
            "into_t2": self._into_t2,
            "in_b2": self._in_b2,
            "drop_t1_lru": self._drop_t1_lru,
            **prefixed("gate", self.gate.state()),
        }

    def checked_state(self, state: Mapping[str, Any]) -> Callable[[], None]:
        own = {k: v for k, v in state.items() if not (type(k) is str and k.startswith("gate."))}
        assign = super().checked_state(own)
        gate = staged(self.gate, part_of("gate", state))
        return lambda: run_stages([gate, (True, assign)])

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        store, c = self.store, self.c
        t1 = reader.array("t1", np.int64, (None,))
        t2 = reader.array("t2", np.int64, (None,))
        both = np.concatenate([t1, t2])
        if len(both) != len(store) or not np.array_equal(np.sort(both), store.active_slots()):
            raise reader.fail("t1 and t2 must list every stored slot once between them")
        b1, b2 = self._ghosts(reader, "b1"), self._ghosts(reader, "b2")
        if not b1.keys().isdisjoint(b2):
            raise reader.fail("b1 and b2 must be disjoint")
        sizes = len(t1), len(t2), len(b1), len(b2)
        if _oversized(c, *sizes):
            raise reader.fail(f"list sizes T1, T2, B1, B2 = {sizes} break ARC's bounds at c={c}")
        # (in the order the items were stored, as on_insert added them)
        order = [store.slot_of(item_id) for item_id in store.ids()]
        return {
            "p": reader.number("p", 0.0, float(c)),
            "_into_t2": reader.flag("into_t2"),
            "_in_b2": reader.flag("in_b2"),
            "_drop_t1_lru": reader.flag("drop_t1_lru"),
            "_key": {slot: content_key(store.payload_at(slot).text) for slot in order},
            "t1": dict.fromkeys(t1.tolist()),
            "t2": dict.fromkeys(t2.tolist()),
            "b1": b1,
            "b2": b2,
        }

    @staticmethod
    def _ghosts(reader: StateReader, name: str) -> dict[str, None]:
        keys = reader.listed(name)
        if not all(type(key) is str for key in keys) or len(set(keys)) != len(keys):
            raise reader.fail(f"{name} must list distinct content keys")
        return dict.fromkeys(keys)

    def bind(self, store: ItemTable, rng: np.random.Generator) -> None:
        if store.capacity is None:
            raise ValueError("arc needs a finite capacity >= 1")
        if self.c and self.c != store.capacity:
            raise ValueError(
                f"ArcEviction(capacity={self.c}) bound to a memory of {store.capacity}"
            )
        self.c = store.capacity
        super().bind(store, rng)

    def on_retrieve(
        self, slots: Slots, step: int, query: Query = None, cosines: Cosines = None
    ) -> None:
        # Case I: x in T1 u T2 -> move x to the MRU position of T2.
        for slot in slots.tolist():
            self.t1.pop(slot, None)
            self.t2.pop(slot, None)
            self.t2[slot] = None

    def _admit(self, candidate: Candidate) -> Verdict:
        verdict = self.gate.admit(candidate)
        if candidate.stored is not None:
            # a request for a cached key is a hit, whatever the gate says
            self.on_retrieve(np.asarray([candidate.stored], dtype=np.int64), 0)
        elif verdict.admitted and candidate.refused is None:
            if candidate.text is None:
                raise ValueError("ArcEviction needs the candidate's text: use it in a memory")
            self._prepare_insert(content_key(candidate.text))
            candidate.forget_victim()  # named before the ghost cases moved p: name it again
        return verdict

    def _prepare_insert(self, key: str) -> None:
        """An item with content ``key`` was admitted and will be inserted after any eviction."""
        self._into_t2 = self._in_b2 = self._drop_t1_lru = False
        if key in self.b1:  # Case II: p <- min(c, p + max(|B2|/|B1|, 1))
            self.p = min(float(self.c), self.p + max(len(self.b2) / len(self.b1), 1.0))
            del self.b1[key]
            self._into_t2 = True
        elif key in self.b2:  # Case III: p <- max(0, p - max(|B1|/|B2|, 1))
            self.p = max(0.0, self.p - max(len(self.b1) / len(self.b2), 1.0))
            del self.b2[key]
            self._into_t2 = self._in_b2 = True
        else:  # Case IV: a miss; keep |L1| <= c and |L1| + |L2| <= 2c
            l1 = len(self.t1) + len(self.b1)
            total = l1 + len(self.t2) + len(self.b2)
            if l1 >= self.c:
                if len(self.t1) < self.c:
                    self._pop_lru(self.b1)  # (A) delete the LRU page of B1, then REPLACE
                else:
                    self._drop_t1_lru = True  # (A) B1 empty: delete T1's LRU page outright
            elif total >= 2 * self.c:
                self._pop_lru(self.b2)  # (B) directory full: delete the LRU page of B2

    @property
    def regret(self) -> float | None:
        return self.gate.regret

    @property
    def tau(self) -> float | None:
        return self.gate.tau

    def _ranking(self, step: int) -> Iterable[int]:
        t1, t2 = self.t1, self.t2
        if self._drop_t1_lru and t1:
            return chain(t1, t2)
        # REPLACE(x, p): T1's LRU if |T1| > p (or == p, p real, on a B2 hit), else T2's LRU.
        if t1 and (len(t1) > self.p or (self._in_b2 and len(t1) == self.p)):
            return chain(t1, t2)
        return chain(t2, t1)

    def on_remove(self, slot: int, evicted: bool) -> None:
        key = self._key.pop(slot)
        in_t1 = slot in self.t1
        self.t1.pop(slot, None)
        self.t2.pop(slot, None)
        if not evicted:
            return  # an explicit delete leaves no ghost: the item is not coming back
        if self._drop_t1_lru:
            self._drop_t1_lru = False
        elif in_t1:
            self.b2.pop(key, None)  # two stored copies of one text: one ghost, the latest
            self.b1[key] = None
        else:
            self.b1.pop(key, None)
            self.b2[key] = None

    def on_insert(self, slot: int, step: int) -> None:
        self._key[slot] = content_key(self.store.payload_at(slot).text)
        if self._into_t2:
            self.t2[slot] = None
        else:
            # An update is stored without an offer: case IV's trims (no-ops after an admitted
            # miss) keep |L1| <= c and |L1| + |L2| <= 2c
            if len(self.t1) + len(self.b1) >= self.c:
                self._pop_lru(self.b1)
            if len(self.t1) + len(self.t2) + len(self.b1) + len(self.b2) >= 2 * self.c:
                self._pop_lru(self.b2)
            self.t1[slot] = None
        self._into_t2 = self._in_b2 = self._drop_t1_lru = False

    def resized(self, capacity: int) -> None:
        # The paper's bounds at the new c: the oldest ghosts go (T1 + T2 <= c already holds).
        self.c, self.p = capacity, min(self.p, float(capacity))
        while len(self.t1) + len(self.b1) > capacity:
            self._pop_lru(self.b1)
        while len(self.t1) + len(self.t2) + len(self.b1) + len(self.b2) > 2 * capacity:
            self._pop_lru(self.b2 if self.b2 else self.b1)

    @staticmethod
    def _pop_lru(lst: dict[str, None]) -> None:
        if lst:
            del lst[next(iter(lst))]

    def clear(self) -> None:
        for lst in (self.t1, self.t2, self.b1, self.b2, self._key):
            lst.clear()
        self.p = 0.0
        self._into_t2 = self._in_b2 = self._drop_t1_lru = False
        self.gate.clear()

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"list": 1.0 if slot in self.t1 else 2.0, "p": self.p}

    def check_invariants(self) -> None:
        self.gate.check_invariants()
        c = self.c
        t1, t2, b1, b2 = len(self.t1), len(self.t2), len(self.b1), len(self.b2)
        stored = set(self.store.active_slots().tolist())
        if set(self.t1) | set(self.t2) != stored or set(self.t1) & set(self.t2):
            raise AssertionError("T1 and T2 must partition the stored items")
        if set(self.b1) & set(self.b2):
            raise AssertionError("B1 and B2 must be disjoint")
        if not 0.0 <= self.p <= c:
            raise AssertionError(f"p={self.p} outside [0, {c}]")
        if _oversized(c, t1, t2, b1, b2):
            raise AssertionError(f"ARC list sizes broken: T1={t1} T2={t2} B1={b1} B2={b2} c={c}")


def _oversized(c: int, t1: int, t2: int, b1: int, b2: int) -> bool:
    """Whether ARC's list sizes break its bounds at capacity ``c``."""
    return t1 + t2 > c or t1 + b1 > c or t2 + b2 > 2 * c or t1 + t2 + b1 + b2 > 2 * c
