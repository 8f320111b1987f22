"""A memory's explicit state: ``params()``, ``state()`` and ``load_state()``.

A memory rebuilt from its parameters and loaded with its state is the same memory: every field
of the object graph equal, and the same next decisions, retrievals and random draws. Pickles and
copies go through the same state. A state that does not hold is refused with ``StateError``
naming the value, and the memory it was loaded into is left as it was.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

from solar_core import SolarMemory
from solar_core.basics.state import StateError
from solar_core.policies.admission import RegretGate
from solar_core.policies.deletion import CombinedDeletion, HistoryDeletion, PeriodicDeletion
from solar_core.policies.eviction import ArcEviction
from solar_core.policies.presets import PRESETS
from tests.support.persistence import core_state, deep_diff


def _drive(memory: SolarMemory, steps: int, seed: int = 0) -> list[Any]:
    """Adds, recorded retrievals, ratings, removals and a sweep; what each returned."""
    rng = np.random.default_rng(seed)
    topics = ["tea", "rain", "cats", "rust", "jazz"]
    out: list[Any] = []
    for i in range(steps):
        topic = topics[int(rng.integers(len(topics)))]
        decision = memory.add(f"fact {i} about {topic}", metadata={"i": i, "tags": [topic]})
        out.append((decision.item_id, decision.evicted, decision.admitted, decision.reason))
        hits = memory.retrieve(f"what about {topics[int(rng.integers(len(topics)))]}")
        out.append([h.id for h in hits])
        if i % 3 == 0:
            memory.feedback(score=float(rng.random()), retrieval=hits)
        if i % 13 == 12 and len(memory):
            memory.remove(memory.items()[0].id)
        if i % 17 == 16:
            memory.lifecycle.decay()
    return out


def _twin(memory: SolarMemory, **runtime: Any) -> SolarMemory:
    twin = SolarMemory.from_params(memory.params(), embedder="hash", **runtime)
    twin.load_state(memory.state())
    return twin


def _same(a: SolarMemory, b: SolarMemory) -> None:
    assert core_state(a)["recent"] == core_state(b)["recent"]
    found = deep_diff(a, b)
    assert found is None, found


@pytest.mark.parametrize("policy", sorted(PRESETS))
def test_a_memory_rebuilt_from_its_params_and_state_goes_on_the_same(policy: str) -> None:
    memory = SolarMemory(policy, capacity=8, embedder="hash", seed=3)
    _drive(memory, 60)
    memory.retrieve("what about tea")  # its rating, after the load, still reaches the policy
    twin = _twin(memory)
    assert twin.params() == memory.params()
    _same(twin, memory)
    twin.feedback(score=0.25)
    memory.feedback(score=0.25)
    _same(twin, memory)
    assert _drive(twin, 40, seed=1) == _drive(memory, 40, seed=1)
    assert twin.core.rng.random() == memory.core.rng.random()


def test_composed_parts_and_deletion_policies_round_trip() -> None:
    memories = [
        SolarMemory(eviction=ArcEviction(), admission=RegretGate(), capacity=6, embedder="hash"),
        SolarMemory("solar", capacity=6, embedder="hash", deletion=PeriodicDeletion(window=5)),
        SolarMemory(
            "fifo",
            capacity=6,
            embedder="hash",
            deletion=CombinedDeletion(HistoryDeletion(), PeriodicDeletion(window=4)),
        ),
    ]
    for memory in memories:
        _drive(memory, 50)
        twin = _twin(memory)
        _same(twin, memory)
        assert _drive(twin, 30, seed=2) == _drive(memory, 30, seed=2)


def test_an_evaluator_gate_is_given_its_evaluator_again() -> None:
    def judge(query: str | None, text: str, metadata: Any) -> bool:
        return "rain" not in text

    memory = SolarMemory("solar", capacity=6, embedder="hash", seed=1, evaluator=judge)
    _drive(memory, 30)
    with pytest.raises(StateError, match="evaluator"):
        SolarMemory.from_params(memory.params(), embedder="hash")
    twin = _twin(memory, evaluator=judge)
    _same(twin, memory)
    assert _drive(twin, 20, seed=4) == _drive(memory, 20, seed=4)


def test_pickles_and_copies_go_through_the_state() -> None:
    memory = SolarMemory("solar-dialogue", capacity=8, embedder="hash", seed=5)
    _drive(memory, 40)
    for twin in (pickle.loads(pickle.dumps(memory)), copy.deepcopy(memory), copy.copy(memory)):
        _same(twin, memory)
        assert _drive(twin, 20, seed=6) == _drive(copy.deepcopy(memory), 20, seed=6)


def _broken(state: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    return {**state, name: value}


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("steps", -1, "steps"),
        ("steps", "7", "steps"),
        ("score_sum", float("nan"), "score_sum"),
        ("item.importance", np.full(3, 2.0), "item.importance"),
        ("store.vectors", np.zeros((2, 3), np.float32), "vectors"),
        ("store.order", np.asarray([0, 0], np.int64), "order"),
        ("trace.reasons", [7] * 9, "traced decisions"),
        ("trace.given", np.zeros((3, 4), np.bool_), "trace.given"),
        ("rateable.slots", np.asarray([99], np.int32), "rateable"),
        ("rng", {"bit_generator": "MT19937", "state": {}}, "rng"),
        ("surprise", 1, "unknown state surprise"),
    ],
)
def test_a_state_that_does_not_hold_is_refused_and_changes_nothing(
    name: str, value: Any, says: str
) -> None:
    memory = SolarMemory("solar", capacity=8, embedder="hash", seed=3)
    _drive(memory, 20)
    target = SolarMemory("solar", capacity=8, embedder="hash", seed=3)
    _drive(target, 5, seed=9)
    before = copy.deepcopy(target)
    with pytest.raises(StateError, match=says):
        target.load_state(_broken(memory.state(), name, value))
    _same(target, before)


def test_a_missing_value_is_refused() -> None:
    memory = SolarMemory("lfu", capacity=4, embedder="hash")
    _drive(memory, 10)
    state = memory.state()
    del state["steps"]
    with pytest.raises(StateError, match="missing"):
        SolarMemory.from_params(memory.params(), embedder="hash").load_state(state)


def test_params_are_plain_data_and_name_registered_parts_only() -> None:
    memory = SolarMemory("solar", capacity=5, embedder="hash")
    params = memory.params()
    assert params["eviction"]["class"] == "ThompsonEviction"
    forged = {**params, "eviction": {"class": "os.system", "params": {}}}
    with pytest.raises(StateError, match="not a registered part"):
        SolarMemory.from_params(forged, embedder="hash")
    huge = {**params, "capacity": 10**9}
    with pytest.raises(StateError, match="capacity"):
        SolarMemory.from_params(huge, embedder="hash")


def test_a_number_past_the_floats_in_a_traced_decision_is_refused() -> None:
    """It escaped as an OverflowError where the decision is read."""
    memory = SolarMemory("lfu", capacity=4, embedder="hash")
    _drive(memory, 5)
    state = memory.state()
    state["trace.contenders"][-1] = [["m1", 10**400]]  # a contender's score
    with pytest.raises(StateError, match="traced decisions"):
        SolarMemory.from_params(memory.params(), embedder="hash").load_state(state)


@pytest.mark.parametrize("policy", ["solar-adaptive", "lfu", "solar-a"])
def test_an_emptied_slot_loads_as_it_is_held(policy: str) -> None:
    """A removed item's per-slot values are what a loaded memory has there (the coverage
    policy's tie-break nudge stayed behind in the live one)."""
    memory = SolarMemory(policy, capacity=4, embedder="hash", seed=1)
    memory.add("tea at five")
    memory.remove(memory.items()[0].id)
    _same(_twin(memory), memory)


def test_an_int_expiry_round_trips() -> None:
    """``add(valid_until=<an int>)`` is taken, and its memory could not be loaded (nor a stored
    one snapshotted)."""
    memory = SolarMemory("fifo", capacity=4, embedder="hash", seed=0)
    memory.add("tea", valid_until=2_000_000_000)
    twin = _twin(memory)
    _same(twin, memory)
    assert twin.items()[0].valid_until == 2_000_000_000
