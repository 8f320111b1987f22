"""LFU eviction: exact eviction sequences, both tie-breaks."""

from __future__ import annotations

import pytest

from solar_core import LfuEviction, SolarMemory
from tests.support.memories import add_onehot as add
from tests.support.memories import hit_axes as hit
from tests.support.memories import stored_ids as ids

DIM = 8


def counts(memory: SolarMemory) -> dict[str, float]:
    return {item.id: item.policy["count"] for item in memory.items()}


def lfu(tie_break: str | None = None, capacity: int = 3) -> SolarMemory:
    if tie_break is None:
        return SolarMemory("lfu", capacity=capacity, dim=DIM, seed=0)
    return SolarMemory(eviction=LfuEviction(tie_break=tie_break), capacity=capacity, dim=DIM)


@pytest.mark.parametrize("tie_break", [None, "insertion", "recency"])
def test_fewest_retrievals_leave_first(tie_break: str | None) -> None:
    memory = lfu(tie_break)
    for axis, name in enumerate("ABC"):
        add(memory, name, axis)
    hit(memory, (1, 1.0))
    hit(memory, (1, 1.0))
    hit(memory, (2, 1.0))
    assert counts(memory) == {"A": 0.0, "B": 2.0, "C": 1.0}
    assert add(memory, "D", 3) == "A"
    assert add(memory, "E", 4) == "D"  # the newcomer starts at 0
    hit(memory, (4, 1.0))
    hit(memory, (4, 1.0))
    hit(memory, (4, 1.0))
    assert counts(memory) == {"B": 2.0, "C": 1.0, "E": 3.0}
    assert add(memory, "F", 5) == "C"
    assert add(memory, "G", 6) == "F"
    assert ids(memory) == ["B", "E", "G"]


def test_default_tie_break_is_insertion_order() -> None:
    assert LfuEviction().tie_break == "insertion"
    memory = lfu()
    for axis, name in enumerate("ABC"):
        add(memory, name, axis)
    hit(memory, (2, 1.0))  # C reaches count 1 first
    hit(memory, (1, 1.0))
    hit(memory, (0, 1.0))  # A reaches count 1 last, but was inserted first
    assert counts(memory) == {"A": 1.0, "B": 1.0, "C": 1.0}
    assert add(memory, "D", 3) == "A"
    assert add(memory, "E", 4) == "D"
    hit(memory, (4, 1.0))
    assert add(memory, "F", 5) == "B"
    assert add(memory, "G", 6) == "F"
    assert ids(memory) == ["C", "E", "G"]


def test_recency_tie_break_evicts_whoever_reached_the_count_first() -> None:
    memory = lfu("recency")
    for axis, name in enumerate("ABC"):
        add(memory, name, axis)
    hit(memory, (2, 1.0))  # C reaches count 1 first
    hit(memory, (1, 1.0))
    hit(memory, (0, 1.0))
    assert add(memory, "D", 3) == "C"
    assert add(memory, "E", 4) == "D"
    hit(memory, (4, 1.0))  # E reaches count 1 after B and A
    assert add(memory, "F", 5) == "B"
    assert add(memory, "G", 6) == "F"
    assert ids(memory) == ["A", "E", "G"]


def test_recency_tie_break_among_never_retrieved_is_insertion_order() -> None:
    memory = lfu("recency")
    evicted = [add(memory, name, axis) for axis, name in enumerate("ABCDE")]
    assert evicted == [None, None, None, "A", "B"]


def test_recency_tie_break_touches_simultaneous_hits_in_insertion_order() -> None:
    # Documented in LfuEviction.on_retrieve ("Touch in insertion order, as LRU does") and the
    # behaviour the cachetools oracle relies on: A and B reach count 2 in the same retrieval, A
    # (inserted first) is touched first, so A reached the count "earlier" and leaves first.
    memory = lfu("recency", capacity=2)
    add(memory, "A", 0)
    add(memory, "B", 1)
    hit(memory, (1, 1.0))  # B: count 1
    hit(memory, (0, 1.0))  # A: count 1, more recently than B
    assert hit(memory, (0, 0.8), (1, 0.6)) == ["A", "B"]
    assert counts(memory) == {"A": 2.0, "B": 2.0}
    assert add(memory, "C", 2) == "A"


def test_insertion_tie_break_ignores_the_order_of_simultaneous_hits() -> None:
    memory = lfu("insertion", capacity=2)
    add(memory, "A", 0)
    add(memory, "B", 1)
    hit(memory, (1, 1.0))
    hit(memory, (0, 1.0))
    hit(memory, (1, 0.8), (0, 0.6))
    assert add(memory, "C", 2) == "A"


def test_a_reused_slot_starts_from_zero() -> None:
    memory = lfu(capacity=2)
    add(memory, "A", 0)
    add(memory, "B", 1)
    for _ in range(3):
        hit(memory, (0, 1.0))
    hit(memory, (1, 1.0))
    memory.remove("A")  # A's slot, with count 3, is freed
    assert add(memory, "C", 2) is None
    assert counts(memory) == {"B": 1.0, "C": 0.0}
    assert add(memory, "D", 3) == "C"
    hit(memory, (3, 1.0))
    hit(memory, (3, 1.0))
    assert add(memory, "E", 4) == "B"
    assert ids(memory) == ["D", "E"]


def test_counts_do_not_decay_so_old_favourites_squat() -> None:
    memory = lfu(capacity=3)
    for axis, name in enumerate("AB"):
        add(memory, name, axis)
    for _ in range(5):
        hit(memory, (0, 0.8), (1, 0.6))
    # A new topic arrives and is used a lot, but never catches up within the window.
    evicted = []
    for axis, name in zip(range(2, 7), "CDEFG", strict=True):
        evicted.append(add(memory, name, axis))
        for _ in range(4):
            hit(memory, (axis, 1.0))
    assert evicted == [None, "C", "D", "E", "F"]
    assert ids(memory) == ["A", "B", "G"]


def test_bad_tie_break_is_rejected() -> None:
    with pytest.raises(ValueError, match="tie_break"):
        LfuEviction(tie_break="lru")  # type: ignore[arg-type]
