"""What pickling and copying a :class:`~solar_core.SolarMemory` hold, and how a memory copies
(:class:`MemoryCopies`): its parameters and state, with its run-time parts (embedder, clock,
evaluator). Subscriptions, the lock and a journal are left out."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, SupportsIndex, TypeVar, cast

import numpy as np

from solar_core.basics.state import State, StateError, StateReader, build, part_of, prefixed, spec
from solar_core.engine.core import MemoryCore
from solar_core.engine.lifecycle import Lifecycle
from solar_core.engine.steps import StepRunner
from solar_core.policies.admission import AdmissionPolicy
from solar_core.policies.admission.evaluator_gate import Evaluator, EvaluatorGate
from solar_core.policies.eviction import EvictionPolicy
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

_M = TypeVar("_M", bound="MemoryCopies")


class _Memory(Protocol):
    """What is read of a :class:`~solar_core.SolarMemory` (not imported: it imports this)."""

    @property
    def core(self) -> MemoryCore: ...

    @property
    def runner(self) -> StepRunner: ...

    lifecycle: Lifecycle

    @property
    def embedder(self) -> Any: ...

    def params(self) -> dict[str, Any]: ...

    def state(self) -> dict[str, Any]: ...


def state_of(memory: _Memory) -> dict[str, Any]:
    """What pickling and copying ``memory`` hold (its ``__getstate__``): its parameters and
    state (the one meaning of state, see :mod:`solar_core.basics.state`) and the run-time parts a
    rebuilt memory is given again: the embedder, the clock (a stored memory's own, not its
    journal's) and the evaluator."""
    core = memory.core
    admission = core.admission
    return {
        "params": memory.params(),
        "state": memory.state(),
        "embedder": memory.embedder,
        "clock": getattr(memory.runner, "user_clock", core.clock),
        "evaluator": admission.evaluator if isinstance(admission, EvaluatorGate) else None,
    }


class MemoryCopies:
    """A :class:`~solar_core.SolarMemory`'s explicit state (:meth:`params`, :meth:`state`,
    :meth:`load_state`, :meth:`from_params`) and how it copies (a base class: it reads the
    memory's lock, runner, core, embedder and settings).

    A plain memory copies (``copy.copy``, ``copy.deepcopy``, pickling) as an independent one; a
    stored memory refuses all three, as its copy would take writes that never reach its scope
    (and a shallow one would share half of its state with it: the store, the policies, the
    traces, while counting on its own), and offers :meth:`detached` instead.
    """

    _lock: threading.RLock
    _local: bool
    _runner: StepRunner
    _core: MemoryCore
    _embedder: Any
    _prepares: bool
    policy: str
    k: int
    retrieval: Any
    min_score: Any
    lifecycle: Lifecycle

    if TYPE_CHECKING:  # the memory's own (MemoryViews' and SolarMemory's)

        def _sync(self) -> None: ...

        def _wire(self) -> None: ...

        def take_state(self, donor: Any) -> None: ...

    @property
    def persistent(self) -> bool:
        """Whether this memory's steps go to a database (a :class:`MemoryStore` scope's memory):
        such a memory cannot be copied or pickled, see :meth:`detached`."""
        return not self._local

    def detached(self: _M) -> _M:
        """An independent, in-memory copy of this memory as it is now (a stored memory first
        catches up with the database): the same items, policy statistics, counters, traces and
        random generator, and the same embedder, clock and evaluator objects; no subscriptions.
        Its writes change only the copy: they never reach a database. Of a plain memory,
        ``copy.copy`` gives the same (``deepcopy`` and pickling copy the embedder as well); of
        a stored one, they are refused. Another handle of its scope is ``store.scope(...)``.

        >>> from solar_core import SolarMemory
        >>> memory = SolarMemory("fifo", capacity=3, embedder="hash")
        >>> _ = memory.add("tea at five")
        >>> twin = memory.detached()
        >>> _ = twin.add("coffee at nine")
        >>> len(memory), len(twin), twin.persistent
        (1, 2, False)
        """
        with self._lock:
            self._sync()
            return self._copy(self._runtime_parts())

    def __copy__(self: _M) -> _M:
        """An independent memory sharing only the run-time parts (embedder, clock, evaluator)."""
        self._refuse_copy("copy.copy()")
        with self._lock:
            return self._copy(self._runtime_parts())

    def __deepcopy__(self: _M, memo: dict[int, Any] | None = None) -> _M:
        self._refuse_copy("copy.deepcopy()")
        memo = {} if memo is None else memo
        with self._lock:
            twin = self._copy(memo)
        memo[id(self)] = twin
        return twin

    def __reduce_ex__(self, protocol: SupportsIndex) -> str | tuple[Any, ...]:
        self._refuse_copy("pickling")
        return super().__reduce_ex__(protocol)

    def _refuse_copy(self, how: str) -> None:
        if not self._local:
            raise TypeError(
                f"{how} of a stored memory is refused: a copy's writes would never reach its "
                "scope. Open the scope again with store.scope(...) for another handle of it, or "
                "call memory.detached() for an independent in-memory copy"
            )

    def _runtime_parts(self) -> dict[int, Any]:
        """A deepcopy memo that keeps the run-time objects a copy shares: the embedder, the
        clock (a stored memory's own, not its journal's) and an evaluator."""
        clock = getattr(self._runner, "user_clock", self._core.clock)
        shared: list[object] = [self._embedder, clock]
        if self._prepares:
            shared.append(getattr(self._core.admission, "evaluator", None))
        return {id(part): part for part in shared if part is not None}

    def _copy(self: _M, memo: dict[int, Any]) -> _M:
        """A new memory of a deep copy of this one's state (under the lock)."""
        twin = type(self).__new__(type(self))
        twin.__setstate__(copy.deepcopy(state_of(self), memo))  # type: ignore[arg-type]
        return twin

    # -- explicit state (see solar_core.basics.state): what snapshots, pickles and copies hold -----
    def params(self) -> dict[str, Any]:
        """What this memory was built with, as JSON values: its policy's name, capacity,
        dimension and reading settings, and each part's class and parameters.
        :meth:`from_params` builds a new, empty memory from them.

        >>> from solar_core import SolarMemory
        >>> memory = SolarMemory("lfu", capacity=4, embedder="hash")
        >>> params = memory.params()
        >>> params["policy"], params["capacity"], params["eviction"]
        ('lfu', 4, {'class': 'LfuEviction', 'params': {'tie_break': 'insertion'}})
        >>> SolarMemory.from_params(params, embedder="hash").params() == params
        True
        """
        with self._lock:
            core = self._core
            admission, eviction = core.admission, core.eviction
            gate = None
            if isinstance(admission, EvaluatorGate):
                gate = {k: v for k, v in admission.params().items() if k != "inner"}
                admission = admission.inner
            return {
                "policy": self.policy,
                **core.params(),
                "k": self.k,
                "retrieval": self.retrieval,
                "min_score": self.min_score,
                **self.lifecycle.params(),
                "random": type(core.rng.bit_generator).__name__,
                "eviction": spec(eviction),
                "admission": None if admission is cast(object, eviction) else spec(admission),
                "evaluator": gate,
                "deletion": None if core.deletion is None else spec(core.deletion),
            }

    @classmethod
    def from_params(
        cls: type[_M],
        params: Mapping[str, Any],
        *,
        embedder: object = None,
        clock: Callable[[], float] = time.time,
        evaluator: Evaluator | None = None,
        seed: int | None = None,
    ) -> _M:
        """A new, empty memory of :meth:`params` (how it reads -- ``k``, ``retrieval``,
        ``min_score`` -- the defaults where they leave it out), its random generator seeded by
        ``seed``; the run-time parts (embedder, clock, the evaluator of a memory that has one)
        are given again. Parameters no part takes, or a part that is not registered, raise
        :class:`~solar_core.basics.state.StateError`."""
        return build_memory(cls, params, embedder, clock, evaluator, seed)

    def state(self) -> State:
        """What this memory has learned: a flat dict of names to numbers, strings, JSON
        values and arrays (see :mod:`solar_core.basics.state`). With :meth:`params`, everything
        needed to continue it exactly; :meth:`load_state` is the inverse.

        >>> from solar_core import SolarMemory
        >>> memory = SolarMemory("fifo", capacity=2, embedder="hash", seed=0)
        >>> _ = memory.add("tea at five")
        >>> twin = SolarMemory.from_params(memory.params(), embedder="hash")
        >>> twin.load_state(memory.state())
        >>> [item.text for item in twin.items()], twin.stats()["steps"]
        (['tea at five'], 1)
        """
        with self._lock:
            self._sync()
            return {**self._core.state(), **prefixed("lifecycle", self.lifecycle.state())}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take ``state`` (:meth:`state`'s, of a memory with these :meth:`params`), replacing
        what this memory holds. Each value is checked (types, shapes, ranges, then the
        memory's invariants) before the memory changes: a state that does not hold raises
        :class:`~solar_core.basics.state.StateError` and leaves this memory as it was."""
        with self._lock:
            fresh = self._blank()
            own = {k: v for k, v in state.items() if not k.startswith("lifecycle.")}
            fresh._core.load_state(own)
            fresh.lifecycle.load_state(part_of("lifecycle", state))
            self.take_state(fresh)

    def _blank(self: _M) -> _M:
        """A new, empty memory with this one's parameters and run-time parts."""
        core = self._core
        clock = getattr(self._runner, "user_clock", core.clock)
        evaluator = getattr(core.admission, "evaluator", None) if self._prepares else None
        return type(self).from_params(
            self.params(), embedder=self._embedder, clock=clock, evaluator=evaluator
        )

    # -- pickling: the parameters and the state, with the run-time parts --------------------
    def __getstate__(self) -> dict[str, Any]:
        return state_of(self)  # type: ignore[arg-type]

    def __setstate__(self, state: dict[str, Any]) -> None:
        memory = build_memory(
            type(self), state["params"], state["embedder"], state["clock"], state["evaluator"]
        )
        memory.load_state(state["state"])
        self.__dict__.update(memory.__dict__)
        self._wire()


def build_memory(
    cls: type[_M],
    params: Mapping[str, Any],
    embedder: object,
    clock: Callable[[], float],
    evaluator: Evaluator | None,
    seed: int | None = None,
) -> _M:
    """:meth:`SolarMemory.from_params <solar_core.SolarMemory.from_params>` (of ``cls``, the
    memory's class or a subclass of it)."""
    read = StateReader(params, "a memory's parameters")
    capacity = read.value("capacity")
    eviction = build(read.value("eviction"), "its eviction policy")
    if not isinstance(eviction, EvictionPolicy):
        raise read.fail("eviction names no eviction policy")
    admission_spec = read.value("admission")
    admission = eviction if admission_spec is None else build(admission_spec, "its admission")
    if not isinstance(admission, AdmissionPolicy):
        raise read.fail("admission names no admission policy")
    deletion_spec = read.value("deletion")
    deletion = None if deletion_spec is None else build(deletion_spec, "its deletion policy")
    gate = read.value("evaluator")
    if (gate is None) != (evaluator is None):
        raise read.fail(
            "an evaluator is needed: the memory has an evaluator gate"
            if gate is not None
            else "this memory has no evaluator gate: pass no evaluator"
        )
    random = read.text("random", sorted(BIT_GENERATORS))
    try:
        memory = cast(Any, cls)(
            None,
            capacity,
            embedder=embedder,
            dim=read.integer("dim", 1, 1 << 16),
            # (how it reads: the defaults unless given)
            k=read.value("k") if read.has("k") else 3,
            retrieval=read.value("retrieval") if read.has("retrieval") else DEFAULT_RETRIEVAL,
            min_score=read.value("min_score") if read.has("min_score") else "auto",
            rng=np.random.Generator(BIT_GENERATORS[random](seed)),
            clock=clock,
            admission=admission,
            eviction=eviction,
            trace_size=read.value("trace_size"),
            deletion=deletion,
            importance_weight=read.value("importance_weight"),
            ttl_days=read.value("ttl_days"),
            trace_retention_days=read.value("trace_retention_days"),
        )
        if gate is not None:
            if type(gate) is not dict:
                raise read.fail("evaluator must be the evaluator gate's parameters")
            core = memory._core
            core._admission = EvaluatorGate(evaluator, inner=core.admission, **gate)  # type: ignore[arg-type]
            memory._prepares = True
    except (TypeError, ValueError) as err:
        if isinstance(err, StateError):
            raise
        raise read.fail(f"they are not a memory's: {err}") from None
    memory.policy = read.text("policy")
    read.done()
    return cast(_M, memory)


#: the bit generators a memory's random generator may run on, by name
BIT_GENERATORS: dict[str, Callable[[int | None], np.random.BitGenerator]] = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}
