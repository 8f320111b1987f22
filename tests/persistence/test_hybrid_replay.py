"""A persisted lookup logs its ranking and floor: a replay ranks as the live step did."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from solar_core import SolarMemory
from solar_core.persistence import MemoryStore
from solar_core.persistence.logged_steps import read

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels

TEXTS = [
    "my dog is called Max",
    "green tea with lemon",
    "the invoice 4471 was paid",
    "the door squeaks at night",
    "Max loves the beach",
    "tea at five",
]


def policy_state(memory: SolarMemory) -> list[tuple[str, dict[str, float]]]:
    return [(item.id, dict(item.policy)) for item in memory.items()]


def test_a_replay_ranks_as_logged_whatever_the_reopening_store_says(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    writer = MemoryStore(
        path, policy="solar", capacity=4, embedder="hash", seed=0, min_score=0.2, snapshot_every=50
    )
    live = writer.scope(user="alice")
    for i, text in enumerate(TEXTS):
        live.add(text)
        hits = live.retrieve(["what is my dog called?", "tea", "invoice 4471"][i % 3], k=2)
        if hits:
            live.feedback(like=i % 2 == 0, retrieval=hits)
    expected = policy_state(live)
    # Another process reads the log with other settings: the logged ones rank each lookup.
    reader = MemoryStore(
        path, policy="solar", capacity=4, embedder="hash", retrieval="vector", min_score=None
    )
    replayed = reader.scope(user="alice")
    assert policy_state(replayed) == expected
    assert replayed.retrieval == "vector" and replayed.min_score is None  # its own from now on
    replayed.check_invariants()
    reader.close()
    writer.close()


def test_a_lookup_logged_before_hybrid_retrieval_replays_by_vector() -> None:
    memory = SolarMemory("fifo", 5, dim=4)
    vector = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
    old = {"q": "tea", "k": 2, "x": []}  # (a row of the first log format: its short names)
    step = read("retrieve", old, vector, memory.dim)  # accepted as it was logged
    assert (step.retrieval, step.floor) == ("vector", None)  # type: ignore[union-attr]
    new = {**old, "rm": "hybrid", "f": 0.05}
    assert read("retrieve", new, vector, memory.dim).retrieval == "hybrid"  # type: ignore[union-attr]
    named = {"query": "tea", "k": 2, "exclude": [], "ranking": "hybrid", "floor": 0.05}
    assert read("retrieve", named, vector, memory.dim) == read("retrieve", new, vector, 4)


@pytest.mark.parametrize(
    "bad",
    [{"rm": "bm25"}, {"f": float("nan")}, {"f": 1}, {"rm": None}, {"extra": 1}, {"g": False}],
)
def test_a_logged_lookup_with_a_ranking_or_floor_no_call_makes_is_refused(
    bad: dict[str, object],
) -> None:
    memory = SolarMemory("fifo", 5, dim=4)
    vector = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
    with pytest.raises(ValueError, match="not a retrieve step's"):
        read("retrieve", {"q": "tea", "k": 2, "x": [], **bad}, vector, memory.dim)


def test_a_gated_lookup_replays_gated(tmp_path: Path) -> None:
    """``min_score="strict"`` is logged with the lookup: a reader replays the lookup it gated
    as gated (crediting nothing), whatever its own setting."""
    path = tmp_path / "m.db"
    writer = MemoryStore(path, policy="lfu", capacity=10, dim=2, min_score="strict")
    live = writer.scope(user="ann")
    live.add("I fixed the squeaky door with some oil", embedding=[1.0, 0.0])
    live.add("Max chased the neighbour's cat", embedding=[0.6, 0.8])
    assert not live.retrieve("What's the capital of Peru?", embedding=[-0.6, 0.8])
    assert live.retrieve("Max chased the cat?", embedding=[-0.493, 0.870])
    expected = policy_state(live)
    assert [p["count"] for _, p in expected] == [0.0, 1.0]
    reader = MemoryStore(path, policy="lfu", capacity=10, dim=2, min_score="auto")
    replayed = reader.scope(user="ann")
    assert policy_state(replayed) == expected
    replayed.check_invariants()
    reader.close()
    writer.close()
