"""Memory lifecycle: categories, importance, decay, expiry and trace retention.

The lifecycle rules, on top of :class:`SolarMemory`:

- Every item has a **category**. ``identity`` starts at importance 1.0, ``knowledge`` at 0.8 and
  ``context`` (the default: conversation turns) at 0.5.
- **Reinforcement**: each recorded retrieval that returns an item multiplies its importance by
  1.1, capped at 1.0.
- **Ranking**: with ``SolarMemory(importance_weight=w)``, hits are ranked by
  ``cosine * (1 - w + w * importance)``, and ``Hit.score`` is that product. The default ``w = 0``
  ranks by cosine alone, the paper's protocol. Importance never enters SOLAR's posterior: the
  posterior learns from retrievals and ratings, and importance only decides which items are
  retrieved.
- **Eviction**: identity items are never evicted to make room. They go only by deletion: an
  explicit ``remove()``, or a deletion policy the user configured (a deliberate rule, not
  capacity pressure). A memory full of identity items rejects other offers ("full of protected
  items"). Other categories are evicted by the policy as usual.
- :meth:`Lifecycle.decay` multiplies importance by 0.95 per day for context and 0.995 for
  knowledge, counting the days elapsed since the last decay. Identity does not decay.
- :meth:`Lifecycle.expire` removes context items older than ``ttl_days`` (7 by default), and any
  item past its ``valid_until``; :meth:`Lifecycle.lapse` removes only the latter (for items whose
  lifetime is their own, e.g. LangGraph's per-item TTL).
- :meth:`Lifecycle.renew` moves items' ``valid_until`` to ``now + seconds`` (a TTL refreshed
  on use): a step of the memory, logged by a persisted one like any other.
- :meth:`Lifecycle.sweep_traces` drops decision and retrieval traces older than their retention
  (days, per kind).
- :meth:`Lifecycle.start` runs decay, expire and sweep on a background schedule;
  :meth:`Lifecycle.stop` stops it.

Time comes from the memory's injected ``clock``, so tests never sleep.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Mapping
from types import MethodType
from typing import Any

from solar_core.basics.records import CATEGORIES, Record, check_category
from solar_core.basics.state import State, StateReader
from solar_core.basics.validation import FloatVector
from solar_core.engine.core import MemoryCore, StepListener
from solar_core.engine.steps import Renewal, Step, Sweep

__all__ = [
    "CATEGORIES",
    "DAILY_DECAY",
    "DAY",
    "INITIAL_IMPORTANCE",
    "REINFORCE",
    "TRACE_KINDS",
    "Lifecycle",
    "check_category",
]

DAY = 86_400.0
#: a new item's importance, by category
INITIAL_IMPORTANCE: Mapping[str, float] = {"identity": 1.0, "knowledge": 0.8, "context": 0.5}
#: reinforcement: a recorded retrieval multiplies the importance of what it returned by this
REINFORCE = 1.1
DAILY_DECAY: Mapping[str, float] = {"identity": 1.0, "knowledge": 0.995, "context": 0.95}
TRACE_KINDS = ("decision", "retrieval")
#: the sweeps, by the kind a persisted memory logs them under
SWEEPS = ("decay", "expire", "lapse", "sweep")


def _positive_days(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"{name} must be a positive number of days, got {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return float(value)


class Lifecycle(StepListener):
    """The lifecycle of one memory's items (``memory.lifecycle``): the rules above, applied as
    the memory's steps tell it what they stored and retrieved (it is the first of the memory's
    step listeners), and the sweeps, run as steps of the memory.

    >>> from solar_core import SolarMemory
    >>> now = [0.0]
    >>> m = SolarMemory("fifo", capacity=10, dim=2, clock=lambda: now[0])
    >>> fact = m.add("likes tea", embedding=[1, 0]).item_id        # a context item: 0.5
    >>> now[0] += 30 * 86_400                                          # 30 days later
    >>> round(m.lifecycle.decay()[fact], 4)                            # 0.5 * 0.95 ** 30
    0.1073
    >>> m.lifecycle.expire()                                           # past the 7-day TTL
    ['m1']
    >>> tea = m.add("tea at 5", embedding=[0, 1], valid_until=now[0] + 60).item_id
    >>> m.lifecycle.renew({tea: 3600})                                 # valid one more hour
    ['m2']
    >>> m.get(tea).valid_until - now[0]
    3600.0
    >>> now[0] += 3600
    >>> m.lifecycle.lapse()                                            # past its valid_until
    ['m2']
    """

    _last_decay: float | None

    def __init__(
        self,
        core: MemoryCore,
        *,
        ttl_days: float = 7.0,
        retention_days: Mapping[str, float] | None = None,
    ) -> None:
        # The memory's core, whose items and traces the sweeps change (named so in snapshots):
        # weakly, as the core holds its lifecycle (a listener): no cycle (see _core).
        self._memory: Callable[[], MemoryCore | None] | None = weakref.ref(core)
        # How a sweep runs as a step of the memory (logged, for a persisted one): set by it, as
        # a weak reference (the memory holds its lifecycle: no cycle, freed by refcounting).
        self._run: Callable[[], Callable[[Step], Any] | None] | None = None
        self.ttl_days = _positive_days("ttl_days", ttl_days)
        retention = {"decision": 30.0, "retrieval": 30.0}
        if retention_days is not None and not isinstance(retention_days, Mapping):
            raise TypeError(
                f"trace_retention_days must map trace kinds ({', '.join(TRACE_KINDS)}) to days, "
                f"e.g. {{'decision': 30.0}}; got {retention_days!r}"
            )
        for kind, days in (retention_days or {}).items():
            if kind not in TRACE_KINDS:
                raise ValueError(f"retention kinds are {', '.join(TRACE_KINDS)}, got {kind!r}")
            retention[kind] = _positive_days(f"retention_days[{kind!r}]", days)
        self.retention_days = retention
        self._last_decay = None  # no clock call here: a clock may be stateful
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.ticks = 0  # background runs completed
        self.last_error: Exception | None = None  # the latest failure of a background run

    # -- the core's events -------------------------------------------------------------------
    def stored(self, item_id: str, record: Record, vector: FloatVector) -> None:
        record.importance = INITIAL_IMPORTANCE[record.category]
        if record.category == "identity":  # never evicted to make room: the store skips it
            store = self._core.store
            store.protected.add(store.slot_of(item_id))

    def retrieved(self, records: list[Record]) -> None:
        for record in records:  # reinforcement: returned to a caller, so more important
            boosted = record.importance * REINFORCE
            record.importance = boosted if boosted < 1.0 else 1.0

    # -- sweeps -------------------------------------------------------------------------------
    def decay(self) -> dict[str, float]:
        """Apply the per-day factors for the days each item has lived since the last decay (or
        since it was stored, if later); returns the new importance of every item."""
        result: dict[str, float] = self._step("decay")
        return result

    def _step(self, kind: str) -> Any:
        return self._runner()(Sweep(kind))

    @property
    def _core(self) -> MemoryCore:
        core = None if self._memory is None else self._memory()
        if core is None:
            raise RuntimeError("this lifecycle belongs to no memory (or its memory is gone)")
        return core

    def _runner(self) -> Callable[[Step], Any]:
        run = None if self._run is None else self._run()
        if run is None:
            raise RuntimeError("this lifecycle belongs to no memory (or its memory is gone)")
        return run

    def apply(self, kind: str) -> Any:
        """Run the sweep ``kind`` now (under the memory's lock: see
        :mod:`solar_core.engine.steps`)."""
        if kind == "decay":
            return self._decay()
        if kind == "expire":
            return self._expire()
        if kind == "lapse":
            return self._expire(context=False)
        if kind == "sweep":
            return self._sweep_traces()
        raise ValueError(f"unknown lifecycle sweep {kind!r}")

    def _decay(self) -> dict[str, float]:
        memory = self._core
        now = memory.clock()
        last = self._last_decay
        if last is not None and now < last:  # the clock went back: no time has passed
            now = last
        out = {}
        for item_id, record in memory.records():
            start = record.created_at if last is None else max(last, record.created_at)
            days = max(now - start, 0.0) / DAY
            record.importance *= DAILY_DECAY[record.category] ** days
            out[item_id] = record.importance
        self._last_decay = now
        return out

    def expire(self) -> list[str]:
        """Remove context items older than ``ttl_days`` and items past ``valid_until``; returns
        their ids, oldest first. A deletion: the memory's subscribers hear it (reason
        ``"expired"``) before this returns, so a watching response cache drops the answers that
        may have used them (a scheduled run via :meth:`start` too)."""
        result: list[str] = self._step("expire")
        return result

    def lapse(self) -> list[str]:
        """Remove only the items past their ``valid_until`` (context items live on whatever
        their age: their lifetime is their ``valid_until``); returns their ids, oldest first.
        A deletion told as :meth:`expire`'s are (reason ``"expired"``)."""
        result: list[str] = self._step("lapse")
        return result

    def _expire(self, context: bool = True) -> list[str]:
        memory = self._core
        now = memory.clock()
        doomed = [
            item_id
            for item_id, r in memory.records()
            if (context and r.category == "context" and now - r.created_at >= self.ttl_days * DAY)
            or (r.valid_until is not None and now >= r.valid_until)
        ]
        for item_id in doomed:
            memory.remove(item_id, "expired")
        return doomed

    def renew(
        self, lifetimes: Mapping[str, float], seen: Mapping[str, float] | None = None
    ) -> list[str]:
        """Keep items valid ``seconds`` more from now: ``valid_until = now + seconds`` for each
        ``item_id: seconds`` of ``lifetimes``; returns the renewed ids. Only items that expire
        and have not yet are renewed (ids not stored, items without a ``valid_until`` and items
        past it are skipped), and with ``seen`` (``item_id: the valid_until the caller read``)
        only those nobody changed since. Nothing else moves (no statistic, counter or trace: a
        renewal is not a use). ``seconds`` must be finite and > 0; bad input changes nothing.
        """
        if not isinstance(lifetimes, Mapping):
            raise TypeError(
                f"lifetimes must be a mapping of item id to seconds, got {type(lifetimes).__name__}"
            )
        if seen is not None and not isinstance(seen, Mapping):
            raise TypeError(f"seen must be a mapping of item id to a time, got {seen!r}")
        entries = []
        for item_id, seconds in lifetimes.items():
            if not isinstance(item_id, str):
                raise TypeError(f"item id must be a str, got {type(item_id).__name__}")
            if isinstance(seconds, bool) or not isinstance(seconds, int | float):
                raise TypeError(
                    f"lifetimes[{item_id!r}] must be a number of seconds, got {seconds!r}"
                )
            try:
                value = float(seconds)
            except OverflowError:  # an int too large for a float
                value = math.inf
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(
                    f"lifetimes[{item_id!r}] must be a finite number of seconds > 0, got "
                    f"{seconds!r} (to end an item's validity, remove it)"
                )
            was = None if seen is None else seen.get(item_id)
            if was is not None and (
                isinstance(was, bool) or not isinstance(was, int | float) or not math.isfinite(was)
            ):
                raise TypeError(f"seen[{item_id!r}] must be a finite time, got {was!r}")
            entries.append((item_id, value, None if was is None else float(was)))
        if not entries:
            return []  # nothing to renew: no step (a scope not stored stays so)
        result: list[str] = self._runner()(Renewal(tuple(entries)))
        return result

    def appliers(self) -> dict[type, Callable[[Any], Any]]:
        """Who applies the lifecycle's steps (part of the memory's dispatch: one look-up per
        step): sweeps here, renewals by the core (it tells its listeners what moved)."""
        return {
            Sweep: lambda step: self.apply(step.kind),
            Renewal: lambda step: self._core.renew(step),
        }

    def sweep_traces(self) -> dict[str, int]:
        """Drop the decision and retrieval traces older than their retention; returns how many
        of each kind went."""
        result: dict[str, int] = self._step("sweep")
        return result

    def _sweep_traces(self) -> dict[str, int]:
        memory = self._core
        now = memory.clock()
        return memory.drop_traces_before(
            now - self.retention_days["decision"] * DAY,
            now - self.retention_days["retrieval"] * DAY,
        )

    def run(self) -> None:
        """Decay, expire and sweep the traces, once."""
        self.decay()
        self.expire()
        self.sweep_traces()

    # -- the background schedule -------------------------------------------------------------
    def start(self, every_seconds: float) -> None:
        """Run :meth:`run` now and then every ``every_seconds`` in a daemon thread, until
        :meth:`stop`.

        ``every_seconds`` must be a finite number > 0 and at most ``threading.TIMEOUT_MAX`` (the
        longest wait a thread can make); anything else is refused here, not left to kill the
        thread later. A failing :meth:`run` is kept in :attr:`last_error` and the schedule goes
        on; anything else that stops the thread is kept there too.
        """
        if isinstance(every_seconds, bool) or not isinstance(every_seconds, int | float):
            raise TypeError(f"every_seconds must be a number, got {type(every_seconds).__name__}")
        try:
            interval = float(every_seconds)
        except OverflowError:  # an int too large for a float
            interval = math.inf
        if not 0 < interval <= threading.TIMEOUT_MAX:  # also refuses NaN and inf
            raise ValueError(
                f"every_seconds must be a finite number > 0 and at most "
                f"threading.TIMEOUT_MAX ({threading.TIMEOUT_MAX:g}), got {every_seconds!r}"
            )
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("the lifecycle schedule is already running: stop() it first")
        self._stop.clear()
        # The thread holds its lifecycle weakly (a dropped memory is freed: it then stops).
        this, stop = weakref.ref(self), self._stop
        weakref.finalize(self, stop.set)

        def loop() -> None:
            try:
                while (lifecycle := this()) is not None:
                    try:
                        lifecycle.run()
                    except Exception as err:  # keep the schedule alive; the error is inspectable
                        lifecycle.last_error = err
                    lifecycle.ticks += 1
                    del lifecycle  # (held only while it runs)
                    if stop.wait(interval):
                        return
            except BaseException as err:  # the thread ends: say why rather than vanish
                if (lifecycle := this()) is not None:
                    lifecycle.last_error = (
                        err
                        if isinstance(err, Exception)
                        else RuntimeError(f"the lifecycle schedule stopped: {err!r}")
                    )

        self._thread = threading.Thread(target=loop, name="solar-lifecycle", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop the background schedule (a no-op when it is not running)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if not self._thread.is_alive():  # still running (join timed out): keep the handle
                self._thread = None

    @property
    def last_decay(self) -> float | None:
        """The clock time importance was last decayed to (``None``: never)."""
        return self._last_decay

    @last_decay.setter
    def last_decay(self, when: float | None) -> None:
        self._last_decay = when

    def bind(self, core: MemoryCore, run: Callable[[Step], Any]) -> None:
        """Serve the memory whose state is ``core`` and whose steps ``run`` runs."""
        self._memory = weakref.ref(core)
        self._run = weakref.WeakMethod(run) if isinstance(run, MethodType) else lambda: run

    def take_state(self, donor: Lifecycle, core: MemoryCore) -> None:
        """Take ``donor``'s settings and sweep times, for ``core`` (a memory replacing its state
        in place); the schedule and the wiring stay."""
        self.ttl_days, self.retention_days = donor.ttl_days, donor.retention_days
        self._last_decay = donor.last_decay
        self._memory = weakref.ref(core)

    # -- explicit state (see solar_core.basics.state) ----------------------------------------------
    def params(self) -> dict[str, Any]:
        """The memory's arguments that made this lifecycle."""
        return {"ttl_days": self.ttl_days, "trace_retention_days": dict(self.retention_days)}

    def state(self) -> State:
        """When importance was last decayed (a schedule, a thread, a last error are not
        state: a loaded memory starts without a schedule)."""
        return {"last_decay": self._last_decay}

    def load_state(self, state: Mapping[str, Any]) -> None:
        read = StateReader(state, "the lifecycle's state")
        last = read.number("last_decay", optional=True)
        read.done()
        self._last_decay = last

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def describe(self) -> dict[str, Any]:
        """The lifecycle's settings and schedule as plain data."""
        return {
            "ttl_days": self.ttl_days,
            "retention_days": dict(self.retention_days),
            "last_decay": self._last_decay,
            "running": self.running,
        }
