"""Stores and reference memories for the persistence tests: the same stream of steps through a
persisted memory and a plain one, and a deep comparison of the two."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from solar_core import MemoryStore, SolarMemory
from solar_core.policies.deletion import HistoryDeletion

DIM = 16
T0 = 1_000_000.0


class Clock:
    """A clock the test moves: decay and expiry see days pass, and a replay must log them."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def scope_seed(seed: int, key: str) -> int:
    """The seed a store gives a scope (so a plain memory can run the same stream)."""
    return (seed + zlib.crc32(key.encode())) % 2**32


def core_state(memory: SolarMemory) -> dict[str, Any]:
    """Everything that makes a memory's next decisions, as comparable plain data."""
    return {
        "state": memory.export(),
        "rng": memory.core.rng.bit_generator.state,
        "recent": [
            (k, r.slots.tolist(), r.step, r.rated, _live(memory, r))
            for k, r in memory.core._recent.items()
        ],
        "pending": memory.core._pending_score,
        "matrix": memory.core.store.matrix[: memory.core.store.high_water].tobytes(),
    }


def _live(memory: SolarMemory, retrieval: Any) -> list[bool]:
    """Which of a rateable retrieval's items are still stored (what a rating credits)."""
    store = memory.core.store
    return [
        store.payload_at(slot) is record
        for slot, record in zip(retrieval.slots.tolist(), retrieval.records, strict=True)
    ]


# identity: every memory gets its own (a rating handle names it), even with the same seed
_SKIP = {
    *("_lock", "clock", "_embedder", "_journal", "_subscribers", "_memory", "_thread"),
    *("_stop", "identity", "_events", "_runner", "_run", "_local", "_appliers"),
    "_mine",  # the latest retrieval made through this object: run-time, not state
    # a rateable retrieval's records count by whether they are still stored (core_state):
    # one gone since is any record no slot holds
    "records",
    "_lexical",  # the keyword index: made again from the texts when first asked for
    *("_by_words", "_keys", "_norms", "_canons", "_sketches"),  # the repeats' look-up, likewise
    "_last_sims",  # the last vector's similarities: made again when asked
    # the core's listeners: run-time wiring, in whichever order the memory was assembled
    *("_listeners", "_hear_stored", "_hear_retrieved", "_hear_removed", "_hear_cleared"),
}


def deep_diff(a: Any, b: Any, path: str = "memory", seen: set[int] | None = None) -> str | None:
    """Where two object graphs differ (values, not identities), or ``None``: policy internals,
    gate state, counters, traces and the random generator, compared field by field."""
    seen = set() if seen is None else seen
    if id(a) in seen:
        return None
    seen.add(id(a))
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, np.ndarray):
        same_arrays = a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
        return None if same_arrays else f"{path}: arrays differ"
    if isinstance(a, np.random.Generator):
        return deep_diff(a.bit_generator.state, b.bit_generator.state, path, seen)
    if isinstance(a, float):
        return None if a == b or (a != a and b != b) else f"{path}: {a!r} != {b!r}"
    if isinstance(a, dict):
        if [k for k in a if k not in _SKIP] != [k for k in b if k not in _SKIP]:
            return f"{path}: keys {list(a)[:5]} != {list(b)[:5]}"
        for k in a:
            if k in _SKIP:
                continue
            found = deep_diff(a[k], b[k], f"{path}.{k}", seen)
            if found:
                return found
        return None
    if isinstance(a, list | tuple) or type(a).__name__ == "deque":
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = deep_diff(x, y, f"{path}[{i}]", seen)
            if found:
                return found
        return None
    if isinstance(a, set | frozenset):
        return None if a == b else f"{path}: {a} != {b}"
    if hasattr(a, "__dict__") or hasattr(type(a), "__slots__"):
        fields = dict(vars(a)) if hasattr(a, "__dict__") else {}
        for name in getattr(type(a), "__slots__", ()):
            if hasattr(a, name):
                fields[name] = getattr(a, name)
        other = dict(vars(b)) if hasattr(b, "__dict__") else {}
        for name in getattr(type(b), "__slots__", ()):
            if hasattr(b, name):
                other[name] = getattr(b, name)
        # attribute order is not state (unpickling sets the lock last): compare sorted
        return deep_diff(dict(sorted(fields.items())), dict(sorted(other.items())), path, seen)
    return None if a == b else f"{path}: {a!r} != {b!r}"


def same(a: SolarMemory, b: SolarMemory) -> None:
    assert core_state(a) == core_state(b)
    assert deep_diff(a, b) is None, deep_diff(a, b)


# A stream of operations that touches every persisted thing: retrievals (posteriors, traces),
# feedback (on the latest and on an older retrieval), adds with metadata, categories and
# valid_until, removals, lifecycle sweeps, and the clock moving on.
def stream(n: int, seed: int = 0) -> list[tuple[str, Any]]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(6, DIM))
    ops: list[tuple[str, Any]] = []
    for i in range(n):
        v = centres[i % 6] + rng.normal(scale=0.4, size=DIM)
        ops.append(("retrieve", v.astype(np.float32)))
        if i % 3 == 0:
            ops.append(("feedback", float(rng.random())))
        category = ("context", "knowledge", "identity")[i % 7 % 3] if i % 5 else "context"
        ops.append(("add", (f"experience {i}", v.astype(np.float32), category, i)))
        if i % 17 == 16:
            ops.append(("remove", None))
        if i % 23 == 22:
            ops.append(("tick", None))
    return ops


def apply(memory: SolarMemory, op: tuple[str, Any], clock: Clock) -> object:
    kind, arg = op
    # Before a scope's first write (a stream's first add) its memory records no retrieval and
    # takes no rating: a plain memory standing for it is read the same way.
    unwritten = memory.stats()["steps"] == 0
    if kind == "retrieve":
        return [h.id for h in memory.retrieve(embedding=arg, k=3, record=not unwritten)]
    if kind == "feedback" and unwritten:
        return None
    if kind == "feedback":
        # The memory's latest retrieval, whichever process or handle made it (named: by
        # default a handle rates only its own, and these streams hop between handles).
        with memory.lock:
            memory.runner.sync()
            latest = next(reversed(memory.core._recent), None)
        try:
            memory.feedback(score=arg, retrieval=latest)
        except ValueError:  # nothing retrieved yet, or already rated
            return "refused"
        return None
    if kind == "add":
        text, v, category, i = arg
        valid = T0 + 86_400.0 * 3 if i % 11 == 0 else None
        d = memory.add(
            text,
            embedding=v,
            metadata={"i": i, "tags": ["a", i]},
            category=category,
            valid_until=valid,
        )
        return (d.admitted, d.item_id, d.evicted, d.reason)
    if kind == "remove":
        items = memory.items()
        if not items:
            return None
        victim = items[len(items) // 2].id
        memory.remove(victim)
        return victim
    assert kind == "tick"
    clock.now += 86_400.0
    return (memory.lifecycle.decay(), memory.lifecycle.expire(), memory.lifecycle.sweep_traces())


SETTINGS: list[tuple[str, dict[str, Any]]] = [
    ("solar", {}),
    ("solar-adaptive", {}),
    ("arc", {}),
    ("lru", {"importance_weight": 0.3}),
    ("solar", {"deletion": "history"}),
]


def make_store(
    url: str, policy: str, extra: dict[str, Any], clock: Clock, **kw: Any
) -> MemoryStore:
    extra = dict(extra)
    deletion: Callable[[], HistoryDeletion] | None = None
    if extra.pop("deletion", None) == "history":
        deletion = lambda: HistoryDeletion(n=3, beta=0.35)  # noqa: E731
    return MemoryStore(
        url,
        policy=policy,
        capacity=12,
        dim=DIM,
        seed=5,
        clock=clock,
        deletion=deletion,
        trace_size=50,
        **extra,
        **kw,
    )


def reference(policy: str, extra: dict[str, Any], clock: Clock, key: str) -> SolarMemory:
    extra = dict(extra)
    deletion = HistoryDeletion(n=3, beta=0.35) if extra.pop("deletion", None) else None
    return SolarMemory(
        policy,
        12,
        dim=DIM,
        seed=scope_seed(5, key),
        clock=clock,
        deletion=deletion,
        trace_size=50,
        **extra,
    )
