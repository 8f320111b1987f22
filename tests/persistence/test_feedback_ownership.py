"""Unnamed feedback rates the caller's own latest retrieval, never another writer's."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar_core.persistence import MemoryStore


def posterior(scope: object, item_id: str) -> tuple[float, float]:
    policy = scope.get(item_id).policy  # type: ignore[attr-defined]
    return policy["alpha"], policy["beta"]


def test_unnamed_feedback_rates_this_handles_own_latest_retrieval(tmp_path: Path) -> None:
    """Two processes on one scope (two stores on one file): A's unnamed dislike after B's
    search rates A's search, and B's unnamed like rates B's (before: A's dislike went to B's
    retrieval, and B's own rating then failed as already rated)."""
    path = tmp_path / "m.db"
    a_store = MemoryStore(path, policy="solar", capacity=10, embedder="hash", seed=0)
    b_store = MemoryStore(path, policy="solar", capacity=10, embedder="hash", seed=0)
    a, b = a_store.scope(user="u"), b_store.scope(user="u")
    tea = a.add("green tea with milk").item_id
    door = a.add("the squeaky door hinge").item_id
    assert [h.id for h in a.retrieve("green tea", k=1)] == [tea]
    assert [h.id for h in b.retrieve("squeaky door", k=1)] == [door]
    before = posterior(a, tea), posterior(a, door)
    a.feedback(like=False)
    b.feedback(like=True)
    a.retrieve("green tea", k=1, record=False)  # catch up with b
    (tea_a, tea_b), (door_a, door_b) = before
    assert posterior(a, tea) == (tea_a, tea_b + 1.0)  # A's dislike: A's retrieval
    assert posterior(a, door) == (door_a + 1.0, door_b)  # B's like: B's retrieval
    a_store.close()
    b_store.close()


def test_a_handle_that_retrieved_nothing_must_name_the_retrieval(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MemoryStore(path, policy="solar", capacity=10, embedder="hash", seed=0) as writer:
        scope = writer.scope(user="u")
        scope.add("green tea with milk")
        hits = scope.retrieve("tea", k=1)
        with MemoryStore(path, policy="solar", capacity=10, embedder="hash", seed=0) as other:
            late = other.scope(user="u")
            with pytest.raises(ValueError, match="retrieval="):
                late.feedback(like=True)  # another process's retrieval is not its own
            late.feedback(like=True, retrieval=hits.retrieval_id)  # named: rated
        with pytest.raises(ValueError, match="already"):
            scope.feedback(like=True)
