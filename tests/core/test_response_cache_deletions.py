"""What a deletion does to the response cache: every answer that may depend on a deleted item
goes (removal, clear, expiry, a deletion policy, a forgotten or erased scope; in this process or
another), empty scopes cost nothing, and punctuation-only queries do not share a key."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from langchain_core.outputs import Generation

from langchain_solar import SolarSemanticCache
from solar_core import MemoryStore, SolarMemory
from solar_core.engine.response_cache import ResponseCache
from solar_core.policies.deletion import PeriodicDeletion
from solar_core.retrieval.item_table import ItemTable
from tests.support.clock import Clock

ALICE = {"user": "alice"}
QUESTION = "What is my locker code?"
ANSWER = "Your locker code is 4711"
DAY = 86_400.0


def cached(cache: ResponseCache, scope: dict[str, str] | None = ALICE) -> Any:
    hit = cache.lookup(QUESTION, scope=scope)
    return None if hit is None else hit.response


def watched(memory: SolarMemory, scope: dict[str, str] | None = ALICE) -> ResponseCache:
    cache = ResponseCache("hash")
    cache.watch(memory, scope=scope)
    cache.store(QUESTION, ANSWER, scope=scope)
    assert cached(cache, scope) == ANSWER
    return cache


# -- deletions in this process ----------------------------------------------------------------
def test_a_removal_drops_the_watched_scopes_answers_before_it_returns() -> None:
    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    locker = memory.add("my locker code is 4711").item_id
    assert locker is not None
    cache = watched(memory)
    cache.store("What is my favourite colour?", "green", scope=ALICE)
    cache.store(QUESTION, "Bob's answer", scope={"user": "bob"})  # another scope: untouched
    memory.remove(locker)
    assert cached(cache) is None
    assert cache.lookup("What is my favourite colour?", scope=ALICE) is None
    assert cached(cache, {"user": "bob"}) == "Bob's answer"


def test_a_removal_reaches_narrower_scopes_of_the_langchain_cache() -> None:
    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    locker = memory.add("my locker code is 4711").item_id
    assert locker is not None
    lc = SolarSemanticCache(embedder="hash", scope=ALICE)
    lc.watch(memory)
    lc.update(QUESTION, "llm-x", [Generation(text=ANSWER)])
    lc.update(QUESTION, "llm-y", [Generation(text=ANSWER)])
    memory.remove(locker)
    assert lc.lookup(QUESTION, "llm-x") is None and lc.lookup(QUESTION, "llm-y") is None


def test_clear_drops_the_answers() -> None:
    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    memory.add("my locker code is 4711")
    cache = watched(memory)
    memory.clear()
    assert cached(cache) is None


def test_lifecycle_expiry_drops_the_answers() -> None:
    clock = Clock()
    memory = SolarMemory("fifo", capacity=10, embedder="hash", clock=clock)
    memory.add("my locker code is 4711")  # a context item: 7 days to live
    cache = watched(memory)
    memory.lifecycle.decay()  # changes no item: the answer stays
    assert cached(cache) == ANSWER
    clock.now += 8 * DAY
    assert memory.lifecycle.expire() == ["m1"]
    assert cached(cache) is None


def test_a_lifecycle_run_that_expires_nothing_keeps_the_answers() -> None:
    clock = Clock()
    memory = SolarMemory("fifo", capacity=10, embedder="hash", clock=clock)
    memory.add("my locker code is 4711", category="identity")
    cache = watched(memory)
    clock.now += 8 * DAY
    memory.lifecycle.run()
    assert cached(cache) == ANSWER


def test_a_deletion_policy_deletes_and_the_answers_go() -> None:
    memory = SolarMemory(
        "fifo", capacity=None, embedder="hash", deletion=PeriodicDeletion(window=2)
    )
    memory.add("my locker code is 4711")
    memory.add("zebra xylophone quartz")
    cache = watched(memory)
    memory.add("violet umbrella")  # step 3: nothing old enough yet
    assert cached(cache) == ANSWER
    decision = memory.add("orange kettle")  # step 4: the unused items go
    assert decision.deleted
    assert cached(cache) is None


def test_an_eviction_is_a_capacity_decision_and_keeps_unrelated_answers() -> None:
    memory = SolarMemory("fifo", capacity=1, embedder="hash")
    memory.add("zebra xylophone quartz")
    cache = watched(memory)
    decision = memory.add("violet umbrella kettle")  # evicts the first item
    assert decision.evicted == "m1"
    assert cached(cache) == ANSWER


def test_subscribers_hear_deletions_with_their_reason_and_the_old_signature_works() -> None:
    clock = Clock()
    memory = SolarMemory("fifo", capacity=2, embedder="hash", clock=clock)
    stored: list[str] = []
    memory.subscribe(lambda item_id, text, vector, meta: stored.append(item_id))  # old form
    gone: list[tuple[list[str], str]] = []
    memory.subscribe(on_delete=lambda ids, reason: gone.append((list(ids), reason)))
    for text in ("a b", "c d", "e f"):
        memory.add(text)
    memory.remove("m3")
    memory.add("g h", valid_until=clock.now + 1)
    clock.now += 2
    memory.lifecycle.expire()
    memory.add("i j")
    memory.clear()
    assert stored == ["m1", "m2", "m3", "m4", "m5"]
    assert gone == [
        (["m1"], "evicted"),
        (["m3"], "removed"),
        (["m4"], "expired"),
        (["m2", "m5"], "cleared"),
    ]
    with pytest.raises(TypeError, match="callable"):
        memory.subscribe(on_delete=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="callable"):
        memory.subscribe()


def test_an_answer_generated_while_a_deletion_lands_is_not_cached() -> None:
    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    locker = memory.add("my locker code is 4711").item_id
    assert locker is not None
    cache = ResponseCache("hash")
    cache.watch(memory, scope=ALICE)

    def generate(query: str) -> str:
        memory.remove(locker)  # e.g. another thread deletes while the LLM answers
        return ANSWER

    assert cache.resolve(QUESTION, generate, scope=ALICE).tier == 3
    assert cached(cache) is None


# -- a persisted memory -----------------------------------------------------------------------
def _store(path: Path) -> MemoryStore:
    return MemoryStore(str(path), policy="fifo", capacity=5, embedder="hash")


def _other_process(path: Path, code: str) -> None:
    script = (
        textwrap.dedent(
            f"""
        from solar_core import MemoryStore
        store = MemoryStore({str(path)!r}, policy="fifo", capacity=5, embedder="hash")
        """
        )
        + textwrap.dedent(code)
        + "\nstore.close()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def alice_cached(tmp_path: Path) -> tuple[Path, MemoryStore, ResponseCache]:
    path = tmp_path / "m.db"
    store = _store(path)
    alice = store.scope(user="alice")
    alice.add("my locker code is 4711")
    alice.add("I like green tea")
    cache = store.response_cache(ALICE)
    cache.store(QUESTION, ANSWER, scope=ALICE)
    assert cached(cache) == ANSWER
    return path, store, cache


def test_a_persisted_removal_in_this_process_drops_the_answers(
    alice_cached: tuple[Path, MemoryStore, ResponseCache],
) -> None:
    _, store, cache = alice_cached
    store.scope(user="alice").remove("m1")
    assert cached(cache) is None
    store.close()


@pytest.mark.parametrize(
    "code",
    [
        'store.erase(user="alice")',
        'store.forget({"user": "alice"})',
        'store.scope(user="alice").remove("m1")',
        'store.scope(user="alice").clear()',
        'store.scope(user="alice").lifecycle.expire()',  # context items: 7 days to live
    ],
    ids=["erase", "forget", "remove", "clear", "expire"],
)
def test_a_deletion_in_another_process_drops_the_answers_before_the_next_lookup(
    alice_cached: tuple[Path, MemoryStore, ResponseCache], code: str
) -> None:
    path, store, cache = alice_cached
    if "expire" in code:  # make alice's items old enough, in the other process's clock
        code = (
            "import time\n"
            "from solar_core import MemoryStore\n"
            "store.close()\n"
            f"store = MemoryStore({str(path)!r}, policy='fifo', capacity=5, embedder='hash', "
            "clock=lambda: time.time() + 8 * 86400)\n" + code
        )
    _other_process(path, code)
    assert cached(cache) is None  # the cache this process holds
    again = store.response_cache(ALICE)  # and what the store hands out now
    assert cached(again) is None
    store.close()


def test_a_cache_of_a_forgotten_scope_caches_nothing_more_and_the_store_makes_a_new_one(
    alice_cached: tuple[Path, MemoryStore, ResponseCache],
) -> None:
    path, store, cache = alice_cached
    _other_process(path, 'store.erase(user="alice")')
    assert cached(cache) is None
    assert not cache.store(QUESTION, ANSWER, scope=ALICE)  # nothing could invalidate it now
    fresh = store.response_cache(ALICE)
    assert fresh is not cache
    assert fresh.store(QUESTION, "a new answer", scope=ALICE)
    assert cached(fresh) == "a new answer"
    store.close()


def test_another_processs_new_unrelated_fact_keeps_the_answer(
    alice_cached: tuple[Path, MemoryStore, ResponseCache],
) -> None:
    path, store, cache = alice_cached
    _other_process(path, 'store.scope(user="bob").add("zebra xylophone quartz")')
    assert cached(cache) == ANSWER
    store.close()


# -- empty scopes -----------------------------------------------------------------------------
def test_scopes_that_lose_their_last_entry_are_let_go() -> None:
    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    cache = ResponseCache("hash", relate=0.3)
    for i in range(2_500):
        cache.store(QUESTION, ANSWER, scope={"session": f"s{i}"})
        assert cache.learn("I changed my locker code", scope={"session": f"s{i}"}) == 1
    for i in range(2_500, 5_000):
        cache.watch(memory, scope={"session": f"s{i}"})  # one watch per session
        cache.store(QUESTION, ANSWER, scope={"session": f"s{i}"})
    memory.add("my locker code is 1234")
    memory.remove("m1")
    assert cache.stats()["scopes"] == 0 and cache.stats()["entries"] == 0
    assert len(cache._scopes) == 0
    # an emptied scope works as before
    cache.store(QUESTION, ANSWER, scope={"session": "s1"})
    assert cached(cache, {"session": "s1"}) == ANSWER
    assert cache.size({"session": "s1"}) == 1 and cache.stats()["scopes"] == 1


def test_capacity_eviction_of_the_only_entry_keeps_the_new_one() -> None:
    cache = ResponseCache("hash", capacity=1)
    cache.store("first question", "1", scope=ALICE)
    cache.store("second question", "2", scope=ALICE)
    assert cache.size(ALICE) == 1 and cache.lookup("second question", scope=ALICE) is not None


def test_learn_looks_only_at_the_scopes_it_reaches(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ResponseCache("hash", relate=0.3)
    for i in range(1_000):
        cache.store(QUESTION, ANSWER, scope={"user": f"u{i}", "session": "x"})
    cache.store(QUESTION, ANSWER, scope={"user": "alice", "llm": "a"})
    cache.store(QUESTION, ANSWER, scope={"user": "alice", "llm": "b"})
    looked: list[int] = []
    real = ItemTable.similarities

    def counting(self: ItemTable, *args: Any, **kwargs: Any) -> Any:
        looked.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(ItemTable, "similarities", counting)

    class NoScan(dict):  # type: ignore[type-arg]
        def items(self) -> Any:
            raise AssertionError("learn() scanned every scope")

        def values(self) -> Any:
            raise AssertionError("learn() scanned every scope")

        def __iter__(self) -> Any:
            raise AssertionError("learn() scanned every scope")

    cache._scopes = NoScan(cache._scopes)
    assert cache.learn("I changed my locker code", scope=ALICE) == 2
    assert len(looked) == 4  # queries and responses of alice's two scopes


# -- punctuation-only queries -----------------------------------------------------------------
def test_punctuation_only_queries_do_not_share_an_exact_key() -> None:
    cache = ResponseCache("hash")
    cache.store("???", "a question about nothing")
    assert cache.lookup("!!!") is None
    assert cache.lookup("...") is None
    hit = cache.lookup("???")
    assert hit is not None and hit.tier == 1
    again = cache.lookup("  ???  ")
    assert again is not None and again.tier == 1
    cache.store("!!!", "an exclamation")
    exclaimed, asked = cache.lookup("!!!"), cache.lookup("???")
    assert exclaimed is not None and exclaimed.response == "an exclamation"
    assert asked is not None and asked.response == "a question about nothing"
    # texts with letters keep their normalised key
    cache.store("What plan am I on?", "Team")
    plan = cache.lookup("  what plan am i on ")
    assert plan is not None and plan.tier == 1


def test_after_an_erase_elsewhere_the_store_hands_out_a_new_cache_at_once(
    alice_cached: tuple[Path, MemoryStore, ResponseCache],
) -> None:
    path, store, cache = alice_cached
    _other_process(path, 'store.erase(user="alice")')
    fresh = store.response_cache(ALICE)  # before any lookup on the old one
    assert fresh is not cache
    assert cached(fresh) is None and cached(cache) is None
    assert fresh.store(QUESTION, "a new answer", scope=ALICE)
    assert cached(fresh) == "a new answer"
    store.close()
