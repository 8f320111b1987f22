"""Edge cases: numerics, policy parameters, clocks, shared policy objects."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from solar_core import (
    HashEmbedder,
    RegretGate,
    SolarMemory,
    ThompsonEviction,
)
from solar_core.basics.validation import unit_rows, unit_vector
from solar_core.embedders.cached_embedder import CachedEmbedder
from solar_core.policies.admission import Candidate, Verdict
from tests.support.memories import full_state


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("scale", [1e-22, 1e-30, 1e-38, 1e19, 1e30, 5e37])
def test_unit_vector_normalises_extreme_magnitudes(scale: float) -> None:
    raw = np.array([3.0, 4.0, 0.0], dtype=np.float64) * scale
    v = unit_vector(raw.astype(np.float32), 3)
    np.testing.assert_allclose(v, [0.6, 0.8, 0.0], rtol=1e-5)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_unit_rows_survive_float32_overflow() -> None:
    rows = unit_rows(np.array([[1e30, 1e30], [3.0, 4.0]], dtype=np.float32), 2, 2)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, rtol=1e-6)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_an_embedder_returning_huge_values_stores_a_unit_vector() -> None:
    class Loud(HashEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            return super().embed(texts) * np.float32(1e30)

    memory = SolarMemory("fifo", capacity=3, embedder=Loud(dim=16), retrieval="vector")
    memory.add("hello world")
    memory.check_invariants()  # asserts unit-norm rows
    assert memory.retrieve("hello world")[0].score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize(
    "params",
    [
        {"decay": math.nan},
        {"prior_alpha": math.inf},
        {"novelty_bonus": -1.0},
        {"switching_cost": math.nan},
        {"bootstrap": 2.5},
        {"novelty_weight": -5.0},
        {"decay_every": 0},
        {"tau_min": 0.0},
        {"window": 1},
    ],
)
def test_bad_policy_parameters_are_rejected(params: dict[str, float]) -> None:
    with pytest.raises((ValueError, TypeError)):
        SolarMemory("solar", capacity=10, dim=4, **params)


class FailingClock:
    """Ticks 1, 2, ... and raises on its third call (module level: memories must pickle)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        if self.calls == 3:
            raise OSError("clock broke")
        return float(self.calls)


def test_a_failing_clock_leaves_the_memory_unchanged() -> None:
    clock = FailingClock()
    memory = SolarMemory("fifo", capacity=1, dim=2, clock=clock)
    memory.add("a", embedding=[1, 0])
    memory.add("b", embedding=[0, 1])  # evicts a
    clock.calls = 2  # the next call raises; compare states with the counter already advanced
    before = full_state(memory)
    with pytest.raises(OSError):
        memory.add("c", embedding=[1, 1])
    clock.calls = 2
    assert full_state(memory) == before
    memory.check_invariants()


def test_one_policy_object_cannot_serve_two_memories() -> None:
    shared = ThompsonEviction()
    SolarMemory(eviction=shared, capacity=3, dim=4)
    with pytest.raises(ValueError, match="already serves another memory"):
        SolarMemory(eviction=shared, capacity=3, dim=4)


def test_a_verdict_is_truthy_only_when_admitted() -> None:
    assert not Verdict(False, "regret <= tau")
    assert Verdict(True, "bootstrap")
    gate = RegretGate(bootstrap=0)
    assert not gate.admit(Candidate(size=3, capacity=10, score=1.0))


def test_a_memory_with_a_cached_embedder_pickles() -> None:
    memory = SolarMemory("solar", capacity=3, embedder=CachedEmbedder(HashEmbedder(dim=16)))
    memory.add("remember this")
    clone = pickle.loads(pickle.dumps(memory))
    assert clone.retrieve("remember this")[0].text == "remember this"


@pytest.mark.parametrize(
    ("given", "meant"),
    [({"size": 10}, "capacity=10"), ({"top_k": 3}, "k=3"), ({"capacty": 5}, "capacity=5")],
)
def test_a_misnamed_argument_suggests_the_right_one(given: dict[str, int], meant: str) -> None:
    """``SolarMemory(size=10)`` used to blame the policy ("policy 'solar' got unknown
    parameter(s) size"); the error now names the argument that was meant."""
    with pytest.raises(TypeError, match=f"did you mean {meant}"):
        SolarMemory(embedder="hash", **given)  # type: ignore[arg-type]
