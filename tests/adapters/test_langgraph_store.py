"""``SolarStore``: LangGraph's ``BaseStore`` over SOLAR-curated namespaces, held to
``InMemoryStore`` as an oracle when nothing bounds it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langgraph.store.base")

from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langgraph.store.base import (  # noqa: E402
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore  # noqa: E402

from langchain_solar.store import SolarStore  # noqa: E402
from tests.support.profiles import examples  # noqa: E402

NAMESPACES = [("a",), ("a", "b"), ("a", "c"), ("d",), ("d", "b", "e")]
KEYS = ["k0", "k1", "k2", "k3"]
WORDS = ["pizza", "tea", "rust", "jazz", "chess"]


def index() -> dict[str, Any]:
    return {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}


values = st.fixed_dictionaries(
    {"text": st.sampled_from(WORDS), "n": st.integers(0, 3)},
    optional={"tag": st.fixed_dictionaries({"x": st.integers(0, 1)})},
)
filters = st.one_of(
    st.none(),
    st.fixed_dictionaries({"n": st.integers(0, 3)}),
    st.fixed_dictionaries({"n": st.sampled_from([{"$gt": 1}, {"$lte": 1}, {"$ne": 2}])}),
    st.fixed_dictionaries({"tag": st.fixed_dictionaries({"x": st.integers(0, 1)})}),
)
prefixes = st.sampled_from([(), ("a",), ("a", "b"), ("d",), ("x",)])
conditions = st.one_of(
    st.none(),
    st.tuples(
        st.builds(
            MatchCondition,
            match_type=st.sampled_from(["prefix", "suffix"]),
            path=st.sampled_from([("a",), ("b",), ("*", "b"), ("d", "*"), ("e",)]),
        )
    ),
)
puts = st.builds(
    PutOp,
    namespace=st.sampled_from(NAMESPACES),
    key=st.sampled_from(KEYS),
    value=values,
    index=st.just(None),
    ttl=st.none(),  # InMemoryStore has no TTL (tests/adapters/test_langgraph_store_ttl.py)
)
ops = st.one_of(
    puts,
    puts,
    puts,  # a store worth reading needs writes: three puts for every other kind of op
    st.tuples(st.just("delete"), st.sampled_from(KEYS)),
    st.tuples(st.just("get"), st.sampled_from(KEYS), st.booleans()),
    st.builds(
        SearchOp,
        # a refresh of items without a TTL changes nothing: both stores answer alike
        refresh_ttl=st.booleans(),
        namespace_prefix=prefixes,
        filter=filters,
        limit=st.integers(1, 6),
        offset=st.integers(0, 3),
        query=st.one_of(st.none(), st.sampled_from(WORDS)),
    ),
    st.builds(
        ListNamespacesOp,
        match_conditions=conditions,
        max_depth=st.one_of(st.none(), st.integers(1, 3)),
        limit=st.integers(1, 6),
        offset=st.integers(0, 2),
    ),
)


def concrete(op: Any, written: list[tuple[str, ...]], draw_ns: int) -> Any:
    """The op to run: gets and deletes name a namespace already written to (see
    :func:`run_both`); a put's text names its item."""
    if type(op) is tuple:  # ("get", key, refresh) | ("delete", key); ops are named tuples
        if not written:
            return None
        namespace = written[draw_ns % len(written)]
        kind, key = op[:2]
        return GetOp(namespace, key, op[2]) if kind == "get" else PutOp(namespace, key, None)
    if isinstance(op, PutOp) and op.value is not None:
        # Every item's text names it: two items never tie on a query's score, since the order
        # of exact ties is set by float noise (in InMemoryStore too), not by any rule.
        text = f"{op.value['text']} {'/'.join(op.namespace)} {op.key}"
        return op._replace(value={**op.value, "text": text})
    return op


def same(expected: Any, got: Any) -> None:
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected), (expected, got)
        for e, g in zip(expected, got, strict=True):
            same(e, g)
        return
    if expected is None or isinstance(expected, tuple):
        assert got == expected
        return
    assert (got.namespace, got.key, got.value) == (expected.namespace, expected.key, expected.value)
    score = getattr(expected, "score", None)
    if score is None:
        assert getattr(got, "score", None) is None
    else:
        assert got.score == pytest.approx(score, abs=1e-5)


def run_both(
    program: list[tuple[Any, int, bool]],
) -> None:
    """Both stores run the same batches. Three artefacts of ``InMemoryStore`` are kept out of
    the programs: a get or delete only names a namespace written by an earlier batch (its
    ``defaultdict`` lists any namespace such an op touches, and orders namespaces by that
    touch); a batch holds at most one put (two puts of the same text in one batch make it
    raise: it embeds each distinct text once but counts every put); ``index=False`` is tested
    apart (an item re-put unindexed keeps its old vector there). ``InMemoryStore`` ranks a
    query search by cosine: so does a ``SolarStore`` with ``retrieval="vector"``."""
    oracle = InMemoryStore(index=index())  # type: ignore[arg-type]
    solar = SolarStore(
        index=index(),  # type: ignore[arg-type]
        capacity=None,
        seed=0,
        retrieval="vector",
    )
    written: list[tuple[str, ...]] = []  # namespaces of the batches run so far
    queued: list[tuple[str, ...]] = []
    batch: list[Any] = []

    def flush() -> None:
        same(oracle.batch(batch), solar.batch(batch))
        written.extend(ns for ns in queued if ns not in written)
        batch.clear()
        queued.clear()

    for raw, draw_ns, end in program:
        op = concrete(raw, written, draw_ns)
        if op is None:
            continue
        if isinstance(op, PutOp) and any(isinstance(b, PutOp) for b in batch):
            flush()
        batch.append(op)
        if isinstance(op, PutOp) and op.value is not None:
            queued.append(op.namespace)
        if end:
            flush()
    flush()
    final = ListNamespacesOp(limit=100)
    assert oracle.batch([final]) == solar.batch([final])
    everything = SearchOp((), limit=100)
    same(oracle.batch([everything]), solar.batch([everything]))
    solar.close()


program = st.lists(st.tuples(ops, st.integers(0, 9), st.booleans()), min_size=4, max_size=40)


@settings(max_examples=examples(200))
@given(program)
def test_unbounded_it_answers_as_in_memory_store(prog: list[tuple[Any, int, bool]]) -> None:
    run_both(prog)


@pytest.mark.slow
@settings(max_examples=examples(700))
@given(program)
def test_unbounded_it_answers_as_in_memory_store_at_length(
    prog: list[tuple[Any, int, bool]],
) -> None:
    """At least 2,000 programs in CI (the thorough profile triples the count)."""
    run_both(prog)


def test_the_convenience_methods_and_async_agree() -> None:
    store = SolarStore(index=index(), capacity=None)  # type: ignore[arg-type]
    store.put(("u", "alice"), "food", {"text": "pizza"})
    store.put(("u", "bob"), "food", {"text": "tea"})
    assert store.get(("u", "alice"), "food").value == {"text": "pizza"}  # type: ignore[union-attr]
    assert [i.key for i in store.search(("u",), query="pizza", limit=1)] == ["food"]
    assert store.list_namespaces(prefix=("u",)) == [("u", "alice"), ("u", "bob")]
    store.delete(("u", "bob"), "food")
    assert store.get(("u", "bob"), "food") is None

    async def go() -> list[Any]:
        await store.aput(("u", "carol"), "drink", {"text": "tea"})
        return [await store.aget(("u", "carol"), "drink"), await store.alist_namespaces()]

    item, spaces = asyncio.run(go())
    assert item.value == {"text": "tea"} and ("u", "carol") in spaces


def test_a_query_search_ranks_by_meaning_and_words_and_may_have_a_floor() -> None:
    store = SolarStore(index=index(), capacity=None)  # type: ignore[arg-type]
    ns = ("docs",)
    store.put(ns, "invoice", {"text": "invoice 4471 was paid on Monday"})
    store.put(ns, "weather", {"text": "sunny weather all week"})
    assert store.retrieval == "hybrid"
    found = store.search(ns, query="invoice 4471", limit=2)
    assert [i.key for i in found] == ["invoice", "weather"]  # every item, as LangGraph's
    assert found[0].score is not None and found[0].score > 1.0  # cosine + words
    floored = SolarStore(index=index(), capacity=None, min_score=1.0)  # type: ignore[arg-type]
    floored.put(ns, "invoice", {"text": "invoice 4471 was paid on Monday"})
    floored.put(ns, "weather", {"text": "sunny weather all week"})
    assert [i.key for i in floored.search(ns, query="invoice 4471")] == ["invoice"]
    assert [i.key for i in floored.search(ns)] == ["invoice", "weather"]  # no query: no floor
    with pytest.raises(ValueError, match="a number or None"):
        SolarStore(min_score="auto")  # type: ignore[arg-type]


def test_a_bounded_namespace_evicts_the_weak_and_keeps_the_pinned() -> None:
    store = SolarStore(index=index(), capacity=2, policy="fifo")  # type: ignore[arg-type]
    ns = ("user", "alice")
    store.put(ns, "name", {"text": "Alice"}, pinned=True)
    for i, word in enumerate(WORDS):
        store.put(ns, f"note{i}", {"text": word})
    keys = [i.key for i in store.search(ns, limit=10)]
    assert "name" in keys and len(keys) == 2  # the pinned item stays; one slot turns over
    assert store.last_decision is not None and store.last_decision.evicted == "note3"
    memory = store.memory(ns)
    assert memory is not None and len(memory) == 2


def test_a_search_is_a_retrieval_that_feedback_rates() -> None:
    store = SolarStore(index=index(), capacity=5, policy="solar")  # type: ignore[arg-type]
    ns = ("docs",)
    for word in WORDS[:3]:
        store.put(ns, word, {"text": word})
    hits = store.search(ns, query="pizza", limit=1)
    memory = store.memory(ns)
    assert memory is not None and memory.stats()["retrievals"] == 1
    before = memory.get(hits[0].key).policy["alpha"]
    store.feedback(like=True, retrieval=hits)
    assert memory.get(hits[0].key).policy["alpha"] == before + 1
    with pytest.raises(ValueError, match="already has feedback"):
        store.feedback(like=True, namespace=ns)  # the same search, named by its namespace


def test_a_rating_stays_in_its_namespace() -> None:
    """Alice's dislike after Bob's search rates Alice's search, never Bob's items (before: the
    store rated whichever namespace searched last)."""
    store = SolarStore(index=index(), capacity=5, policy="solar")  # type: ignore[arg-type]
    for user in ("alice", "bob"):
        for word in WORDS[:3]:
            store.put((user,), word, {"text": word})
    alice = store.search(("alice",), query="pizza", limit=1)
    bob = store.search(("bob",), query="pizza", limit=1)
    memories = {u: store.memory((u,)) for u in ("alice", "bob")}

    def posteriors(user: str) -> dict[str, dict[str, float]]:
        memory = memories[user]
        assert memory is not None
        return {i.id: dict(i.policy) for i in memory.items()}

    before = {u: posteriors(u) for u in memories}
    store.feedback(like=False, namespace=("alice",))
    assert posteriors("bob") == before["bob"]
    key = alice[0].key
    assert posteriors("alice")[key]["beta"] == before["alice"][key]["beta"] + 1
    store.feedback(like=True, retrieval=bob)
    assert posteriors("bob")[bob[0].key]["alpha"] == before["bob"][bob[0].key]["alpha"] + 1
    assert posteriors("alice")[key]["alpha"] == before["alice"][key]["alpha"]
    with pytest.raises(ValueError, match="name the search"):
        store.feedback(like=True)
    with pytest.raises(ValueError, match="no search"):
        store.feedback(like=True, namespace=("carol",))
    with pytest.raises(TypeError, match="what SolarStore.search"):
        store.feedback(like=True, retrieval=list(alice))  # type: ignore[arg-type]
    other = SolarStore(index=index(), capacity=5, policy="solar")  # type: ignore[arg-type]
    other.put(("bob",), "x", {"text": WORDS[0]})
    theirs = other.search(("bob",), query="pizza", limit=1)
    with pytest.raises(ValueError, match="another memory"):
        store.feedback(like=True, retrieval=theirs)  # another store's bob is not this one's
    other.close()
    store.close()


def test_namespaces_persist_in_a_file_and_reopen(tmp_path: Any) -> None:
    path = tmp_path / "store.db"
    store = SolarStore(path, index=index(), capacity=10)  # type: ignore[arg-type]
    store.put(("u", "alice"), "food", {"text": "pizza"})
    store.close()
    again = SolarStore(path, index=index(), capacity=10)  # type: ignore[arg-type]
    assert again.get(("u", "alice"), "food").value == {"text": "pizza"}  # type: ignore[union-attr]
    assert again.list_namespaces() == [("u", "alice")]
    again.close()


def test_unindexed_items_are_found_after_the_scored_ones() -> None:
    store = SolarStore(index=index(), capacity=None)  # type: ignore[arg-type]
    store.put(("d",), "plain", {"text": "pizza"}, index=False)
    store.put(("d",), "indexed", {"text": "tea"})
    hits = store.search(("d",), query="pizza", limit=5)
    assert [(h.key, h.score is None) for h in hits] == [("indexed", False), ("plain", True)]


def test_reads_and_deletes_never_create_a_namespace() -> None:
    store = SolarStore(index=index(), capacity=None)  # type: ignore[arg-type]
    assert store.get(("ghost",), "k") is None
    store.delete(("ghost",), "k")
    assert store.search(("ghost",)) == [] and store.list_namespaces() == []
    assert store.memory(("ghost",)) is None


def test_a_pinned_put_checks_its_namespace_as_any_put_does() -> None:
    from langgraph.store.base import InvalidNamespaceError

    store = SolarStore(index=index(), capacity=3)  # type: ignore[arg-type]
    for bad in [("users", "x.y"), ("users", ""), ()]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"text": "t"})
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"text": "t"}, pinned=True)
    assert store.list_namespaces() == []
    store.close()


def test_a_scope_of_the_store_project_made_by_hand_is_no_namespace(tmp_path: Any) -> None:
    from solar_core.persistence import MemoryStore

    path = tmp_path / "shared.db"
    with MemoryStore(str(path), embedder="hash") as store:
        store.scope(project="langgraph-store", user="alice").add("not a namespace")
    solar = SolarStore(path, index=index(), capacity=3)  # type: ignore[arg-type]
    solar.put(("users", "bob"), "k", {"text": "tea"})
    assert solar.list_namespaces() == [("users", "bob")]
    assert [i.key for i in solar.search(())] == ["k"]
    solar.close()


def test_a_like_and_a_score_that_disagree_are_refused_by_the_store() -> None:
    store = SolarStore(index=index(), capacity=5, policy="solar")  # type: ignore[arg-type]
    ns = ("docs",)
    store.put(ns, "pizza", {"text": "pizza"})
    hits = store.search(ns, query="pizza", limit=1)
    memory = store.memory(ns)
    assert memory is not None
    before = memory.get("pizza").policy
    with pytest.raises(ValueError, match="like=True and score=0.0 disagree"):
        store.feedback(like=True, score=0.0, retrieval=hits)
    assert memory.get("pizza").policy == before
    store.feedback(like=True, score=0.9, retrieval=hits)  # agreeing: rated
    assert memory.get("pizza").policy["alpha"] == before["alpha"] + 1
