"""The eviction-policy interface (hooks in, one victim out) and the per-slot explicit state it
shares with the deletion policies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar, cast

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import State, StateReader
from solar_core.policies.admission.base import StagedState
from solar_core.policies.admission.base import Victim as Victim  # (defined there: no circle)

if TYPE_CHECKING:
    from solar_core.retrieval.item_table import ItemTable

Slots = npt.NDArray[np.int64]
#: the slots a scoring policy chooses among: an array, or a slice for slots 0, 1, 2, ...
Selection = Slots | slice
#: a retrieval's query: its unit vector
Query = npt.NDArray[np.float32] | None
#: the cosine of each returned slot to the query, in order
Cosines = list[float] | None
F64 = npt.NDArray[np.float64]
ArrayT = TypeVar("ArrayT", bound=npt.NDArray[Any])


class Rows(NamedTuple):
    """A per-slot array of a policy's state: the attribute holding it, its dtype and the bounds
    of its stored slots' values (``hi`` may name an int of the state, read first)."""

    attr: str
    dtype: type[Any]
    lo: float | None = None
    hi: float | str | None = None


class SlotState(StagedState):
    """A policy bound to an item table: the per-slot arrays declared in :attr:`rows` are made,
    grown, zeroed, written (below ``high_water``) and read back here; the rest of its state
    is :meth:`_more_state` and :meth:`_read_more`."""

    #: the per-slot arrays, by state name
    rows: ClassVar[dict[str, Rows]] = {}
    #: whether an empty slot's rows are 0 (written so, refused otherwise), or kept as they are
    zeroed: ClassVar[bool] = True
    #: integer counters, each in the attribute ``_<name>``, stored after the rows
    counters: ClassVar[tuple[str, ...]] = ()
    _store: ItemTable | None

    def __init__(self) -> None:
        self._store = None
        for row in self.rows.values():
            setattr(self, row.attr, np.zeros(0, row.dtype))

    def _attach(self, store: ItemTable) -> None:
        if self._store is not None and self._store is not store:
            raise ValueError(
                f"this {type(self).__name__} already serves another memory: create one per memory"
            )
        self._store = store
        self.reserve(store.slots)

    @property
    def bound(self) -> bool:
        """Whether a memory already uses this policy."""
        return self._store is not None

    @property
    def store(self) -> ItemTable:
        if self._store is None:
            raise RuntimeError(f"{type(self).__name__} is not bound to a store")
        return self._store

    def reserve(self, slots: int) -> None:
        """Make per-slot state hold at least ``slots`` slots."""
        for row in self.rows.values():
            setattr(self, row.attr, grow_array(getattr(self, row.attr), slots, 0))

    def _empty(self, slot: int | slice) -> None:
        """Zero the rows of ``slot`` (of every slot: ``slice(None)``)."""
        for row in self.rows.values():
            getattr(self, row.attr)[slot] = 0

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if its state cannot serve its memory's slots."""
        if any(len(getattr(self, row.attr)) < self.store.slots for row in self.rows.values()):
            raise AssertionError(f"{type(self).__name__}: per-slot arrays shorter than the store")

    def state(self) -> State:
        store = self._store
        rows = {}
        for name, row in self.rows.items():
            array = getattr(self, row.attr)[: 0 if store is None else store.high_water].copy()
            if self.zeroed and store is not None:
                array[~store.active_mask] = 0  # stale values nothing reads before on_insert
            rows[name] = array
        counters = {name: getattr(self, "_" + name) for name in self.counters}
        return rows | counters | self._more_state()

    def _more_state(self) -> State:
        return {}

    def _read(self, reader: StateReader) -> dict[str, Any]:
        rows: dict[str, Any] = {}
        for name, row in self.rows.items():
            hi = reader.integer(row.hi) if isinstance(row.hi, str) else row.hi
            rows[row.attr] = self._read_rows(reader, name, row.dtype, row.lo, hi)
        for name in self.counters:
            rows["_" + name] = reader.integer(name)
        return rows | self._read_more(reader, rows)

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        """Read the rest of the state, checked against ``rows`` (the arrays and counters read,
        by attribute); return the attributes to assign."""
        return {}

    def _read_rows(
        self, reader: StateReader, name: str, dtype: Any, lo: float | None, hi: float | None
    ) -> npt.NDArray[Any]:
        store = self.store
        if not self.zeroed:
            array = reader.array(name, dtype, (store.high_water,), lo=lo, hi=hi)
            return grow_array(array, store.slots, 0)
        array = reader.array(name, dtype, (store.high_water,))
        active = store.active_mask
        if array.size:
            if (array[~active] != 0).any():
                raise reader.fail(f"{name} must be 0 in every empty slot")
            live = array[active]
            if live.size and lo is not None and live.min() < lo:
                raise reader.fail(f"{name} holds a value below {lo}")
            if live.size and hi is not None and live.max() > hi:
                raise reader.fail(f"{name} holds a value above {hi}")
        return grow_array(array, store.slots, 0)


class EvictionPolicy(SlotState, ABC):
    """Names the item that leaves while the store is full, never a protected one
    (docs/DESIGN.md, "A memory's parts")."""

    name: ClassVar[str] = "base"
    #: nearest-neighbour similarities the store must maintain for this policy (0 = none)
    neighbours: int = 0
    #: whether the class overrides :meth:`on_feedback` (the memory skips ratings otherwise)
    listens_to_feedback: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.listens_to_feedback = cls.on_feedback is not EvictionPolicy.on_feedback

    def __init__(self) -> None:
        super().__init__()
        self._rng = np.random.default_rng()

    def bind(self, store: ItemTable, rng: np.random.Generator) -> None:
        """Attach to ``store`` and draw randomness from ``rng`` (owned by the memory)."""
        self._attach(store)
        self._rng = rng

    def on_retrieve(
        self, slots: Slots, step: int, query: Query = None, cosines: Cosines = None
    ) -> None:
        """A recorded retrieval returned ``slots``, best first (possibly none), for the unit
        vector ``query``; ``cosines`` are their cosine similarities to it."""

    def on_feedback(self, slots: Slots, reward: float) -> None:
        """The caller rated the retrieval that returned ``slots``; ``reward`` in [0, 1]."""

    def victim(self, step: int) -> Victim:
        """The slot to evict, never a protected one. The store must be non-empty."""
        store = self._store
        if store is None or len(store) == 0:
            raise RuntimeError("victim() called on an empty store")
        return self._victim(step, store.evictable_selection())

    @abstractmethod
    def _victim(self, step: int, slots: Selection) -> Victim:
        """The slot to evict among the evictable ``slots`` (a slice when they are 0, 1, 2...)."""

    @abstractmethod
    def on_insert(self, slot: int, step: int) -> None:
        """``slot`` now holds a new item."""

    def on_remove(self, slot: int, evicted: bool) -> None:
        """``slot`` was emptied, by eviction or by an explicit ``remove``."""
        self._empty(slot)

    def clear(self) -> None:
        """Forget every item."""
        self._empty(slice(None))

    def resized(self, capacity: int) -> None:
        """The memory now holds at most ``capacity`` items (it evicted down to it first)."""

    def describe(self, slot: int) -> Mapping[str, float]:
        """What the policy knows of the item in ``slot``."""
        return {}

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if internal state disagrees with the store."""


class OrderedEviction(EvictionPolicy):
    """A policy that keeps its items in eviction order (FIFO, LRU, ARC): the first unprotected
    slot in it leaves."""

    def victim(self, step: int) -> Victim:
        store = self._store
        if store is None or len(store) == 0:
            raise RuntimeError("victim() called on an empty store")
        protected = store.protected
        if not protected:  # the usual case: the first in the order leaves
            return Victim(next(iter(self._ranking(step))))
        for slot in self._ranking(step):
            if slot not in protected:
                return Victim(slot)
        raise RuntimeError("victim() called with every stored item protected")

    def _victim(self, step: int, slots: Selection) -> Victim:
        return self.victim(step)  # (which skips the protected slots, those not in ``slots``)

    @abstractmethod
    def _ranking(self, step: int) -> Iterable[int]:
        """Every stored slot, the first to evict first."""


def argmin_slot(keys: npt.NDArray[Any], slots: Selection) -> int:
    """The slot of the first lowest of ``keys`` (the values of ``slots``)."""
    pick = int(keys.argmin())
    return pick if isinstance(slots, slice) else int(slots[pick])


def lowest(scores: F64, slots: Slots | slice, n: int = 3) -> Victim:
    """The slot with the lowest score (the first on ties), the ``n`` lowest as contenders."""
    best = int(scores.argmin())
    m = min(n, len(scores))
    cut = scores.argpartition(m - 1)[:m] if m < len(scores) else np.arange(len(scores))
    ranked = sorted(
        [(s, i) for s, i in zip(scores[cut].tolist(), cut.tolist(), strict=True) if i != best]
    )
    picked = [(float(scores[best]), best)] + ranked[: m - 1]
    if isinstance(slots, slice):
        contenders = tuple([(i, s) for s, i in picked])
    else:
        contenders = tuple([(int(slots[i]), s) for s, i in picked])
    return Victim(contenders[0][0], contenders[0][1], contenders)


def grow_array(array: ArrayT, slots: int, fill: float) -> ArrayT:
    """``array`` extended to ``slots`` entries with ``fill`` (unchanged if long enough)."""
    if len(array) >= slots:
        return array
    extra = np.full(slots - len(array), fill, dtype=array.dtype)
    return cast(ArrayT, np.concatenate([array, extra]))


def read_order(reader: StateReader, name: str, store: ItemTable) -> Slots:
    """An order of the stored items: an int64 array of slots holding every active slot once."""
    order = reader.array(name, np.int64, (None,), lo=0, hi=store.high_water - 1)
    if len(order) != len(store) or not np.array_equal(np.sort(order), store.active_slots()):
        raise reader.fail(f"{name} must list every stored slot once, and no other")
    return order


def read_slot(reader: StateReader, name: str, store: ItemTable) -> int | None:
    """A slot that must hold an item, or ``None``."""
    value = reader.value(name)
    if value is None:
        return None
    if type(value) is not int or not 0 <= value < store.high_water or not store.active_mask[value]:
        raise reader.fail(f"{name} must be a stored slot or null, got {value!r}")
    return value
