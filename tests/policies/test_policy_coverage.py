"""solar-adaptive: CoverageEviction as admission and eviction, decision by decision."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solar_bench.generators import cycling
from solar_core import SolarMemory
from solar_core.policies.admission import Candidate
from solar_core.policies.admission.coverage_gate import CoverageGate
from solar_core.policies.eviction import FifoEviction
from solar_core.policies.eviction.coverage import CoverageEviction


def unit(*xs: float) -> np.ndarray:
    v = np.asarray(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def memory(capacity: int | None = 2, dim: int = 3, **params: object) -> SolarMemory:
    return SolarMemory("solar-adaptive", capacity=capacity, dim=dim, seed=0, **params)


def value(m: SolarMemory, item_id: str) -> float:
    return m.get(item_id).policy["value"]


def test_free_slots_take_every_candidate() -> None:
    m = memory(capacity=3)
    reasons = [m.add(t, embedding=unit(1, 0, 0), item_id=t).reason for t in "abc"]
    assert reasons == ["free slot"] * 3  # even identical vectors: an empty slot loses nothing
    assert len(m) == 3


def test_value_is_the_margin_of_the_best_hit() -> None:
    m = memory()
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    q = unit(1, 0.2, 0)
    hits = m.retrieve(embedding=q)
    assert [h.id for h in hits] == ["a", "b"]
    assert value(m, "a") == pytest.approx(hits[0].score - hits[1].score, abs=1e-6)
    assert value(m, "b") == 0.0  # retrieved, but never the best: worth nothing
    m.check_invariants()


def test_a_worthless_victim_makes_way_oldest_first() -> None:
    m = memory()
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    m.retrieve(embedding=unit(0, 1, 0.1))  # b serves; a is worth nothing
    d = m.add("c", embedding=unit(0, 0, 1), item_id="c")
    assert (d.admitted, d.reason, d.evicted) == (True, "victim worthless", "a")
    # Now b and c are both worth nothing to c's queries except b's: c is newest, b served once.
    d = m.add("d", embedding=unit(1, 1, 0), item_id="d")
    assert d.evicted == "c"  # worthless c goes before b, which serves a remembered query


def test_candidate_must_beat_the_weakest_value_with_hysteresis() -> None:
    m = memory(shift=0.0)  # the misses below would otherwise read as a regime shift
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    for _ in range(3):
        m.retrieve(embedding=unit(1, 0.3, 0))  # a serves, margin > 0
        m.retrieve(embedding=unit(0.3, 1, 0))  # b serves
    weakest = min(value(m, "a"), value(m, "b"))
    # A near copy of a improves a's queries only marginally: rejected, nothing moves.
    d = m.add("a2", embedding=unit(1, 0.05, 0), item_id="a2")
    assert (d.admitted, d.reason) == (False, "gain <= value")
    assert d.tau == pytest.approx(1.5 * weakest) and d.regret is not None and d.regret < d.tau
    assert {i.id for i in m.items()} == {"a", "b"}
    # Queries nobody serves well build up a gain for the item that would serve them.
    for _ in range(6):
        m.retrieve(embedding=unit(0, 0, 1))
    d = m.add("c", embedding=unit(0, 0, 1), item_id="c")
    assert (d.admitted, d.reason) == (True, "gain > value")
    assert d.regret is not None and d.tau is not None and d.regret > d.tau
    m.check_invariants()


def test_hysteresis_zero_swaps_on_any_larger_gain() -> None:
    m = memory(hysteresis=0.0, shift=0.0)
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    m.retrieve(embedding=unit(1, 0.3, 0))
    m.retrieve(embedding=unit(0.3, 1, 0))
    m.retrieve(embedding=unit(0.2, 0.2, 1))  # served badly by either
    gate = m.core.admission
    assert gate is m.core.eviction  # one policy in both roles
    assert isinstance(gate, CoverageEviction) and gate.hysteresis == 0.0
    d = m.add("c", embedding=unit(0, 0, 1), item_id="c")
    assert d.admitted and d.tau is not None and d.regret is not None and d.regret > d.tau


def test_feedback_scales_the_best_items_margin() -> None:
    m = memory()
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    hits = m.retrieve(embedding=unit(1, 0.2, 0))
    margin = hits[0].score - hits[1].score
    m.feedback(score=0.25, retrieval=hits)
    assert value(m, "a") == pytest.approx(0.25 * margin, abs=1e-6)
    hits = m.retrieve(embedding=unit(1, 0.2, 0))
    m.feedback(like=False, retrieval=hits)  # a dislike erases this query's credit
    assert value(m, "a") == pytest.approx(0.25 * margin, abs=1e-6)
    m.check_invariants()


def test_feedback_can_be_ignored() -> None:
    m = memory(use_feedback=False)
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    hits = m.retrieve(embedding=unit(1, 0.2, 0))
    m.feedback(like=False, retrieval=hits)
    assert value(m, "a") == pytest.approx(hits[0].score - hits[1].score, abs=1e-6)


def test_an_old_retrieval_is_rated_without_rescaling() -> None:
    m = memory()
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    first = m.retrieve(embedding=unit(1, 0.2, 0))
    m.retrieve(embedding=unit(0.2, 1, 0))
    before = value(m, "a")
    m.feedback(like=False, retrieval=first)  # not the latest query: no reliable row to rescale
    assert value(m, "a") == before


def test_regime_shift_opens_the_gate() -> None:
    rng = np.random.default_rng(0)
    m = memory(capacity=4, dim=8)
    old = [unit(*row) for row in np.eye(8)[:4]]
    for i, v in enumerate(old):
        m.add(f"old{i}", embedding=v, item_id=f"old{i}")
    for t in range(200):  # a long stable period: every query well served
        q = old[t % 4] + rng.normal(scale=0.05, size=8).astype(np.float32)
        m.retrieve(embedding=q)
    eviction = m.core.eviction
    assert isinstance(eviction, CoverageEviction) and not eviction.shifting
    new = unit(0, 0, 0, 0, 0, 0, 1, 0)
    m.retrieve(embedding=new)
    m.retrieve(embedding=new)  # sudden misses
    assert eviction.shifting
    d = m.add("new", embedding=new, item_id="new")
    assert (d.admitted, d.reason) == (True, "regime shift")
    assert not memory(capacity=4, dim=8, shift=0.0).core.eviction.shifting  # type: ignore[attr-defined]


def test_a_loop_longer_than_the_memory_is_held_not_churned() -> None:
    # m = 20 topics cycled through K = 10 slots: FIFO keeps nothing useful; the gate keeps one
    # item per topic for 10 topics and stops swapping once it has seen a lap.
    w = cycling(m=20, seed=42)
    m = SolarMemory("solar-adaptive", capacity=10, dim=w.dim, seed=0)
    for t, q in enumerate(w.queries):
        m.retrieve(embedding=q)
        item = int(w.stream[t])
        m.add(w.item_ids[item], embedding=w.items[item], item_id=w.item_ids[item])
    topics = {i.id.split("_")[1] for i in m.items()}
    assert len(topics) == 10
    late = [d for d in m.trace() if d.step > 100]
    assert sum(d.admitted for d in late) <= 2
    m.check_invariants()


def test_unbounded_memory_only_fills() -> None:
    m = memory(capacity=None)
    assert m.capacity is None
    for i in range(5):
        m.retrieve(embedding=unit(1, i, 0))
        assert m.add(f"x{i}", embedding=unit(1, i, 0)).reason == "free slot"
    assert m.core.eviction.window == 256  # type: ignore[attr-defined]


def test_window_scales_with_capacity_up_to_the_cap() -> None:
    assert memory(capacity=10).core.eviction.window == 160  # type: ignore[attr-defined]
    assert memory(capacity=100).core.eviction.window == 256  # type: ignore[attr-defined]
    assert memory(capacity=100, max_window=4096).core.eviction.window == 1600  # type: ignore[attr-defined]
    assert memory(capacity=100, window=7).core.eviction.window == 7  # type: ignore[attr-defined]


def test_the_oldest_query_leaves_the_window_with_its_credit() -> None:
    m = memory(window=2)
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    m.retrieve(embedding=unit(1, 0.2, 0))  # a
    m.retrieve(embedding=unit(0.2, 1, 0))  # b
    assert value(m, "a") > 0
    m.retrieve(embedding=unit(0.1, 1, 0))  # b again; a's query falls out of the window
    assert value(m, "a") == pytest.approx(0.0, abs=1e-9)
    m.check_invariants()


def test_eviction_hands_the_queries_back_to_the_runner_up() -> None:
    m = memory()
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    m.retrieve(embedding=unit(1, 0.2, 0))
    m.remove("a")
    m.check_invariants()
    # The query a served is served badly now: an item like a has a gain again.
    eviction = m.core.eviction
    assert isinstance(eviction, CoverageEviction)
    assert eviction.gain(unit(1, 0, 0)) > 0.5


def test_clear_forgets_the_queries() -> None:
    m = memory()
    m.add("a", embedding=unit(1, 0, 0))
    m.retrieve(embedding=unit(1, 0, 0))
    m.clear()
    eviction = m.core.eviction
    assert isinstance(eviction, CoverageEviction)
    assert eviction.gain(unit(1, 0, 0)) == 0.0 and not eviction.shifting
    m.check_invariants()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"hysteresis": -1.0}, "hysteresis"),
        ({"window": 0}, "window"),
        ({"window_per_slot": 0}, "window_per_slot"),
        ({"max_window": -3}, "max_window"),
        ({"shift": -0.5}, "shift"),
        ({"fast": 0.0}, "fast"),
        ({"slow": 1.5}, "slow"),
        ({"shift": math.nan}, "shift"),
    ],
)
def test_bad_parameters_are_refused(params: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        memory(**params)


def test_the_gate_needs_its_eviction_policy() -> None:
    with pytest.raises(TypeError, match="CoverageGate needs a CoverageEviction"):
        SolarMemory(admission=CoverageGate(), eviction=FifoEviction(), dim=3)
    # The eviction policy alone works with any admission (every item is offered).
    m = SolarMemory(eviction=CoverageEviction(), capacity=2, dim=3)
    for v in ([1, 0, 0], [0, 1, 0], [0, 0, 1]):
        m.retrieve(embedding=v)
        m.add(f"x{v}", embedding=v)
    assert len(m) == 2
    m.check_invariants()


# -- edge cases: parameters, re-offers, shared state -------------------------------------------
def test_rating_an_older_retrieval_leaves_the_latest_credit_alone() -> None:
    m = memory(capacity=3, dim=2, window=4)
    m.add("A", embedding=[1, 0], item_id="A")
    m.add("B", embedding=[0, 1], item_id="B")
    h1 = m.retrieve(embedding=[1, 0.1])
    h2 = m.retrieve(embedding=[1, 0.2])
    both = value(m, "A")
    m.feedback(score=0.0, retrieval=h1)  # older: no ring row is known for it
    assert value(m, "A") == pytest.approx(both)
    m.feedback(score=0.0, retrieval=h2)  # the latest: its margin goes
    assert value(m, "A") == pytest.approx(h1[0].score - h1[1].score, abs=1e-6)
    m.check_invariants()


def test_a_slightly_worse_query_is_not_a_regime_shift() -> None:
    m = memory(capacity=2, dim=3)
    m.add("A", embedding=[1, 0, 0])
    m.add("B", embedding=[0, 1, 0])
    for i in range(50):
        m.retrieve(embedding=[1, 0, 0] if i % 2 else [0, 1, 0])
    assert m.add("junk1", embedding=[0, 0, 1]).reason == "gain <= value"
    m.retrieve(embedding=[1, 0.05, 0])  # best 0.9988 instead of 1.0
    assert m.add("junk2", embedding=[0, 0, 1]).reason == "gain <= value"
    assert len(m) == 2 and {i.text for i in m.items()} == {"A", "B"}


def test_a_shift_does_not_admit_what_serves_no_query() -> None:
    m = memory(capacity=2, dim=3)
    m.add("A", embedding=[1, 0, 0])
    m.add("B", embedding=[0, 1, 0])
    for i in range(50):
        m.retrieve(embedding=[1, 0, 0] if i % 2 else [0, 1, 0])
    for _ in range(3):
        m.retrieve(embedding=[0, 0, 1])  # the queries move away: a shift
    assert m.core.eviction.shifting  # type: ignore[attr-defined]
    assert not m.add("junk", embedding=[-1, -1, 0]).admitted  # far from every query
    assert m.add("new", embedding=[0, 0, 1]).reason == "regime shift"


def test_values_of_items_that_serve_nothing_are_exactly_zero() -> None:
    # float32 similarities once left ~6e-8 behind, which broke "oldest first among the worthless"
    for a in np.linspace(0.05, 1.5, 120):
        m = memory(capacity=3, dim=2, window=2, shift=0.0)
        m.retrieve(embedding=[np.cos(a), np.sin(a)])
        m.retrieve(embedding=[np.cos(0.7 * a), -np.sin(0.7 * a)])
        m.add("A", embedding=[1, 0], item_id="A")
        m.add("A2", embedding=[1, 0], item_id="A2")
        m.retrieve(embedding=[1, 0])
        m.retrieve(embedding=[1, 0])
        m.add("B", embedding=[0, 1], item_id="B")
        assert value(m, "A") == pytest.approx(0.0, abs=1e-12)
        assert m.add("C", embedding=[0.6, 0.8], item_id="C").evicted == "A"


def test_a_single_hit_is_credited_against_the_true_runner_up() -> None:
    m = memory(capacity=3)
    m.add("a", embedding=unit(1, 0, 0), item_id="a")
    m.add("a2", embedding=unit(1, 0.1, 0), item_id="a2")
    m.add("b", embedding=unit(0, 1, 0), item_id="b")
    q = unit(1, 0.05, 0)
    (hit,) = m.retrieve(embedding=q, k=1)
    runner_up = max(float(m.vector(i) @ q) for i in ("a", "a2", "b") if i != hit.id)
    assert value(m, hit.id) == pytest.approx(hit.score - runner_up, abs=1e-6)
    m.check_invariants()


def test_one_policy_serves_one_memory() -> None:
    eviction = CoverageEviction()
    first = SolarMemory(admission=CoverageGate(0.25), eviction=eviction, capacity=2, dim=3)
    assert first.core.admission is eviction and eviction.hysteresis == 0.25
    with pytest.raises(ValueError, match="already serves another memory"):
        SolarMemory(admission=CoverageGate(0.75), eviction=eviction, capacity=2, dim=3)
    assert eviction.hysteresis == 0.25  # the refused memory changed nothing
    gate = CoverageGate()  # a gate only carries its hysteresis: it may compose two memories
    for _ in range(2):
        SolarMemory(admission=gate, eviction=CoverageEviction(), capacity=2, dim=3)
    with pytest.raises(RuntimeError, match="decides nothing alone"):
        gate.admit(Candidate(0, 2))


def test_a_refused_pairing_leaves_the_eviction_policy_usable() -> None:
    fifo = FifoEviction()
    with pytest.raises(TypeError):
        SolarMemory(admission=CoverageGate(), eviction=fifo, capacity=2, dim=3)
    SolarMemory(eviction=fifo, capacity=2, dim=3)  # not bound by the failed attempt


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"use_feedback": "false"}, TypeError),
        ({"use_feedback": None}, TypeError),
        ({"fast": "0.5"}, TypeError),
        ({"fast": 0.01, "slow": 0.5}, ValueError),
        ({"min_rise": -0.1}, ValueError),
    ],
)
def test_more_bad_parameters(params: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        memory(**params)
