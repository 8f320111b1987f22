"""A snapshot holds what the memory holds, not its capacity: per-slot statistics without the rows
of slots no item has used (a policy's ``slot_arrays``), and an unbounded store without its empty
rows. A loaded memory grows them again, so it is the one that was written."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solar_core import MemoryStore
from solar_core.deletion import CombinedDeletion, HistoryDeletion, PeriodicDeletion
from solar_core.persistence import PersistenceError, codec
from solar_core.persistence.journal import Journal, snapshot_state
from solar_core.presets import available_policies
from tests.support.persistence import DIM, Clock, apply, same, stream

DELETIONS = {
    "none": None,
    "history": lambda: HistoryDeletion(n=3, beta=0.35),
    "combined": lambda: CombinedDeletion(HistoryDeletion(n=2), PeriodicDeletion(window=5)),
}


def _store(path: Path, policy: str, capacity: int | None, deletion: str) -> MemoryStore:
    return MemoryStore(
        path,
        policy=policy,
        capacity=capacity,
        dim=DIM,
        seed=5,
        clock=Clock(),
        deletion=DELETIONS[deletion],
        snapshot_every=1_000,
    )


@pytest.mark.parametrize("deletion", list(DELETIONS))
@pytest.mark.parametrize("policy", available_policies())
def test_a_memory_far_below_its_capacity_reopens_the_same(
    tmp_path: Path, policy: str, deletion: str
) -> None:
    capacity = None if policy == "unlimited" else 300
    store = _store(tmp_path / "m.db", policy, capacity, deletion)
    memory = store.scope(user="alice")
    clock = Clock()
    for op in stream(40):
        apply(memory, op, clock)
    before = memory.detached()
    store.close()  # a snapshot
    again = _store(tmp_path / "m.db", policy, capacity, deletion)
    resumed = again.scope(user="alice")
    same(resumed, before)
    for op in stream(20, seed=1):  # and goes on the same
        assert apply(resumed, op, clock) == apply(before, op, clock)
    again.close()


@pytest.mark.parametrize("policy", [p for p in available_policies() if p != "unlimited"])
def test_a_one_item_snapshot_does_not_grow_with_the_capacity(tmp_path: Path, policy: str) -> None:
    sizes = []
    for capacity in (10, 1_000):
        store = _store(tmp_path / f"{capacity}.db", policy, capacity, "none")
        memory = store.scope(user="alice")
        memory.add("one fact about tea", embedding=[1.0] + [0.0] * (DIM - 1))
        memory.retrieve(embedding=[1.0] + [0.0] * (DIM - 1), k=1)
        sizes.append(len(codec.dumps(snapshot_state(memory))))
        store.close()
    assert sizes[1] - sizes[0] < 100, sizes  # (a few digits of the capacity)


def test_an_unbounded_store_writes_the_rows_it_uses(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db", "unlimited", None, "none")
    memory = store.scope(user="alice")
    memory.add("one fact about tea", embedding=[1.0] + [0.0] * (DIM - 1))
    blob = codec.dumps(snapshot_state(memory))
    assert len(memory.core.store.matrix) == 64 and len(blob) < 6_000  # (64 rows: 4 KB more)
    # Grown to 256 rows, then emptied but for one item: more than twice the rows written, so
    # the rows are written whole (a reader allocates no more than a small multiple of them).
    for i in range(199):
        memory.add(f"fact {i}", embedding=[0.0, 1.0] + [float(i)] * (DIM - 2))
    for item in list(memory.items())[1:]:
        memory.remove(item.id)
    assert len(memory.core.store.matrix) == 256
    before = memory.detached()
    store.close()
    again = _store(tmp_path / "m.db", "unlimited", None, "none")
    same(again.scope(user="alice"), before)
    again.close()


def test_an_unbounded_store_may_not_claim_rows_it_left_out_beyond_twice_those_written(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path / "m.db", "unlimited", None, "none")
    memory = store.scope(user="alice")
    memory.add("one fact about tea", embedding=[1.0] + [0.0] * (DIM - 1))
    state = pickle.loads(pickle.dumps(snapshot_state(memory)))  # a copy to forge
    rows = state["_store"].__getstate__()
    state["_store"].__dict__.update(rows)  # the rows as written: one
    state["_store"]._free = list(range(100_000, 0, -1))  # 100,000 free slots claimed
    with pytest.raises(PersistenceError, match="a store of 1 rows written claims 100001"):
        journal = memory.runner
        assert isinstance(journal, Journal)
        journal._memory_from(codec.dumps(state), "a forged snapshot")
    store.close()


def test_a_cleared_unbounded_store_keeps_its_rows_and_reopens_the_same(tmp_path: Path) -> None:
    # clear() made a grown store 64 rows again while its policies' per-slot statistics stayed
    # 128 long; a snapshot then gave them back 64 long: not the memory that was written.
    for policy in ("lfu", "solar-adaptive", "solar-dialogue"):
        path = tmp_path / f"{policy}.db"
        store = MemoryStore(path, policy=policy, capacity=None, embedder="hash", seed=1)
        memory = store.scope(user="alice")
        for i in range(100):
            memory.add(f"fact number {i} about tea")
        assert len(memory.core.store.matrix) == 128
        memory.clear()
        memory.add("one more")
        before = memory.detached()
        store.close()
        again = MemoryStore(path, policy=policy, capacity=None, embedder="hash", seed=1)
        same(again.scope(user="alice"), before)
        again.close()


def test_the_neighbour_index_grows_each_array_to_the_rows() -> None:
    from solar_core.neighbours import NeighbourIndex

    index = NeighbourIndex(3, 10)
    index.sim, index.idx = index.sim[:8], index.idx[:5]  # each written without its unused rows
    index.grow(10)
    assert index.sim.shape == index.idx.shape == (10, 3)
    assert (index.idx[5:] == -1).all()


def _forged_read(tmp_path: Path, policy: str, forge: Callable[[dict[str, Any]], None]) -> None:
    """Forge a real scope's state and read it back as a reopen does."""
    store = _store(tmp_path / "m.db", policy, 1_000 if policy != "unlimited" else None, "none")
    memory = store.scope(user="alice")
    for i in range(3):
        memory.add(f"fact {i}", embedding=[1.0, float(i)] + [0.0] * (DIM - 2))
    state = pickle.loads(pickle.dumps(snapshot_state(memory)))  # a copy to forge
    forge(state)
    journal = memory.runner
    assert isinstance(journal, Journal)
    try:
        journal._memory_from(codec.dumps(state), "a forged snapshot")
    finally:
        store.close()


def test_a_neighbour_index_of_another_width_is_refused(tmp_path: Path) -> None:
    # With its unused rows left out, a forged width made the reader allocate rows x width.
    def wider(state: dict[str, Any]) -> None:
        index = state["_store"].neighbours
        index.k, index.sim, index.idx = 20_000, index.sim[:0, :0], index.idx[:0, :0]

    with pytest.raises(PersistenceError, match="NeighbourIndex.k is 20000, not the scope's 3"):
        _forged_read(tmp_path, "solar", wider)


def test_free_slots_outside_the_rows_are_refused(tmp_path: Path) -> None:
    # Read back before, the next add stored an item at slot -3.
    def negative(state: dict[str, Any]) -> None:
        store = state["_store"]
        store._free = [-(i + 1) for i in range(len(store._free))]

    with pytest.raises(PersistenceError, match="a free slot lies outside the rows"):
        _forged_read(tmp_path, "unlimited", negative)


def test_a_forged_combination_of_many_deletion_rules_allocates_what_it_holds(
    tmp_path: Path,
) -> None:
    # A deletion rule's per-slot arrays are written whole: were they grown on load, 2,000
    # rules written with none would make the reader allocate 2,000 x the capacity.
    import tracemalloc

    store = MemoryStore(
        tmp_path / "m.db",
        capacity=1_000,
        embedder="hash",
        deletion=lambda: CombinedDeletion(HistoryDeletion(n=2), HistoryDeletion(n=3)),
    )
    memory = store.scope(user="alice")
    memory.add("one fact about tea")
    state = pickle.loads(pickle.dumps(snapshot_state(memory)))
    rules = [copy.copy(state["_deletion"].policies[0]) for _ in range(2_000)]
    for rule in rules:  # each its own object, with arrays of no rows
        rule._sum, rule._uses = rule._sum[:0].copy(), rule._uses[:0].copy()
        rule._dirty = set()
    state["_deletion"].policies = tuple(rules)
    blob = codec.dumps(state)
    journal = memory.runner
    assert isinstance(journal, Journal)
    tracemalloc.start()
    with pytest.raises(PersistenceError, match="per-slot arrays shorter than the store"):
        journal._memory_from(blob, "a forged snapshot")  # (before: read, then an add failed)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    store.close()
    assert peak < 12e6, peak  # 2,000 x 1,000 x 2 x 8 bytes would be 32 MB
