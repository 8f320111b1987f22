"""Thompson-sampling eviction (SOLAR, SOLAR-E): posterior updates, novelty, victim choice."""

from __future__ import annotations

import numpy as np
import pytest

from solar_core import SolarMemory, ThompsonEviction

DIM = 8


def onehot(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def unit(v: np.ndarray) -> np.ndarray:
    return (v / np.linalg.norm(v)).astype(np.float32)


def posterior(memory: SolarMemory) -> dict[str, tuple[float, float]]:
    return {i.id: (i.policy["alpha"], i.policy["beta"]) for i in memory.items()}


def solar_e(capacity: int = 4, seed: int = 0, **params: float) -> SolarMemory:
    return SolarMemory("solar-e", capacity=capacity, dim=DIM, seed=seed, **params)


def fill(memory: SolarMemory, names: str) -> None:
    for axis, name in enumerate(names):
        assert memory.add(f"text {name}", embedding=onehot(axis), item_id=name).admitted


def hit(memory: SolarMemory, *weighted: tuple[int, float]) -> list[str]:
    query = np.zeros(DIM, dtype=np.float32)
    for axis, weight in weighted:
        query[axis] = weight
    return [h.id for h in memory.retrieve(embedding=query, k=len(weighted))]


def test_new_items_start_at_beta_2_1() -> None:
    memory = solar_e()
    fill(memory, "AB")
    assert posterior(memory) == {"A": (2.0, 1.0), "B": (2.0, 1.0)}
    assert memory.get("A").policy["mean"] == pytest.approx(2 / 3)
    policy = ThompsonEviction()
    assert (policy.prior_alpha, policy.prior_beta) == (2.0, 1.0)
    assert (policy.decay_every, policy.decay, policy.novelty_bonus) == (5, 0.05, 0.3)


def test_each_retrieval_hit_adds_one_to_alpha() -> None:
    memory = solar_e()
    fill(memory, "ABC")
    assert hit(memory, (0, 1.0)) == ["A"]
    assert hit(memory, (0, 1.0)) == ["A"]
    assert hit(memory, (1, 0.8), (0, 0.6)) == ["B", "A"]
    assert posterior(memory) == {"A": (5.0, 1.0), "B": (3.0, 1.0), "C": (2.0, 1.0)}


def test_idle_items_gain_beta_exactly_every_fifth_retrieval() -> None:
    memory = solar_e(capacity=5)
    fill(memory, "ABC")
    for _ in range(4):
        hit(memory, (0, 1.0))
    assert posterior(memory) == {"A": (6.0, 1.0), "B": (2.0, 1.0), "C": (2.0, 1.0)}
    hit(memory, (0, 1.0))  # 5th retrieval: everyone it did not return gets beta += 0.05
    assert posterior(memory) == {"A": (7.0, 1.0), "B": (2.0, 1.05), "C": (2.0, 1.05)}
    # Adds are not retrievals: they do not advance the decay clock.
    memory.add("text D", embedding=onehot(3), item_id="D")
    memory.add("text E", embedding=onehot(4), item_id="E")
    for _ in range(4):
        hit(memory, (1, 1.0))
    assert posterior(memory)["D"] == (2.0, 1.0)
    hit(memory, (1, 0.8), (2, 0.6))  # 10th retrieval returns B and C
    got = posterior(memory)
    assert got["A"] == (7.0, pytest.approx(1.05))
    assert got["B"] == (7.0, pytest.approx(1.05))
    assert got["C"] == (3.0, pytest.approx(1.05))
    assert got["D"] == (2.0, pytest.approx(1.05))
    assert got["E"] == (2.0, pytest.approx(1.05))
    for _ in range(5):
        hit(memory, (4, 1.0))
    assert posterior(memory)["D"] == (2.0, pytest.approx(1.10))
    assert posterior(memory)["E"] == (7.0, pytest.approx(1.05))


@pytest.mark.parametrize(
    ("feedback", "d_alpha", "d_beta"),
    [
        ({"like": True}, 1.0, 0.0),
        ({"like": False}, 0.0, 1.0),
        ({"score": 0.25}, 0.25, 0.75),
        ({"score": 1.0}, 1.0, 0.0),
        ({"score": 0.0}, 0.0, 1.0),
        ({"like": False, "score": 0.25}, 0.0, 1.0),  # the like decides the reward
    ],
)
def test_feedback_credits_the_items_of_the_latest_retrieval_only(
    feedback: dict[str, object], d_alpha: float, d_beta: float
) -> None:
    memory = solar_e()
    fill(memory, "ABCD")
    hit(memory, (3, 1.0))  # an earlier retrieval: D, not rated
    assert hit(memory, (0, 0.8), (1, 0.6)) == ["A", "B"]
    memory.feedback(**feedback)  # type: ignore[arg-type]
    assert posterior(memory) == {
        "A": (3.0 + d_alpha, 1.0 + d_beta),
        "B": (3.0 + d_alpha, 1.0 + d_beta),
        "C": (2.0, 1.0),
        "D": (3.0, 1.0),
    }


def test_feedback_skips_items_removed_since_the_retrieval() -> None:
    memory = solar_e()
    fill(memory, "ABC")
    assert hit(memory, (0, 0.8), (1, 0.6)) == ["A", "B"]
    memory.remove("A")
    # D takes the slot A left (slots are reused): it must not be credited for A's retrieval.
    memory.add("text D", embedding=onehot(3), item_id="D")
    memory.feedback(like=True)
    assert posterior(memory) == {"B": (4.0, 1.0), "C": (2.0, 1.0), "D": (2.0, 1.0)}
    memory.check_invariants()


def test_feedback_after_eviction_of_a_retrieved_item() -> None:
    memory = solar_e(capacity=2, novelty_bonus=0.0)
    fill(memory, "AB")
    assert hit(memory, (0, 0.8), (1, 0.6)) == ["A", "B"]
    decision = memory.add("text C", embedding=onehot(2), item_id="C")
    assert decision.evicted in {"A", "B"}
    memory.feedback(like=False)
    survivor = "B" if decision.evicted == "A" else "A"
    assert posterior(memory) == {survivor: (3.0, 2.0), "C": (2.0, 1.0)}


def test_a_well_used_item_is_never_the_victim() -> None:
    # X: Beta(~402, 1). Y, Z: never retrieved, Beta(2, 3) after 200 retrievals of decay.
    # P(sample_Y > sample_X) is ~1e-6: the choice is certain whatever the draws.
    victims = set()
    for seed in range(12):
        memory = solar_e(capacity=3, seed=seed, novelty_bonus=0.0)
        fill(memory, "XYZ")
        for _ in range(200):
            hit(memory, (0, 1.0))
            memory.feedback(like=True)
        assert posterior(memory)["X"] == (402.0, 1.0)
        assert posterior(memory)["Y"] == (2.0, pytest.approx(3.0))
        decision = memory.add("text W", embedding=onehot(3), item_id="W")
        assert decision.evicted in {"Y", "Z"}
        victims.add(decision.evicted)
        assert decision.victim_score is not None and 0.0 <= decision.victim_score < 1.0
    assert victims == {"Y", "Z"}  # between equals, sampling decides


def test_disliked_item_goes_before_liked_ones() -> None:
    for seed in range(8):
        memory = solar_e(capacity=3, seed=seed, novelty_bonus=0.0)
        fill(memory, "ABC")
        for _ in range(150):
            for axis in (0, 1):
                hit(memory, (axis, 1.0))
                memory.feedback(like=True)
            hit(memory, (2, 1.0))
            memory.feedback(score=0.0)
        # A, B ~ Beta(302, 1 + decay); C ~ Beta(152, 151 + decay): mean 0.5, sd 0.03.
        assert memory.add("text D", embedding=onehot(3), item_id="D").evicted == "C"


def test_same_seed_same_victims_other_seeds_differ() -> None:
    def run(seed: int) -> list[str | None]:
        memory = solar_e(capacity=4, seed=seed)
        out = []
        for axis in range(8):
            out.append(memory.add(f"t{axis}", embedding=onehot(axis)).evicted)
        return out

    assert run(3) == run(3)
    assert len({tuple(run(seed)) for seed in range(10)}) > 1


def crowd() -> tuple[list[str], np.ndarray]:
    """Q has the highest mean cosine to its 3 nearest others; P, P2 the highest single one."""
    e = np.eye(DIM, dtype=np.float32)
    vectors = {
        "P": e[5],
        "Q1": unit(e[0] + 0.5 * e[1]),
        "Q": e[0],
        "Q2": unit(e[0] + 0.5 * e[2]),
        "P2": unit(e[5] + 0.1 * e[6]),
        "Q3": unit(e[0] + 0.5 * e[3]),
    }
    return list(vectors), np.stack(list(vectors.values()))


def brute_novelty(matrix: np.ndarray) -> np.ndarray:
    sims = matrix.astype(np.float64) @ matrix.T.astype(np.float64)
    np.fill_diagonal(sims, -np.inf)
    top3 = -np.sort(-sims, axis=1)[:, :3]
    return np.clip(1.0 - top3.mean(axis=1), 0.0, 1.0)


def test_with_a_large_novelty_bonus_the_most_crowded_item_leaves() -> None:
    names, matrix = crowd()
    novelty = brute_novelty(matrix)
    assert names[int(np.argmin(novelty))] == "Q"
    nearest = (matrix @ matrix.T - 2 * np.eye(len(names))).max(axis=1)
    assert names[int(np.argmax(nearest))] in {"P", "P2"}  # mean of 3, not the nearest one
    for seed in range(10):
        memory = solar_e(capacity=len(names), seed=seed, novelty_bonus=100.0)
        for name, vector in zip(names, matrix, strict=True):
            memory.add(f"text {name}", embedding=vector, item_id=name)
        decision = memory.add("text N", embedding=onehot(7), item_id="N")
        assert decision.evicted == "Q"
        # victim_score = Beta sample in [0, 1] + 100 * novelty(Q)
        assert decision.victim_score is not None
        sample = decision.victim_score - 100.0 * novelty[names.index("Q")]
        assert 0.0 <= sample <= 1.0 + 1e-3
        assert decision.contenders[0] == ("Q", decision.victim_score)
        assert len(decision.contenders) == 3
        assert {c for c, _ in decision.contenders[1:]} <= {"Q1", "Q2", "Q3"}
        scores = [s for _, s in decision.contenders]
        assert scores == sorted(scores)


def test_victim_and_score_match_a_recomputation_with_the_same_draws() -> None:
    """argmin over items of Beta(alpha, beta) sample + 0.3 * novelty, drawn in slot order."""
    rng = np.random.default_rng(123)
    centres = np.stack([unit(rng.normal(size=DIM)) for _ in range(3)])
    seed = 7
    memory = solar_e(capacity=6, seed=seed)
    draws = np.random.default_rng(seed)  # the memory's own generator, replayed
    for step in range(40):
        topic = int(rng.integers(3))
        vector = unit(centres[topic] + 0.3 * rng.normal(size=DIM))
        if len(memory):
            memory.retrieve(embedding=unit(centres[int(rng.integers(3))]), k=2)
            if rng.random() < 0.5:
                memory.feedback(like=bool(rng.random() < 0.5))
        items = memory.items()
        full = len(items) == 6
        if full:
            store = memory.core.store  # test-only introspection: the slot order of the draws
            by_slot = sorted(items, key=lambda i: store.slot_of(i.id))
            alpha = np.array([i.policy["alpha"] for i in by_slot])
            beta = np.array([i.policy["beta"] for i in by_slot])
            matrix = np.stack([memory.vector(i.id) for i in by_slot])
            scores = draws.beta(alpha, beta) + 0.3 * brute_novelty(matrix)
        decision = memory.add(f"item {step}", embedding=vector)
        if full:
            best = int(np.argmin(scores))
            assert decision.evicted == by_slot[best].id, f"step {step}"
            assert decision.victim_score == pytest.approx(scores[best], abs=1e-5)
            want = sorted(zip(scores, (i.id for i in by_slot), strict=True))[:3]
            assert [c for c, _ in decision.contenders] == [i for _, i in want]
            assert [s for _, s in decision.contenders] == pytest.approx(
                [s for s, _ in want], abs=1e-5
            )
        else:
            assert decision.evicted is None
            assert decision.victim_score is None and decision.contenders == ()
        memory.check_invariants()


def test_a_lone_item_still_gets_evicted() -> None:
    memory = solar_e(capacity=1, seed=0)
    fill(memory, "A")
    decision = memory.add("text B", embedding=onehot(1), item_id="B")
    assert decision.evicted == "A"
    assert decision.contenders == (("A", decision.victim_score),)
