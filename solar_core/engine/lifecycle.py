"""Memory lifecycle: categories, importance, decay, expiry and trace retention (DESIGN.md,
"Lifecycle and response cache"). The sweeps and renewals are steps of the memory (logged by a
persisted one), run on demand or on a background schedule."""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Mapping
from types import MethodType
from typing import Any, cast

from solar_core.basics.records import Record
from solar_core.basics.state import State, StateReader
from solar_core.basics.validation import FloatVector
from solar_core.engine.core import MemoryCore, StepListener
from solar_core.engine.steps import Renewal, Step, Sweep

DAY = 86_400.0
#: a new item's importance, by category
INITIAL_IMPORTANCE: Mapping[str, float] = {"identity": 1.0, "knowledge": 0.8, "context": 0.5}
#: reinforcement: a recorded retrieval multiplies the importance of what it returned by this
REINFORCE = 1.1
DAILY_DECAY: Mapping[str, float] = {"identity": 1.0, "knowledge": 0.995, "context": 0.95}
TRACE_KINDS = ("decision", "retrieval")
_NO_MEMORY = "this lifecycle belongs to no memory (or its memory is gone)"


def _real(value: object) -> float | None:
    """``value`` as a float (``inf`` for an int too large for one); ``None`` if no number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf


def _positive_days(name: str, value: object) -> float:
    days = _real(value)
    if days is None or not days > 0:
        raise ValueError(f"{name} must be a positive number of days, got {value!r}")
    if not math.isfinite(days):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return days


class Lifecycle(StepListener):
    """The lifecycle of one memory's items (``memory.lifecycle``), the memory's first step
    listener.

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

    def __init__(
        self,
        core: MemoryCore,
        *,
        ttl_days: float = 7.0,
        retention_days: Mapping[str, float] | None = None,
    ) -> None:
        # The memory's core and how its steps run, both weakly: the memory holds its lifecycle
        # (and the core its listeners), so no cycle (set by bind()).
        self._memory: Callable[[], MemoryCore | None] = weakref.ref(core)
        self._run: Callable[[], Callable[[Step], Any] | None] = lambda: None
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
        #: the clock time importance was last decayed to (``None``: never); no clock call
        #: here: a clock may be stateful
        self.last_decay: float | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.ticks = 0  # background runs completed
        self.last_error: Exception | None = None  # the latest failure of a background run

    def bind(self, core: MemoryCore, run: Callable[[Step], Any]) -> None:
        """Serve the memory whose state is ``core`` and whose steps ``run`` runs."""
        self._memory = weakref.ref(core)
        self._run = weakref.WeakMethod(run) if isinstance(run, MethodType) else lambda: run

    @property
    def _core(self) -> MemoryCore:
        core = self._memory()
        if core is None:
            raise RuntimeError(_NO_MEMORY)
        return core

    def _step(self, step: Step) -> Any:
        run = self._run()
        if run is None:
            raise RuntimeError(_NO_MEMORY)
        return run(step)

    def appliers(self) -> dict[type, Callable[[Any], Any]]:
        """Who applies the lifecycle's steps (part of the memory's dispatch): sweeps here,
        renewals by the core (it tells its listeners what moved)."""
        sweeps: dict[str, Callable[[], Any]] = {"decay": self._decay, "expire": self._expire}
        sweeps.update(lapse=lambda: self._expire(context=False), sweep=self._sweep_traces)
        return {Sweep: lambda step: sweeps[step.kind](), Renewal: lambda s: self._core.renew(s)}

    # -- the core's events -------------------------------------------------------------------
    def stored(self, item_id: str, record: Record, vector: FloatVector) -> None:
        record.importance = INITIAL_IMPORTANCE[record.category]
        # never evicted to make room (the store skips it): an identity item, and a current
        # fact with a key (superseded, it leaves the slots for the history)
        if record.category == "identity" or record.key is not None:
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
        return cast(dict[str, float], self._step(Sweep("decay")))

    def _decay(self) -> dict[str, float]:
        memory, last = self._core, self.last_decay
        now = memory.clock()
        if last is not None and now < last:  # the clock went back: no time has passed
            now = last
        out = {}
        for item_id, record in memory.records():
            start = record.created_at if last is None else max(last, record.created_at)
            record.importance *= DAILY_DECAY[record.category] ** (max(now - start, 0.0) / DAY)
            out[item_id] = record.importance
        self.last_decay = now
        return out

    def expire(self) -> list[str]:
        """Remove context items older than ``ttl_days`` and items past ``valid_until``; returns
        their ids, oldest first (the subscribers hear reason ``"expired"``)."""
        return cast(list[str], self._step(Sweep("expire")))

    def lapse(self) -> list[str]:
        """Remove only the items past their ``valid_until``, as :meth:`expire` does."""
        return cast(list[str], self._step(Sweep("lapse")))

    def _expire(self, context: bool = True) -> list[str]:
        memory = self._core
        now = memory.clock()
        doomed = [
            item_id
            for item_id, r in memory.records()
            if (context and r.category == "context" and now - r.created_at >= self.ttl_days * DAY)
            and (r.key is None or r.superseded_at is not None)  # a current fact does not age out
            or (r.valid_until is not None and now >= r.valid_until)
        ]
        for item_id in doomed:
            memory.remove(item_id, "expired")
        return doomed

    def renew(
        self, lifetimes: Mapping[str, float], seen: Mapping[str, float] | None = None
    ) -> list[str]:
        """``valid_until = now + seconds`` for each ``item_id: seconds`` of ``lifetimes`` that
        expires and has not yet (with ``seen``, ``item_id: the valid_until the caller read``:
        and nobody changed since); returns the renewed ids. A renewal is not a use."""
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
            value = _real(seconds)
            if value is None:
                raise TypeError(
                    f"lifetimes[{item_id!r}] must be a number of seconds, got {seconds!r}"
                )
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(
                    f"lifetimes[{item_id!r}] must be a finite number of seconds > 0, got "
                    f"{seconds!r} (to end an item's validity, remove it)"
                )
            was = None if seen is None else seen.get(item_id)
            read = None if was is None else _real(was)
            if was is not None and (read is None or not math.isfinite(read)):
                raise TypeError(f"seen[{item_id!r}] must be a finite time, got {was!r}")
            entries.append((item_id, value, read))
        if not entries:
            return []  # nothing to renew: no step (a scope not stored stays so)
        return cast(list[str], self._step(Renewal(tuple(entries))))

    def sweep_traces(self) -> dict[str, int]:
        """Drop the traces older than their retention; returns how many of each kind went."""
        return cast(dict[str, int], self._step(Sweep("sweep")))

    def _sweep_traces(self) -> dict[str, int]:
        now, days = self._core.clock(), self.retention_days
        return self._core.drop_traces_before(
            now - days["decision"] * DAY, now - days["retrieval"] * DAY
        )

    def run(self) -> None:
        """Decay, expire and sweep the traces, once."""
        self.decay()
        self.expire()
        self.sweep_traces()

    # -- the background schedule -------------------------------------------------------------
    def start(self, every_seconds: float) -> None:
        """Run :meth:`run` now and then every ``every_seconds`` (> 0, at most
        ``threading.TIMEOUT_MAX``) in a daemon thread, until :meth:`stop`. A failing run is
        kept in :attr:`last_error` and the schedule goes on; whatever stops the thread too."""
        interval = _real(every_seconds)
        if interval is None:
            raise TypeError(f"every_seconds must be a number, got {type(every_seconds).__name__}")
        if not 0 < interval <= threading.TIMEOUT_MAX:  # also refuses NaN and inf
            raise ValueError(
                f"every_seconds must be a finite number > 0 and at most "
                f"threading.TIMEOUT_MAX ({threading.TIMEOUT_MAX:g}), got {every_seconds!r}"
            )
        if self.running:
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
                    stopped = RuntimeError(f"the lifecycle schedule stopped: {err!r}")
                    lifecycle.last_error = err if isinstance(err, Exception) else stopped

        self._thread = threading.Thread(target=loop, name="solar-lifecycle", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 5.0) -> None:
        """Stop the background schedule (a no-op when it is not running)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if not self._thread.is_alive():  # (join timed out: the handle is kept)
                self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def take_state(self, donor: Lifecycle, core: MemoryCore) -> None:
        """Take ``donor``'s settings and sweep time, for ``core`` (a memory replacing its state
        in place)."""
        self.ttl_days, self.retention_days = donor.ttl_days, donor.retention_days
        self.last_decay, self._memory = donor.last_decay, weakref.ref(core)

    # -- explicit state (see solar_core.basics.state) ----------------------------------------------
    def params(self) -> dict[str, Any]:
        """The memory's arguments that made this lifecycle."""
        return {"ttl_days": self.ttl_days, "trace_retention_days": dict(self.retention_days)}

    def state(self) -> State:
        """When importance was last decayed (a schedule is not state)."""
        return {"last_decay": self.last_decay}

    def load_state(self, state: Mapping[str, Any]) -> None:
        read = StateReader(state, "the lifecycle's state")
        last = read.number("last_decay", optional=True)
        read.done()  # (before anything changes)
        self.last_decay = last

    def describe(self) -> dict[str, Any]:
        """The lifecycle's settings and schedule as plain data."""
        settings = {"ttl_days": self.ttl_days, "retention_days": dict(self.retention_days)}
        return {**settings, "last_decay": self.last_decay, "running": self.running}
