"""Random filters against random stored values, many of them: each filter is refused with the
library's ``TypeError``/``ValueError`` or gives a result for every item, in bounded time.

    python benchmarks/filter_fuzz.py --documents 100000

Filter documents: random trees of the filter language (fields, operators, lists, nested
dicts) holding integers too large for a float, NaN, infinities, numeric strings, bools,
objects, bytes and sets, some nested past the depth limit, some inside themselves, some with
long lists (up to 200,000 values). Stored values: items' metadata of the same kinds plus
NumPy numbers and arrays, an object whose ``==`` raises, nested dicts and lists. Each document
is compiled once (:func:`solar_core.retrieval.filters.compile_filter`) and applied to every item; a
tenth of them also go through ``SolarMemory.retrieve(filter=...)`` on a memory holding the
items; with LlamaIndex installed, as many random ``MetadataFilters`` (every operator, nested,
some cyclic, long ``in`` lists) go through ``llamaindex_solar``'s conversion; with LangGraph
installed, as many documents go through ``SolarStore``'s ``search(filter=...)`` rule.

Prints one JSON line: documents, refused, errors (any exception but the library's refusal:
must be 0), and the median and slowest call in ms (a call: the check and the compile plus the
matching of every item; the cyclic garbage collector runs between calls, not in them).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from solar_core import SolarMemory
from solar_core.retrieval.filters import MAX_DEPTH, compile_filter, shown

FIELDS = ["a", "b", "n", "user", "tags"]
OPERATORS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"]
ORDER = ("$gt", "$gte", "$lt", "$lte")
#: operators the language does not have (refused)
UNKNOWN = ["$in", "$and", "$regex"]


class Grumpy:
    """A stored value that refuses to be compared or hashed."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared")

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("ordered")

    def __hash__(self) -> int:
        raise RuntimeError("hashed")

    def __deepcopy__(self, memo: object) -> Grumpy:
        return self


def scalar(rng: random.Random) -> Any:
    pick = rng.randrange(16)
    if pick == 0:
        return 10 ** rng.randrange(300, 800) * rng.choice((1, -1))
    if pick == 1:
        return rng.choice((math.nan, math.inf, -math.inf, -0.0, 1e308, 5e-324))
    if pick == 2:
        return rng.choice(("5", "1e400", "nan", "-3", "", "$gt", "inf"))
    if pick == 3:
        return rng.choice((True, False, None))
    if pick in (4, 5, 6):
        return rng.randrange(-5, 6)
    if pick in (7, 8):
        return rng.uniform(-5, 5)
    return rng.choice(("billing", "gold", "a", "b", "2024-03-01", "2025"))


def odd(rng: random.Random) -> Any:
    """What a filter should not hold (refused) and a stored value may."""
    return rng.choice((object(), b"bytes", {1, 2}, Grumpy(), 1 + 2j))


def value(rng: random.Random, depth: int, budget: list[int]) -> Any:
    """A random filter value (a tree of the filter language, with mistakes)."""
    budget[0] -= 1
    roll = rng.random()
    if depth > 6 or budget[0] <= 0 or roll < 0.45:
        return odd(rng) if rng.random() < 0.02 else scalar(rng)
    if roll < 0.7:
        ops = rng.sample(OPERATORS, rng.randrange(1, 3))
        if rng.random() < 0.03:  # an operator next to a field
            ops.append(rng.choice(FIELDS))
        if rng.random() < 0.03:
            ops.append(rng.choice(UNKNOWN))
        return {
            op: scalar(rng) if op in ORDER and rng.random() < 0.9 else value(rng, depth + 1, budget)
            for op in ops
        }
    if roll < 0.85:
        return {k: value(rng, depth + 1, budget) for k in rng.sample(FIELDS, rng.randrange(4))}
    return [value(rng, depth + 1, budget) for _ in range(rng.randrange(4))]


def document(rng: random.Random) -> Any:
    kind = rng.random()
    if kind < 0.01:
        return rng.choice(("billing", 3, None, [("a", 1)]))
    doc: dict[Any, Any] = {}
    for key in rng.sample(FIELDS, rng.randrange(1, 4)):
        doc[key] = value(rng, 1, [40])
    if kind < 0.03:  # deep: around the limit
        deep: Any = scalar(rng)
        for _ in range(rng.randrange(MAX_DEPTH - 3, MAX_DEPTH + 3) if rng.random() < 0.9 else 5000):
            deep = {"a": deep} if rng.random() < 0.5 else [deep]
        doc["a"] = deep
    elif kind < 0.04:  # inside itself
        inner: dict[str, Any] = {"n": 1}
        inner["loop"] = inner if rng.random() < 0.5 else [inner]
        doc["user"] = inner
    elif kind < 0.045:  # long lists
        size = rng.choice((1000, 50_000, 99_999, 200_000))
        doc["tags"] = [scalar(rng) for _ in range(min(size, 2000))] * (size // 2000 or 1)
    elif kind < 0.05:  # a list holding one list many times over
        shared: Any = 1
        for _ in range(40):
            shared = [shared, shared]
        doc["tags"] = shared
    elif kind < 0.055:
        doc[rng.choice(("$gt", 1, ("a",)))] = 1
    return doc


def stored_value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.6:
        pick = rng.random()
        if pick < 0.05:
            return rng.choice((np.int64(3), np.float32(2.5), np.arange(3), np.bool_(True)))
        if pick < 0.08:
            return odd(rng)
        return scalar(rng)
    if roll < 0.8:
        return {k: stored_value(rng, depth + 1) for k in rng.sample(FIELDS, rng.randrange(4))}
    return [stored_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def items(rng: random.Random, n: int) -> list[dict[str, Any]]:
    return [
        {k: stored_value(rng) for k in rng.sample(FIELDS, rng.randrange(len(FIELDS) + 1))}
        for _ in range(n)
    ]


#: timed calls so far: the cyclic garbage collector runs between them, every so many
_calls = [0]


def timed(call: Callable[[], Any]) -> tuple[float, str | None]:
    """Seconds taken, and ``"refused"``, ``None`` (a result) or the unexpected error. The
    cyclic garbage collector is paused while a call runs and run between calls (every 500):
    a collection of the garbage the generator made is not billed to the call it lands in."""
    _calls[0] += 1
    if _calls[0] % 500 == 0:
        gc.collect()
    start = time.perf_counter()
    try:
        call()
        outcome = None
    except (TypeError, ValueError) as error:
        outcome = f"refused: {error}"
    except BaseException as error:  # noqa: BLE001 - what the fuzz is looking for
        outcome = f"error: {type(error).__name__}: {error}"[:300]
    return time.perf_counter() - start, outcome


def solar_filters(rng: random.Random, n: int, metadata: list[dict[str, Any]]) -> dict[str, Any]:
    memory = SolarMemory("fifo", capacity=len(metadata), dim=8, seed=0)
    for i, meta in enumerate(metadata):
        vector = np.random.default_rng(i).normal(size=8).astype(np.float32)
        memory.add(f"item {i}", embedding=vector, metadata=meta)
    query = np.ones(8, np.float32)
    seconds: list[float] = []
    slowest, worst = "", -1.0
    refused = 0
    errors: list[str] = []
    for i in range(n):
        doc = document(rng)

        def run(doc: Any = doc) -> None:
            test = compile_filter(doc, predicate=False)  # refused here, or never
            for meta in metadata:
                verdict = test(meta)
                if type(verdict) is not bool:
                    raise AssertionError(f"not a bool: {verdict!r}")

        took, outcome = timed(run)
        if outcome is None and i % 10 == 0:  # the whole path: a memory's retrieval
            more, outcome = timed(
                lambda doc=doc: memory.retrieve(embedding=query, k=5, filter=doc, record=False)
            )
            took += more
        if took > worst:
            worst, slowest = took, shown(doc)
        seconds.append(took)
        if outcome is not None and outcome.startswith("refused"):
            refused += 1
        elif outcome is not None:
            errors.append(outcome)
    return summary("solar_core filters", seconds, refused, errors, slowest)


def store_filters(rng: random.Random, n: int, metadata: list[dict[str, Any]]) -> dict[str, Any]:
    """The same documents as ``search(filter=...)`` filters of LangGraph's ``SolarStore``
    (LangGraph's rule: a range on a missing or non-numeric value is refused too). The items
    are those the store takes (JSON values: the NumPy and odd ones are refused when put); each
    document is checked and compiled once and applied to every item, a tenth also through
    ``search``."""
    from langchain_solar.store import SolarStore, _search_filter

    store = SolarStore(capacity=None)
    namespace = ("fuzz",)
    values: list[dict[str, Any]] = []
    for i, meta in enumerate(metadata):
        try:
            store.put(namespace, f"k{i}", meta)
        except (TypeError, ValueError):
            continue
        got = store.get(namespace, f"k{i}")
        assert got is not None
        values.append(got.value)
    seconds: list[float] = []
    slowest, worst = "", -1.0
    refused = 0
    errors: list[str] = []
    for i in range(n):
        doc = document(rng)

        def run(doc: Any = doc) -> None:
            test = _search_filter(doc)  # refused here, or when a range meets no number
            for value in values:
                verdict = test(value)
                if type(verdict) is not bool:
                    raise AssertionError(f"not a bool: {verdict!r}")

        took, outcome = timed(run)
        if i % 10 == 0:  # the whole path: a search (refused as the compiled filter was)

            def search(doc: Any = doc) -> None:
                store.search(namespace, filter=doc, limit=100)

            more, searched = timed(search)
            took += more
            if doc and (searched is None) != (outcome is None):  # (a falsy filter: none)
                searched = f"error: search and filter disagree: {searched} / {outcome}"
            outcome = outcome if searched is None or searched.startswith("refused") else searched
        if took > worst:
            worst, slowest = took, shown(doc)
        seconds.append(took)
        if outcome is not None and outcome.startswith("refused"):
            refused += 1
        elif outcome is not None:
            errors.append(outcome)
    result = summary("langgraph SolarStore filters", seconds, refused, errors, slowest)
    result["items"] = len(values)
    store.close()
    return result


def llamaindex_filters(
    rng: random.Random, n: int, metadata: list[dict[str, Any]]
) -> dict[str, Any]:
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        FilterOperator,
        MetadataFilter,
        MetadataFilters,
    )

    from llamaindex_solar.retriever import solar_filter

    operators = list(FilterOperator)
    conditions = [FilterCondition.AND, FilterCondition.OR, FilterCondition.NOT]

    def leaf() -> MetadataFilter:
        op = rng.choice(operators)
        key = rng.choice(FIELDS)
        roll = rng.random()
        listed = op in (
            FilterOperator.IN,
            FilterOperator.NIN,
            FilterOperator.ANY,
            FilterOperator.ALL,
        )
        if rng.random() < 0.85:  # mostly a value that fits the operator
            roll = 0.3 if listed else 0.7
        if rng.random() < 0.003 and listed:
            wanted: Any = [str(i) for i in range(200_000)]
        elif roll < 0.5:
            kind = rng.choice((int, float, str))
            wanted = [
                kind(rng.randrange(-3, 4)) if kind is not int else rng.choice((1, 10**400, -2))
                for _ in range(rng.randrange(5))
            ]
        else:
            wanted = rng.choice((10**400, math.nan, math.inf, 3, 2.5, "5", "a", None, "billing"))
            if op in (FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE):
                wanted = rng.choice(("a", "bill", "", "5"))
        try:
            return MetadataFilter(key=key, value=wanted, operator=op)
        except ValueError:  # pydantic refuses the mix: a plain one instead
            return MetadataFilter(key=key, value="a", operator=op)

    def group(depth: int) -> MetadataFilters:
        parts: list[Any] = []
        for _ in range(rng.randrange(1, 4)):
            parts.append(group(depth + 1) if depth < 4 and rng.random() < 0.3 else leaf())
        return MetadataFilters(filters=parts, condition=rng.choice(conditions))

    seconds: list[float] = []
    slowest, worst = "", -1.0
    refused = 0
    errors: list[str] = []
    for _ in range(n):
        filters = group(0)
        roll = rng.random()
        if roll < 0.01:
            deep = filters
            for _ in range(rng.choice((MAX_DEPTH - 1, MAX_DEPTH + 1, 3000))):
                deep = MetadataFilters(filters=[deep])
            filters = deep
        elif roll < 0.02:
            filters.filters.append(filters)

        def run(filters: MetadataFilters = filters) -> None:
            test = solar_filter(filters)
            assert callable(test)
            for meta in metadata:
                verdict = test(meta)
                if type(verdict) is not bool:
                    raise AssertionError(f"not a bool: {verdict!r}")

        took, outcome = timed(run)
        if took > worst:
            worst, slowest = took, shown(filters)
        seconds.append(took)
        if outcome is not None and outcome.startswith("refused"):
            refused += 1
        elif outcome is not None:
            errors.append(outcome)
    return summary("llamaindex MetadataFilters", seconds, refused, errors, slowest)


def summary(
    name: str, seconds: list[float], refused: int, errors: list[str], slowest: str
) -> dict[str, Any]:
    return {
        "fuzz": name,
        "documents": len(seconds),
        "refused": refused,
        "errors": len(errors),
        "first_errors": errors[:5],
        "median_ms": round(statistics.median(seconds) * 1000, 4),
        "p99_ms": round(sorted(seconds)[int(len(seconds) * 0.99)] * 1000, 3),
        "slowest_ms": round(max(seconds) * 1000, 3),
        "slowest_input": slowest[:120],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=50, help="stored items each is applied to")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sys.setrecursionlimit(1000)  # the default: nothing may lean on a larger one
    gc.disable()  # (see timed)
    rng = random.Random(args.seed)
    metadata = items(rng, args.items)
    results = [solar_filters(rng, args.documents, metadata)]
    try:
        import llama_index.core  # noqa: F401
    except ImportError:
        pass
    else:
        results.append(llamaindex_filters(rng, args.documents, metadata))
    try:
        import langgraph.store.base  # noqa: F401
    except ImportError:
        pass
    else:
        results.append(store_filters(rng, args.documents, metadata))
    for result in results:
        print(json.dumps(result))
    return 1 if any(r["errors"] or r["slowest_ms"] > 100 for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
