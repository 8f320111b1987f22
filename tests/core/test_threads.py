"""Thread safety: many threads driving one shared memory lose, duplicate or corrupt nothing.

Four workers each run a few hundred retrieve / feedback / add calls on the same memory while an
inspector thread reads it. Feedback may legitimately fail when another thread's retrieval or
feedback came in between (the memory rates its *latest* retrieval); nothing else may raise.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from solar_core import PRESETS, Decision, HashEmbedder, SolarMemory, available_policies
from tests.support.memories import topic_vectors, unit

WORKERS = 4
CALLS = 300  # steps per worker
DIM = 32
# Feedback that raced with another thread: "already has feedback" (someone rated the latest
# retrieval first) or "call retrieve() first" (cannot happen after a retrieve, but is harmless).
BENIGN_FEEDBACK_ERRORS = (
    "this retrieval already has feedback",
    "feedback() rates a retrieval: call retrieve() first",
)


@contextmanager
def fast_thread_switching() -> Iterator[None]:
    """Switch threads every 10 microseconds instead of every 5 ms, so that calls interleave."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(old)


def worker(
    memory: SolarMemory, wid: int, use_text: bool
) -> Callable[[], tuple[list[Decision], list[str]]]:
    """A thread body: CALLS agent steps; returns the decisions and the explicit ids it used."""
    rng = np.random.default_rng(100 + wid)
    centres, items = topic_vectors(4, CALLS, dim=DIM, seed=wid)

    def body() -> tuple[list[Decision], list[str]]:
        decisions: list[Decision] = []
        explicit: list[str] = []
        for i in range(CALLS):
            topic = int(rng.integers(4))
            if use_text and i % 2:
                hits = memory.retrieve(f"worker {wid} question about topic {topic}", k=3)
            else:
                query = unit(centres[topic] + rng.normal(scale=0.2, size=DIM))
                hits = memory.retrieve(embedding=query, k=int(rng.integers(1, 5)))
            assert len({h.id for h in hits}) == len(hits)
            if rng.random() < 0.7:
                try:
                    if rng.random() < 0.5:
                        memory.feedback(like=bool(rng.random() < 0.5))
                    else:
                        memory.feedback(score=float(rng.random()))
                except ValueError as exc:
                    if str(exc) not in BENIGN_FEEDBACK_ERRORS:
                        raise
            text = f"worker {wid} step {i}: a fact about topic {topic}"
            item_id = f"w{wid}-{i}" if i % 3 == 0 else None  # explicit ids mixed with generated
            if item_id is not None:
                explicit.append(item_id)
            if use_text and i % 2:
                decision = memory.add(text, metadata={"w": wid, "i": i}, item_id=item_id)
            else:
                decision = memory.add(
                    text, embedding=items[topic, i], metadata={"w": wid, "i": i}, item_id=item_id
                )
            if item_id is not None and decision.admitted:
                assert decision.item_id == item_id
            decisions.append(decision)
        return decisions, explicit

    return body


def run_threads(memory: SolarMemory, use_text: bool) -> tuple[list[Decision], list[str]]:
    """Run the workers and one inspector concurrently; re-raise anything any thread raised."""
    bodies = [worker(memory, wid, use_text) for wid in range(WORKERS)]
    results: dict[int, tuple[list[Decision], list[str]]] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(WORKERS + 1)
    done = threading.Event()

    def run(wid: int) -> None:
        try:
            start.wait()
            results[wid] = bodies[wid]()
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    def inspect() -> None:
        try:
            start.wait()
            while True:  # at least once, then until the workers are done
                finished = done.is_set()
                memory.check_invariants()
                stats = memory.stats()  # one consistent snapshot
                assert stats["admitted"] - stats["evicted"] - stats["removed"] == stats["size"]
                assert stats["admitted"] + stats["rejected"] == stats["steps"]
                assert memory.capacity is None or stats["size"] <= memory.capacity
                ids = [item.id for item in memory.items()]
                assert len(ids) == len(set(ids))
                if finished:
                    break
                time.sleep(0.001)  # leave the workers most of the lock
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(wid,)) for wid in range(WORKERS)]
    inspector = threading.Thread(target=inspect)
    with fast_thread_switching():
        for thread in [*threads, inspector]:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        done.set()
        inspector.join(timeout=120)
    assert not any(t.is_alive() for t in [*threads, inspector]), "a thread hung"
    if errors:
        raise errors[0]
    assert sorted(results) == list(range(WORKERS))
    decisions = [d for wid in range(WORKERS) for d in results[wid][0]]
    explicit = [i for wid in range(WORKERS) for i in results[wid][1]]
    return decisions, explicit


def check_counters(memory: SolarMemory, decisions: list[Decision]) -> None:
    stats = memory.stats()
    total = WORKERS * CALLS
    assert stats["steps"] == total and stats["retrievals"] == total
    assert stats["admitted"] == sum(d.admitted for d in decisions)
    assert stats["rejected"] == sum(not d.admitted for d in decisions)
    assert stats["evicted"] == sum(d.evicted is not None for d in decisions)
    assert stats["removed"] == 0
    assert stats["admitted"] - stats["evicted"] == len(memory)
    # Each step number was handed out exactly once.
    assert sorted(d.step for d in decisions) == list(range(1, total + 1))


@pytest.mark.parametrize("use_text", [False, True], ids=["embeddings", "hash-text"])
def test_unbounded_fifo_keeps_every_item_exactly_once(use_text: bool) -> None:
    memory = SolarMemory("fifo", capacity=None, embedder=HashEmbedder(dim=DIM), seed=0)
    decisions, explicit = run_threads(memory, use_text)
    memory.check_invariants()
    assert all(d.admitted and d.evicted is None for d in decisions)
    ids = [item.id for item in memory.items()]
    assigned = [d.item_id for d in decisions]
    assert len(ids) == len(set(ids)) == WORKERS * CALLS == len(memory)
    assert len(set(assigned)) == len(assigned), "two adds got the same id"
    assert sorted(ids) == sorted(assigned)  # type: ignore[arg-type]
    assert set(explicit) <= set(ids)
    # Every item is intact: text and metadata belong together.
    for item in memory.items():
        assert item.text.startswith(f"worker {item.metadata['w']} step {item.metadata['i']}:")
    check_counters(memory, decisions)


BOUNDED = [p for p in available_policies() if not PRESETS[p].unbounded]


@pytest.mark.parametrize("policy", BOUNDED)
def test_bounded_memory_stays_consistent_under_threads(policy: str) -> None:
    memory = SolarMemory(policy, capacity=25, embedder=HashEmbedder(dim=DIM), seed=0)
    decisions, _ = run_threads(memory, use_text=True)
    memory.check_invariants()
    ids = [item.id for item in memory.items()]
    assert len(ids) == len(set(ids)) == len(memory) <= 25
    admitted = [d.item_id for d in decisions if d.admitted]
    evicted = [d.evicted for d in decisions if d.evicted is not None]
    assert len(set(admitted)) == len(admitted), "two admitted items got the same id"
    assert len(set(evicted)) == len(evicted), "an item was evicted twice"
    assert set(evicted) <= set(admitted)
    assert set(ids) == set(admitted) - set(evicted)
    assert evicted, "the memory never filled up: eviction was not exercised"
    for item in memory.items():
        assert item.text.startswith(f"worker {item.metadata['w']} step {item.metadata['i']}:")
    check_counters(memory, decisions)


def test_each_thread_rates_its_own_retrieval_through_the_handle() -> None:
    """With ``feedback(retrieval=hits)`` concurrent sessions never rate each other's retrievals."""
    dim, per_thread = 16, 4
    memory = SolarMemory("solar-e", capacity=None, dim=dim, seed=0)
    axes = np.eye(dim, dtype=np.float32)
    for t in range(per_thread):  # one item per thread, on its own axis
        memory.add(f"item {t}", embedding=axes[t], item_id=f"i{t}")
    errors: list[BaseException] = []

    def session(t: int, like: bool) -> None:
        try:
            for _ in range(200):
                hits = memory.retrieve(embedding=axes[t], k=1)
                memory.feedback(like=like, retrieval=hits)  # never the other thread's retrieval
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(t, t % 2 == 0)) for t in range(per_thread)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for t in range(per_thread):
        post = memory.get(f"i{t}").policy
        # 200 retrievals each: alpha = 2 + 200 (+200 likes); beta = 1 (+200 dislikes) + idle
        # decay (+0.05 on at most 160 of the 800 retrievals: < 8)
        if t % 2 == 0:
            assert post["alpha"] == 402.0 and post["beta"] < 9.0
        else:
            assert post["alpha"] == 202.0 and 201.0 <= post["beta"] < 209.0
    memory.check_invariants()
