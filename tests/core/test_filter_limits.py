"""Filters no stored value and no query can break: numbers of any size compare exactly, each
kind of value compares only with its own kind, a filter too deep, too large or inside itself
is refused before the retrieval does anything, and a filter is checked once per query."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import solar_core.retrieval.filters as filters
from solar_core import SolarMemory
from solar_core.persistence import MemoryStore
from solar_core.retrieval.filters import (
    MAX_DEPTH,
    MAX_VALUES,
    check_filter,
    compile_filter,
    matches,
)
from tests.support.memories import full_state, onehot


def memory_of(*metadata: dict[str, Any]) -> SolarMemory:
    memory = SolarMemory("fifo", capacity=len(metadata) + 1, dim=8, seed=0)
    for i, meta in enumerate(metadata):
        memory.add(f"item {i}", embedding=onehot(i % 8), metadata=meta, item_id=f"i{i}")
    return memory


def kept(memory: SolarMemory, wanted: object) -> list[str]:
    hits = memory.retrieve(embedding=onehot(0) + 0.1, k=10, filter=wanted, min_score=None)  # type: ignore[arg-type]
    return sorted(hit.id for hit in hits)


# -- numbers of any size ------------------------------------------------------------------------
def test_an_integer_too_large_for_a_float_compares_exactly() -> None:
    memory = memory_of({"n": 10**400}, {"n": 5}, {"n": -(10**400)}, {"n": 1e308})
    assert kept(memory, {"n": {"$gt": 1}}) == ["i0", "i1", "i3"]
    assert kept(memory, {"n": {"$gt": 1e308}}) == ["i0"]
    assert kept(memory, {"n": {"$lt": 10**401, "$gt": 10**399}}) == ["i0"]
    assert kept(memory, {"n": {"$lte": 0}}) == ["i2"]
    assert kept(memory, {"n": 10**400}) == ["i0"]
    assert kept(memory, {"n": {"$gt": math.inf}}) == []
    assert kept(memory, {"n": {"$gt": 10**500}}) == []


def test_a_persisted_scope_holding_a_huge_integer_filters_after_reopening(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash", seed=0)
    memory = store.scope(user="alice")
    memory.add("a huge count", metadata={"n": 10**400})
    memory.add("a small count", metadata={"n": 3})
    store.close()
    again = MemoryStore(path, policy="fifo", capacity=5, embedder="hash", seed=0)
    reopened = again.scope(user="alice")
    hits = reopened.retrieve("count", k=5, filter={"n": {"$gte": 2}}, min_score=None)
    assert sorted(h.text for h in hits) == ["a huge count", "a small count"]
    small = reopened.retrieve("count", k=5, filter={"n": {"$lt": 10}}, min_score=None)
    assert [h.text for h in small] == ["a small count"]
    again.close()


def test_nan_and_infinities_are_values_like_others() -> None:
    memory = memory_of({"x": math.nan}, {"x": math.inf}, {"x": -math.inf}, {"x": 0.0})
    assert kept(memory, {"x": {"$gt": 0}}) == ["i1"]
    assert kept(memory, {"x": {"$lt": 0}}) == ["i2"]
    assert kept(memory, {"x": math.nan}) == []  # NaN equals nothing
    assert kept(memory, {"x": {"$ne": math.nan}}) == ["i0", "i1", "i2", "i3"]
    assert kept(memory, {"x": {"$gte": math.nan}}) == []


# -- each kind compares with its own kind -------------------------------------------------------
def test_a_numeric_string_is_in_no_numeric_range_and_a_number_in_no_text_range() -> None:
    memory = memory_of({"n": "5"}, {"n": 5}, {"n": "12"}, {"n": True})
    assert kept(memory, {"n": {"$gt": 3}}) == ["i1"]
    assert kept(memory, {"n": {"$gt": "3"}}) == ["i0"]  # text order: "12" < "3"
    assert kept(memory, {"n": {"$lt": "3"}}) == ["i2"]
    assert kept(memory, {"n": 5}) == ["i1"]
    assert kept(memory, {"n": "5"}) == ["i0"]


def test_a_bool_is_not_a_number() -> None:
    memory = memory_of({"b": True}, {"b": 1}, {"b": 1.0}, {"b": False}, {"b": 0})
    assert kept(memory, {"b": True}) == ["i0"]
    assert kept(memory, {"b": 1}) == ["i1", "i2"]
    assert kept(memory, {"b": {"$eq": False}}) == ["i3"]
    assert kept(memory, {"b": {"$gte": 0}}) == ["i1", "i2", "i4"]


def test_text_ranges_compare_strings() -> None:
    memory = memory_of({"day": "2024-03-01"}, {"day": "2025-01-10"}, {"day": 20240301})
    assert kept(memory, {"day": {"$gte": "2024-06-01"}}) == ["i1"]
    assert kept(memory, {"day": {"$lt": "2025"}}) == ["i0"]


def test_stored_values_that_compare_oddly_never_fail_a_filter() -> None:
    class Grumpy:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("do not compare me")

        __hash__ = object.__hash__

        def __deepcopy__(self, memo: object) -> Grumpy:
            return self

    odd: list[dict[str, Any]] = [
        {"v": np.arange(3)},
        {"v": Grumpy()},
        {"v": np.float32(2.5)},
        {"v": np.int64(7)},
        {"v": {"deep": [Grumpy()]}},
    ]
    memory = memory_of(*odd)
    assert kept(memory, {"v": 7}) == ["i3"]
    assert kept(memory, {"v": {"$gt": 2}}) == ["i2", "i3"]
    assert kept(memory, {"v": [0, 1, 2]}) == []  # an array is not a list
    assert kept(memory, {"v": {"deep": [1]}}) == []
    assert kept(memory, {"v": {"$ne": 1}}) == ["i0", "i1", "i2", "i3", "i4"]


# -- filters too deep, too large, inside themselves -----------------------------------------------
def nested(levels: int) -> dict[str, Any]:
    wanted: Any = 1
    for _ in range(levels):
        wanted = {"a": wanted}
    return wanted  # type: ignore[no-any-return]


def cyclic_dict() -> dict[str, Any]:
    wanted: dict[str, Any] = {"n": 1}
    wanted["self"] = wanted
    return wanted


def cyclic_list() -> dict[str, Any]:
    values: list[Any] = [1]
    values.append(values)
    return {"tags": values}


def shared_many_times() -> dict[str, Any]:
    """Thirty lists each holding the next twice: 2**30 values spelled out."""
    value: Any = 1
    for _ in range(30):
        value = [value, value]
    return {"x": value}


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (nested(MAX_DEPTH + 1), f"nests deeper than {MAX_DEPTH} levels"),
        (nested(10_000), f"nests deeper than {MAX_DEPTH} levels"),
        ({"x": {"$eq": nested(MAX_DEPTH + 1)}}, "nests deeper"),
        (cyclic_dict(), "the filter holds itself at 'self'"),
        (cyclic_list(), r"the filter holds itself at 'tags\[1\]'"),
        ({"x": {"$eq": cyclic_list()}}, "the filter holds itself"),
        (shared_many_times(), f"more than {MAX_VALUES} values"),
        ({"x": list(range(MAX_VALUES + 1))}, f"more than {MAX_VALUES} values"),
    ],
    ids=[
        "deeper",
        "very-deep",
        "deep-operand",
        "cyclic-dict",
        "cyclic-list",
        "cyclic-operand",
        "shared",
        "long",
    ],  # fmt: skip
)
def test_a_filter_too_deep_too_large_or_inside_itself_is_refused_and_changes_nothing(
    bad: dict[str, Any], says: str
) -> None:
    memory = memory_of({"a": 1}, {"n": 1})
    before = full_state(memory)
    with pytest.raises(ValueError, match=says):
        memory.retrieve(embedding=onehot(0), filter=bad)
    assert full_state(memory) == before


def test_a_list_or_dict_a_filter_holds_in_many_places_is_read_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shared: Any = {"a": [1, {"b": 2}]}
    wanted = {"x": [shared] * 50, "y": {"$eq": [shared, shared]}}
    read: list[object] = []
    check = filters._Checker.fields

    def counted(self: Any, wanted: Any, where: str, depth: int) -> Any:
        read.append(wanted)
        return check(self, wanted, where, depth)

    monkeypatch.setattr(filters._Checker, "fields", counted)
    test = compile_filter(wanted)
    assert len(read) == 3  # {"a": ...}, {"b": 2} and {"$eq": ...}, each once
    assert test({"x": [{"a": [1, {"b": 2}]}] * 50, "y": ({"a": (1, {"b": 2})},) * 2})
    assert not test({"x": [{"a": [1, {"b": 3}]}] * 50, "y": [shared, shared]})


def test_a_filter_as_deep_as_allowed_matches() -> None:
    wanted = nested(MAX_DEPTH)
    memory = memory_of(wanted, nested(MAX_DEPTH - 1))
    assert kept(memory, wanted) == ["i0"]


@pytest.mark.parametrize(
    "bad",
    [
        {"x": object()},
        {"x": {"$eq": {1, 2}}},
        {"x": [b"bytes"]},
        {"x": {"$gt": {"a": 1}}},
        {"x": {"$lt": True}},
    ],
)
def test_a_filter_holds_data_only(bad: dict[str, Any]) -> None:
    with pytest.raises((TypeError, ValueError), match="data|numbers or strings"):
        check_filter(bad)


def test_a_checked_filter_is_a_copy_a_caller_may_change() -> None:
    wanted = {"user": {"tier": "gold"}}
    checked = check_filter(wanted)
    wanted["user"]["tier"] = "free"
    assert matches({"user": {"tier": "gold"}}, checked)  # type: ignore[arg-type]


def test_a_filter_is_checked_once_per_query_not_per_item(monkeypatch: pytest.MonkeyPatch) -> None:
    memory = memory_of(*({"n": i, "tags": ["a", "b"]} for i in range(40)))
    checked: list[object] = []
    check = filters._Checker.read

    def counted(self: Any, wanted: object, where: str, depth: int, literal: bool = False) -> Any:
        checked.append(wanted)
        return check(self, wanted, where, depth, literal)

    monkeypatch.setattr(filters._Checker, "read", counted)
    assert len(kept(memory, {"n": {"$gte": 35}, "tags": ["a", "b"]})) == 5
    # each value under the filter's keys checked once ({"$gte": 35} and ["a", "b"], a list of
    # plain values read whole), for the 40 items and the hits alike
    assert len(checked) == 2


# -- a fuzz: any filter, any stored value: a result or a refusal ----------------------------------
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**500), max_value=10**500),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.sampled_from(["5", "1e400", "nan", "-3", "$gt"]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "n", "$gt", "$eq"]), inner, max_size=3)
        | st.dictionaries(st.sampled_from(["$gt", "$gte", "$lt", "$lte", "$eq", "$ne"]), inner)
    ),
    max_leaves=12,
)
keys = st.sampled_from(["a", "b", "n", "$gt", "$in", 1])
documents = st.dictionaries(keys, values, max_size=4)
stored = st.dictionaries(st.sampled_from(["a", "b", "n"]), values, max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.lists(stored, max_size=4))
def test_any_filter_on_any_stored_values_is_a_result_or_a_refusal(
    wanted: dict[Any, Any], items: list[dict[str, Any]]
) -> None:
    try:
        test = compile_filter(wanted, predicate=False)
    except (TypeError, ValueError):
        return  # the library's refusal: says how to write it
    for metadata in items:
        assert type(test(metadata)) is bool


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b"]), values, max_size=3))
def test_every_stored_value_without_nan_equals_itself(metadata: dict[str, Any]) -> None:
    def has_nan(value: Any) -> bool:
        if isinstance(value, float):
            return math.isnan(value)
        if isinstance(value, dict):
            return any(has_nan(v) for v in value.values())
        if isinstance(value, list):
            return any(has_nan(v) for v in value)
        return False

    for key, value in metadata.items():
        if not has_nan(value):
            assert matches(metadata, {key: {"$eq": value}})
            assert not matches(metadata, {key: {"$ne": value}})
