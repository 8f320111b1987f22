"""The SolarMemory contract, run over every registered preset (the ``policy`` fixture).

Each test here must hold for every policy: capacity and invariants after every operation, seeding
idempotent, get/remove/clear/stats consistent, and every bad input rejected with a clear error
that leaves the memory exactly as it was.
"""

from __future__ import annotations

import pickle
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from solar_core import (
    PRESETS,
    AlwaysAdmit,
    FifoEviction,
    HashEmbedder,
    Hit,
    SolarMemory,
    UnknownItemError,
    available_policies,
)
from solar_core.retrieval.repeats import normalise
from tests.support.memories import full_state, topic_vectors, unit

CAPACITY = 10
DIM = 32
N_TOPICS = 8
STEPS = 300


def fixed_clock() -> float:
    """A picklable, deterministic clock: two memories fed the same stream pickle identically."""
    return 1_000_000.0


def make_memory(policy: str, seed: int = 0, **kwargs: Any) -> SolarMemory:
    return SolarMemory(policy, capacity=CAPACITY, dim=DIM, seed=seed, clock=fixed_clock, **kwargs)


def expected_capacity(policy: str) -> int | None:
    return None if PRESETS[policy].unbounded else CAPACITY


# -- a seeded, topic-structured stream of operations ----------------------------------------------
@dataclass(frozen=True)
class Op:
    kind: str  # "retrieve" | "feedback" | "add" | "remove"
    vector: np.ndarray | None = None
    k: int = 3
    like: bool | None = None
    score: float | None = None
    text: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    pick: float = 0.0  # which stored item a "remove" targets, as a fraction of the items


def _feedback_op(rng: np.random.Generator) -> Op:
    r = rng.random()
    if r < 0.45:
        return Op("feedback", like=bool(rng.random() < 0.5))
    if r < 0.85:
        return Op("feedback", score=float(rng.random()))
    if r < 0.92:
        return Op("feedback", score=float(rng.choice([0.0, 1.0])))
    like = bool(rng.random() < 0.5)  # with a score that agrees: at least 0.5 for a like
    return Op("feedback", like=like, score=float(rng.random()) / 2 + (0.5 if like else 0.0))


def make_ops(seed: int, steps: int = STEPS) -> list[Op]:
    """Steps of retrieve / feedback / add / occasional remove over drifting topics.

    Every 50 steps the active window of 3 topics moves on; 15% of the offers re-offer an earlier
    experience (same text and vector), as agents do, which exercises ARC's ghost hits.
    """
    rng = np.random.default_rng(seed)
    centres, items = topic_vectors(N_TOPICS, steps, dim=DIM, spread=0.15, seed=seed)
    offered: list[tuple[str, np.ndarray, int, int]] = []
    ops: list[Op] = []
    for step in range(steps):
        topic = int((step // 50 + rng.integers(0, 3)) % N_TOPICS)
        retrieved = rng.random() < 0.9
        rated = False
        if retrieved:
            query = unit(centres[topic] + rng.normal(scale=0.2, size=DIM))
            ops.append(Op("retrieve", vector=query, k=int(rng.integers(1, 6))))
            if rng.random() < 0.6:
                ops.append(_feedback_op(rng))
                rated = True
        if offered and rng.random() < 0.15:  # the same experience again, metadata and all
            text, vector, topic, first = offered[int(rng.integers(len(offered)))]
        else:
            text, vector, first = (
                f"step {step}: a fact about topic {topic}",
                items[topic, step],
                step,
            )
            offered.append((text, vector, topic, first))
        ops.append(Op("add", vector=vector, text=text, metadata={"step": first, "topic": topic}))
        if retrieved and not rated and rng.random() < 0.1:
            ops.append(_feedback_op(rng))  # late feedback: the step has already ended
        if rng.random() < 0.05:
            ops.append(Op("remove", pick=float(rng.random())))
    return ops


def apply(memory: SolarMemory, op: Op) -> Any:
    if op.kind == "retrieve":
        return memory.retrieve(embedding=op.vector, k=op.k)
    if op.kind == "feedback":
        return memory.feedback(like=op.like, score=op.score)
    if op.kind == "add":
        return memory.add(op.text, embedding=op.vector, metadata=op.metadata)
    assert op.kind == "remove"
    ids = [item.id for item in memory.items()]
    if not ids:
        return None
    target = ids[int(op.pick * len(ids))]
    memory.remove(target)
    return target


def run(memory: SolarMemory, ops: list[Op]) -> None:
    for op in ops:
        apply(memory, op)


def check_hits(memory: SolarMemory, query: np.ndarray, k: int, hits: list[Hit]) -> None:
    """``hits`` are the top-k stored items by cosine similarity to ``query``, best first."""
    q = unit(query)
    stored = {item.id: item for item in memory.items()}
    assert len(hits) == min(k, len(stored))
    assert [h.rank for h in hits] == list(range(len(hits)))
    ids = [h.id for h in hits]
    assert len(set(ids)) == len(ids)
    sims = {item_id: float(memory.vector(item_id) @ q) for item_id in stored}
    for hit in hits:
        assert hit.id in stored
        assert hit.text == stored[hit.id].text
        assert dict(hit.metadata) == dict(stored[hit.id].metadata)
        assert hit.score == pytest.approx(sims[hit.id], abs=1e-5)
    scores = [h.score for h in hits]
    assert all(a >= b - 1e-6 for a, b in zip(scores, scores[1:], strict=False))
    if hits:
        left_out = [s for i, s in sims.items() if i not in ids]
        assert all(s <= scores[-1] + 1e-5 for s in left_out)


# -- capacity, invariants and counters after every operation --------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_stream_keeps_capacity_invariants_and_counters(policy: str, seed: int) -> None:
    memory = make_memory(policy, seed=seed)
    cap = expected_capacity(policy)
    assert memory.capacity == cap
    always_admits = PRESETS[policy].admission is AlwaysAdmit
    model: dict[str, str] = {}  # id -> text, in insertion order
    counts: Counter[str] = Counter()
    rated_ids: set[str] = set()  # the ids the latest retrieval returned
    for op in make_ops(seed):
        size_before = len(memory)
        beliefs = {item.id: dict(item.policy) for item in memory.items()}
        result = apply(memory, op)
        memory.check_invariants()
        if cap is not None:
            assert len(memory) <= cap
        if op.kind == "retrieve":
            counts["retrievals"] += 1
            assert op.vector is not None
            check_hits(memory, op.vector, op.k, result)
            rated_ids = {hit.id for hit in result}
        elif op.kind == "feedback":
            counts["feedbacks"] += 1
            # Feedback credits only the rated retrieval's items that are still stored, never an
            # item that has since taken the slot of an evicted one.
            changed = {i for i, belief in beliefs.items() if memory.get(i).policy != belief}
            assert changed <= rated_ids, f"feedback touched items it did not rate: {changed}"
        elif op.kind == "add":
            counts["steps"] += 1
            decision = result
            assert decision.step == counts["steps"]
            assert decision.admitted or not always_admits or decision.reason == "repeat"
            if decision.admitted:
                counts["admitted"] += 1
                assert decision.item_id is not None and decision.item_id not in model
                if decision.evicted is not None:
                    counts["evicted"] += 1
                    assert size_before == cap, "evicted although the memory was not full"
                    assert decision.evicted in model
                    assert decision.evicted not in memory
                    del model[decision.evicted]
                else:
                    assert cap is None or size_before < cap, "full memory grew without eviction"
                model[decision.item_id] = op.text
                assert memory.get(decision.item_id).text == op.text
            elif decision.reason == "repeat":  # the same words as a stored item: refreshed
                counts["reoffered"] += 1  # (counted with the re-offers of a stored id)
                assert normalise(model[str(decision.item_id)]) == normalise(op.text)
                assert decision.evicted is None and len(memory) == size_before
            else:
                counts["rejected"] += 1
                assert decision.item_id is None and decision.evicted is None
                assert len(memory) == size_before
        elif result is not None:  # remove
            counts["removed"] += 1
            del model[result]
            assert result not in memory
        ids = [item.id for item in memory.items()]
        assert ids == list(model), "items() must list exactly the stored ids, oldest first"
        assert len(memory) == len(model)
        stats = memory.stats()
        assert stats["size"] == len(model)
        assert stats["admitted"] - stats["evicted"] - stats["removed"] == stats["size"]
        assert stats["admitted"] + stats["rejected"] + stats["reoffered"] == stats["steps"]
    stats = memory.stats()
    for key in (
        *("steps", "retrievals", "feedbacks", "admitted", "rejected", "evicted", "removed"),
        "reoffered",
    ):
        assert stats[key] == counts[key], key
    assert stats["capacity"] == cap and stats["policy"] == policy
    assert len(memory.trace()) == counts["steps"]
    # The stream must have exercised what it claims to test.
    assert counts["removed"] > 0
    assert counts["reoffered"] > 0  # re-offered texts still stored are refreshed, not stored again
    if cap is None:
        assert counts["evicted"] == 0
    else:
        assert counts["evicted"] > 0


# -- seeding --------------------------------------------------------------------------------------
def test_same_seed_same_run(policy: str) -> None:
    ops = make_ops(seed=7, steps=250)
    first, second = make_memory(policy, seed=11), make_memory(policy, seed=11)
    run(first, ops)
    run(second, ops)
    second.core.identity = first.core.identity  # the one difference: each memory names itself
    assert len(first.trace()) == 250
    assert first.trace() == second.trace()
    assert [i.id for i in first.items()] == [i.id for i in second.items()]
    assert [i.policy for i in first.items()] == [i.policy for i in second.items()]
    assert full_state(first) == full_state(second)
    if expected_capacity(policy) is not None:
        assert first.stats()["evicted"] > 0  # eviction (and its sampling) was exercised


# -- get / remove / clear / len / items -----------------------------------------------------------
def test_get_returns_what_add_stored(policy: str) -> None:
    memory = make_memory(policy)
    _, vectors = topic_vectors(3, 4, dim=DIM, seed=1)
    metadata: dict[str, Any] = {"turn": 12, "tags": ["retry", "http"]}
    text = "Q: how do I handle HTTP 429?\nA: retry with exponential backoff"
    decision = memory.add(text, embedding=vectors[0, 0] * 3.0, metadata=metadata, item_id="q429")
    assert decision.admitted and decision.item_id == "q429"  # the first offer is always stored
    item = memory.get("q429")
    assert (item.id, item.text, dict(item.metadata)) == ("q429", text, metadata)
    assert item.created_step == 1 and item.created_at == fixed_clock()
    np.testing.assert_allclose(memory.vector("q429"), unit(vectors[0, 0]), atol=1e-6)
    # The memory keeps its own copy of the metadata, and hands out copies.
    metadata["turn"] = 99
    item.metadata["turn"] = 98  # type: ignore[index]
    assert memory.get("q429").metadata["turn"] == 12
    auto = memory.add("another experience", embedding=vectors[1, 0])
    assert auto.admitted and auto.item_id is not None and auto.item_id != "q429"
    assert memory.get(auto.item_id).text == "another experience"
    assert dict(memory.get(auto.item_id).metadata) == {}
    assert "q429" in memory and auto.item_id in memory and "nope" not in memory


def test_remove_len_and_items_agree(policy: str) -> None:
    memory = make_memory(policy)
    _, vectors = topic_vectors(4, 2, dim=DIM, seed=2)
    stored = []
    for i, vector in enumerate(vectors.reshape(-1, DIM)):
        decision = memory.add(f"item {i}", embedding=vector, item_id=f"id{i}")
        if decision.admitted:
            stored.append(decision.item_id)
    assert len(stored) >= 5  # bootstrap: even the regret gate stores the first five
    assert [item.id for item in memory.items()] == stored
    assert [item.id for item in memory] == stored
    for victim in (stored[2], stored[0], stored[-1]):
        memory.remove(victim)
        stored.remove(victim)
        assert victim not in memory
        with pytest.raises(UnknownItemError, match=re.escape(repr(victim))):
            memory.get(victim)
        with pytest.raises(UnknownItemError):
            memory.remove(victim)
        with pytest.raises(UnknownItemError):
            memory.vector(victim)
        assert len(memory) == len(memory.items()) == len(stored)
        assert [item.id for item in memory.items()] == stored
        assert all(h.id != victim for h in memory.retrieve(embedding=vectors[0, 0], k=10))
        memory.check_invariants()
    stats = memory.stats()
    assert stats["removed"] == 3 and stats["evicted"] == 0 and stats["size"] == len(stored)
    # A removed id is free again.
    again = memory.add("item 0 again", embedding=vectors[0, 0], item_id="id0")
    if again.admitted:
        assert memory.get("id0").text == "item 0 again"
    memory.check_invariants()


def test_unknown_item_error_is_both_key_error_and_value_error(policy: str) -> None:
    memory = make_memory(policy)
    assert issubclass(UnknownItemError, KeyError) and issubclass(UnknownItemError, ValueError)
    with pytest.raises(KeyError):
        memory.get("missing")
    with pytest.raises(ValueError):
        memory.remove("missing")
    with pytest.raises(UnknownItemError) as info:
        memory.get("missing")
    assert str(info.value) == "no item with id 'missing' is stored"


def test_clear_empties_and_the_memory_stays_usable(policy: str) -> None:
    memory = make_memory(policy, seed=3)
    ops = make_ops(seed=3, steps=80)
    run(memory, ops)
    old_ids = [item.id for item in memory.items()]
    assert old_ids
    memory.clear()
    memory.check_invariants()
    assert len(memory) == 0 and memory.items() == [] and list(memory) == []
    assert memory.trace() == []
    assert memory.stats() == make_memory(policy, seed=3).stats()  # counters and learned state
    for item_id in old_ids:
        assert item_id not in memory
        with pytest.raises(UnknownItemError):
            memory.get(item_id)
    with pytest.raises(ValueError, match=re.escape("call retrieve() first")):
        memory.feedback(like=True)
    assert memory.retrieve(embedding=GOOD) == []
    cap = expected_capacity(policy)
    steps = 0
    for op in make_ops(seed=4, steps=80):
        apply(memory, op)
        steps += op.kind == "add"
        memory.check_invariants()
        assert cap is None or len(memory) <= cap
    stats = memory.stats()
    assert stats["steps"] == steps
    assert stats["admitted"] - stats["evicted"] - stats["removed"] == len(memory) > 0
    assert stats["admitted"] + stats["rejected"] + stats["reoffered"] == steps


# -- bad input: a clear error and no change at all ------------------------------------------------
GOOD = unit(np.arange(1.0, DIM + 1.0))


def _with(value: float) -> np.ndarray:
    vector = GOOD.astype(np.float64)
    vector[3] = value
    return vector


BadCall = Callable[[SolarMemory], object]

BAD_CALLS: list[tuple[str, BadCall, type[Exception], str]] = [
    # text
    ("add-empty-text", lambda m: m.add("", embedding=GOOD), ValueError, "text must not be empty"),
    ("add-blank-text", lambda m: m.add(" \t\n", embedding=GOOD), ValueError, "must not be empty"),
    ("add-blank-text-embedded", lambda m: m.add("   "), ValueError, "text must not be empty"),
    ("add-int-text", lambda m: m.add(42, embedding=GOOD), TypeError, "text must be a str, got int"),
    ("add-none-text", lambda m: m.add(None), TypeError, "text must be a str, got NoneType"),
    ("add-bytes-text", lambda m: m.add(b"hi"), TypeError, "text must be a str, got bytes"),
    ("retrieve-empty-query", lambda m: m.retrieve(""), ValueError, "query must not be empty"),
    ("retrieve-blank-query", lambda m: m.retrieve("\n "), ValueError, "query must not be empty"),
    (
        "retrieve-blank-query-with-embedding",
        lambda m: m.retrieve(" ", embedding=GOOD),
        ValueError,
        "query must not be empty",
    ),
    (
        "retrieve-float-query",
        lambda m: m.retrieve(3.5),
        TypeError,
        "query must be a str, got float",
    ),
    ("retrieve-nothing", lambda m: m.retrieve(), ValueError, "pass a query text or embedding="),
    # embedding
    (
        "add-embedding-too-short",
        lambda m: m.add("ok", embedding=GOOD[:-1]),
        ValueError,
        "dimension 31, expected 32",
    ),
    (
        "add-embedding-too-long",
        lambda m: m.add("ok", embedding=np.ones(DIM + 1)),
        ValueError,
        "dimension 33, expected 32",
    ),
    (
        "retrieve-embedding-wrong-dim",
        lambda m: m.retrieve(embedding=np.ones(16)),
        ValueError,
        "dimension 16, expected 32",
    ),
    ("add-embedding-2d", lambda m: m.add("ok", embedding=GOOD[None, :]), ValueError, "1-D"),
    (
        "add-embedding-nan",
        lambda m: m.add("ok", embedding=_with(np.nan)),
        ValueError,
        "NaN or inf",
    ),
    (
        "add-embedding-inf",
        lambda m: m.add("ok", embedding=_with(np.inf)),
        ValueError,
        "NaN or inf",
    ),
    (
        "add-embedding-minus-inf",
        lambda m: m.add("ok", embedding=_with(-np.inf)),
        ValueError,
        "NaN or inf",
    ),
    (
        "retrieve-embedding-nan",
        lambda m: m.retrieve(embedding=_with(np.nan)),
        ValueError,
        "NaN or inf",
    ),
    (
        "retrieve-embedding-inf",
        lambda m: m.retrieve(embedding=_with(np.inf)),
        ValueError,
        "NaN or inf",
    ),
    (
        "add-embedding-zero",
        lambda m: m.add("ok", embedding=np.zeros(DIM)),
        ValueError,
        "must not be the zero vector",
    ),
    (
        "retrieve-embedding-zero",
        lambda m: m.retrieve(embedding=[0.0] * DIM),
        ValueError,
        "must not be the zero vector",
    ),
    (
        "add-embedding-not-numeric",
        lambda m: m.add("ok", embedding=["x"] * DIM),
        TypeError,
        "embedding must be a sequence of numbers",
    ),
    # k
    (
        "retrieve-k-0",
        lambda m: m.retrieve(embedding=GOOD, k=0),
        ValueError,
        "k must be >= 1, got 0",
    ),
    (
        "retrieve-k-negative",
        lambda m: m.retrieve(embedding=GOOD, k=-3),
        ValueError,
        "k must be >= 1, got -3",
    ),
    (
        "retrieve-k-float",
        lambda m: m.retrieve(embedding=GOOD, k=2.0),
        TypeError,
        "k must be an int, got float",
    ),
    ("retrieve-k-str", lambda m: m.retrieve(embedding=GOOD, k="3"), TypeError, "k must be an int"),
    (
        "retrieve-k-true",
        lambda m: m.retrieve(embedding=GOOD, k=True),
        TypeError,
        "k must be an int, got bool",
    ),
    (
        "retrieve-k-false",
        lambda m: m.retrieve(embedding=GOOD, k=False),
        TypeError,
        "k must be an int, got bool",
    ),
    # feedback (the memory's latest retrieval is unrated, so a slip would change state)
    ("feedback-score-1.5", lambda m: m.feedback(score=1.5), ValueError, "score must be in [0, 1]"),
    ("feedback-score--0.1", lambda m: m.feedback(score=-0.1), ValueError, "got -0.1"),
    ("feedback-score-nan", lambda m: m.feedback(score=float("nan")), ValueError, "got nan"),
    ("feedback-score-inf", lambda m: m.feedback(score=float("inf")), ValueError, "got inf"),
    (
        "feedback-score-str",
        lambda m: m.feedback(score="0.5"),
        TypeError,
        "score must be a number in [0, 1], got str",
    ),
    ("feedback-score-bool", lambda m: m.feedback(score=True), TypeError, "got bool"),
    ("feedback-like-int", lambda m: m.feedback(like=1), TypeError, "like must be a bool, got int"),
    ("feedback-like-str", lambda m: m.feedback(like="yes"), TypeError, "like must be a bool"),
    (
        "feedback-bad-like-good-score",
        lambda m: m.feedback(like=0, score=0.5),
        TypeError,
        "like must be a bool",
    ),
    (
        "feedback-good-like-bad-score",
        lambda m: m.feedback(like=True, score=2.0),
        ValueError,
        "score must be in [0, 1]",
    ),
    ("feedback-neither", lambda m: m.feedback(), ValueError, "pass like=True/False or score="),
    (
        "feedback-both-none",
        lambda m: m.feedback(like=None, score=None),
        ValueError,
        "pass like=True/False or score=",
    ),
    # item ids
    ("get-unknown", lambda m: m.get("nope"), UnknownItemError, "no item with id 'nope'"),
    ("remove-unknown", lambda m: m.remove("nope"), UnknownItemError, "no item with id 'nope'"),
    ("vector-unknown", lambda m: m.vector("nope"), UnknownItemError, "no item with id 'nope'"),
    ("get-int-id", lambda m: m.get(7), TypeError, "item id must be a str, got int"),
    ("remove-none-id", lambda m: m.remove(None), TypeError, "item id must be a str"),
    (
        "add-duplicate-item-id",
        lambda m: m.add("dup", embedding=GOOD, item_id=m.items()[0].id),
        ValueError,
        "is already stored",
    ),
    (
        "add-duplicate-user-item-id",
        lambda m: m.add("dup", embedding=GOOD, item_id="pinned"),
        ValueError,
        "an item with id 'pinned' is already stored",
    ),
    (
        "add-empty-item-id",
        lambda m: m.add("ok", embedding=GOOD, item_id=""),
        ValueError,
        "item_id must not be empty",
    ),
    (
        "add-int-item-id",
        lambda m: m.add("ok", embedding=GOOD, item_id=5),
        TypeError,
        "item_id must be a str",
    ),
    # metadata
    (
        "add-metadata-list",
        lambda m: m.add("ok", embedding=GOOD, metadata=[("a", 1)]),
        TypeError,
        "metadata must be a mapping, got list",
    ),
    (
        "add-metadata-str",
        lambda m: m.add("ok", embedding=GOOD, metadata="a=1"),
        TypeError,
        "metadata must be a mapping, got str",
    ),
    (
        "add-metadata-int-key",
        lambda m: m.add("ok", embedding=GOOD, metadata={1: "x"}),
        TypeError,
        "metadata keys must be str, got int",
    ),
    (
        "add-metadata-tuple-key",
        lambda m: m.add("ok", embedding=GOOD, metadata={"fine": 1, ("t",): 2}),
        TypeError,
        "metadata keys must be str, got tuple",
    ),
    # inspection
    ("trace-last-0", lambda m: m.trace(last=0), ValueError, "last must be >= 1"),
]

_BUSY: dict[str, bytes] = {}


def busy_memory(policy: str) -> SolarMemory:
    """A memory that holds items, has seen retrievals and feedback, and whose latest retrieval is
    still unrated (so a feedback call that slipped through validation would change it)."""
    if policy not in _BUSY:
        memory = SolarMemory(
            policy,
            capacity=CAPACITY,
            embedder=HashEmbedder(dim=DIM),
            dim=DIM,
            seed=5,
            clock=fixed_clock,
        )
        run(memory, make_ops(seed=5, steps=30))
        while "pinned" not in memory:  # rejected steps accumulate regret: the gate opens soon
            memory.retrieve(embedding=GOOD)
            memory.feedback(score=0.0)
            memory.add("a pinned fact", embedding=GOOD, item_id="pinned")
        memory.retrieve("what about topic three?")
        assert len(memory) >= 3 and "pinned" in memory and memory.stats()["retrievals"] > 1
        _BUSY[policy] = full_state(memory)
    restored: SolarMemory = pickle.loads(_BUSY[policy])
    return restored


@pytest.mark.parametrize(
    "call, error, message", [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS]
)
def test_bad_input_raises_and_leaves_memory_unchanged(
    policy: str, call: BadCall, error: type[Exception], message: str
) -> None:
    memory = busy_memory(policy)
    before = full_state(memory)
    with pytest.raises(error, match=re.escape(message)):
        call(memory)
    assert full_state(memory) == before
    memory.check_invariants()


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.retrieve(embedding=GOOD),
        lambda m: m.retrieve("topic three", k=1),
        lambda m: m.feedback(score=0.5),
        lambda m: m.add("a new fact", embedding=GOOD),
        lambda m: m.remove("pinned"),
    ],
    ids=["retrieve-embedding", "retrieve-text", "feedback", "add", "remove"],
)
def test_full_state_sees_every_valid_call(policy: str, call: BadCall) -> None:
    """The unchanged-state checks above are not vacuous: valid calls do change ``full_state``."""
    memory = busy_memory(policy)
    before = full_state(memory)
    call(memory)
    assert full_state(memory) != before


def test_second_feedback_for_one_retrieval_is_rejected(policy: str) -> None:
    memory = busy_memory(policy)
    memory.feedback(like=True)
    for kwargs in ({"like": False}, {"like": True}, {"score": 0.2}):
        before = full_state(memory)
        with pytest.raises(ValueError, match="retrieval already has feedback"):
            memory.feedback(**kwargs)
        assert full_state(memory) == before
    # still rejected once the step has ended, and a new retrieval can be rated again
    memory.add("the step's experience", embedding=GOOD)
    before = full_state(memory)
    with pytest.raises(ValueError, match="already has feedback"):
        memory.feedback(score=1.0)
    assert full_state(memory) == before
    memory.retrieve(embedding=GOOD)
    memory.feedback(score=1.0)
    memory.check_invariants()


def test_feedback_before_any_retrieval_is_rejected(policy: str) -> None:
    memory = make_memory(policy)
    _, vectors = topic_vectors(2, 3, dim=DIM, seed=6)
    for i, vector in enumerate(vectors.reshape(-1, DIM)):
        memory.add(f"experience {i}", embedding=vector)
    assert len(memory) > 0
    for kwargs in ({"like": True}, {"score": 0.0}, {"like": False, "score": 0.25}):
        before = full_state(memory)
        with pytest.raises(ValueError, match=re.escape("call retrieve() first")):
            memory.feedback(**kwargs)
        assert full_state(memory) == before
    # the same after clear() forgot an earlier retrieval
    memory.retrieve(embedding=vectors[0, 0])
    memory.clear()
    before = full_state(memory)
    with pytest.raises(ValueError, match=re.escape("call retrieve() first")):
        memory.feedback(like=True)
    assert full_state(memory) == before


def test_feedback_never_credits_an_item_stored_after_the_retrieval(policy: str) -> None:
    """A retrieved item is removed and a new item takes its id (and, LIFO, its slot): the
    feedback that follows rates the old retrieval, so the new item must not learn from it."""
    memory = make_memory(policy)
    _, vectors = topic_vectors(3, 1, dim=DIM, seed=8)
    memory.add("the old answer", embedding=vectors[0, 0], item_id="answer")
    memory.add("something else", embedding=vectors[1, 0])
    hits = memory.retrieve(embedding=vectors[0, 0], k=1)
    assert [h.id for h in hits] == ["answer"]
    memory.remove("answer")
    decision = memory.add("a brand new answer", embedding=vectors[2, 0], item_id="answer")
    assert decision.admitted
    fresh = dict(memory.get("answer").policy)
    others = {item.id: dict(item.policy) for item in memory.items() if item.id != "answer"}
    memory.feedback(like=True)
    assert dict(memory.get("answer").policy) == fresh
    assert {item.id: dict(item.policy) for item in memory.items() if item.id != "answer"} == others


# -- construction ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "capacity, error, message",
    [
        (0, ValueError, "capacity must be >= 1, got 0"),
        (-4, ValueError, "capacity must be >= 1, got -4"),
        (2.5, TypeError, "capacity must be an int, got float"),
        ("10", TypeError, "capacity must be an int, got str"),
        (True, TypeError, "capacity must be an int, got bool"),
    ],
)
def test_bad_capacity_is_rejected(
    policy: str, capacity: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        SolarMemory(policy, capacity=capacity, dim=DIM)  # type: ignore[arg-type]


def test_unknown_policy_parameter_is_a_type_error(policy: str) -> None:
    with pytest.raises(TypeError, match=r"unknown parameter\(s\) bogus_knob"):
        SolarMemory(policy, capacity=CAPACITY, dim=DIM, bogus_knob=1)
    # a parameter another preset takes is still unknown here
    foreign = "novelty_bonus" if policy == "lfu" else "tie_break"
    with pytest.raises(TypeError, match=f"unknown parameter\\(s\\) {foreign}"):
        SolarMemory(policy, capacity=CAPACITY, dim=DIM, **{foreign: 1})


@pytest.mark.parametrize("name", ["lifo", "SOLAR", "", "solar "])
def test_unknown_policy_name_lists_the_known_names(name: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"unknown policy {name!r}")) as info:
        SolarMemory(name, capacity=CAPACITY, dim=DIM)
    known = str(info.value).split("known: ", 1)[1].split(", ")
    assert known == available_policies()


def test_every_contract_preset_is_registered() -> None:
    contract = {"fifo", "lru", "lfu", "arc", "solar", "solar-a", "solar-e", "unlimited"}
    assert contract <= set(available_policies())


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"policy": 3}, TypeError, "policy must be a str, got int"),
        ({"policy": "fifo", "eviction": FifoEviction()}, TypeError, "policy= or admission="),
        ({"clock": 123}, TypeError, "clock must be callable"),
        ({"k": 0}, ValueError, "k must be >= 1, got 0"),
        ({"trace_size": 0}, ValueError, "trace_size must be >= 1"),
        ({"seed": 1, "rng": np.random.default_rng(1)}, ValueError, "pass seed= or rng=, not both"),
        ({"embedder": HashEmbedder(dim=16)}, ValueError, "dim=32 disagrees"),
        ({"embedder": "bert"}, ValueError, "unknown embedder 'bert'"),
        ({"embedder": 3}, TypeError, "embedder must be None"),
    ],
)
def test_bad_construction_is_rejected(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    args: dict[str, Any] = {"policy": "fifo", "capacity": CAPACITY, "dim": DIM, **kwargs}
    with pytest.raises(error, match=re.escape(message)):
        SolarMemory(**args)


# -- the hash embedder, end to end ----------------------------------------------------------------
def test_every_preset_works_with_the_hash_embedder(policy: str) -> None:
    memory = SolarMemory(policy=policy, capacity=10, embedder="hash", seed=0)
    texts = [
        "Q: how do I handle HTTP 429?\nA: retry with exponential backoff",
        "Q: what did Caroline paint?\nA: a sunset over the lake",
        "Q: which port does postgres use?\nA: 5432 by default",
        "Q: how to reverse a list in python?\nA: use reversed() or slicing",
        "Q: what is the capital of Australia?\nA: Canberra",
    ]
    ids = []
    for text in texts:
        decision = memory.add(text)
        assert decision.admitted  # bootstrap stores the first five for every preset
        ids.append(decision.item_id)
    for text, item_id in zip(texts, ids, strict=True):
        hits = memory.retrieve(text, k=2)
        assert len(hits) == 2
        assert hits[0].id == item_id and hits[0].text == text
        # hybrid: its cosine (1) plus what its words add (every one of them matches)
        assert hits[0].score >= 1.0 - 1e-5
        assert hits[1].score < hits[0].score
        memory.feedback(like=True)
        memory.check_invariants()
    hits = memory.retrieve("what to do on HTTP 429", k=1)
    assert hits[0].id == ids[0]
    for i in range(20):
        memory.retrieve(f"question number {i} about topic {i % 3}")
        if i % 2:
            memory.feedback(score=0.25)
        memory.add(f"Q: question number {i} about topic {i % 3}\nA: answer {i}")
        memory.check_invariants()
        assert memory.capacity is None or len(memory) <= memory.capacity
    assert len(memory.trace()) == 25
