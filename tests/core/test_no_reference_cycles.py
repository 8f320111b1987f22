"""A memory holds no reference cycle: dropping its last reference frees it by reference
counting alone, so a server with many users never waits for a full garbage collection (and a
:class:`~solar_core.MemoryStore` never runs one). Every test runs with the collector off, builds
memories, uses them, drops them and checks they are gone; then a collection that saves what it
finds (``gc.DEBUG_SAVEALL``) must find nothing of the library's among the unreachable objects."""

from __future__ import annotations

import gc
import types
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from solar_core import MemoryStore, SolarMemory, available_policies
from solar_core.embedders.static_embedder import StaticEmbedder
from solar_core.engine.response_cache import ResponseCache
from solar_core.policies.deletion import HistoryDeletion


@pytest.fixture
def no_collection() -> Iterator[None]:
    """The collector off for the test (turned back on whatever happens); unreachable objects
    left from before are collected first, so only the test's own are checked. The built-in
    embedder's tables are loaded first: once per process, not per memory (building them leaves
    a few short-lived cycles)."""
    StaticEmbedder().embed(["tea"])
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was:
            gc.enable()


def ours(found: object) -> bool:
    """An object of one of the library's classes, or a function or method defined in it."""
    if isinstance(found, types.FunctionType | types.MethodType):
        return str(getattr(found, "__module__", "")).startswith("solar_core")
    return type(found).__module__.startswith("solar_core")


def assert_no_cycles(dropped: list[weakref.ref[Any]]) -> None:
    """Everything ``dropped`` names is freed already, and a collection finds nothing of the
    library's unreachable (each would have been a cycle waiting for the collector)."""
    alive = [ref() for ref in dropped if ref() is not None]
    gc.garbage.clear()
    gc.set_debug(gc.DEBUG_SAVEALL)
    gc.collect()
    gc.set_debug(0)
    cyclic = sorted({f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.garbage if ours(o)})
    gc.garbage.clear()
    assert not alive, f"not freed by reference counting: {[type(o).__name__ for o in alive]}"
    assert not cyclic, f"reference cycles through: {cyclic}"


def use(memory: SolarMemory) -> None:
    """A few steps of every kind, a subscription's included."""
    heard: list[object] = []
    memory.subscribe(lambda *args: heard.append(args), on_delete=lambda *args: heard.append(args))
    for i in range(4):
        memory.retrieve(f"question {i}")
        memory.feedback(like=i % 2 == 0)
        memory.add(f"fact {i} about tea", metadata={"i": i}, item_id=f"f{i}")
    memory.retrieve("tea", record=False)
    memory.remove(memory.items()[0].id)
    memory.lifecycle.run()  # decay, expire, sweep: steps of the memory
    memory.lifecycle.renew({"f1": 60.0})
    memory.state()


def weak(*objects: object) -> list[weakref.ref[Any]]:
    return [weakref.ref(o) for o in objects]


@pytest.mark.parametrize("policy", available_policies())
def test_a_plain_memory_is_freed_without_a_collection(no_collection: None, policy: str) -> None:
    memory = SolarMemory(policy, capacity=3, embedder="hash", seed=1)
    use(memory)
    dropped = weak(memory, memory.core, memory.lifecycle)
    del memory
    assert_no_cycles(dropped)


def test_an_unused_memory_is_freed_without_a_collection(no_collection: None) -> None:
    dropped = weak(SolarMemory("fifo", capacity=3, embedder="hash"))
    assert_no_cycles(dropped)


@pytest.mark.parametrize(
    "make",
    [
        lambda: SolarMemory("solar", capacity=3, embedder="hash", deletion=HistoryDeletion()),
        lambda: SolarMemory("solar", capacity=3, embedder="hash", evaluator=lambda q, e, m: True),
        lambda: SolarMemory("fifo", capacity=3, embedder="hash", importance_weight=0.5),
    ],
    ids=["deletion", "evaluator", "importance"],
)
def test_memories_with_policies_are_freed(
    no_collection: None, make: Callable[[], SolarMemory]
) -> None:
    memory = make()
    use(memory)
    dropped = weak(memory, memory.core)
    del memory
    assert_no_cycles(dropped)


def test_a_watched_memory_and_its_cache_are_freed(no_collection: None) -> None:
    memory = SolarMemory("solar", capacity=3, embedder="hash")
    cache = ResponseCache("hash", relate=0.3)
    cache.watch(memory, scope={"user": "alice"})
    cache.store("tea?", "green tea", scope={"user": "alice"})
    use(memory)
    cache.lookup("tea?", scope={"user": "alice"})
    dropped = weak(memory, cache)
    del memory, cache
    assert_no_cycles(dropped)


def test_a_copy_and_a_pickled_memory_are_freed(no_collection: None) -> None:
    import copy
    import pickle

    memory = SolarMemory("solar", capacity=3, embedder="hash")
    use(memory)
    again, twin = pickle.loads(pickle.dumps(memory)), copy.deepcopy(memory)
    use(again)
    dropped = weak(memory, again, twin)
    del memory, again, twin
    assert_no_cycles(dropped)


def test_a_scheduled_lifecycle_does_not_keep_its_memory(no_collection: None) -> None:
    """A memory dropped with its schedule running is freed (its thread then ends); one whose
    schedule was stopped leaves no cycle through the thread."""
    stopped = SolarMemory("fifo", capacity=3, embedder="hash")
    stopped.lifecycle.start(0.001)
    use(stopped)
    stopped.lifecycle.stop()
    running = SolarMemory("fifo", capacity=3, embedder="hash")
    running.lifecycle.start(3600)
    lifecycle = weakref.ref(running.lifecycle)
    thread = running.lifecycle._thread
    assert thread is not None
    dropped = weak(stopped, running)
    del stopped, running
    assert_no_cycles(dropped)
    assert lifecycle() is None
    thread.join(5)
    assert not thread.is_alive()  # told to stop when its memory went


def test_a_lifecycle_whose_memory_is_gone_says_so(no_collection: None) -> None:
    lifecycle = SolarMemory("fifo", capacity=3, embedder="hash").lifecycle
    with pytest.raises(RuntimeError, match="memory"):
        lifecycle.decay()
    with pytest.raises(RuntimeError, match="memory"):
        lifecycle.renew({"m1": 60.0})


def store_of(tmp_path: Path, **kw: Any) -> MemoryStore:
    return MemoryStore(
        str(tmp_path / "memory.db"), policy="solar", capacity=3, embedder="hash", seed=2, **kw
    )


def test_an_evicted_scope_is_freed_without_a_collection(
    no_collection: None, tmp_path: Path
) -> None:
    """Opening a second scope with one open evicts the first: nobody holding it, it is freed
    then and there, journal and response cache included."""
    store = store_of(tmp_path, max_open_scopes=1, deletion=lambda: HistoryDeletion())
    alice = store.scope(user="alice")
    use(alice)
    store.response_cache({"user": "alice"}).store("tea?", "green", scope={"user": "alice"})
    dropped = weak(alice, alice.runner, alice.core)
    del alice
    bob = store.scope(user="bob")  # evicts alice
    bob.add("bob likes coffee")
    assert store.open_scopes == ["user=bob"]
    assert_no_cycles(dropped)
    assert [i.text for i in store.scope(user="alice").items()][-1] == "fact 3 about tea"
    dropped = weak(bob, bob.runner, store.response_cache({"user": "bob"}))
    del bob
    store.close()  # closes bob (and alice, reopened): both freed now
    del store
    assert_no_cycles(dropped)


def test_a_store_and_its_scopes_are_freed_on_close(no_collection: None, tmp_path: Path) -> None:
    store = store_of(tmp_path)
    memories = [store.scope(user=f"u{i}") for i in range(3)]
    for memory in memories:
        use(memory)
        store.response_cache(store.scopes()[0])
    dropped = weak(store, *memories, *(m.runner for m in memories))
    del memory
    memories.clear()
    store.close()
    del store
    assert_no_cycles(dropped)


def test_many_evicted_scopes_leave_nothing_behind(no_collection: None, tmp_path: Path) -> None:
    store = store_of(tmp_path, max_open_scopes=2)
    dropped = []
    for i in range(20):
        memory = store.scope(user=f"u{i}")
        memory.add(f"u{i} likes tea")
        dropped.append(weakref.ref(memory))
    del memory
    assert sum(ref() is not None for ref in dropped) == 2  # the open ones
    store.close()
    del store
    assert_no_cycles(dropped)
