"""A snapshot holds what the memory holds, not its capacity: per-slot statistics without the rows
of slots no item has used (a policy's ``slot_arrays``), and an unbounded store without its empty
rows. A loaded memory grows them again, so it is the one that was written."""

from __future__ import annotations

import pickle
from pathlib import Path

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
    before = pickle.loads(pickle.dumps(memory))
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
        store = _store(tmp_path / f"{capacity}.db", policy, capacity, "history")
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
    before = pickle.loads(pickle.dumps(memory))
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
