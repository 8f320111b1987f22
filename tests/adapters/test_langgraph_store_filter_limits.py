"""``SolarStore.search(filter=...)`` takes any filter and any stored value: a result or a clear
``TypeError``/``ValueError``. Numbers compare exactly, however large (in the store and after
reopening it); a filter nested too deep or inside itself is refused before the search does
anything; where ``InMemoryStore`` gives a result, the store gives the same one."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("langgraph.store.base")

from langgraph.store.base import GetOp, PutOp, SearchOp  # noqa: E402
from langgraph.store.memory import InMemoryStore  # noqa: E402

from langchain_solar.store import SolarStore  # noqa: E402
from solar_core.retrieval.filters import MAX_DEPTH  # noqa: E402

NS = ("users", "alice")
HUGE = 10**400  # no float holds it: float(HUGE) raises OverflowError


def keys(store: Any, wanted: Any, namespace: tuple[str, ...] = NS) -> list[str]:
    return sorted(item.key for item in store.search(namespace, filter=wanted, limit=100))


def put_numbers(store: SolarStore) -> None:
    store.put(NS, "huge", {"n": HUGE, "text": "huge"})
    store.put(NS, "big", {"n": 1e308, "text": "big"})
    store.put(NS, "huger", {"n": HUGE + 1, "text": "huger"})
    store.put(NS, "small", {"n": -HUGE, "text": "small"})
    store.put(NS, "three", {"n": 3, "text": "three"})


def check_numbers(store: SolarStore) -> None:
    assert keys(store, {"n": HUGE}) == ["huge"]
    assert keys(store, {"n": {"$eq": HUGE + 1}}) == ["huger"]
    assert keys(store, {"n": {"$ne": HUGE}}) == ["big", "huger", "small", "three"]
    assert keys(store, {"n": {"$gt": 1e308}}) == ["huge", "huger"]
    assert keys(store, {"n": {"$gte": HUGE}}) == ["huge", "huger"]
    assert keys(store, {"n": {"$gt": HUGE}}) == ["huger"]
    assert keys(store, {"n": {"$lt": -(10**399)}}) == ["small"]
    assert keys(store, {"n": {"$gt": 2, "$lt": HUGE}}) == ["big", "three"]
    assert keys(store, {"n": {"$lte": math.inf}}) == ["big", "huge", "huger", "small", "three"]


def test_huge_ints_stored_and_in_the_filter_compare_exactly() -> None:
    store = SolarStore(capacity=None)
    put_numbers(store)
    check_numbers(store)


def test_huge_ints_compare_exactly_after_reopening_a_sqlite_store(tmp_path: Path) -> None:
    path = str(tmp_path / "store.db")
    store = SolarStore(path, capacity=None)
    put_numbers(store)
    store.close()
    reopened = SolarStore(path, capacity=None)
    assert reopened.get(NS, "huger").value["n"] == HUGE + 1  # type: ignore[union-attr]
    check_numbers(reopened)
    reopened.close()


def nested(depth: int, leaf: Any = 1) -> Any:
    wanted = leaf
    for i in range(depth):
        wanted = {"a": wanted} if i % 3 else [wanted]
    return wanted


def test_a_filter_too_deep_is_refused_before_anything_changes() -> None:
    store = SolarStore(capacity=None, ttl={"default_ttl": 5})
    store.put(NS, "k", {"a": nested(5)})
    memory = store.memory(NS)
    assert memory is not None
    before = memory.export()
    for depth in (MAX_DEPTH + 1, 10_000):
        deep = {"a": {"$eq": nested(depth)}} if depth % 2 else {"a": nested(depth)}
        with pytest.raises(ValueError, match="deeper than"):
            store.batch([GetOp(NS, "k"), SearchOp(NS, filter=deep)])  # refreshes no TTL
        assert memory.export() == before
    ten_thousand: dict[str, Any] = {}
    inner = ten_thousand
    for _ in range(10_000):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(ValueError, match="deeper than"):
        store.search(NS, filter=ten_thousand)
    assert keys(store, {"a": nested(5)}) == ["k"]  # within the limit: compared
    assert keys(store, {"a": {"$eq": nested(5)}}) == ["k"]


def test_a_filter_inside_itself_is_refused() -> None:
    store = SolarStore(capacity=None)
    store.put(NS, "k", {"a": {"b": [1]}})
    loop: dict[str, Any] = {"b": 1}
    loop["c"] = loop
    listed: list[Any] = [1]
    listed.append(listed)
    for wanted in ({"a": loop}, {"a": {"$eq": loop}}, {"a": {"b": listed}}, {"a": {"$ne": listed}}):
        with pytest.raises(ValueError, match="holds itself"):
            store.search(NS, filter=wanted)
    top: dict[str, Any] = {}
    top["a"] = top
    with pytest.raises(ValueError, match="holds itself"):
        store.search(NS, filter=top)


def test_bad_filters_are_refused_with_the_fix() -> None:
    store = SolarStore(capacity=None)
    store.put(NS, "k", {"n": 1})
    with pytest.raises(ValueError, match=r"Unsupported operator: \$in at 'n'"):
        store.search(NS, filter={"n": {"$in": [1]}})
    with pytest.raises(ValueError, match=r"Unsupported operator: x .*use one of"):
        store.search(NS, filter={"n": {"$gt": 1, "x": 2}})
    with pytest.raises(ValueError, match="compares numbers, got 'abc'"):
        store.search(NS, filter={"n": {"$gt": "abc"}})
    with pytest.raises(ValueError, match="compares numbers, got None"):
        store.search(NS, filter={"n": {"$lt": None}})
    with pytest.raises(TypeError, match="values are data"):
        store.search(NS, filter={"n": object()})
    with pytest.raises(TypeError, match="a mapping"):
        store.search(NS, filter=[("n", 1)])  # type: ignore[arg-type]


def test_numeric_strings_bools_and_floats_compare_as_in_memory_store() -> None:
    """``InMemoryStore`` reads range operands with ``float()``: ``"5"`` is 5, ``True`` is 1.
    Its ``==`` is Python's: ``1 == 1.0 == True``, ``"5" != 5``."""
    values: dict[str, dict[str, Any]] = {
        "s": {"n": "5"},
        "t": {"n": True},
        "f": {"n": 2.5},
        "i": {"n": 7},
        "e": {"n": "1e3"},
    }
    ours, theirs = SolarStore(capacity=None), InMemoryStore()
    for key, value in values.items():
        ours.put(NS, key, value)
        theirs.put(NS, key, value)
    for wanted in (
        {"n": {"$gt": 3}},
        {"n": {"$gte": "2.5"}},
        {"n": {"$lt": 6}},
        {"n": {"$lte": True}},
        {"n": 1},
        {"n": "5"},
        {"n": {"$ne": 7.0}},
        {"n": {"$gt": "-inf", "$lt": "inf"}},
    ):
        assert keys(ours, wanted) == keys(theirs, wanted), wanted


def test_a_range_on_a_value_that_is_no_number_names_the_item() -> None:
    """As in ``InMemoryStore``, an error, not a miss; here a ``TypeError`` that says which."""
    store = SolarStore(capacity=None)
    store.put(NS, "k", {"n": 1})
    store.put(NS, "no-n", {"text": "none"})
    with pytest.raises(TypeError, match=r"at 'n' compares numbers.*None.*'no-n'"):
        store.search(NS, filter={"n": {"$gt": 0}})
    store.put(NS, "no-n", {"n": "many"})
    with pytest.raises(TypeError, match="holds 'many'"):
        store.search(NS, filter={"n": {"$gt": 0}})
    assert keys(store, {"n": {"$ne": 1}}) == ["no-n"]


def test_a_value_nested_too_deep_to_store_is_refused() -> None:
    store = SolarStore(capacity=None)
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(10_000):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(ValueError, match="deeper than"):
        store.put(NS, "k", {"deep": deep})
    assert store.namespaces() == []


# -- fuzz --------------------------------------------------------------------------------------
FIELDS = ["a", "b", "n"]
OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]
NUMBERS = [0, 1, -2, 2.5, 3, HUGE, -HUGE, 1e308, math.inf, -math.inf, True, False]
STRINGS = ["", "a", "5", "-1e3", "1e400", "inf", "x"]

scalars = st.one_of(st.sampled_from(NUMBERS), st.sampled_from(STRINGS), st.none())
stored = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=3)
    ),
    max_leaves=8,
)


def filter_values(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.sampled_from(FIELDS), inner, max_size=3),
            st.dictionaries(
                st.sampled_from([*OPERATORS, "$in", "a"]),
                st.one_of(inner, st.sampled_from([1, HUGE, "5", "a"])),
                min_size=1,
                max_size=3,
            ),
        ),
        max_leaves=8,
    )


filters = st.dictionaries(st.sampled_from(FIELDS), filter_values(scalars), max_size=3)
odd = st.sampled_from([math.nan, object(), b"x", {1, 2}, 1 + 2j, (1, 2)])
ranges = st.dictionaries(  # the usual filter on a number: a range, with numbers of every size
    st.sampled_from(OPERATORS), st.one_of(st.sampled_from(NUMBERS), scalars), min_size=1
)


def looped(inner: Any) -> Any:
    loop: list[Any] = [inner]
    loop.append({"a": loop})
    return loop


wild_filters = st.dictionaries(
    st.sampled_from(FIELDS),
    st.one_of(
        ranges,
        filter_values(st.one_of(scalars, odd)),
        st.builds(nested, st.sampled_from([MAX_DEPTH - 2, MAX_DEPTH + 1, 3000]), scalars),
        st.builds(looped, scalars),
    ),
    max_size=3,
)
values = st.lists(
    st.fixed_dictionaries(
        {"n": st.one_of(st.sampled_from(NUMBERS), stored)},
        optional={"a": stored, "b": stored},
    ),
    max_size=4,
)


def stores(items: list[dict[str, Any]]) -> tuple[SolarStore, InMemoryStore]:
    ours, theirs = SolarStore(capacity=None), InMemoryStore()
    ops = [PutOp(NS, f"k{i}", item) for i, item in enumerate(items)]
    ours.batch(ops)
    theirs.batch(ops)
    return ours, theirs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values, wild_filters)
def test_any_filter_on_any_value_gives_a_result_or_a_clear_refusal(
    items: list[dict[str, Any]], wanted: dict[str, Any]
) -> None:
    ours, _ = stores(items)
    try:
        found = keys(ours, wanted)
    except (TypeError, ValueError) as error:
        assert str(error)
    else:
        assert set(found) <= {f"k{i}" for i in range(len(items))}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values, filters)
def test_where_in_memory_store_answers_the_store_answers_the_same(
    items: list[dict[str, Any]], wanted: dict[str, Any]
) -> None:
    """``InMemoryStore`` raises where ``float()`` overflows or refuses: there the store
    compares exactly, or refuses the filter (before looking at any item, so it may refuse a
    filter whose bad part ``InMemoryStore`` never reached)."""
    ours, theirs = stores(items)
    try:
        expected = keys(theirs, wanted)
    except (TypeError, ValueError, OverflowError, AttributeError):
        expected = None
    try:
        found = keys(ours, wanted)
    except (TypeError, ValueError):
        found = None
    if expected is not None and found is not None:
        assert found == expected
