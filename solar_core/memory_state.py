"""A :class:`~solar_core.SolarMemory`'s state as one flat dict: what pickling and snapshots hold.

The core's attributes, plus the memory's own parts (:data:`OWN_STATE`): its default ``k``, its
policy name, its embedder, its lifecycle schedule and how it reads (``retrieval``,
``min_score``). Run-time parts -- the lock, subscriptions, a journal -- are left out.
"""

from __future__ import annotations

import copy
from typing import Any, Protocol

from .core import MemoryCore
from .lifecycle import Lifecycle
from .steps import StepRunner


class _Memory(Protocol):
    """What is read of a :class:`~solar_core.SolarMemory` (not imported: it imports this)."""

    @property
    def core(self) -> MemoryCore: ...

    @property
    def runner(self) -> StepRunner: ...

    lifecycle: Lifecycle


#: the parts of a memory's state that are not its core's
OWN_STATE = (
    *("k", "policy", "_prepares", "_embedder", "_journal", "_subscribers", "lifecycle"),
    *("retrieval", "min_score"),
)


def state_of(memory: _Memory) -> dict[str, Any]:
    """``memory``'s state (its ``__getstate__``)."""
    state = memory.core.__getstate__()
    state["_clock"] = getattr(memory.runner, "user_clock", memory.core.clock)  # not a journal's
    for name in OWN_STATE:
        state[name] = getattr(memory, name, None)
    state["lifecycle"] = copy.copy(memory.lifecycle)  # a copy wires its own to its own core
    state["_journal"] = None  # a copy is not persisted: it would write to the same scope
    state["_subscribers"] = []  # callbacks (closures, caches) are not state: re-attach them
    return state


def core_and_own_state(state: dict[str, Any]) -> tuple[MemoryCore, dict[str, Any]]:
    """The core rebuilt from ``state``, and the memory's own parts (``__setstate__``)."""
    state = dict(state)
    own = {name: state.pop(name, None) for name in OWN_STATE}
    if "_identity" not in state:  # saved before memories had one: derive it from the state
        state["_identity"] = MemoryCore.legacy_identity(state, own["policy"])
    if own["retrieval"] is None:  # saved before memories had a ranking: by vector, no floor
        own["retrieval"], own["min_score"] = "vector", None
    core = MemoryCore.__new__(MemoryCore)
    core.__setstate__(state)
    return core, own
