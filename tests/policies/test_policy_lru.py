"""LRU eviction: exact eviction sequences on hand-made scenarios."""

from __future__ import annotations

import pytest

from solar_core import LruEviction, SolarMemory
from tests.support.memories import add_onehot as add
from tests.support.memories import hit_axes as hit
from tests.support.memories import onehot
from tests.support.memories import stored_ids as ids

DIM = 8


def recency(memory: SolarMemory) -> list[str]:
    """Ids from least to most recently used, as the policy reports them."""
    ranks = {item.id: item.policy["last_use"] for item in memory.items()}
    return sorted(ranks, key=ranks.__getitem__)


@pytest.fixture(params=["preset", "composed"])
def lru(request: pytest.FixtureRequest) -> SolarMemory:
    if request.param == "preset":
        return SolarMemory("lru", capacity=3, dim=DIM, seed=0)
    return SolarMemory(eviction=LruEviction(), capacity=3, dim=DIM, seed=0)


def test_never_retrieved_items_leave_in_insertion_order(lru: SolarMemory) -> None:
    evicted = [add(lru, name, axis) for axis, name in enumerate("ABCDEF")]
    assert evicted == [None, None, None, "A", "B", "C"]
    assert ids(lru) == ["D", "E", "F"]


def test_a_retrieval_protects_an_item(lru: SolarMemory) -> None:
    for axis, name in enumerate("ABC"):
        add(lru, name, axis)
    assert hit(lru, (0, 1.0)) == ["A"]
    assert recency(lru) == ["B", "C", "A"]
    assert add(lru, "D", 3) == "B"
    assert ids(lru) == ["A", "C", "D"]
    assert hit(lru, (2, 1.0)) == ["C"]
    assert recency(lru) == ["A", "D", "C"]
    assert add(lru, "E", 4) == "A"
    assert ids(lru) == ["C", "D", "E"]
    assert add(lru, "F", 5) == "D"
    assert add(lru, "G", 6) == "C"
    assert ids(lru) == ["E", "F", "G"]


def test_insert_counts_as_a_use(lru: SolarMemory) -> None:
    add(lru, "A", 0)
    add(lru, "B", 1)
    assert hit(lru, (0, 1.0)) == ["A"]
    add(lru, "C", 2)  # C is used after A's retrieval
    assert hit(lru, (1, 1.0)) == ["B"]
    assert recency(lru) == ["A", "C", "B"]
    # If an insert were not a use, never-retrieved C would go first.
    assert add(lru, "D", 3) == "A"
    assert add(lru, "E", 4) == "C"
    assert ids(lru) == ["B", "D", "E"]


def test_simultaneous_hits_are_touched_in_insertion_order(lru: SolarMemory) -> None:
    for axis, name in enumerate("ABC"):
        add(lru, name, axis)
    hit(lru, (1, 1.0))  # B
    hit(lru, (0, 1.0))  # A: recency now C, B, A
    assert recency(lru) == ["C", "B", "A"]
    # One retrieval returns B (rank 0) and A (rank 1). Touching in insertion order (A, then B)
    # makes A the least recent of the two; rank order or previous recency would pick B.
    assert hit(lru, (1, 0.8), (0, 0.6)) == ["B", "A"]
    assert recency(lru) == ["C", "A", "B"]
    assert add(lru, "D", 3) == "C"
    assert add(lru, "E", 4) == "A"
    assert add(lru, "F", 5) == "B"
    assert ids(lru) == ["D", "E", "F"]


def test_oldest_insert_among_three_simultaneous_hits_goes_first() -> None:
    memory = SolarMemory("lru", capacity=4, dim=DIM)
    for axis, name in enumerate("ABCD"):
        add(memory, name, axis)
    hit(memory, (3, 1.0))
    hit(memory, (2, 1.0))
    hit(memory, (1, 1.0))  # recency: A, D, C, B
    assert hit(memory, (2, 0.7), (3, 0.6), (1, 0.5)) == ["C", "D", "B"]
    assert recency(memory) == ["A", "B", "C", "D"]
    evicted = [add(memory, name, axis) for axis, name in zip(range(4, 8), "EFGH", strict=True)]
    assert evicted == ["A", "B", "C", "D"]


def test_explicit_remove_and_reinsert(lru: SolarMemory) -> None:
    for axis, name in enumerate("ABC"):
        add(lru, name, axis)
    hit(lru, (0, 1.0))  # recency B, C, A
    lru.remove("B")
    assert add(lru, "D", 3) is None
    assert recency(lru) == ["C", "A", "D"]
    assert add(lru, "E", 4) == "C"
    lru.remove("A")
    add(lru, "A", 0)  # the same id again: a fresh, most recent item
    assert recency(lru) == ["D", "E", "A"]
    assert add(lru, "F", 5) == "D"
    assert add(lru, "G", 6) == "E"
    assert add(lru, "H", 7) == "A"


def test_a_retrieval_without_hits_changes_nothing() -> None:
    memory = SolarMemory("lru", capacity=2, dim=DIM)
    assert memory.retrieve(embedding=onehot(0), k=3) == []
    add(memory, "A", 0)
    add(memory, "B", 1)
    assert add(memory, "C", 2) == "A"
