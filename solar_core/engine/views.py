"""Reading a memory (the part of :class:`~solar_core.SolarMemory` that never changes it). Every
read holds the memory's lock and first brings a persisted memory up to date with others."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, TypeVar

from solar_core.basics.records import Record, read_copy
from solar_core.basics.types import Decision, MemoryItem
from solar_core.basics.validation import FloatVector, check_k
from solar_core.embedders.embedder import Embedder
from solar_core.engine.core import MemoryCore
from solar_core.engine.events import Subscribers
from solar_core.engine.lifecycle import Lifecycle
from solar_core.engine.steps import StepRunner

_T = TypeVar("_T")
#: an exported item's fields, in order
_EXPORTED = (
    "id text metadata category importance created_at valid_until policy seen last_seen key "
    "superseded_at superseded_by"
).split()


class MemoryViews:
    """What :class:`~solar_core.SolarMemory` shows of itself (a base class)."""

    _core: MemoryCore
    _lock: threading.RLock
    _embedder: Embedder | None
    lifecycle: Lifecycle
    policy: str
    retrieval: str
    min_score: float | str | None
    _runner: StepRunner
    _events: Subscribers

    # -- for wrappers (persistence): the parts around the state --------------------------------
    @property
    def core(self) -> MemoryCore:
        """The state machine this memory wraps."""
        return self._core

    @property
    def lock(self) -> threading.RLock:
        """The lock every step and read holds."""
        return self._lock

    def subscribe(
        self,
        callback: Callable[[str, str, FloatVector, dict[str, Any]], None] | None = None,
        *,
        on_delete: Callable[[list[str], str], None] | None = None,
    ) -> None:
        """Call ``callback(item_id, text, unit_vector, metadata)`` after every stored item, and
        ``on_delete(item_ids, reason)`` after every step that took items out (either may be
        ``None``), under the lock, before the changing call returns: keep them short. Not state.
        ``reason``: ``"evicted"``, ``"removed"``, ``"cleared"``, ``"expired"``, ``"deleted"``,
        ``"superseded"`` (a keyed fact's older value, which leaves for the history);
        persisted also ``"forgotten"`` and ``"reloaded"`` (DESIGN.md). Deletions are told
        before the stored item, other processes' steps' too."""
        Subscribers.check(callback, on_delete)
        with self._lock:
            self._events.add(callback, on_delete)
            if self._events not in self._core.listeners:
                self._core.listen(self._events)

    @property
    def events(self) -> Subscribers:
        """The subscriptions (:meth:`~solar_core.SolarMemory.subscribe`)."""
        return self._events

    @property
    def runner(self) -> StepRunner:
        """Who runs this memory's steps (a persisted memory's journal)."""
        return self._runner

    # -- reads --------------------------------------------------------------------------------
    def _sync(self) -> None:
        """Catch up with other processes' steps (a persisted memory; under the lock)."""
        self._runner.sync()

    def _read(self, read: Callable[[], _T]) -> _T:
        """``read()`` under the lock, caught up first."""
        with self._lock:
            self._sync()
            return read()

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if the store, the policies or the counters disagree."""
        with self._lock:
            self._core.check_invariants()

    @property
    def embedder(self) -> Embedder | None:
        """The embedder that turns texts into vectors (``None`` for a vectors-only memory)."""
        return self._embedder

    @property
    def capacity(self) -> int | None:
        """The most items kept (``None``: unbounded); a stored scope's as of now (resizable)."""
        return self._read(lambda: self._core.capacity)

    @property
    def dim(self) -> int:
        """The dimension of the stored vectors."""
        return self._core.dim

    @property
    def importance_weight(self) -> float:
        """``w`` in the ranking ``cosine * (1 - w + w * importance)``."""
        return self._core.importance_weight

    def __len__(self) -> int:
        return self._read(lambda: len(self._core.store))

    def __contains__(self, item_id: object) -> bool:
        """Whether ``item_id`` names an item :meth:`get` returns: held, or a superseded value
        the memory keeps for ``as_of`` (``len`` counts the items held only)."""
        return self._read(lambda: self._core.holds(item_id))

    def __iter__(self) -> Iterator[MemoryItem]:
        return iter(self.items())

    def get(self, item_id: str) -> MemoryItem:
        """The stored item ``item_id``; raises :class:`UnknownItemError` if absent."""
        return self._read(lambda: self._core.item(item_id))

    def records(self) -> list[tuple[str, Record]]:
        """Every stored item's id and record (copies), oldest first: the cheap read, which
        builds no policy statistics (:meth:`items` does).

        >>> from solar_core import SolarMemory
        >>> memory = SolarMemory("fifo", capacity=2, embedder="hash")
        >>> _ = memory.add("tea at five", metadata={"day": 1})
        >>> [(item_id, record.text, record.metadata) for item_id, record in memory.records()]
        [('m1', 'tea at five', {'day': 1})]
        """
        return self._read(
            lambda: [
                (i, replace(r, metadata=read_copy(r.metadata))) for i, r in self._core.records()
            ]
        )

    def now(self) -> float:
        """The time on this memory's clock, read outside any step (so not logged)."""
        clock: Callable[[], float] = getattr(self._runner, "user_clock", self._core.clock)
        return clock()

    def check_rating(self, retrieval: object) -> None:
        """Raise what :meth:`~solar_core.SolarMemory.feedback` would raise for ``retrieval``,
        changing nothing (for a caller that must refuse before it rates any of several)."""
        with self._lock:
            self._sync()
            runner = self._runner
            if getattr(runner, "unstored", False) or runner.unrecorded(retrieval):
                return  # before a scope's first write: a rating changes nothing, refuses nothing
            self._core.resolve_retrieval(retrieval)

    def items(self, include_superseded: bool = False) -> list[MemoryItem]:
        """Every stored item, oldest insert first; ``include_superseded``: then the superseded
        values of keyed facts the memory keeps (outside its capacity), the longest-superseded
        first.

        >>> from solar_core import SolarMemory
        >>> memory = SolarMemory("fifo", capacity=2, embedder="hash")
        >>> _ = memory.add("Ana lives in Paris", key="ana/home")
        >>> _ = memory.add("Ana lives in Lyon", key="ana/home")
        >>> [i.text for i in memory.items()], len(memory)
        (['Ana lives in Lyon'], 1)
        >>> [(i.text, i.superseded_by) for i in memory.items(include_superseded=True)]
        [('Ana lives in Lyon', None), ('Ana lives in Paris', 'm2')]
        """
        if type(include_superseded) is not bool:
            raise TypeError(f"include_superseded must be True or False, got {include_superseded!r}")

        def read() -> list[MemoryItem]:  # the core as caught up (a reload makes another)
            core = self._core
            past = core.past_ids() if include_superseded else []
            return [core.item(i) for i in (*core.ids(), *past)]

        return self._read(read)

    def vector(self, item_id: str) -> FloatVector:
        """A copy of the stored unit vector of ``item_id``."""
        return self._read(lambda: self._core.vector(item_id))

    def retrieval_trace(self) -> list[dict[str, Any]]:
        """The recorded retrievals kept (query, ids, scores, ``at``), oldest first."""
        return self._read(
            lambda: [
                {"at": at, "query": q, "ids": [h.id for h in hs], "scores": [h.score for h in hs]}
                for at, q, hs in self._core.retrievals()
            ]
        )

    def export(self) -> dict[str, Any]:
        """The whole memory as plain data to read (not to load: that is :meth:`state`)."""
        with self._lock:
            self._sync()
            return {
                "policy": self.policy,
                "capacity": self.capacity,
                "items": [
                    {f: getattr(i, f) for f in _EXPORTED}
                    | {"metadata": dict(i.metadata), "policy": dict(i.policy)}
                    for i in self.items()
                ],
                "stats": self.stats(),
                "lifecycle": self.lifecycle.describe(),
                "decisions": [
                    {"at": at, **{f: getattr(d, f) for f in d.__slots__}}
                    for at, d in self._core.decisions()
                ],
                "retrievals": self.retrieval_trace(),
            }

    def trace(self, last: int | None = None) -> list[Decision]:
        """The most recent decisions, oldest first (at most ``trace_size`` are kept)."""
        decisions = self._read(lambda: [d for _, d in self._core.decisions()])
        return decisions if last is None else decisions[-check_k(last, "last") :]

    def stats(self) -> dict[str, Any]:
        """Counters: size, capacity, steps, admitted, rejected, evicted, modifications, tau, ..."""
        return self._read(
            lambda: {
                "policy": self.policy,
                **self._core.stats(),
                "retrieval": self.retrieval,
                "min_score": self.min_score,
                "prior": getattr(getattr(self._core.eviction, "prior", None), "name", None),
            }
        )

    def __repr__(self) -> str:
        embedder = type(self._embedder).__name__ if self._embedder is not None else None
        return (
            f"SolarMemory(policy={self.policy!r}, capacity={self.capacity}, size={len(self)}, "
            f"dim={self.dim}, embedder={embedder})"
        )
