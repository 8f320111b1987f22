"""retrieve(filter=...): metadata filters, the rule of LangGraph's stores, on a memory's
retrievals; persisted, a filtered retrieval replays as it ran."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import solar_core.engine.memory
from solar_core import SolarMemory
from solar_core.persistence import MemoryStore
from solar_core.retrieval.filters import check_filter, left_out, matches
from tests.support.memories import full_state, onehot

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels

#: (id, metadata), one axis each: a query on axis i ranks item i first, then by the tail weights
ITEMS = [
    ("b1", {"topic": "billing", "n": 1, "user": {"tier": "gold"}, "tags": ["a", "b"]}),
    ("s1", {"topic": "shipping", "n": 2, "user": {"tier": "free"}}),
    ("b2", {"topic": "billing", "n": 3, "user": {"tier": "free"}, "tags": ["a"]}),
    ("s2", {"topic": "shipping", "n": 4}),
    ("x", {}),
]


def memory_with(policy: str = "solar", **kwargs: Any) -> SolarMemory:
    memory = SolarMemory(policy, capacity=10, dim=8, seed=0, **kwargs)
    for axis, (item_id, meta) in enumerate(ITEMS):
        memory.add(f"item {item_id}", embedding=onehot(axis) + 0.5 * onehot(7), metadata=meta)
        # (the ids the memory gives are not ours: look them up by text below)
    return memory


def ids_of(memory: SolarMemory) -> dict[str, str]:
    """The memory's ids of ITEMS, by our names."""
    return {item.text.split()[1]: item.id for item in memory.items()}


def query_all() -> np.ndarray:
    """A query that ranks every item: x, s2, b2, s1, b1 (the higher axis the better)."""
    return sum((i + 1) * onehot(i) for i in range(len(ITEMS))).astype(np.float32)


def retrieved(memory: SolarMemory, wanted: object, **kwargs: Any) -> list[str]:
    names = {v: k for k, v in ids_of(memory).items()}
    hits = memory.retrieve(embedding=query_all(), k=5, filter=wanted, **kwargs)  # type: ignore[arg-type]
    return [names[h.id] for h in hits]


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        ({"topic": "billing"}, ["b2", "b1"]),
        ({"topic": "billing", "n": 1}, ["b1"]),
        ({"n": {"$gt": 1, "$lte": 3}}, ["b2", "s1"]),
        ({"n": {"$gte": 3}}, ["s2", "b2"]),
        ({"n": {"$lt": 2}}, ["b1"]),  # x has no "n": not in any range
        ({"topic": {"$ne": "billing"}}, ["x", "s2", "s1"]),  # a missing value is not "billing"
        ({"topic": {"$eq": "shipping"}}, ["s2", "s1"]),
        ({"user": {"tier": "free"}}, ["b2", "s1"]),  # nested, key by key
        ({"tags": ["a"]}, ["b2"]),  # a list: the same length, element by element
        ({"topic": "none such"}, []),
        ({}, ["x", "s2", "b2", "s1", "b1"]),
    ],
)
def test_only_items_whose_metadata_match_are_returned(
    wanted: dict[str, Any], expected: list[str]
) -> None:
    memory = memory_with()
    assert retrieved(memory, wanted) == expected


@pytest.mark.parametrize("retrieval", ["vector", "hybrid", "lexical"])
@pytest.mark.parametrize("importance_weight", [0.0, 0.5])
def test_every_ranking_keeps_to_the_filter_and_fills_k_from_the_matching_items(
    retrieval: str, importance_weight: float
) -> None:
    memory = SolarMemory(
        "solar", capacity=20, embedder="hash", seed=0, importance_weight=importance_weight
    )
    for i in range(12):
        topic = "billing" if i % 3 == 0 else "shipping"
        memory.add(f"invoice number {i} about {topic}", metadata={"topic": topic, "i": i})
    memory.retrieval = retrieval
    hits = memory.retrieve(
        "invoice about shipping", k=3, filter={"topic": "billing"}, min_score=None
    )
    assert len(hits) == 3 and all(h.metadata["topic"] == "billing" for h in hits)
    assert [h.rank for h in hits] == [0, 1, 2]


def test_only_the_returned_items_are_credited_and_feedback_rates_them() -> None:
    memory = memory_with()
    names = ids_of(memory)
    alpha = {name: memory.get(i).policy["alpha"] for name, i in names.items()}
    hits = memory.retrieve(embedding=query_all(), k=1, filter={"topic": "shipping"})
    assert [h.id for h in hits] == [names["s2"]]
    memory.feedback(like=True)  # the latest retrieval: the filtered one
    after = {name: memory.get(i).policy["alpha"] for name, i in names.items()}
    assert after["s2"] == alpha["s2"] + 2  # retrieved, then liked
    assert {n: a for n, a in after.items() if n != "s2"} == {
        n: a for n, a in alpha.items() if n != "s2"
    }
    memory.check_invariants()


def test_a_filter_adds_to_exclude() -> None:
    memory = memory_with()
    names = ids_of(memory)
    hits = memory.retrieve(
        embedding=query_all(), k=5, filter={"topic": "billing"}, exclude=[names["b2"]]
    )
    assert [h.id for h in hits] == [names["b1"]]


def test_a_predicate_filters_too_and_cannot_change_the_stored_metadata() -> None:
    memory = memory_with()

    def even(metadata: Mapping[str, Any]) -> bool:
        with pytest.raises(TypeError):
            metadata["n"] = 0  # type: ignore[index]  # a read-only view
        return metadata.get("n", 1) % 2 == 0

    assert retrieved(memory, even) == ["s2", "s1"]
    assert [item.metadata.get("n") for item in memory.items()] == [1, 2, 3, 4, None]


def test_a_look_with_a_filter_changes_nothing() -> None:
    memory = memory_with()
    before = full_state(memory)
    assert retrieved(memory, {"topic": "billing"}, record=False) == ["b2", "b1"]
    assert full_state(memory) == before


@pytest.mark.parametrize(
    ("bad", "error", "says"),
    [
        ({"n": {"$in": [1, 2]}}, ValueError, r"unsupported filter operator '\$in' at 'n'"),
        ({"n": {"$gt": [1]}}, ValueError, r"compares numbers or strings, got \[1\]: pass a number"),
        ({"n": {"$gt": None}}, ValueError, "compares numbers"),
        ({"$and": [{"n": 1}]}, ValueError, "keys name metadata fields"),
        ({"user": {"$eq": 1, "tier": "gold"}}, ValueError, "mixes operators and metadata keys"),
        ({"user": {"x": {"$regex": "a"}}}, ValueError, r"'\$regex' at 'user.x'"),
        ({"tags": [{"$foo": 1}]}, ValueError, r"at 'tags\[0\]'"),
        ({1: "a"}, TypeError, "filter keys are metadata keys"),
        ("billing", TypeError, "filter must be a mapping"),
        ([("topic", "billing")], TypeError, "filter must be a mapping"),
    ],
)
def test_a_bad_filter_is_refused_with_the_fix_and_changes_nothing(
    bad: object, error: type[Exception], says: str
) -> None:
    memory = memory_with()
    before, stats = full_state(memory), memory.stats()
    with pytest.raises(error, match=says):
        memory.retrieve(embedding=query_all(), filter=bad)  # type: ignore[arg-type]
    assert full_state(memory) == before and memory.stats() == stats


@pytest.mark.parametrize(
    "bad",
    [
        {"$or": [{"topic": "billing"}, {"n": 2}]},
        {"$and": [{"topic": "billing"}, {"n": 1}]},
        {"$not": {"topic": "billing"}},
        {"$eq": 1},
        {"$gte": "2024"},
    ],
)
def test_the_filters_a_refusal_suggests_are_accepted(bad: dict[str, Any]) -> None:
    memory = memory_with()
    with pytest.raises(ValueError) as refused:
        memory.retrieve(embedding=query_all(), filter=bad)
    message = str(refused.value)
    suggested = re.findall(r"\{'.*?\}\}|lambda m: .*$", message)
    assert suggested, message
    for text in suggested:
        memory.retrieve(embedding=query_all(), filter=eval(text))  # accepted as it is shown


def test_a_predicate_that_raises_changes_nothing() -> None:
    memory = memory_with()
    before = full_state(memory)

    def broken(metadata: Mapping[str, Any]) -> bool:
        raise RuntimeError("the predicate failed")

    with pytest.raises(RuntimeError, match="the predicate failed"):
        memory.retrieve(embedding=query_all(), filter=broken)
    assert full_state(memory) == before


def test_the_filter_function_is_the_stores_rule() -> None:
    """``matches(value, filter)`` is the rule of LangGraph's store filters (what
    ``SolarStore.search(filter=...)`` applies): the cases of its docs and a few more."""
    value = {"n": 2, "s": "x", "d": {"a": 1, "b": [1, 2]}, "l": [1, {"k": "v"}]}
    yes = [
        {"n": 2},
        {"n": {"$eq": 2}},
        {"n": {"$ne": 3}},
        {"n": {"$gt": 1.5, "$lt": 2.5}},
        {"n": {"$gte": 2, "$lte": 2}},
        {"d": {"a": 1}},
        {"d": {"b": [1, 2]}},
        {"l": [1, {"k": "v"}]},
        {"s": "x", "n": 2},
    ]
    no = [
        {"n": 3},
        {"n": {"$ne": 2}},
        {"n": {"$gt": 2}},
        {"s": {"$gt": 0}},  # not a number: in no range
        {"d": {"a": 2}},
        {"d": {"b": [1]}},
        {"d": 1},
        {"missing": 1},
        {"l": [1]},
    ]
    assert all(matches(value, check_filter(f)) for f in yes)  # type: ignore[arg-type]
    assert not any(matches(value, check_filter(f)) for f in no)  # type: ignore[arg-type]


# -- persisted: the filter becomes the ids left out, logged and replayed as they ran ------------
def test_a_filtered_retrieval_replays_to_the_same_state(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    writer = MemoryStore(path, policy="fifo", capacity=6, embedder="hash", seed=0)
    live = writer.scope(user="alice")
    for i in range(8):  # fifo, capacity 6: the first two are evicted
        topic = ("billing", "shipping", "returns")[i % 3]
        live.add(f"invoice {i} about {topic}", metadata={"topic": topic, "i": i})
    hits = live.retrieve("invoice about shipping", k=2, filter={"topic": "billing"})
    assert hits and all(h.metadata["topic"] == "billing" for h in hits)
    live.feedback(like=True, retrieval=hits)
    look = live.retrieve("invoice", k=3, filter={"i": {"$gte": 6}}, record=False)
    assert sorted(h.metadata["i"] for h in look) == [6, 7]
    ranged = live.retrieve("invoice", k=3, filter={"i": {"$gte": 6}}, min_score=None)
    expected_state, expected_stats = live.export(), live.stats()

    # Another process replays the log (no snapshot since: the steps themselves run again).
    reader = MemoryStore(path, policy="fifo", capacity=6, embedder="hash", seed=0)
    replayed = reader.scope(user="alice")
    replayed.check_invariants()
    assert replayed.stats() == expected_stats
    assert replayed.export() == expected_state
    assert replayed.retrieval_trace()[-1]["ids"] == [h.id for h in ranged]
    reader.close()
    writer.close()

    # Reopened from the file (from its snapshot), the filtered retrieval can still be rated.
    again = MemoryStore(path, policy="fifo", capacity=6, embedder="hash", seed=0)
    reopened = again.scope(user="alice")
    reopened.check_invariants()
    assert reopened.export() == expected_state and reopened.stats() == expected_stats
    reopened.feedback(like=False, retrieval=ranged.retrieval_id)
    assert reopened.stats()["feedbacks"] == expected_stats["feedbacks"] + 1
    again.close()


def test_a_bad_filter_on_a_persisted_memory_logs_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash", seed=0)
    memory = store.scope(user="alice")
    memory.add("invoice about billing", metadata={"topic": "billing"})
    before = memory.export()
    with pytest.raises(ValueError, match="unsupported filter operator"):
        memory.retrieve("invoice", filter={"topic": {"$in": ["billing"]}})
    assert memory.export() == before
    store.close()
    reopened = MemoryStore(path, policy="fifo", capacity=5, embedder="hash", seed=0)
    assert reopened.scope(user="alice").export() == before
    reopened.close()


def test_an_item_another_process_stores_meanwhile_is_never_returned_unfiltered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What to leave out is read before the step catches up with the other processes: an item
    one of them stores in between is not left out by id, and is dropped from the hits."""
    path = tmp_path / "m.db"
    mine = MemoryStore(path, policy="fifo", capacity=10, embedder="hash", seed=0)
    other = MemoryStore(path, policy="fifo", capacity=10, embedder="hash", seed=0)
    memory = mine.scope(user="alice")
    memory.add("the invoice about billing", metadata={"topic": "billing"})
    read = left_out

    def read_then_another_process_writes(*args: Any) -> set[str]:
        out = read(*args)
        other.scope(user="alice").add("the invoice invoice", metadata={"topic": "shipping"})
        return out

    monkeypatch.setattr(solar_core.engine.memory, "left_out", read_then_another_process_writes)
    hits = memory.retrieve("the invoice invoice", k=2, filter={"topic": "billing"})
    assert [h.metadata["topic"] for h in hits] == ["billing"]
    assert len(memory) == 2  # the other process's item did reach this memory
    memory.check_invariants()
    other.close()
    mine.close()
