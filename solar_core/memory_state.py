"""What pickling and copying a :class:`~solar_core.SolarMemory` hold, and how a memory copies
(:class:`MemoryCopies`): its parameters and state, with its run-time parts (embedder, clock,
evaluator). Subscriptions, the lock and a journal are left out."""

from __future__ import annotations

import copy
import threading
from typing import TYPE_CHECKING, Any, Protocol, SupportsIndex, TypeVar

from .admission.evaluator_gate import EvaluatorGate
from .core import MemoryCore
from .lifecycle import Lifecycle
from .steps import StepRunner

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
    state (the one meaning of state, see :mod:`solar_core.state`) and the run-time parts a
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
    """How a :class:`~solar_core.SolarMemory` copies (a base class: it reads the memory's
    lock, runner, core and embedder, and rebuilds a memory with its ``__setstate__``).

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

    if TYPE_CHECKING:  # the memory's own (MemoryViews' and SolarMemory's)

        def _sync(self) -> None: ...

        def __setstate__(self, state: dict[str, Any]) -> None: ...

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
