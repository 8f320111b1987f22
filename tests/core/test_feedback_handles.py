"""Rating a specific retrieval, and looking without recording."""

from __future__ import annotations

import pytest

from solar_core import Hits, SolarMemory
from tests.support.memories import full_state, onehot


def two_item_memory() -> SolarMemory:
    memory = SolarMemory("solar-e", capacity=5, dim=8, seed=0)
    memory.add("a", embedding=onehot(0), item_id="A")
    memory.add("b", embedding=onehot(1), item_id="B")
    return memory


def test_feedback_rates_the_retrieval_it_is_given_not_the_latest() -> None:
    memory = two_item_memory()
    first = memory.retrieve(embedding=onehot(0), k=1)
    second = memory.retrieve(embedding=onehot(1), k=1)
    assert isinstance(first, Hits) and first.retrieval_id != second.retrieval_id
    memory.feedback(like=False, retrieval=first)
    assert memory.get("A").policy["beta"] == 2.0  # debited
    assert memory.get("B").policy["beta"] == 1.0  # untouched
    memory.feedback(like=True, retrieval=second.retrieval_id)  # the id works too
    assert memory.get("B").policy["alpha"] == 4.0  # prior 2 + retrieved 1 + like 1
    with pytest.raises(ValueError, match="already has feedback"):
        memory.feedback(like=True, retrieval=first)


def test_default_feedback_still_rates_the_latest_retrieval() -> None:
    memory = two_item_memory()
    memory.retrieve(embedding=onehot(0), k=1)
    memory.retrieve(embedding=onehot(1), k=1)
    memory.feedback(like=False)
    assert memory.get("B").policy["beta"] == 2.0 and memory.get("A").policy["beta"] == 1.0


def test_record_false_only_looks() -> None:
    memory = two_item_memory()
    memory.retrieve(embedding=onehot(0), k=1)
    before = full_state(memory)
    peek = memory.retrieve(embedding=onehot(1), k=2, record=False)
    assert [h.id for h in peek] == ["B", "A"] and peek.retrieval_id is None
    assert full_state(memory) == before  # no policy update, no new feedback target
    with pytest.raises(ValueError, match="record=False"):
        memory.feedback(like=True, retrieval=peek)
    memory.feedback(like=True)  # still rates the last *recorded* retrieval (A)
    assert memory.get("A").policy["alpha"] == 4.0


@pytest.mark.parametrize(
    "retrieval, error, message",
    [
        ([], TypeError, "retrieval must be the Hits"),
        ("1", TypeError, "retrieval must be the Hits"),
        (True, TypeError, "retrieval must be the Hits"),
        (999, ValueError, "unknown or expired retrieval 999"),
    ],
)
def test_bad_retrieval_handles_change_nothing(retrieval: object, error: type, message: str) -> None:
    memory = two_item_memory()
    memory.retrieve(embedding=onehot(0), k=1)
    before = full_state(memory)
    with pytest.raises(error, match=message):
        memory.feedback(like=True, retrieval=retrieval)  # type: ignore[arg-type]
    assert full_state(memory) == before


def test_hits_from_before_clear_cannot_be_rated() -> None:
    memory = two_item_memory()
    old = memory.retrieve(embedding=onehot(0), k=1)
    memory.clear()
    memory.add("a again", embedding=onehot(0), item_id="A")
    memory.retrieve(embedding=onehot(0), k=1)
    with pytest.raises(ValueError, match="unknown or expired"):
        memory.feedback(like=True, retrieval=old)


def test_only_the_last_thousand_retrievals_are_rateable() -> None:
    memory = two_item_memory()
    first = memory.retrieve(embedding=onehot(0), k=1)
    for _ in range(1000):
        memory.retrieve(embedding=onehot(1), k=1)
    with pytest.raises(ValueError, match="only the last 1000"):
        memory.feedback(like=True, retrieval=first)


@pytest.mark.parametrize(
    ("like", "score"), [(True, 0.0), (True, 0.49), (False, 1.0), (False, 0.51)]
)
def test_a_like_and_a_score_that_disagree_are_refused_and_change_nothing(
    like: bool, score: float
) -> None:
    memory = two_item_memory()
    hits = memory.retrieve(embedding=onehot(0), k=1)
    before = full_state(memory)
    with pytest.raises(ValueError, match=f"like={like} and score={score} disagree: a like goes"):
        memory.feedback(like=like, score=score, retrieval=hits)
    assert full_state(memory) == before
    memory.feedback(like=like, score=0.5, retrieval=hits)  # 0.5 goes with either
    assert full_state(memory) != before


def test_a_like_and_a_score_that_agree_rate_with_the_like_and_the_score() -> None:
    memory = SolarMemory("solar", capacity=5, dim=8, seed=0)
    memory.add("a", embedding=onehot(0), item_id="A")
    memory.retrieve(embedding=onehot(0), k=1)
    memory.feedback(like=True, score=0.75)
    assert memory.get("A").policy["alpha"] == 4.0  # prior 2 + retrieved 1 + the like's 1
