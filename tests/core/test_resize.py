"""``SolarMemory.resize``: a memory's capacity changes in place. Growing keeps every item and all
that was learned of it; shrinking evicts by the policy, as a full memory would, each eviction
traced; a refused capacity changes nothing; a resized memory's parameters and state rebuild it
exactly, and it goes on as the original does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from solar_core import SolarMemory
from tests.support.persistence import deep_diff

#: every preset with a capacity (``unlimited`` keeps everything: it has none)
BOUNDED = ["solar", "solar-adaptive", "solar-dialogue", "fifo", "lru", "lfu", "arc"]


def _clock() -> float:
    return 1_000.0  # one time: two memories' traces compare equal


def filled(policy: str, capacity: int = 20, n: int = 60) -> SolarMemory:
    """A memory that has stored, recalled and been rated."""
    memory = SolarMemory(policy, capacity=capacity, embedder="hash", seed=0, clock=_clock)
    for i in range(n):
        memory.add(f"note {i} on topic {i % 7}, detail {i * 3}")
        if i % 3 == 0 and memory.retrieve(f"topic {i % 7}"):
            memory.feedback(like=i % 2 == 0)
    return memory


def learned(memory: SolarMemory) -> dict[str, Any]:
    """What the memory knows of each item it holds."""
    return {item.id: (item.text, dict(item.policy), item.importance) for item in memory.items()}


@pytest.mark.parametrize("policy", BOUNDED)
def test_growing_keeps_every_item_and_what_was_learned_of_it(policy: str) -> None:
    memory = filled(policy)
    before = learned(memory)
    assert memory.resize(40) == []
    assert memory.capacity == 40 and learned(memory) == before
    memory.check_invariants()
    stats = memory.stats()
    for i in range(30):  # the room is used: nothing is evicted until 40 items are held
        memory.add(f"a new note {i} about a fresh subject {i * 11}")
    admitted = memory.stats()["admitted"] - stats["admitted"]
    assert len(memory) == min(40, len(before) + admitted)
    assert memory.stats()["evicted"] - stats["evicted"] == max(0, len(before) + admitted - 40)
    memory.check_invariants()


@pytest.mark.parametrize("policy", BOUNDED)
def test_shrinking_evicts_by_the_policy_and_traces_each_eviction(policy: str) -> None:
    memory = filled(policy)
    twin = memory.detached()
    held, evicted_before = len(memory), memory.stats()["evicted"]
    decisions = memory.resize(5)
    assert len(memory) == 5 and memory.capacity == 5
    assert len(decisions) == held - 5
    assert memory.stats()["evicted"] == evicted_before + held - 5
    gone = [d.evicted for d in decisions]
    assert set(gone) | {i.id for i in memory.items()} == {i.id for i in twin.items()}
    assert all(not d.admitted and d.reason == "resized to 5" for d in decisions)
    assert memory.trace()[-len(decisions) :] == decisions
    # the victims are the policy's: a full memory of the same state evicts the same first one
    # when a new item must make room (same random draws: the twin is an exact copy)
    first = twin.core.eviction.victim(twin.stats()["steps"])
    assert twin.core.store.id_at(first.slot) == gone[0]
    memory.check_invariants()


@pytest.mark.parametrize("policy", BOUNDED)
def test_a_resized_memory_is_rebuilt_exactly_from_its_parameters_and_state(policy: str) -> None:
    memory = filled(policy)
    memory.resize(6)
    params = memory.params()
    assert params["capacity"] == 6 and params["rows"] == 20  # its slots stay where they are
    rebuilt = SolarMemory.from_params(params, embedder="hash", clock=_clock)
    rebuilt.load_state(memory.state())
    assert rebuilt.params() == params
    assert deep_diff(memory.core, rebuilt.core) is None, deep_diff(memory.core, rebuilt.core)
    for i in range(40):  # and they go on alike, through further resizes
        text = f"later note {i} on topic {i % 5}"
        assert memory.add(text) == rebuilt.add(text)
        if i % 4 == 0:
            assert memory.retrieve(f"topic {i % 5}") == rebuilt.retrieve(f"topic {i % 5}")
            memory.feedback(like=True)
            rebuilt.feedback(like=True)
        if i == 20:
            assert memory.resize(30) == rebuilt.resize(30)
    assert deep_diff(memory.core, rebuilt.core) is None
    assert "rows" not in memory.params()  # grown past its rows again


def test_a_resize_tells_subscribers_of_the_evictions() -> None:
    memory = filled("fifo")
    told: list[tuple[list[str], str]] = []
    memory.subscribe(on_delete=lambda ids, why: told.append((ids, why)))
    decisions = memory.resize(3)
    assert told == [([d.evicted for d in decisions], "evicted")]


@pytest.mark.parametrize(
    ("capacity", "error", "says"),
    [
        (0, ValueError, "capacity"),
        (-3, ValueError, "capacity"),
        ("5", TypeError, "capacity"),
        (True, TypeError, "capacity"),
        (2.0, TypeError, "capacity"),
        (None, TypeError, "capacity"),
    ],
)
def test_a_bad_capacity_is_refused_and_nothing_changes(
    capacity: object, error: type[Exception], says: str
) -> None:
    memory = filled("solar")
    state, params = memory.state(), memory.params()
    with pytest.raises(error, match=says):
        memory.resize(capacity)  # type: ignore[arg-type]
    assert memory.params() == params
    assert deep_diff(state, memory.state()) is None


def test_protected_items_bound_how_far_a_memory_shrinks() -> None:
    memory = SolarMemory("fifo", capacity=6, embedder="hash", seed=0)
    for i in range(3):
        memory.add(f"my name is part {i}", category="identity")
    for i in range(3):
        memory.add(f"context {i}")
    state = memory.state()
    with pytest.raises(ValueError, match="3 items are protected.*at least 3"):
        memory.resize(2)
    assert deep_diff(state, memory.state()) is None and memory.capacity == 6
    evicted = memory.resize(3)
    assert {i.text for i in memory.items()} == {f"my name is part {i}" for i in range(3)}
    assert len(evicted) == 3


def test_a_memory_that_keeps_everything_has_no_capacity_to_resize() -> None:
    for memory in (
        SolarMemory("unlimited", embedder="hash"),
        SolarMemory("fifo", capacity=None, embedder="hash"),
    ):
        with pytest.raises(ValueError, match="no capacity"):
            memory.resize(10)


def test_the_rows_kept_after_shrinking_are_reused() -> None:
    memory = filled("lru", capacity=20)
    memory.resize(4)
    rows = memory.core.store.slots
    for i in range(50):
        memory.add(f"after the resize {i}", embedding=np.eye(256, dtype=np.float32)[i])
    assert len(memory) == 4 and memory.core.store.slots == rows
    memory.check_invariants()
