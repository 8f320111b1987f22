"""Memory lifecycle with an injected clock: categories, importance, decay, expiry, traces."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

from solar_core import PRESETS, SolarMemory, available_policies

DAY = 86_400.0


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float) -> None:
        self.now += days * DAY


def v(i: int, dim: int = 8) -> np.ndarray:
    out = np.zeros(dim, dtype=np.float32)
    out[i % dim] = 1.0
    out[(i + 1) % dim] = 0.25 * (i // dim + 1)
    return out


def memory(
    clock: Clock, policy: str = "fifo", capacity: int | None = 10, **kw: object
) -> SolarMemory:
    return SolarMemory(policy, capacity=capacity, dim=8, clock=clock, seed=0, **kw)


def test_initial_importance_by_category() -> None:
    m = memory(Clock())
    ids = {c: m.add(c, embedding=v(i), category=c).item_id for i, c in
           enumerate(["identity", "knowledge", "context"])}  # fmt: skip
    assert {c: m.get(i).importance for c, i in ids.items()} == {
        "identity": 1.0, "knowledge": 0.8, "context": 0.5}  # fmt: skip
    assert m.get(ids["context"]).category == "context"


def test_reinforcement_on_recorded_retrieval_capped_at_one() -> None:
    m = memory(Clock())
    item = m.add("fact", embedding=v(0)).item_id
    expected = 0.5
    for _ in range(10):
        m.retrieve(embedding=v(0), k=1)
        expected = min(expected * 1.1, 1.0)
        assert m.get(item).importance == pytest.approx(expected)
    assert m.get(item).importance == 1.0  # 0.5 * 1.1 ** 8 > 1: capped
    m.retrieve(embedding=v(0), k=1, record=False)  # a preview does not reinforce
    assert m.get(item).importance == 1.0


@pytest.mark.parametrize(
    ("days", "context", "knowledge"),
    [
        (1, 0.5 * 0.95, 0.8 * 0.995),
        (30, 0.5 * 0.95**30, 0.8 * 0.995**30),
        (60, 0.5 * 0.95**60, 0.8 * 0.995**60),
    ],  # fmt: skip
)
def test_decay_per_category(days: int, context: float, knowledge: float) -> None:
    clock = Clock()
    m = memory(clock, ttl_days=1000)
    ids = [m.add(c, embedding=v(i), category=c).item_id for i, c in
           enumerate(["identity", "knowledge", "context"])]  # fmt: skip
    clock.advance(days)
    after = m.lifecycle.decay()
    assert after[ids[0]] == 1.0  # identity never decays
    assert after[ids[1]] == pytest.approx(knowledge)
    assert after[ids[2]] == pytest.approx(context)
    assert m.lifecycle.decay() == after  # no time passed since: nothing changes


def test_decay_in_steps_equals_decay_at_once() -> None:
    a, b = Clock(), Clock()
    ma, mb = memory(a), memory(b)
    ia = ma.add("x", embedding=v(0)).item_id
    ib = mb.add("x", embedding=v(0)).item_id
    for _ in range(30):
        a.advance(1)
        ma.lifecycle.decay()
    b.advance(30)
    mb.lifecycle.decay()
    assert ma.get(ia).importance == pytest.approx(mb.get(ib).importance)


def test_ttl_expires_context_only_and_valid_until_any() -> None:
    clock = Clock()
    m = memory(clock, ttl_days=7)
    context = m.add("context", embedding=v(0)).item_id
    knowledge = m.add("knowledge", embedding=v(1), category="knowledge").item_id
    until = m.add("promo", embedding=v(2), category="knowledge",
                  valid_until=clock.now + 3 * DAY).item_id  # fmt: skip
    identity = m.add("name", embedding=v(3), category="identity").item_id
    clock.advance(2.9)
    assert m.lifecycle.expire() == []
    clock.advance(0.2)
    assert m.lifecycle.expire() == [until]
    clock.advance(4)  # day 7.1: past the context TTL
    assert m.lifecycle.expire() == [context]
    clock.advance(365)
    assert m.lifecycle.expire() == []
    assert {i.id for i in m.items()} == {knowledge, identity}
    assert m.stats()["expired"] == 2
    m.check_invariants()


@pytest.mark.parametrize("policy", [p for p in available_policies() if not PRESETS[p].unbounded])
def test_identity_items_are_never_evicted_by_capacity(policy: str) -> None:
    m = memory(Clock(), policy, capacity=3)
    name = m.add("my name is Ada", embedding=v(0), category="identity").item_id
    for i in range(1, 30):
        m.retrieve(embedding=v(i))
        m.add(f"turn {i}", embedding=v(i))
        assert name in m
        m.check_invariants()
    m.remove(name)  # only explicit deletion removes it
    assert name not in m


def test_a_memory_full_of_identity_items_refuses_more() -> None:
    m = memory(Clock(), capacity=2)
    m.add("a", embedding=v(0), category="identity")
    m.add("b", embedding=v(1), category="identity")
    d = m.add("c", embedding=v(2))
    assert (d.admitted, d.reason) == (False, "full of protected items")
    assert len(m) == 2
    m.check_invariants()


def test_importance_weights_the_ranking_when_asked() -> None:
    q = np.eye(8, dtype=np.float32)[0]
    near = [1, 0.05, 0, 0, 0, 0, 0, 0]  # cosine 0.9988 to q
    far = [1, 0.1, 0, 0, 0, 0, 0, 0]  # cosine 0.9950
    m = memory(Clock(), importance_weight=0.5)
    ctx = m.add("context", embedding=near).item_id
    ident = m.add("identity", embedding=far, category="identity").item_id
    hits = m.retrieve(embedding=q, k=2, record=False)
    assert [h.id for h in hits] == [ident, ctx]  # importance 1.0 vs 0.5 outweighs the cosine
    assert hits[0].score == pytest.approx(float(m.vector(ident) @ q), abs=1e-6)  # x 1.0
    assert hits[1].score == pytest.approx(float(m.vector(ctx) @ q) * 0.75, abs=1e-6)
    plain = memory(Clock())
    a = plain.add("context", embedding=near).item_id
    plain.add("identity", embedding=far, category="identity")
    assert plain.retrieve(embedding=q, k=1)[0].id == a  # w = 0: cosine only


def test_trace_retention_sweep() -> None:
    clock = Clock()
    m = memory(clock, trace_retention_days={"decision": 2, "retrieval": 5})
    m.add("old", embedding=v(0))
    m.retrieve(embedding=v(0))
    clock.advance(3)
    m.add("new", embedding=v(1))
    assert m.lifecycle.sweep_traces() == {"decision": 1, "retrieval": 0}
    assert [d.item_id for d in m.trace()] == ["m2"]
    clock.advance(3)
    assert m.lifecycle.sweep_traces() == {"decision": 1, "retrieval": 1}
    assert m.retrieval_trace() == [] and m.trace() == []


def test_background_schedule_starts_and_stops_without_sleeping() -> None:
    clock = Clock()
    m = memory(clock)
    m.add("x", embedding=v(0))
    clock.advance(8)
    m.lifecycle.start(every_seconds=3600)  # runs once at once, then waits
    m.lifecycle.stop()
    assert not m.lifecycle.running and m.lifecycle.ticks == 1
    assert len(m) == 0  # the first run expired the 8-day-old context item
    with pytest.raises(ValueError):
        m.lifecycle.start(every_seconds=0)


def test_state_is_plain_data_and_pickling_keeps_the_lifecycle() -> None:
    clock = Clock()
    m = memory(clock, ttl_days=3)
    m.add("fact", embedding=v(0), category="knowledge", valid_until=clock.now + DAY)
    m.retrieve(embedding=v(0))
    state = m.export()
    json.dumps(state)  # plain data
    assert state["items"][0]["category"] == "knowledge"
    assert state["items"][0]["importance"] == pytest.approx(0.88)
    assert state["lifecycle"]["ttl_days"] == 3
    assert state["decisions"][0]["item_id"] == "m1" and state["retrievals"][0]["ids"] == ["m1"]
    copy = pickle.loads(pickle.dumps(m))
    assert copy.lifecycle.ttl_days == 3 and not copy.lifecycle.running
    assert copy.get("m1").importance == pytest.approx(0.88)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"category": "episodic"}, ValueError),
        ({"valid_until": "tomorrow"}, ValueError),
        ({"valid_until": float("inf")}, ValueError),
    ],
)
def test_bad_item_input_changes_nothing(kwargs: dict[str, object], error: type) -> None:
    m = memory(Clock())
    with pytest.raises(error):
        m.add("x", embedding=v(0), **kwargs)  # type: ignore[arg-type]
    assert len(m) == 0 and m.stats()["steps"] == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"ttl_days": 0},
        {"ttl_days": "7"},
        {"importance_weight": 2.0},
        {"trace_retention_days": {"response": 3}},
        {"trace_retention_days": {"decision": -1}},
    ],  # fmt: skip
)
def test_bad_lifecycle_settings(kwargs: dict[str, object]) -> None:
    with pytest.raises((ValueError, TypeError)):
        memory(Clock(), **kwargs)


def test_trace_retention_that_is_not_a_mapping_is_refused_naming_its_form() -> None:
    with pytest.raises(TypeError, match="trace_retention_days must map trace kinds"):
        memory(Clock(), trace_retention_days=5)


def test_an_item_decays_only_for_the_days_it_has_lived() -> None:
    clock = Clock()
    m = memory(clock, ttl_days=100)
    old = m.add("old", embedding=v(0)).item_id
    clock.advance(10)
    m.lifecycle.decay()
    clock.advance(5)
    new = m.add("new", embedding=v(1)).item_id
    clock.advance(1)
    after = m.lifecycle.decay()
    assert after[old] == pytest.approx(0.5 * 0.95**16)
    assert after[new] == pytest.approx(0.5 * 0.95)  # stored 1 day ago, not 6


def test_a_failing_clock_during_retrieval_changes_nothing() -> None:
    calls = [0]

    def clock() -> float:
        calls[0] += 1
        if calls[0] == 3:
            raise OSError("clock broke")
        return 0.0

    m = SolarMemory("solar", capacity=5, dim=8, clock=clock, seed=0)
    item = m.add("x", embedding=v(0)).item_id  # call 1 (add), 2 (trace time is the same read)
    calls[0] = 2
    before = (m.get(item).importance, m.get(item).policy, m.stats())
    with pytest.raises(OSError):
        m.retrieve(embedding=v(0))
    assert (m.get(item).importance, m.get(item).policy, m.stats()) == before


# -- edge cases: clocks, expiry, traces --------------------------------------------------------
@pytest.mark.parametrize("policy", [p for p in available_policies() if not PRESETS[p].unbounded])
def test_every_bounded_preset_refuses_politely_when_full_of_identity(policy: str) -> None:
    m = memory(Clock(), policy, capacity=2)
    m.add("a", embedding=v(0), category="identity")
    m.add("b", embedding=v(1), category="identity")
    m.retrieve(embedding=v(2))
    d = m.add("c", embedding=v(2))
    assert (d.admitted, d.reason) == (False, "full of protected items")
    m.check_invariants()


def test_the_policy_learns_from_cosines_not_from_weighted_scores() -> None:
    m = memory(Clock(), "solar-adaptive", importance_weight=0.5)
    m.add("x", embedding=v(0))
    m.add("y", embedding=v(5))
    hits = m.retrieve(embedding=v(0), k=2)
    assert hits[0].score == pytest.approx(0.75 * 1.0, abs=1e-6)  # importance 0.5, weight 0.5
    eviction = m.core.eviction
    assert eviction._best[eviction._last] == pytest.approx(1.0, abs=1e-6)  # type: ignore[attr-defined]


def test_decay_ignores_a_clock_that_goes_back() -> None:
    clock = Clock()
    m = memory(clock, ttl_days=1000)
    item = m.add("k", embedding=v(0), category="knowledge").item_id
    clock.advance(20)
    m.lifecycle.decay()
    clock.advance(-5)
    m.lifecycle.decay()
    clock.advance(5)
    assert m.lifecycle.decay()[item] == pytest.approx(0.8 * 0.995**20)


def test_a_failing_background_run_keeps_the_schedule_alive() -> None:
    import threading

    calls = [0]

    def clock() -> float:
        calls[0] += 1
        if calls[0] == 2:
            raise OSError("clock broke")
        return 0.0

    m = SolarMemory("fifo", capacity=5, dim=8, clock=clock)
    m.lifecycle.start(every_seconds=0.001)
    waiter = threading.Event()
    for _ in range(5000):  # wait on the schedule's progress, not a fixed sleep
        if m.lifecycle.ticks >= 3:
            break
        waiter.wait(0.001)
    m.lifecycle.stop()
    assert m.lifecycle.ticks >= 3 and isinstance(m.lifecycle.last_error, OSError)


def test_a_failing_subscriber_leaves_a_complete_step() -> None:
    m = memory(Clock())

    def broken(*args: object) -> None:
        raise RuntimeError("subscriber failed")

    m.subscribe(broken)
    with pytest.raises(RuntimeError):
        m.add("x", embedding=v(0))
    assert len(m) == 1 and len(m.trace()) == 1 and m.stats()["steps"] == 1
    m.check_invariants()


def test_a_copy_of_a_memory_has_a_lifecycle_of_its_own() -> None:
    """The lifecycle runs its sweeps as steps of its memory: after a copy, the original's still
    sweeps the original (a shared one would sweep through whichever memory was wired last)."""
    clock = Clock()
    memory = SolarMemory("fifo", capacity=5, dim=2, clock=clock)
    memory.add("old", embedding=[1, 0])
    twins = [copy.copy(memory), copy.deepcopy(memory), pickle.loads(pickle.dumps(memory))]
    assert all(twin.lifecycle is not memory.lifecycle for twin in twins)
    clock.advance(8)
    assert memory.lifecycle.expire() == ["m1"]
    assert memory.stats()["expired"] == 1 and len(memory) == 0
    memory.check_invariants()
