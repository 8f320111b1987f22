"""LlamaIndex ``MetadataFilters`` no stored value or query can break: compiled once, with
listed values looked up in sets, values compared kind by kind, nesting bounded and cycles
refused; and the nodes a retriever returns are copies."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.schema import TextNode  # noqa: E402
from llama_index.core.vector_stores.types import (  # noqa: E402
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from llamaindex_solar import SolarRetriever  # noqa: E402
from llamaindex_solar.retriever import solar_filter  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from solar_core.retrieval.filters import MAX_DEPTH  # noqa: E402
from tests.support.llamaindex_fakes import HashEmbedding  # noqa: E402
from tests.support.memories import full_state  # noqa: E402


def f(key: str, value: Any, operator: str = "==") -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=FilterOperator(operator))


def all_of(*filters: MetadataFilter | MetadataFilters, condition: str = "and") -> MetadataFilters:
    return MetadataFilters(filters=list(filters), condition=FilterCondition(condition))


def test_in_and_nin_look_values_up_instead_of_scanning_the_list() -> None:
    """Counted, not timed: a stored text that counts its comparisons is compared with none
    of the listed values (a scan compares it with each of them, item after item)."""
    compared = [0]

    class Counted(str):
        def __eq__(self, other: object) -> bool:
            compared[0] += 1
            return str.__eq__(self, other)  # type: ignore[no-any-return]

        __hash__ = str.__hash__

    listed = [f"v{i}" for i in range(500)]
    for op in ("in", "nin"):
        test = solar_filter(all_of(f("k", listed, op)))
        assert callable(test)
        found = [test({"k": Counted(f"v{i}")}) for i in range(0, 1000, 10)]
        assert found == [(i < 500) == (op == "in") for i in range(0, 1000, 10)]
    assert compared[0] == 0
    many = solar_filter(all_of(f("k", [str(i) for i in range(200_000)], "nin")))
    assert callable(many) and many({"k": "x"}) and not many({"k": "199999"})


def test_in_keeps_to_each_kind_and_finds_numbers_of_any_size() -> None:
    test = solar_filter(all_of(f("k", [1, 10**400], "in")))
    assert callable(test)
    assert [test({"k": v}) for v in (1, 1.0, 2.5, 10**400, True, "1", np.int64(1))] == [
        True, True, False, True, False, False, True,
    ]  # fmt: skip
    words = solar_filter(all_of(f("k", ["a", "b"], "any")))
    assert callable(words)
    assert [words({"k": v}) for v in (["b", "z"], ("z",), [["a"]], "xa", 5)] == [
        True, False, False, True, False,
    ]  # fmt: skip
    both = solar_filter(all_of(f("k", ["a", "b", "a"], "all")))
    assert callable(both)
    assert [both({"k": v}) for v in (["b", "a"], ["a"], "ab")] == [True, False, True]


def test_order_is_exact_for_huge_numbers_and_refuses_text_against_numbers() -> None:
    test = solar_filter(all_of(f("n", 1e308, ">")))
    assert callable(test)
    stored = (10**400, 5, "1e400", math.nan, math.inf, True, np.float32(1.0), [1])
    assert [test({"n": v}) for v in stored] == [
        True,
        False,
        False,
        False,
        True,
        False,
        False,
        False,
    ]
    text = solar_filter(all_of(f("d", "2024", ">=")))
    assert callable(text)
    assert [text({"d": v}) for v in ("2025-01", "2023", 2025)] == [True, False, False]


def test_stored_values_that_compare_oddly_never_fail_a_filter() -> None:
    array = np.arange(3)
    odd = {"k": array}
    for one in (
        f("k", 1),
        f("k", 1, "!="),
        f("k", 1, ">"),
        f("k", [1], "in"),
        f("k", [1], "nin"),
        f("k", 1, "contains"),
        f("k", [1], "any"),
        f("k", [1], "all"),
        f("k", "a", "text_match"),
        f("k", None, "is_empty"),
    ):
        test = solar_filter(all_of(one))
        assert callable(test)
        assert test(odd) is (one.operator in (FilterOperator.NE, FilterOperator.NIN))


def nested_filters(levels: int) -> MetadataFilters:
    filters = all_of(f("k", 1))
    for _ in range(levels - 1):
        filters = all_of(filters)
    return filters


def test_nesting_is_bounded_and_a_cycle_is_refused() -> None:
    assert callable(solar_filter(nested_filters(MAX_DEPTH)))
    with pytest.raises(ValueError, match=f"nest deeper than {MAX_DEPTH} levels"):
        solar_filter(nested_filters(MAX_DEPTH + 1))
    with pytest.raises(ValueError, match=f"nest deeper than {MAX_DEPTH} levels"):
        solar_filter(nested_filters(5_000))
    looped = all_of(f("k", 1))
    looped.filters.append(looped)
    with pytest.raises(ValueError, match="hold themselves"):
        solar_filter(looped)


def test_a_retriever_refuses_a_deep_filter_and_changes_nothing() -> None:
    memory = SolarMemory("fifo", capacity=4, embedder="hash", seed=0, min_score=None)
    retriever = SolarRetriever(memory=memory)
    retriever.add_nodes([TextNode(id_="a", text="an invoice", metadata={"k": 1})])
    before = full_state(memory)
    with pytest.raises(ValueError, match="nest deeper"):
        retriever.filters = nested_filters(MAX_DEPTH + 1)
    assert full_state(memory) == before


def test_changing_a_retrieved_nodes_metadata_changes_nothing_stored() -> None:
    memory = SolarMemory("fifo", capacity=4, embedder=HashEmbedding(), seed=0, min_score=None)
    retriever = SolarRetriever(memory=memory, filters=all_of(f("k", 1)))
    retriever.add_nodes(
        [TextNode(id_="a", text="an invoice", metadata={"k": 1, "tags": ["x"], "d": {"y": 1}})]
    )
    for found in retriever.retrieve("invoice"):
        found.node.metadata["tags"].append("changed")
        found.node.metadata["d"]["y"] = 2
    stored = memory.get("a").metadata
    assert stored["tags"] == ["x"] and stored["d"] == {"y": 1}


@pytest.mark.parametrize("part_cost", [0, 10**9])  # every text by its parts; every text scanned
def test_any_and_all_of_texts_agree_with_a_plain_scan_whichever_way_they_look(
    monkeypatch: pytest.MonkeyPatch, part_cost: int
) -> None:
    # a long stored text is looked up by its parts, a short one against a long list scanned:
    # the cheaper way, chosen per text, gives what LlamaIndex's own substring test gives
    monkeypatch.setattr("llamaindex_solar.retriever._PART_COST", part_cost)
    listed = ["ab", "b", "zz", "abc", "c"]
    texts = ["", "a", "abc", "xyz", "zzab", "cab", "bcbc", "a" * 50 + "zz"]
    for operator, some in ((FilterOperator.ANY, True), (FilterOperator.ALL, False)):
        for wanted in (listed, listed[:2], ["zz"]):
            one = MetadataFilter(key="s", value=wanted, operator=operator)
            test = solar_filter(MetadataFilters(filters=[one]))
            assert callable(test)
            for text in texts:
                expected = (any if some else all)(w in text for w in wanted)
                assert test({"s": text}) is expected, (operator, wanted, text)
