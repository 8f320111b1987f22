"""ItemTable and the NeighbourIndex it keeps in sync."""

from __future__ import annotations

import numpy as np
import pytest

from solar_core import ItemTable, SolarMemory
from solar_core.retrieval.neighbours import NeighbourIndex

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v, axis=-1, keepdims=True)).astype(np.float32)


def onehot(i: int, dim: int = 4) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


# -- ItemTable ----------------------------------------------------------------------------------


def test_insert_lookup_and_payloads() -> None:
    store = ItemTable(dim=4, capacity=3)
    assert len(store) == 0 and not store.full and store.slots == 3
    assert [store.insert(n, onehot(i), payload=n.lower()) for i, n in enumerate("ABC")] == [0, 1, 2]
    assert len(store) == 3 and store.full
    assert "B" in store and "Z" not in store
    assert (store.slot_of("B"), store.id_at(1), store.payload_at(1)) == (1, "B", "b")
    np.testing.assert_array_equal(store.vector(2), onehot(2))
    store.vector(2)[:] = 9.0  # a copy
    np.testing.assert_array_equal(store.vector(2), onehot(2))
    assert store.ids() == ["A", "B", "C"]
    store.check_invariants()


def test_full_store_and_duplicate_ids_are_refused() -> None:
    store = ItemTable(dim=4, capacity=2)
    store.insert("A", onehot(0), None)
    with pytest.raises(ValueError, match="already stored"):
        store.insert("A", onehot(1), None)
    store.insert("B", onehot(1), None)
    with pytest.raises(RuntimeError, match="full"):
        store.insert("C", onehot(2), None)
    assert store.ids() == ["A", "B"]
    store.check_invariants()


def test_remove_frees_the_slot_and_slots_are_reused_last_in_first_out() -> None:
    store = ItemTable(dim=4, capacity=4)
    for i, n in enumerate("ABCD"):
        store.insert(n, onehot(i), None)
    assert store.remove(1) == "B"
    assert store.remove(2) == "C"
    assert "B" not in store and len(store) == 2 and not store.full
    with pytest.raises(KeyError):
        store.id_at(1)
    with pytest.raises(KeyError):
        store.slot_of("B")
    assert store.payload_at(1) is None
    store.check_invariants()
    assert store.insert("E", onehot(0), None) == 2  # the last freed slot first
    assert store.insert("F", onehot(1), None) == 1
    assert store.ids() == ["A", "D", "E", "F"]  # insertion order, not slot order
    store.check_invariants()


def test_high_water_mark_follows_the_top_active_slot() -> None:
    store = ItemTable(dim=4, capacity=4)
    for i, n in enumerate("ABCD"):
        store.insert(n, onehot(i), None)
    assert store.high_water == 4
    store.remove(1)
    assert store.high_water == 4
    store.remove(3)
    assert store.high_water == 3
    store.remove(2)  # slot 1 was already free: the mark drops past it
    assert store.high_water == 1
    np.testing.assert_array_equal(store.active_slots(), [0])
    store.remove(0)
    assert store.high_water == 0 and len(store) == 0
    store.check_invariants()
    assert store.insert("E", onehot(0), None) == 0  # last freed
    assert store.high_water == 1


def test_similarities_mark_empty_slots_with_minus_infinity() -> None:
    store = ItemTable(dim=4, capacity=4)
    store.insert("A", onehot(0), None)
    store.insert("B", unit(np.array([1.0, 1.0, 0.0, 0.0])), None)
    store.insert("C", onehot(2), None)
    store.remove(1)
    sims = store.similarities(onehot(0))
    assert len(sims) == store.high_water == 3
    assert sims[0] == pytest.approx(1.0) and sims[2] == 0.0 and sims[1] == -np.inf


def test_top_k_is_best_first_and_skips_empty_slots() -> None:
    store = ItemTable(dim=4, capacity=5)
    vectors = {
        "A": onehot(0),
        "B": unit(np.array([0.9, 0.1, 0.0, 0.0])),
        "C": unit(np.array([0.5, 0.5, 0.0, 0.0])),
        "D": onehot(1),
        "E": unit(np.array([-1.0, 0.0, 0.0, 1.0])),
    }
    for name, v in vectors.items():
        store.insert(name, v, None)
    query = onehot(0)
    slots, scores = store.top_k(query, 3)
    assert [store.id_at(int(s)) for s in slots] == ["A", "B", "C"]
    np.testing.assert_allclose(scores, [vectors[n] @ query for n in "ABC"], rtol=1e-6)
    slots, scores = store.top_k(query, 10)  # k > n: everything, best first
    assert [store.id_at(int(s)) for s in slots] == ["A", "B", "C", "D", "E"]
    assert list(scores) == sorted(scores, reverse=True)
    store.remove(store.slot_of("A"))
    store.remove(store.slot_of("C"))
    slots, _ = store.top_k(query, 10)
    assert [store.id_at(int(s)) for s in slots] == ["B", "D", "E"]
    slots, scores = ItemTable(dim=4, capacity=2).top_k(query, 3)
    assert slots.shape == scores.shape == (0,)


def test_unbounded_store_grows() -> None:
    rng = np.random.default_rng(0)
    store = ItemTable(dim=8, capacity=None, neighbours=3)
    assert store.slots == 64 and not store.full
    vectors = unit(rng.normal(size=(150, 8)))
    for i, v in enumerate(vectors):
        assert store.insert(f"v{i}", v, i) == i
    assert store.slots == 256 and len(store) == 150 and not store.full
    assert store.neighbours is not None and store.neighbours.sim.shape == (256, 3)
    store.check_invariants()
    for i in range(150):
        slots, _ = store.top_k(vectors[i], 1)
        assert store.id_at(int(slots[0])) == f"v{i}" and store.payload_at(i) == i
    store.remove(store.slot_of("v149"))
    store.remove(store.slot_of("v10"))
    assert store.insert("new", vectors[0], None) == 10
    store.check_invariants()


def test_clear_empties_the_store() -> None:
    store = ItemTable(dim=4, capacity=3, neighbours=1)
    store.insert("A", onehot(0), None)
    store.insert("B", onehot(1), None)
    store.clear()
    assert len(store) == 0 and store.high_water == 0 and store.ids() == []
    assert store.insert("A", onehot(0), None) == 0
    store.check_invariants()


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda s: s.active_full.__setitem__(2, True),
        lambda s: s._slot_of.__setitem__("A", 1),
        lambda s: s._free.append(0),
        lambda s: s.matrix.__setitem__(0, 2 * s.matrix[0]),
        lambda s: s.neighbours.sim.__setitem__((0, 0), 0.123),
    ],
    ids=["mask", "id-map", "free-list", "not-unit", "neighbours"],
)
def test_check_invariants_detects_corruption(corrupt: object) -> None:
    store = ItemTable(dim=4, capacity=4, neighbours=1)
    store.insert("A", onehot(0), None)
    store.insert("B", unit(np.array([1.0, 1.0, 0.0, 0.0])), None)
    store.check_invariants()
    corrupt(store)  # type: ignore[operator]
    with pytest.raises(AssertionError):
        store.check_invariants()


# -- NeighbourIndex -------------------------------------------------------------------------------


def assert_in_sync(store: ItemTable, k: int) -> None:
    """The index against a brute-force recomputation of every row (top-k, mean, max)."""
    index = store.neighbours
    assert index is not None
    index.check(store)
    slots = store.active_slots()
    if len(slots) == 0:
        return
    matrix = store.matrix[slots].astype(np.float64)
    sims = matrix @ matrix.T
    np.fill_diagonal(sims, -np.inf)
    count = min(k, len(slots) - 1)
    want = -np.sort(-sims, axis=1)[:, :count]  # nearest others, descending
    have = -np.sort(-index.sim[slots].astype(np.float64), axis=1)
    np.testing.assert_allclose(have[:, :count], want, atol=1e-5)
    assert (have[:, count:] == -np.inf).all()
    listed = index.idx[slots]
    assert ((listed >= 0).sum(axis=1) == count).all()
    for row, slot in zip(listed, slots.tolist(), strict=True):
        real = row[row >= 0]
        assert len(set(real.tolist())) == count and slot not in real
        assert store.active_full[real].all()
    mean = index.mean_similarity(slots)
    nearest = index.max_similarity(slots)
    if count:
        np.testing.assert_allclose(mean, want.mean(axis=1), atol=1e-5)
        np.testing.assert_allclose(nearest, want[:, 0], atol=1e-5)
    else:
        assert np.isnan(mean).all() and (nearest == -np.inf).all()


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("capacity", [12, None])
@pytest.mark.parametrize("seed", range(4))
def test_index_equals_brute_force_after_random_inserts_and_removes(
    k: int, capacity: int | None, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    dim = 6  # low dimension: many close neighbours, many replacements
    store = ItemTable(dim=dim, capacity=capacity, neighbours=k, initial_slots=4)
    n = 0
    for _ in range(200):
        size = len(store)
        if size and (store.full or rng.random() < 0.45):
            slots = store.active_slots()
            store.remove(int(slots[int(rng.integers(len(slots)))]))
        else:
            v = unit(rng.normal(size=dim))
            if size and rng.random() < 0.1:
                v = store.vector(int(store.active_slots()[0]))  # an exact duplicate
            sims = store.similarities(v) if rng.random() < 0.5 else None
            n += 1
            store.insert(f"v{n}", v, None, sims)
        store.check_invariants()
        assert_in_sync(store, k)
    assert n > 80


@pytest.mark.parametrize("seed", range(4))
def test_index_survives_the_memory_path_evict_then_insert_with_stale_similarities(
    seed: int,
) -> None:
    """SolarMemory computes the similarities before evicting, then inserts into the freed slot."""
    rng = np.random.default_rng(seed)
    dim = 5
    store = ItemTable(dim=dim, capacity=8, neighbours=3)
    for n in range(200):
        v = unit(rng.normal(size=dim))
        sims = store.similarities(v)
        if store.full:
            slots = store.active_slots()
            store.remove(int(slots[int(rng.integers(len(slots)))]))
        store.insert(f"v{n}", v, None, sims)
        store.check_invariants()
        assert_in_sync(store, 3)


def test_rows_with_fewer_than_k_others() -> None:
    store = ItemTable(dim=4, capacity=4, neighbours=3)
    store.insert("A", onehot(0), None)
    index = store.neighbours
    assert index is not None
    assert np.isnan(index.mean_similarity(np.array([0]))[0])
    store.insert("B", unit(np.array([1.0, 1.0, 0.0, 0.0])), None)
    store.insert("C", onehot(1), None)
    c = 1 / np.sqrt(2)
    np.testing.assert_allclose(index.mean_similarity(store.active_slots()), [c / 2, c, c / 2])
    np.testing.assert_allclose(index.max_similarity(store.active_slots()), [c, c, c])
    store.remove(1)
    np.testing.assert_allclose(index.mean_similarity(np.array([0, 2])), [0.0, 0.0], atol=1e-7)
    assert_in_sync(store, 3)


def test_check_detects_a_stale_row() -> None:
    store = ItemTable(dim=4, capacity=4, neighbours=2)
    for i in range(3):
        store.insert(f"v{i}", unit(onehot(i) + 0.5), None)
    index = store.neighbours
    assert isinstance(index, NeighbourIndex)
    index.check(store)
    index.sim[1] = index.sim[1][::-1] - 0.01
    with pytest.raises(AssertionError):
        index.check(store)


@pytest.mark.parametrize("policy", ["solar", "solar-e", "solar-a"])
def test_memories_keep_the_index_in_sync(policy: str) -> None:
    rng = np.random.default_rng(5)
    centres = unit(rng.normal(size=(4, 8)))
    memory = SolarMemory(policy, capacity=10, dim=8, seed=1)
    k = 1 if policy == "solar-a" else 3
    for step in range(150):
        topic = int(rng.integers(4))
        memory.retrieve(embedding=unit(centres[topic] + 0.1 * rng.normal(size=8)))
        if rng.random() < 0.3:
            memory.feedback(score=float(rng.random()))
        memory.add(f"s{step}", embedding=unit(centres[topic] + 0.3 * rng.normal(size=8)))
        if len(memory) > 3 and rng.random() < 0.05:
            memory.remove(memory.items()[int(rng.integers(len(memory)))].id)
        memory.check_invariants()
        assert_in_sync(memory.core.store, k)
