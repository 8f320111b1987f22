"""SOLAR-A eviction: argmin of 0.4 * exp(-age / 100) + 0.3 * freq + 0.3 * diversity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solar_core import MultiScoreEviction, SolarMemory

DIM = 8
E = np.eye(DIM, dtype=np.float32)


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def score(age: float, count: int, step: int, nearest_cos: float | None) -> float:
    """The SOLAR-A score written out; ``nearest_cos`` None = no other item."""
    diversity = 1.0 if nearest_cos is None else min(max(1.0 - nearest_cos, 0.0), 1.0)
    return 0.4 * math.exp(-age / 100.0) + 0.3 * count / step + 0.3 * diversity


@pytest.fixture(params=["composed", "solar-a"])
def memory(request: pytest.FixtureRequest) -> SolarMemory:
    if request.param == "composed":
        return SolarMemory(eviction=MultiScoreEviction(), capacity=4, dim=DIM)
    # capacity 4 < the regret gate's bootstrap size 5: every item is admitted.
    return SolarMemory("solar-a", capacity=4, dim=DIM)


def test_hand_computed_scenario(memory: SolarMemory) -> None:
    def add(name: str, vector: np.ndarray) -> object:
        decision = memory.add(f"text {name}", embedding=vector, item_id=name)
        assert decision.admitted
        memory.check_invariants()
        return decision

    def hit(axis: int) -> None:
        assert len(memory.retrieve(embedding=E[axis], k=1)) == 1

    add("A", E[0])  # step 1
    add("B", E[1])  # step 2
    hit(0)
    add("C", unit(E[0] + E[2]))  # step 3; A retrieved in step 3
    hit(0)
    add("D", E[3])  # step 4; A retrieved in step 4
    hit(1)  # B retrieved in step 5
    d5 = add("E", E[4])  # step 5: the first eviction
    c = 1 / math.sqrt(2)  # cos(A, C)
    want = {
        "A": score(age=1, count=2, step=5, nearest_cos=c),
        "B": score(age=0, count=1, step=5, nearest_cos=0.0),
        "C": score(age=2, count=0, step=5, nearest_cos=c),
        "D": score(age=1, count=0, step=5, nearest_cos=0.0),
    }
    assert want["C"] == pytest.approx(0.4799, abs=1e-4)  # the hand calculation
    assert d5.evicted == "C"
    assert d5.victim_score == pytest.approx(want["C"], abs=1e-6)
    assert [i for i, _ in d5.contenders] == ["C", "A", "D"]
    assert [s for _, s in d5.contenders] == pytest.approx(
        [want["C"], want["A"], want["D"]], abs=1e-6
    )
    # Step 6: with C gone nobody has a close neighbour; the oldest untouched item (D) leaves.
    d6 = add("F", unit(E[3] + E[5]))
    want6 = {
        "A": score(age=2, count=2, step=6, nearest_cos=0.0),
        "B": score(age=1, count=1, step=6, nearest_cos=0.0),
        "D": score(age=2, count=0, step=6, nearest_cos=0.0),
        "E": score(age=1, count=0, step=6, nearest_cos=0.0),
    }
    assert d6.evicted == "D" == min(want6, key=want6.__getitem__)
    assert d6.victim_score == pytest.approx(want6["D"], abs=1e-6)
    assert [i for i, _ in d6.contenders] == ["D", "E", "B"]
    assert [i.id for i in memory.items()] == ["A", "B", "E", "F"]
    assert memory.get("A").policy == {"last_access_step": 4.0, "count": 2.0}


def test_frequency_outweighs_a_little_recency() -> None:
    memory = SolarMemory(eviction=MultiScoreEviction(), capacity=2, dim=DIM)
    memory.add("a", embedding=E[0], item_id="A")
    for _ in range(10):
        memory.retrieve(embedding=E[0], k=1)  # all in step 2
    memory.add("b", embedding=E[1], item_id="B")  # step 2
    for step in range(3, 8):
        memory.add(f"x{step}", embedding=E[2 + step % 5], item_id=f"X{step}")
    # A: age 5 .. 9, count 10 -> 0.3 * 10 / step keeps it above every newcomer
    assert "A" in memory
    decision = memory.add("y", embedding=E[7], item_id="Y")  # step 8
    assert decision.evicted != "A"
    assert decision.victim_score == pytest.approx(
        score(age=1, count=0, step=8, nearest_cos=0.0), abs=1e-6
    )


def test_a_lone_item_has_diversity_one() -> None:
    memory = SolarMemory(eviction=MultiScoreEviction(), capacity=1, dim=DIM)
    memory.add("a", embedding=E[0], item_id="A")
    decision = memory.add("b", embedding=E[1], item_id="B")
    assert decision.evicted == "A"
    assert decision.victim_score == pytest.approx(0.4 * math.exp(-0.01) + 0.3, abs=1e-9)


def test_negative_cosine_clips_diversity_to_one() -> None:
    memory = SolarMemory(eviction=MultiScoreEviction(), capacity=2, dim=DIM)
    memory.add("a", embedding=E[0], item_id="A")
    memory.add("b", embedding=-E[0], item_id="B")  # cos = -1: diversity 2, clipped to 1
    decision = memory.add("c", embedding=E[1], item_id="C")  # step 3
    assert decision.evicted == "A"  # older
    assert decision.victim_score == pytest.approx(score(2, 0, 3, -1.0), abs=1e-6)
    assert score(2, 0, 3, -1.0) == pytest.approx(0.4 * math.exp(-0.02) + 0.3)


@pytest.mark.parametrize("seed", range(4))
def test_matches_a_brute_force_recomputation_on_a_random_trace(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dim = 16
    centres = rng.normal(size=(5, dim))
    capacity = 6
    memory = SolarMemory(eviction=MultiScoreEviction(), capacity=capacity, dim=dim)
    last: dict[str, int] = {}
    count: dict[str, int] = {}
    for step in range(1, 301):
        if len(memory) and rng.random() < 0.7:
            k = int(rng.integers(1, 4))
            for _ in range(int(rng.integers(1, 3))):  # sometimes two retrievals in a step
                query = unit(centres[int(rng.integers(5))] + rng.normal(size=dim))
                for h in memory.retrieve(embedding=query, k=k):
                    last[h.id] = step
                    count[h.id] += 1
        if len(memory) and rng.random() < 0.03:
            gone = memory.items()[int(rng.integers(len(memory)))].id
            memory.remove(gone)
        ids = [i.id for i in memory.items()]
        want: set[str] | None = None
        if len(ids) == capacity:
            matrix = np.stack([memory.vector(i) for i in ids]).astype(np.float64)
            sims = matrix @ matrix.T
            np.fill_diagonal(sims, -np.inf)
            scores = [
                score(step - last[i], count[i], step, float(sims[j].max()))
                for j, i in enumerate(ids)
            ]
            want_score = min(scores)
            # Mutual nearest neighbours with equal age and count tie exactly: accept either.
            want = {i for i, s in zip(ids, scores, strict=True) if s - want_score < 1e-6}
        vector = unit(centres[int(rng.integers(5))] + 0.5 * rng.normal(size=dim))
        decision = memory.add(f"item {step}", embedding=vector)
        if want is None:
            assert decision.evicted is None, f"step {step}"
        else:
            assert decision.evicted in want, f"step {step}"
            assert decision.victim_score == pytest.approx(want_score, abs=1e-5)
        last[str(decision.item_id)] = step
        count[str(decision.item_id)] = 0
        memory.check_invariants()


def test_weights_and_scale_are_the_papers() -> None:
    policy = MultiScoreEviction()
    assert policy.weights == (0.4, 0.3, 0.3)
    assert policy.age_scale == 100.0
    assert policy.neighbours == 1
