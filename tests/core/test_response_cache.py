"""The scoped semantic response cache and its LangChain LLM cache."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.caches import BaseCache
from langchain_core.globals import set_llm_cache
from langchain_core.language_models import FakeListLLM
from langchain_core.outputs import Generation
from langchain_core.runnables import RunnableLambda
from langchain_tests.integration_tests import AsyncCacheTestSuite, SyncCacheTestSuite

from langchain_solar import SolarSemanticCache
from solar_core import SolarMemory
from solar_core.engine.response_cache import ResponseCache
from tests.support.profiles import examples


class TestSyncSolarCache(SyncCacheTestSuite):
    @pytest.fixture
    def cache(self) -> BaseCache:
        return SolarSemanticCache(embedder="hash")


class TestAsyncSolarCache(AsyncCacheTestSuite):
    @pytest.fixture
    async def cache(self) -> BaseCache:
        return SolarSemanticCache(embedder="hash")


def answer(text: str) -> RunnableLambda:  # type: ignore[type-arg]
    calls: list[str] = []

    def run(query: str) -> str:
        calls.append(query)
        return f"{text} #{len(calls)}"

    return RunnableLambda(run)


def test_tiers() -> None:
    cache = ResponseCache("hash", threshold=0.8)
    gen = answer("Enterprise")
    first = cache.resolve("What plan am I on?", gen)
    exact = cache.resolve("  what plan am I on ", gen)
    near = cache.resolve("What plan am I on now?", gen)  # hash cosine ~0.85 > 0.8
    far = cache.resolve("Who is my account manager?", gen)
    assert [r.tier for r in (first, exact, near, far)] == [3, 1, 2, 3]
    assert exact.response == near.response == "Enterprise #1"
    assert near.similarity is not None and near.similarity > 0.8
    assert [t["tier"] for t in cache.trace()] == [3, 1, 2, 3]


def test_a_session_with_turns_skips_the_cache_and_does_not_seed_it() -> None:
    cache = ResponseCache("hash")
    cache.resolve("What plan am I on?", lambda q: "Enterprise")
    chat = cache.resolve("What plan am I on?", lambda q: "It depends", session_turns=3)
    assert (chat.tier, chat.response) == (3, "It depends")
    assert cache.resolve("What plan am I on?", lambda q: "x").response == "Enterprise"
    cache.resolve("Only in chat", lambda q: "a", session_turns=1)
    assert cache.size() == 1


def test_disabled_cache_always_generates() -> None:
    cache = ResponseCache("hash", enabled=False)
    assert [cache.resolve("q", lambda q: "a").tier for _ in range(2)] == [3, 3]
    assert cache.size() == 0


def test_capacity_evicts_the_oldest_first() -> None:
    cache = ResponseCache("hash", capacity=3)
    for i in range(5):
        cache.store(f"question number {i} about topic {i}", f"answer {i}")
    assert cache.size() == 3
    assert cache.lookup("question number 0 about topic 0") is None
    hit = cache.lookup("question number 4 about topic 4")
    assert hit is not None and hit.response == "answer 4"


def test_the_default_cap_is_5000() -> None:
    assert ResponseCache("hash").capacity == 5000


def test_a_new_related_fact_invalidates_only_related_entries() -> None:
    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    cache = ResponseCache("hash", relate=0.3)
    alice = {"user": "alice"}
    cache.watch(memory, scope=alice)
    cache.store("What plan am I on?", "Enterprise", scope=alice)
    cache.store("What is my favourite colour?", "green", scope=alice)
    cache.store("What plan am I on?", "Free", scope={"user": "bob"})
    memory.add("I am on the Team plan now")  # lands in alice's scope
    assert cache.lookup("What plan am I on?", scope=alice) is None
    assert cache.lookup("What is my favourite colour?", scope=alice) is not None
    bob = cache.lookup("What plan am I on?", scope={"user": "bob"})
    assert bob is not None and bob.response == "Free"  # another scope: untouched


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="threshold"):
        ResponseCache("hash", threshold=1.5)
    with pytest.raises(TypeError, match="enabled"):
        ResponseCache("hash", enabled="yes")  # type: ignore[arg-type]
    cache = ResponseCache("hash")
    with pytest.raises(TypeError, match="scope"):
        cache.lookup("q", scope={"user": 3})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        cache.store("", "a")
    with pytest.raises(ValueError, match="reserved"):
        SolarSemanticCache(embedder="hash", scope={"llm": "x"})


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["alice", "bob", "carol"]), st.integers(0, 4), st.booleans()),
        min_size=1,
        max_size=30,
    )
)
def test_scopes_never_leak(ops: list[tuple[str, int, bool]]) -> None:
    cache = ResponseCache("hash", threshold=0.5)
    for user, topic, write in ops:
        scope = {"user": user}
        question = f"question about topic {topic}"
        if write:
            cache.store(question, f"{user}:{topic}", scope=scope)
        else:
            hit = cache.lookup(question, scope=scope)
            if hit is not None:
                assert str(hit.response).startswith(f"{user}:")  # never another user's answer


def test_langchain_llm_answers_from_the_cache_per_model() -> None:
    set_llm_cache(SolarSemanticCache(embedder="hash", scope={"user": "alice"}))
    try:
        a = FakeListLLM(responses=["Paris", "never"])
        assert a.invoke("Capital of France?") == "Paris"
        assert a.invoke("capital of france") == "Paris"  # tier 1, no model call
        assert a.invoke("Capital of Italy?") == "never"  # a miss calls the model
    finally:
        set_llm_cache(None)


def test_update_and_lookup_round_trip_generations() -> None:
    cache = SolarSemanticCache(embedder="hash")
    gens = [Generation(text="a"), Generation(text="b")]
    cache.update("p", "model-1", gens)
    assert cache.lookup("p", "model-1") == gens
    assert cache.lookup("p", "model-2") is None  # another model configuration


def test_response_traces_have_their_own_retention() -> None:
    now = [0.0]
    cache = ResponseCache("hash", clock=lambda: now[0], trace_retention_days=2)
    cache.resolve("first question", lambda q: "a")
    now[0] += 3 * 86_400
    cache.resolve("second question", lambda q: "b")
    assert cache.sweep_traces() == 1
    assert [t["query"] for t in cache.trace()] == ["second question"]
    assert cache.trace()[0]["at"] == now[0]


def test_the_5000_cap_holds_and_drops_the_oldest() -> None:
    cache = ResponseCache("hash")

    def q(i: int) -> str:
        return f"question number {i} about item {i} of the catalogue"

    for i in range(5001):
        assert cache.store(q(i), f"a{i}", response_text=" ")
    assert cache.size() == 5000
    assert cache.lookup(q(0)) is None
    first_kept = cache.lookup(q(1))
    assert first_kept is not None and first_kept.response == "a1"


def test_a_scope_allocates_what_it_holds_not_the_cap() -> None:
    cache = ResponseCache("hash")
    cache.store("hello", "hi", scope={"user": "a"})
    found = cache._scopes[(("user", "a"),)]
    assert found.queries.slots <= 16 and found.responses.slots <= 16


def test_watch_reaches_narrower_scopes_of_the_langchain_cache() -> None:
    lc = SolarSemanticCache(embedder="hash", scope={"user": "alice"})
    lc.responses.relate = 0.3
    lc.update("What plan am I on?", "llm-x", [Generation(text="Enterprise")])
    lc.update("What plan am I on?", "llm-y", [Generation(text="Enterprise")])
    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    lc.watch(memory)
    memory.add("I am on the Team plan now")
    assert lc.lookup("What plan am I on?", "llm-x") is None
    assert lc.lookup("What plan am I on?", "llm-y") is None


def test_a_watched_memory_still_pickles() -> None:
    import pickle

    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    ResponseCache("hash").watch(memory)
    memory.add("a fact")
    copy = pickle.loads(pickle.dumps(memory))
    assert len(copy) == 1


def test_response_text_must_be_text_and_empty_text_relates_like_its_query() -> None:
    cache = ResponseCache("hash", relate=0.3)
    with pytest.raises(TypeError, match="response_text"):
        cache.store("q", "a", response_text=123)  # type: ignore[arg-type]
    cache.store("What plan am I on?", [1, 2], response_text="")
    assert cache.learn("zebra xylophone") == 0
    assert cache.learn("I am on the Team plan now") == 1
