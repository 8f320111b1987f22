"""SOLAR's regret-gated admission: bootstrap, regret accumulation, the adaptive threshold."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solar_core import Candidate, Decision, RegretGate, SolarMemory

TAU0 = math.sqrt(5.0)  # sqrt(2 * lambda / L), lambda = 5, L = 2


def onehot(i: int, dim: int = 32) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def scored_step(memory: SolarMemory, score: float, vector: np.ndarray, **kw: object) -> Decision:
    """One step with feedback: retrieve, rate with ``score``, offer ``vector``."""
    memory.retrieve(embedding=vector)
    memory.feedback(score=score)
    return memory.add("step", embedding=vector, **kw)  # type: ignore[arg-type]


def information_gain(stored: np.ndarray, vector: np.ndarray) -> float:
    """The spec's formula, recomputed in float64."""
    if len(stored) == 0:
        return 1.0
    sims = stored.astype(np.float64) @ vector.astype(np.float64)
    novelty = float(np.clip(1.0 - sims.max(), 0.0, 1.0))
    density = float(np.clip(np.sort(sims)[::-1][:5].mean(), 0.0, 1.0))
    return max(0.6 * novelty - 0.4 * density, 0.0)


class ReferenceGate:
    """The paper's regret and threshold updates, written out with numpy."""

    def __init__(self) -> None:
        self.regret = 0.0
        self.costs: list[float] = []
        self.l_ema: float | None = None
        self.tau = TAU0

    def admit(self, size: int, capacity: int | None, cost: float) -> tuple[bool, str, float]:
        self.regret += cost
        self.costs.append(cost)
        if len(self.costs) >= 30:
            l_new = max(2.0 * float(np.std(self.costs[-30:])), 0.1)
            self.l_ema = l_new if self.l_ema is None else 0.7 * self.l_ema + 0.3 * l_new
            self.tau = float(np.clip(math.sqrt(2 * 5.0 / self.l_ema), 0.1, 5.0))
        regret = self.regret
        bootstrap = 25 if capacity is None else min(max(capacity // 2, 5), 25)
        if size < bootstrap:
            self.regret = 0.0
            return True, "bootstrap", regret
        if regret > self.tau:
            self.regret = 0.0
            return True, "regret > tau", regret
        return False, "regret <= tau", regret


@pytest.mark.parametrize(
    ("capacity", "size"),
    [(1, 5), (4, 5), (9, 5), (10, 5), (11, 5), (12, 6), (13, 6), (20, 10), (49, 24)]
    + [(50, 25), (51, 25), (100, 25), (10_000, 25), (None, 25)],
)
def test_bootstrap_size(capacity: int | None, size: int) -> None:
    assert RegretGate().bootstrap_size(capacity) == size
    assert size == (25 if capacity is None else min(max(capacity // 2, 5), 25))


@pytest.mark.parametrize(("capacity", "stored"), [(20, 10), (30, 15), (80, 25), (None, 25)])
def test_with_zero_cost_only_the_bootstrap_is_stored(capacity: int | None, stored: int) -> None:
    memory = SolarMemory("solar", capacity=capacity, dim=32, seed=0, repeats=False)
    decisions = [scored_step(memory, 1.0, onehot(i % 32)) for i in range(stored + 15)]
    assert [d.reason for d in decisions] == ["bootstrap"] * stored + ["regret <= tau"] * 15
    assert len(memory) == stored
    assert all(d.cost == 0.0 and d.regret == 0.0 for d in decisions)


def test_below_the_bootstrap_size_a_full_memory_still_admits_everything() -> None:
    memory = SolarMemory(
        "solar", capacity=4, dim=32, seed=0, repeats=False
    )  # bootstrap 5 > capacity
    decisions = [scored_step(memory, 1.0, onehot(i)) for i in range(12)]
    assert all(d.admitted and d.reason == "bootstrap" for d in decisions)
    assert [d.evicted is not None for d in decisions] == [False] * 4 + [True] * 8
    assert len(memory) == 4


def test_tau0_is_sqrt5_until_30_costs() -> None:
    gate = RegretGate()
    assert gate.tau == TAU0
    for _ in range(29):
        gate.admit(Candidate(size=100, capacity=10, score=0.0))
        assert gate.tau == TAU0
    gate.admit(Candidate(size=100, capacity=10, score=0.0))
    assert gate.tau != TAU0


def test_regret_accumulates_one_minus_score_and_every_store_resets_it() -> None:
    memory = SolarMemory("solar", capacity=10, dim=32, seed=0, repeats=False)  # bootstrap 5
    boot = [scored_step(memory, 0.1, onehot(i)) for i in range(5)]
    assert [(d.reason, d.cost, d.regret) for d in boot] == [
        ("bootstrap", pytest.approx(0.9), pytest.approx(0.9))
    ] * 5  # bootstrap stores reset R too: it never builds up to 4.5
    after = [scored_step(memory, 0.5, onehot(5 + i)) for i in range(7)]
    assert [d.regret for d in after] == [0.5, 1.0, 1.5, 2.0, 2.5, 0.5, 1.0]
    assert [d.admitted for d in after] == [False] * 4 + [True] + [False] * 2
    assert [d.reason for d in after] == ["regret <= tau"] * 4 + ["regret > tau"] + [
        "regret <= tau"
    ] * 2
    assert all(d.tau == TAU0 and d.cost == 0.5 for d in after)
    assert memory.stats()["regret"] == 1.0
    assert memory.stats()["tau"] == TAU0


def test_a_like_is_score_one_and_a_dislike_score_zero() -> None:
    memory = SolarMemory("solar", capacity=10, dim=32, seed=0, repeats=False)
    for i in range(5):
        scored_step(memory, 1.0, onehot(i))
    memory.retrieve(embedding=onehot(5))
    memory.feedback(like=False)
    d = memory.add("x", embedding=onehot(5))
    assert (d.cost, d.regret, d.admitted) == (1.0, 1.0, False)
    memory.retrieve(embedding=onehot(6))
    memory.feedback(like=True)
    d = memory.add("y", embedding=onehot(6))
    assert (d.cost, d.regret, d.admitted) == (0.0, 1.0, False)
    memory.retrieve(embedding=onehot(7))
    memory.feedback(like=True, score=0.75)  # the score is the step's quality
    d = memory.add("z", embedding=onehot(7))
    assert (d.cost, d.regret, d.admitted) == (0.25, 1.25, False)


def test_nothing_but_a_store_resets_regret() -> None:
    memory = SolarMemory("solar", capacity=10, dim=32, seed=0, repeats=False)
    for i in range(5):
        scored_step(memory, 1.0, onehot(i))
    assert scored_step(memory, 0.0, onehot(5)).regret == 1.0
    # Retrievals, a late feedback, an explicit remove: R stays.
    memory.retrieve(embedding=onehot(0))
    memory.retrieve(embedding=onehot(1))
    memory.feedback(like=False)
    memory.remove(memory.items()[0].id)
    assert memory.stats()["regret"] == 1.0
    memory.retrieve(embedding=onehot(6))
    memory.feedback(score=1.0)
    assert memory.add("x", embedding=onehot(6)).regret == 1.0  # + cost 0


def test_without_feedback_the_cost_is_the_information_gain() -> None:
    memory = SolarMemory("solar", capacity=10, dim=32, seed=0, repeats=False)
    costs = [memory.add(f"t{i}", embedding=onehot(i)).cost for i in range(5)]
    assert costs == [1.0, 0.6, 0.6, 0.6, 0.6]  # empty memory: 1; orthogonal: 0.6 * 1 - 0.4 * 0
    d = memory.add("dup", embedding=onehot(0))  # a duplicate: novelty 0
    assert (d.cost, d.regret, d.admitted) == (0.0, 0.0, False)
    # cos 0.6 to item 0, 0.8 to item 1: novelty 0.2, density mean(0.8, 0.6, 0, 0, 0) = 0.28
    d = memory.add("mix", embedding=0.6 * onehot(0) + 0.8 * onehot(1))
    assert d.cost == pytest.approx(max(0.6 * 0.2 - 0.4 * 0.28, 0.0), abs=1e-6)
    assert d.cost == pytest.approx(0.008, abs=1e-6)
    regret = d.regret
    assert regret is not None
    # cos 0.5 to item 2 only: novelty 0.5, density 0.5 / 5 = 0.1 -> 0.26
    d = memory.add("half", embedding=unit(onehot(2) + math.sqrt(3) * onehot(20)))
    assert d.cost == pytest.approx(0.26, abs=1e-6)
    assert d.regret == pytest.approx(regret + 0.26, abs=1e-6)
    rs = [memory.add(f"o{i}", embedding=onehot(8 + i)) for i in range(8)]
    # R = 0.268 + 0.6 * n crosses sqrt(5) at n = 4 (2.668)
    assert [d.admitted for d in rs[:4]] == [False, False, False, True]
    assert rs[3].regret == pytest.approx(0.268 + 2.4, abs=1e-5)
    assert rs[4].regret == pytest.approx(0.6, abs=1e-6)


def test_feedback_on_an_ended_step_does_not_set_the_next_cost() -> None:
    memory = SolarMemory("solar", capacity=10, dim=32, seed=0, repeats=False)
    memory.retrieve(embedding=onehot(0))
    memory.add("a", embedding=onehot(0))  # step 1 ends without feedback
    memory.feedback(score=0.0)  # rates step 1's retrieval, after the fact
    d = memory.add("b", embedding=onehot(1))
    assert d.cost == pytest.approx(0.6)  # information gain, not 1 - 0


def test_regret_equal_to_tau_is_not_enough() -> None:
    gate = RegretGate(switching_cost=1.0, lipschitz=2.0, bootstrap=0)  # tau0 = 1
    assert gate.tau == 1.0
    v1 = gate.admit(Candidate(size=3, capacity=10, score=0.5))
    v2 = gate.admit(Candidate(size=3, capacity=10, score=0.5))
    v3 = gate.admit(Candidate(size=3, capacity=10, score=0.5))
    assert (v1.admitted, v2.admitted, v3.admitted) == (False, False, True)
    assert (v2.regret, v2.tau, v3.regret) == (1.0, 1.0, 1.5)


def expected_taus(costs: list[float], lam: float = 5.0) -> list[float]:
    taus, l_ema = [], None
    for n in range(1, len(costs) + 1):
        if n < 30:
            taus.append(TAU0 if lam == 5.0 else math.sqrt(lam))
            continue
        l_new = max(2.0 * float(np.std(costs[n - 30 : n])), 0.1)
        l_ema = l_new if l_ema is None else 0.7 * l_ema + 0.3 * l_new
        taus.append(float(np.clip(math.sqrt(2 * lam / l_ema), 0.1, 5.0)))
    return taus


@pytest.mark.parametrize("seed", range(5))
def test_tau_follows_the_ema_of_twice_the_std_of_the_last_30_costs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Phases of different spread, so tau moves in both directions and hits the upper clip.
    costs = np.concatenate(
        [
            rng.uniform(0, 1, 60),
            np.full(50, 0.3),
            rng.choice([0.0, 1.0], 60),
            rng.uniform(0.4, 0.5, 60),
            rng.beta(0.3, 0.3, 100),
        ]
    )
    scores = [1.0 - float(c) for c in costs]
    gate = RegretGate()
    got = []
    for s in scores:
        verdict = gate.admit(Candidate(size=1000, capacity=10, score=s))
        assert verdict.tau == gate.tau
        got.append(gate.tau)
    want = expected_taus([1.0 - s for s in scores])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)
    assert max(want) == 5.0 and min(want[29:]) < 4.0


def test_tau_clips() -> None:
    gate = RegretGate()
    for _ in range(30):
        gate.admit(Candidate(size=100, capacity=10, score=0.7))
    assert gate.tau == 5.0  # std 0 -> L = 0.1 -> sqrt(100) = 10, clipped
    gate = RegretGate()
    for i in range(30):
        gate.admit(Candidate(size=100, capacity=10, score=float(i % 2)))
    assert gate.tau == pytest.approx(math.sqrt(10.0))  # std 0.5 -> L = 1
    gate = RegretGate()
    for i in range(31):
        gate.admit(Candidate(size=100, capacity=10, score=float(i % 2)))
    # window [1, 0, ..., 1, 0] again has std 0.5: the EMA stays at 1
    assert gate.tau == pytest.approx(math.sqrt(10.0))
    gate = RegretGate(switching_cost=0.001)  # sqrt(0.002 / 1) = 0.045 -> clipped to 0.1
    for i in range(30):
        gate.admit(Candidate(size=100, capacity=10, score=float(i % 2)))
    assert gate.tau == 0.1


def test_ema_weights() -> None:
    gate = RegretGate()
    costs = [float(i % 2) for i in range(30)]  # std 0.5: L_ema = 1
    for c in costs:
        gate.admit(Candidate(size=100, capacity=10, score=1.0 - c))
    costs += [0.5, 0.5, 0.5]
    l_ema = 1.0
    for n in (31, 32, 33):
        gate.admit(Candidate(size=100, capacity=10, score=0.5))
        l_new = max(2 * float(np.std(costs[n - 30 : n])), 0.1)
        l_ema = 0.7 * l_ema + 0.3 * l_new
        assert gate.tau == pytest.approx(math.sqrt(10 / l_ema), rel=1e-12)
        assert gate.tau != pytest.approx(math.sqrt(10 / l_new), rel=1e-6)  # smoothed


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("capacity", [8, 12, None])
def test_decisions_match_the_spec_on_a_random_trace(seed: int, capacity: int | None) -> None:
    rng = np.random.default_rng(seed)
    dim = 24
    centres = np.stack([unit(rng.normal(size=dim)) for _ in range(6)])
    memory = SolarMemory("solar", capacity=capacity, dim=dim, seed=seed, repeats=False)
    ref = ReferenceGate()
    for step in range(1, 151):
        vector = unit(centres[int(rng.integers(6))] + 0.4 * rng.normal(size=dim))
        if rng.random() < 0.1:
            vector = centres[int(rng.integers(6))]  # repeats: low information gain
        memory.retrieve(embedding=vector)
        roll = rng.random()
        if roll < 0.35:
            score = float(rng.choice([0.0, 0.25, 0.5, 1.0, rng.random()]))
            memory.feedback(score=score)
            want_cost = 1.0 - score
        elif roll < 0.5:
            like = bool(rng.random() < 0.5)
            memory.feedback(like=like)
            want_cost = 0.0 if like else 1.0
        else:
            items = memory.items()
            stored = np.stack([memory.vector(i.id) for i in items]) if items else np.zeros((0, dim))
            want_cost = information_gain(stored, vector)
        size = len(memory)
        decision = memory.add(f"item {step}", embedding=vector)
        assert decision.cost == pytest.approx(want_cost, abs=1e-5), f"step {step}"
        admitted, reason, regret = ref.admit(size, capacity, float(decision.cost))
        assert (decision.admitted, decision.reason) == (admitted, reason), f"step {step}"
        assert decision.regret == pytest.approx(regret, rel=1e-9, abs=1e-12)
        assert decision.tau == pytest.approx(ref.tau, rel=1e-9)
        assert memory.stats()["regret"] == pytest.approx(ref.regret, rel=1e-9, abs=1e-12)
        memory.check_invariants()
    assert 0 < memory.stats()["rejected"] < 150 - 5
