"""The asyncio calls: a hundred users' turns gathered on one event loop, no cross-talk; what a
cancelled call does, and retries after timeouts that store nothing twice."""

from __future__ import annotations

import asyncio
import random
import threading
from collections import Counter
from pathlib import Path

import pytest

from solar_core import Decision, SolarMemory
from solar_core.persistence import MemoryStore
from tests.support.cancels import cancelled_while_queued

FACTS = ["my dog is called {}", "I live in {}", "my favourite tea is {}"]


async def user_turns(store: MemoryStore, user: int) -> list[str]:
    """One user's conversation: three facts, then a question about each."""
    memory = await store.ascope(user=f"u{user}")
    for fact in FACTS:
        await memory.aadd(fact.format(f"name{user}x"))
    answers = []
    for fact in FACTS:
        hits = await memory.aretrieve(fact.format(""), k=1)
        await memory.afeedback(like=True, retrieval=hits)
        answers += [hit.text for hit in hits]
    return answers


def test_a_hundred_users_gathered_never_see_each_other(tmp_path: Path) -> None:
    async def main() -> list[list[str]]:
        store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=10, embedder="hash")
        try:
            return await asyncio.gather(*(user_turns(store, u) for u in range(100)))
        finally:
            await store.aclose()

    results = asyncio.run(main())
    for user, answers in enumerate(results):
        assert len(answers) == 3
        assert all(f"name{user}x" in text for text in answers), (user, answers)


def test_the_calls_run_off_the_event_loop() -> None:
    memory = SolarMemory("fifo", 5, embedder="hash", seed=0)
    threads: list[str] = []

    def spy(text: str, **kwargs: object) -> object:
        threads.append(threading.current_thread().name)
        return SolarMemory.add(memory, text, **kwargs)  # type: ignore[arg-type]

    memory.add = spy  # type: ignore[method-assign]

    async def main() -> str:
        await memory.aadd("tea")
        await memory.aremove((await memory.aretrieve("tea", k=1))[0].id)
        await memory.aclear()
        return threading.current_thread().name

    loop_thread = asyncio.run(main())
    assert threads and threads[0] != loop_thread
    assert len(memory) == 0


# -- cancelled calls and retries --------------------------------------------------------------


def test_a_cancelled_add_still_stores_and_a_retry_with_its_id_finds_it() -> None:
    memory = SolarMemory("fifo", None, embedder="hash", seed=0)

    async def main() -> Decision:
        await cancelled_while_queued(memory.aadd("tea at five", item_id="tea"))
        return await memory.aadd("tea at five", item_id="tea")  # the retry

    retry = asyncio.run(main())  # (asyncio.run waits for the worker threads)
    assert [item.text for item in memory.items()] == ["tea at five"]
    assert (retry.admitted, retry.item_id, retry.reason) == (False, "tea", "already stored")


def test_a_cancelled_remove_still_removes() -> None:
    memory = SolarMemory("fifo", None, embedder="hash", seed=0)
    memory.add("tea at five", item_id="tea")
    asyncio.run(cancelled_while_queued(memory.aremove("tea")))
    assert len(memory) == 0


def test_a_call_cancelled_before_it_started_does_nothing() -> None:
    memory = SolarMemory("fifo", None, embedder="hash", seed=0)

    async def main() -> None:
        task = asyncio.ensure_future(memory.aadd("tea at five", item_id="tea"))
        task.cancel()  # before the loop ran it: it never reached the worker
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert len(memory) == 0


def test_a_cancelled_call_that_fails_is_not_reported_as_never_retrieved(
    caplog: pytest.LogCaptureFixture,
) -> None:
    memory = SolarMemory("fifo", None, embedder="hash", seed=0)

    async def main() -> None:
        await cancelled_while_queued(memory.aremove("not stored"))
        await asyncio.sleep(0)

    asyncio.run(main())
    assert "never retrieved" not in caplog.text


def _timeouts_and_retries(memory: SolarMemory, runs: int, seed: int) -> list[Decision]:
    """``runs`` keyed adds, each under a timeout of 0 to 1 ms, retried with the same id after a
    timeout: the decisions of the calls that returned."""
    rng = random.Random(seed)

    async def main() -> list[Decision]:
        decisions = []
        for run in range(runs):
            text, key = f"fact number {run}", f"key-{run}"
            try:
                call = memory.aadd(text, item_id=key)
                decisions.append(await asyncio.wait_for(call, timeout=rng.uniform(0, 0.001)))
            except asyncio.TimeoutError:
                decisions.append(await memory.aadd(text, item_id=key))
        return decisions

    return asyncio.run(main())


def _stored_once(memory: SolarMemory, runs: int) -> None:
    texts = Counter(item.text for item in memory.items())
    assert texts == Counter(f"fact number {run}" for run in range(runs))
    assert sorted(item.id for item in memory.items()) == sorted(f"key-{r}" for r in range(runs))


def test_retries_after_timeouts_store_each_keyed_text_once() -> None:
    memory = SolarMemory("fifo", None, embedder="hash", seed=0)
    decisions = _timeouts_and_retries(memory, 1000, seed=1)
    _stored_once(memory, 1000)
    assert all(d.admitted or d.reason == "already stored" for d in decisions)


def test_retries_after_timeouts_store_each_keyed_text_once_in_a_database(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MemoryStore(path, policy="fifo", capacity=None, embedder="hash") as store:
        memory = store.scope(user="u")
        decisions = _timeouts_and_retries(memory, 1000, seed=2)
        _stored_once(memory, 1000)
        assert all(d.admitted or d.reason == "already stored" for d in decisions)
        again = MemoryStore(path, policy="fifo", capacity=None, embedder="hash")
        try:  # another writer of the same scope: the key is in the log it reads
            retry = again.scope(user="u").add("fact number 7", item_id="key-7")
            assert retry.reason == "already stored"
        finally:
            again.close()
    with MemoryStore(path, policy="fifo", capacity=None, embedder="hash") as store:
        reopened = store.scope(user="u")
        _stored_once(reopened, 1000)
        assert reopened.add("fact number 3", item_id="key-3").reason == "already stored"
        _stored_once(reopened, 1000)


def test_two_writers_racing_the_same_keyed_adds_store_each_once(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    first = MemoryStore(path, policy="fifo", capacity=None, embedder="hash")
    second = MemoryStore(path, policy="fifo", capacity=None, embedder="hash")
    one, other = first.scope(user="u"), second.scope(user="u")

    async def main() -> list[Decision]:
        decisions: list[Decision] = []
        for run in range(200):  # the original and its retry in flight together, two writers
            text, key = f"fact number {run}", f"key-{run}"
            decisions += await asyncio.gather(
                one.aadd(text, item_id=key), other.aadd(text, item_id=key)
            )
        return decisions

    try:
        reasons = Counter(decision.reason for decision in asyncio.run(main()))
    finally:
        first.close()
        second.close()
    assert reasons == {"always": 200, "already stored": 200}
    with MemoryStore(path, policy="fifo", capacity=None, embedder="hash") as store:
        _stored_once(store.scope(user="u"), 200)
