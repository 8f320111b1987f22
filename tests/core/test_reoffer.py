"""Re-offering a stored experience (same ``item_id``, same text) ends the step but stores nothing.

This is what the reference runners do when a workload streams an item that is still cached; the
benchmark suite relies on it to replay those workloads faithfully.
"""

from __future__ import annotations

import pytest

from solar_core import ArcEviction, SolarMemory
from tests.support.memories import full_state, onehot


def filled(policy: str, capacity: int = 4) -> SolarMemory:
    memory = SolarMemory(policy, capacity=capacity, dim=8, seed=0)
    for i in range(3):
        memory.add(f"text {i}", embedding=onehot(i), item_id=f"i{i}")
    return memory


def test_reoffer_ends_the_step_and_stores_nothing(policy: str) -> None:
    memory = filled(policy)
    before = memory.stats()
    ids = [item.id for item in memory.items()]
    decision = memory.add("text 0", embedding=onehot(0), item_id="i0")
    after = memory.stats()
    assert not decision.admitted and decision.reason == "already stored"
    assert decision.item_id == "i0" and decision.evicted is None
    assert decision.step == before["steps"] + 1 == after["steps"]
    assert [item.id for item in memory.items()] == ids
    assert after["reoffered"] == before["reoffered"] + 1
    assert after["admitted"] == before["admitted"] and after["evicted"] == before["evicted"]
    memory.check_invariants()


def test_same_id_with_other_text_is_an_error_and_changes_nothing(policy: str) -> None:
    memory = filled(policy)
    state = full_state(memory)
    with pytest.raises(ValueError, match="already stored, with a different text"):
        memory.add("another text", embedding=onehot(0), item_id="i0")
    assert full_state(memory) == state


def test_the_regret_gate_sees_a_reoffer_at_zero_cost() -> None:
    # Its own nearest neighbour: novelty 0, so the information gain (the implicit cost) is 0.
    memory = filled("solar")
    decision = memory.add("text 1", embedding=onehot(1), item_id="i1")
    assert decision.cost == 0.0 and decision.tau is not None


def test_arc_counts_a_reoffer_as_a_request_for_the_key() -> None:
    policy = ArcEviction(4)
    memory = SolarMemory(eviction=policy, capacity=4, dim=8, seed=0)
    for i in range(3):
        memory.add(f"text {i}", embedding=onehot(i), item_id=f"i{i}")
    slot = next(iter(policy.t1))  # T1 is in insertion order: i0's slot comes first
    assert len(policy.t1) == 3 and not policy.t2
    memory.add("text 0", embedding=onehot(0), item_id="i0")
    assert len(policy.t1) == 2 and list(policy.t2) == [slot]  # case I: T1 -> MRU end of T2


def test_lru_recency_is_not_touched_by_a_reoffer() -> None:
    # The reference LRU ranks by last retrieval only: re-offering the oldest item keeps it first
    # in line for eviction.
    memory = SolarMemory("lru", capacity=3, dim=8, seed=0)
    for i in range(3):
        memory.add(f"text {i}", embedding=onehot(i), item_id=f"i{i}")
    memory.add("text 0", embedding=onehot(0), item_id="i0")
    assert memory.add("text 3", embedding=onehot(3), item_id="i3").evicted == "i0"
