"""A snapshot holds what the memory holds, not its capacity: the store's state writes the rows
below its high-water mark (``store.ids``, ``store.vectors``, ``store.neighbours.sim``...), the
policies their per-slot statistics of those rows, and an unbounded store its rows whole only
when they are more than twice the used ones. A loaded memory grows them again, so it is the one
that was written; a state claiming more rows than that is refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import MemoryStore, SolarMemory
from solar_core.persistence import PersistenceError, container
from solar_core.persistence.journal import Journal, snapshot_params
from solar_core.policies.deletion import CombinedDeletion, HistoryDeletion, PeriodicDeletion
from solar_core.policies.presets import available_policies
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
        sizes.append(len(_snapshot(memory)))
        store.close()
    assert sizes[1] - sizes[0] < 100, sizes  # (a few digits of the capacity)


def _snapshot(memory: SolarMemory) -> bytes:
    """``memory``'s snapshot, as its journal writes it."""
    return container.dumps(snapshot_params(memory), memory.state())


def _read(memory: SolarMemory, params: dict[str, Any], state: dict[str, Any]) -> None:
    """Read a forged snapshot of ``memory``'s scope back as a reopen does."""
    journal = memory.runner
    assert isinstance(journal, Journal)
    journal._memory_from(container.dumps(params, state), "a forged snapshot")


def test_an_unbounded_store_writes_the_rows_it_uses(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db", "unlimited", None, "none")
    memory = store.scope(user="alice")
    memory.add("one fact about tea", embedding=[1.0] + [0.0] * (DIM - 1))
    blob = _snapshot(memory)
    assert len(memory.core.store.matrix) == 64 and len(blob) < 6_000  # (64 rows: 4 KB more)
    state = memory.state()
    assert state["store.rows"] == 64 and state["store.vectors"].shape == (1, DIM)
    # Grown to 256 rows, then emptied but for one item: more than twice the rows written, so
    # the rows are written whole (a reader allocates no more than a small multiple of them).
    for i in range(199):
        memory.add(f"fact {i}", embedding=[0.0, 1.0] + [float(i)] * (DIM - 2))
    for item in list(memory.items())[1:]:
        memory.remove(item.id)
    assert len(memory.core.store.matrix) == 256
    assert memory.state()["store.vectors"].shape == (256, DIM)  # written whole
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
    state = memory.state()  # (its own values: a copy to forge)
    assert state["store.vectors"].shape == (1, DIM)  # the rows as written: one
    state["store.rows"] = 100_001  # 100,000 more claimed
    with pytest.raises(PersistenceError, match="1 rows written do not stand for 100001"):
        _read(memory, snapshot_params(memory), state)
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
    from solar_core.retrieval.neighbours import NeighbourIndex

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
    state = memory.state()  # (its own values: a copy to forge)
    forge(state)
    try:
        _read(memory, snapshot_params(memory), state)
    finally:
        store.close()


def test_a_neighbour_index_of_another_width_is_refused(tmp_path: Path) -> None:
    # With its unused rows left out, a forged width made the reader allocate rows x width.
    # Its width is the policy's parameter now, not a value of the state: a wider one is refused.
    def wider(state: dict[str, Any]) -> None:
        rows = len(state["store.vectors"])
        state["store.neighbours.sim"] = np.full((rows, 20_000), -np.inf, dtype=np.float32)
        state["store.neighbours.idx"] = np.full((rows, 20_000), -1, dtype=np.int64)

    with pytest.raises(PersistenceError, match=r"sim must have shape \(3, 3\), got \(3, 20000\)"):
        _forged_read(tmp_path, "solar", wider)


def test_free_slots_outside_the_rows_are_refused(tmp_path: Path) -> None:
    # Read back before, the next add stored an item at slot -3.
    def negative(state: dict[str, Any]) -> None:
        state["store.free"] = -np.arange(1, 4, dtype=np.int64)

    with pytest.raises(PersistenceError, match="free holds a value below 0"):
        _forged_read(tmp_path, "unlimited", negative)


def test_a_forged_combination_of_many_deletion_rules_allocates_what_it_holds(
    tmp_path: Path,
) -> None:
    # A deletion rule's per-slot arrays are the store's rows': were shorter ones grown on load,
    # 2,000 rules written with none would make the reader allocate 2,000 x the capacity. Its
    # rules are the scope's parameters now: a snapshot naming 2,000 is refused unbuilt, and
    # one with the scope's rules but arrays shorter than the rows is refused.
    import tracemalloc

    store = MemoryStore(
        tmp_path / "m.db",
        capacity=1_000,
        embedder="hash",
        deletion=lambda: CombinedDeletion(HistoryDeletion(n=2), HistoryDeletion(n=3)),
    )
    memory = store.scope(user="alice")
    memory.add("one fact about tea")
    params, state = snapshot_params(memory), memory.state()
    rule = params["deletion"]["params"]["policies"][0]
    forged = {**params, "deletion": {**params["deletion"], "params": {"policies": [rule] * 2_000}}}
    for i in range(2_000):
        state[f"deletion.{i}.sum"] = np.zeros(0)
        state[f"deletion.{i}.uses"] = np.zeros(0, dtype=np.int64)
        state[f"deletion.{i}.dirty"] = []
    tracemalloc.start()
    with pytest.raises(PersistenceError, match=r"other parameters than the scope's \(deletion\)"):
        _read(memory, forged, state)  # (before: read, then an add failed)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    short = memory.state()
    short["deletion.1.sum"], short["deletion.1.uses"] = np.zeros(0), np.zeros(0, dtype=np.int64)
    with pytest.raises(PersistenceError, match=r"sum must have shape \(1,\), got \(0,\)"):
        _read(memory, params, short)
    store.close()
    assert peak < 12e6, peak  # 2,000 x 1,000 x 2 x 8 bytes would be 32 MB
