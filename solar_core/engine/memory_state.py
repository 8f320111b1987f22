"""A :class:`~solar_core.SolarMemory`'s explicit state and how it copies and pickles
(:class:`MemoryCopies`): its parameters and state, with its run-time parts (embedder, clock,
evaluator). Subscriptions, the lock and a journal are left out."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, SupportsIndex, TypeVar, cast

import numpy as np

from solar_core.basics.state import State, StateError, StateReader, build, part_of, prefixed, spec
from solar_core.engine.core import MemoryCore
from solar_core.engine.lifecycle import Lifecycle
from solar_core.engine.steps import StepRunner
from solar_core.policies.admission import AdmissionPolicy
from solar_core.policies.admission.evaluator_gate import Evaluator, EvaluatorGate
from solar_core.policies.eviction import EvictionPolicy

_M = TypeVar("_M", bound="MemoryCopies")

#: the parameters passed to the memory as they are (checked by it)
_PASSED = ("trace_size", "importance_weight", "ttl_days", "trace_retention_days")
#: how it reads: the memory's defaults where they are left out
_READING = ("k", "retrieval", "min_score")
#: the bit generators a memory's random generator may run on, by name
BIT_GENERATORS: dict[str, Callable[[int | None], np.random.BitGenerator]] = {
    name: getattr(np.random, name) for name in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
}


class MemoryCopies:
    """A :class:`~solar_core.SolarMemory`'s explicit state and copies (a base class): a plain
    memory copies and pickles as an independent one; a stored memory refuses (its copy's
    writes would never reach its scope)."""

    _lock: threading.RLock
    _local: bool
    _runner: StepRunner
    _core: MemoryCore
    _embedder: Any
    policy: str
    k: int
    retrieval: Any
    min_score: Any
    lifecycle: Lifecycle
    _sync: Callable[[], None]  # the memory's own (MemoryViews' and SolarMemory's)
    _wire: Callable[[], None]
    take_state: Callable[[Any], None]

    @property
    def persistent(self) -> bool:
        """Whether this memory's steps go to a database (a :class:`MemoryStore` scope's memory):
        such a memory cannot be copied or pickled, see :meth:`detached`."""
        return not self._local

    def detached(self: _M) -> _M:
        """An independent, in-memory copy of this memory as it is now (a stored memory first
        catches up with the database), sharing its embedder, clock and evaluator objects; no
        subscriptions. Its writes never reach a database.

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
            shared = self._runtime_parts().values()  # a memo that keeps them: the copy shares them
            return self._copy({id(part): part for part in shared if part is not None})

    def __copy__(self: _M) -> _M:
        self._refuse_copy("copy.copy()")
        return self.detached()  # (a plain memory has nothing to catch up with)

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

    def _runtime_parts(self) -> dict[str, Any]:
        """What a rebuilt memory is given again: the embedder, the clock (a stored memory's own,
        not its journal's) and the evaluator."""
        admission = self._core.admission
        return {
            "embedder": self._embedder,
            "clock": getattr(self._runner, "user_clock", self._core.clock),
            "evaluator": admission.evaluator if isinstance(admission, EvaluatorGate) else None,
        }

    def _copy(self: _M, memo: dict[int, Any]) -> _M:  # (under the lock)
        twin = type(self).__new__(type(self))
        twin.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return twin

    # -- explicit state (see solar_core.basics.state): what snapshots, pickles and copies hold -----
    def params(self) -> dict[str, Any]:
        """What this memory was built with, as JSON values (each part's class and parameters).

        >>> from solar_core import SolarMemory
        >>> memory = SolarMemory("lfu", capacity=4, embedder="hash")
        >>> params = memory.params()
        >>> params["policy"], params["capacity"], params["eviction"]
        ('lfu', 4, {'class': 'LfuEviction', 'params': {'tie_break': 'insertion'}})
        >>> SolarMemory.from_params(params, embedder="hash").params() == params
        True
        """
        with self._lock:
            core, gate = self._core, None
            admission, eviction = core.admission, core.eviction
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
        """A new, empty memory of :meth:`params` (its random generator seeded by ``seed``) with
        these run-time parts; parameters that do not hold raise a ``StateError``."""
        read = StateReader(params, "a memory's parameters")
        capacity = read.value("capacity")
        eviction = build(read.value("eviction"), "its eviction policy")
        if not isinstance(eviction, EvictionPolicy):
            raise read.fail("eviction names no eviction policy")
        admission = read.value("admission")
        admission = eviction if admission is None else build(admission, "its admission")
        if not isinstance(admission, AdmissionPolicy):
            raise read.fail("admission names no admission policy")
        deletion = read.value("deletion")
        deletion = None if deletion is None else build(deletion, "its deletion policy")
        gate = read.value("evaluator")
        if (gate is None) != (evaluator is None):
            raise read.fail(
                "an evaluator is needed: the memory has an evaluator gate"
                if gate is not None
                else "this memory has no evaluator gate: pass no evaluator"
            )
        random = read.text("random", sorted(BIT_GENERATORS))
        rows = read.integer("rows", 1, 1 << 21) if read.has("rows") else 0  # resized down
        repeats = read.flag("repeats") if read.has("repeats") else False  # (stored before it)
        try:
            memory = cast(Any, cls)(
                None,
                capacity,
                embedder=embedder,
                dim=read.integer("dim", 1, 1 << 16),
                rng=np.random.Generator(BIT_GENERATORS[random](seed)),
                clock=clock,
                admission=admission,
                eviction=eviction,
                deletion=deletion,
                repeats=repeats,
                **{name: read.value(name) for name in _PASSED},
                **{name: read.value(name) for name in _READING if read.has(name)},
            )
            if rows:
                if capacity is None or rows <= capacity:
                    raise read.fail(f"rows={rows} needs a capacity below it, got {capacity}")
                memory._core.resize(capacity, rows)  # (empty: nothing is evicted)
            if gate is not None:
                if type(gate) is not dict:
                    raise read.fail("evaluator must be the evaluator gate's parameters")
                core = memory._core
                core.admission = EvaluatorGate(evaluator, inner=core.admission, **gate)  # type: ignore[arg-type]
                memory._prepares = True
        except (TypeError, ValueError) as err:
            if isinstance(err, StateError):
                raise
            raise read.fail(f"they are not a memory's: {err}") from None
        memory.policy = read.text("policy")
        read.done()
        return cast(_M, memory)

    def state(self) -> State:
        """What this memory has learned, as a flat dict (:mod:`solar_core.basics.state`); with
        :meth:`params`, all it takes to continue it exactly (:meth:`load_state`)."""
        with self._lock:
            self._sync()
            return {**self._core.state(), **prefixed("lifecycle", self.lifecycle.state())}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take ``state`` (:meth:`state`'s, of a memory with these :meth:`params`), checked whole
        first: one that does not hold raises :class:`~solar_core.basics.state.StateError` and
        leaves this memory as it was."""
        with self._lock:
            fresh = type(self).from_params(self.params(), **self._runtime_parts())
            own = {k: v for k, v in state.items() if not k.startswith("lifecycle.")}
            fresh._core.load_state(own)
            fresh.lifecycle.load_state(part_of("lifecycle", state))
            self.take_state(fresh)

    # -- pickling: the parameters and the state, with the run-time parts --------------------
    def __getstate__(self) -> dict[str, Any]:
        return {"params": self.params(), "state": self.state(), **self._runtime_parts()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        parts = {name: state[name] for name in ("embedder", "clock", "evaluator")}
        memory = type(self).from_params(state["params"], **parts)
        memory.load_state(state["state"])
        self.__dict__.update(memory.__dict__)
        self._wire()
