"""FIFO eviction: exact eviction sequences on hand-made scenarios."""

from __future__ import annotations

import pytest

from solar_core import FifoEviction, SolarMemory
from tests.support.memories import add_onehot as add
from tests.support.memories import onehot
from tests.support.memories import stored_ids as ids

DIM = 8


def hit(memory: SolarMemory, axis: int) -> str:
    hits = memory.retrieve(embedding=onehot(axis), k=1)
    assert len(hits) == 1
    return hits[0].id


@pytest.fixture(params=["preset", "composed"])
def fifo(request: pytest.FixtureRequest) -> SolarMemory:
    if request.param == "preset":
        return SolarMemory("fifo", capacity=3, dim=DIM, seed=0)
    return SolarMemory(eviction=FifoEviction(), capacity=3, dim=DIM, seed=0)


def test_evicts_in_insertion_order(fifo: SolarMemory) -> None:
    evicted = []
    contents = []
    for axis, name in enumerate("ABCDEFG"):
        evicted.append(add(fifo, name, axis))
        contents.append(ids(fifo))
    assert evicted == [None, None, None, "A", "B", "C", "D"]
    assert contents == [
        ["A"],
        ["A", "B"],
        ["A", "B", "C"],
        ["B", "C", "D"],
        ["C", "D", "E"],
        ["D", "E", "F"],
        ["E", "F", "G"],
    ]
    assert fifo.stats()["evicted"] == 4


def test_retrievals_do_not_protect_an_item(fifo: SolarMemory) -> None:
    for axis, name in enumerate("ABC"):
        add(fifo, name, axis)
    for _ in range(5):
        assert hit(fifo, 0) == "A"
    assert add(fifo, "D", 3) == "A"  # retrieved five times, still the oldest insert
    assert hit(fifo, 1) == "B"
    assert add(fifo, "E", 4) == "B"
    assert ids(fifo) == ["C", "D", "E"]


def test_decision_has_no_victim_score(fifo: SolarMemory) -> None:
    for axis, name in enumerate("ABC"):
        add(fifo, name, axis)
    decision = fifo.add("text D", embedding=onehot(3), item_id="D")
    assert decision.evicted == "A"
    assert decision.reason == "always"
    assert decision.victim_score is None
    assert decision.contenders == ()


def test_explicit_remove_frees_a_slot_without_eviction(fifo: SolarMemory) -> None:
    for axis, name in enumerate("ABC"):
        add(fifo, name, axis)
    fifo.remove("B")
    fifo.check_invariants()
    assert ids(fifo) == ["A", "C"]
    assert add(fifo, "D", 3) is None  # below capacity again: nothing leaves
    assert ids(fifo) == ["A", "C", "D"]
    assert add(fifo, "E", 4) == "A"
    assert add(fifo, "F", 5) == "C"
    assert add(fifo, "G", 6) == "D"
    assert ids(fifo) == ["E", "F", "G"]
    assert fifo.stats()["removed"] == 1
    assert fifo.stats()["evicted"] == 3


def test_removing_the_oldest_moves_the_next_victim(fifo: SolarMemory) -> None:
    for axis, name in enumerate("ABCD"):
        add(fifo, name, axis)
    assert ids(fifo) == ["B", "C", "D"]
    fifo.remove("B")
    add(fifo, "E", 4)
    assert add(fifo, "F", 5) == "C"
    assert ids(fifo) == ["D", "E", "F"]


def test_a_reinserted_id_counts_as_new(fifo: SolarMemory) -> None:
    for axis, name in enumerate("ABCD"):
        add(fifo, name, axis)  # evicts A
    assert add(fifo, "A", 0) == "B"  # A comes back as the newest item
    assert ids(fifo) == ["C", "D", "A"]
    assert add(fifo, "E", 4) == "C"
    assert add(fifo, "F", 5) == "D"
    assert add(fifo, "G", 6) == "A"


def test_capacity_one() -> None:
    memory = SolarMemory("fifo", capacity=1, dim=DIM)
    assert [add(memory, n, i) for i, n in enumerate("ABC")] == [None, "A", "B"]
    assert ids(memory) == ["C"]


def test_inserted_step_is_reported() -> None:
    memory = SolarMemory("fifo", capacity=2, dim=DIM)
    for axis, name in enumerate("ABC"):
        add(memory, name, axis)
    assert {i.id: i.policy["inserted_step"] for i in memory.items()} == {"B": 2.0, "C": 3.0}
