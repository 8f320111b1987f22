"""FIFO, LRU and LFU checked hit for hit against cachetools (and a tiny LFU reference).

Every step of a seeded trace drives both sides with the same events: each retrieved id is
looked up in the cachetools cache (for LRU and LFU-recency in the order our policies touch
simultaneous hits: insertion order of the items), then the offered item is stored. The sets of
stored ids must agree after every step, so every retrieval agrees too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import cachetools
import numpy as np
import pytest

from solar_core import EvictionPolicy, FifoEviction, LfuEviction, LruEviction, SolarMemory
from tests.support.memories import topic_vectors, unit

DIM = 32
SEEDS = [0, 1, 2, 3, 4, 5]


class LfuInsertionReference:
    """Evict min over (retrievals, insertion order): the SOLAR runner's LFU."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.count: dict[str, int] = {}
        self.order: dict[str, int] = {}
        self.seq = 0

    def __getitem__(self, key: str) -> None:
        self.count[key] += 1

    def __setitem__(self, key: str, value: object) -> None:
        if len(self.count) >= self.maxsize:
            victim = min(self.count, key=lambda k: (self.count[k], self.order[k]))
            del self[victim]
        self.seq += 1
        self.count[key] = 0
        self.order[key] = self.seq

    def __delitem__(self, key: str) -> None:
        del self.count[key]
        del self.order[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.count)


Event = tuple[str, Any]


def topic_trace(seed: int, steps: int = 400, single_hits: bool = False) -> Iterator[Event]:
    """Topic-structured: ("retrieve", (query, k)), ("remove", index), ("add", vector)."""
    rng = np.random.default_rng(seed)
    centres, items = topic_vectors(12, 40, dim=DIM, spread=0.15, seed=seed)
    weights = 1.0 / np.arange(1, 13) ** 1.1  # a few popular topics, a long tail
    weights /= weights.sum()
    for step in range(steps):
        topic = int(rng.choice(12, p=weights))
        if rng.random() < 0.8:
            query = unit(centres[topic] + rng.normal(scale=0.05, size=DIM))
            k = 1 if single_hits else int(rng.integers(1, 5))
            yield "retrieve", (query, k)
        if rng.random() < 0.05:
            yield "remove", int(rng.integers(1_000_000))
        yield "add", items[topic, step % 40]


def levelled_trace(seed: int, memory: SolarMemory, rounds: int = 80) -> Iterator[Event]:
    """Tie-heavy: before each add, single retrievals bring every stored item to the same
    retrieval count (in random order), then maybe one retrieval returns a random pair. Ties
    between equal counts, and between items hit together, decide most evictions.

    Reads the stored ids from ``memory`` as it goes (both sides hold the same ids).
    """
    rng = np.random.default_rng(seed)
    vectors: dict[str, np.ndarray] = {}
    count: dict[str, int] = {}
    for n in range(1, rounds + 1):
        stored = [i.id for i in memory.items()]
        if stored:
            top = max(count[i] for i in stored)
            todo = [i for i in stored for _ in range(top - count[i])]
            rng.shuffle(todo)
            for item_id in todo:
                yield "retrieve", (vectors[item_id], 1)
                count[item_id] += 1
            if len(stored) >= 2 and rng.random() < 0.6:
                a, b = (str(x) for x in rng.choice(stored, size=2, replace=False))
                yield "retrieve", (unit(vectors[a] + 0.8 * vectors[b]), 2)
                count[a] += 1
                count[b] += 1
        if rng.random() < 0.05:
            yield "remove", int(rng.integers(1_000_000))
        vectors[f"i{n}"] = unit(rng.normal(size=DIM))
        count[f"i{n}"] = 0
        yield "add", vectors[f"i{n}"]


def run(memory: SolarMemory, cache: Any, trace: Iterator[Event]) -> int:
    """Drive both with the same trace; return the number of retrieval hits seen."""
    inserted: dict[str, int] = {}  # id -> insertion number (the touch order of our policies)
    n_hits = 0
    n = 0
    for step, (kind, arg) in enumerate(trace):
        if kind == "retrieve":
            query, k = arg
            hits = [h.id for h in memory.retrieve(embedding=query, k=k)]
            n_hits += len(hits)
            for item_id in sorted(hits, key=inserted.__getitem__):
                cache[item_id]
        elif kind == "remove":
            if len(memory):
                ids = [i.id for i in memory.items()]
                gone = ids[arg % len(ids)]
                memory.remove(gone)
                del cache[gone]
        else:
            n += 1
            item_id = f"i{n}"
            before = set(cache)
            decision = memory.add(f"item {n}", embedding=arg, item_id=item_id)
            inserted[item_id] = n
            cache[item_id] = None
            assert decision.admitted
            gone = before - set(cache)
            assert {decision.evicted} - {None} == gone, f"event {step}"
        assert {i.id for i in memory.items()} == set(cache), f"event {step}"
        memory.check_invariants()
    return n_hits


POLICIES: dict[str, tuple[Callable[[], EvictionPolicy], Callable[[int], Any]]] = {
    "fifo": (FifoEviction, cachetools.FIFOCache),
    "lru": (LruEviction, cachetools.LRUCache),
    "lfu-recency": (lambda: LfuEviction(tie_break="recency"), cachetools.LFUCache),
    "lfu-insertion": (LfuEviction, LfuInsertionReference),
}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("capacity", [5, 16])
@pytest.mark.parametrize("name", list(POLICIES))
def test_hit_for_hit_on_topic_traces(name: str, capacity: int, seed: int) -> None:
    make_policy, make_cache = POLICIES[name]
    memory = SolarMemory(
        eviction=make_policy(), capacity=capacity, dim=DIM, seed=seed, repeats=False
    )
    hits = run(memory, make_cache(capacity), topic_trace(seed))
    assert hits > 100  # the trace does exercise the retrieval side
    assert memory.stats()["evicted"] > 100


@pytest.mark.parametrize("seed", SEEDS[:4])
@pytest.mark.parametrize("capacity", [3, 5])
@pytest.mark.parametrize("name", list(POLICIES))
def test_hit_for_hit_on_tie_heavy_traces(name: str, capacity: int, seed: int) -> None:
    make_policy, make_cache = POLICIES[name]
    memory = SolarMemory(
        eviction=make_policy(), capacity=capacity, dim=DIM, seed=seed, repeats=False
    )
    run(memory, make_cache(capacity), levelled_trace(seed, memory))
    assert memory.stats()["evicted"] > 60


@pytest.mark.parametrize("seed", SEEDS)
def test_lfu_recency_single_hits(seed: int) -> None:
    """k = 1: no simultaneous hits, so their touch order cannot matter."""
    memory = SolarMemory(
        eviction=LfuEviction(tie_break="recency"), capacity=8, dim=DIM, repeats=False
    )
    assert run(memory, cachetools.LFUCache(8), topic_trace(seed, single_hits=True)) > 100


@pytest.mark.parametrize("name", ["fifo", "lru", "lfu"])
def test_presets_use_the_same_policies(name: str) -> None:
    """The named presets match cachetools (LFU: the insertion reference) on one trace."""
    cache = {
        "fifo": cachetools.FIFOCache(6),
        "lru": cachetools.LRUCache(6),
        "lfu": LfuInsertionReference(6),
    }[name]
    run(SolarMemory(name, capacity=6, dim=DIM, seed=0, repeats=False), cache, topic_trace(11))


def test_the_policies_disagree_on_the_traces() -> None:
    """The traces separate the policies, so each oracle comparison above can fail."""
    for trace in ("topic", "levelled"):
        evictions = {}
        for name in ["fifo", "lru", "lfu"]:
            memory = SolarMemory(name, capacity=5, dim=DIM, seed=0, repeats=False)
            events = topic_trace(0, 200) if trace == "topic" else levelled_trace(0, memory, 60)
            n = 0
            evicted = []
            for kind, arg in events:
                if kind == "retrieve":
                    memory.retrieve(embedding=arg[0], k=arg[1])
                elif kind == "add":
                    n += 1
                    evicted.append(memory.add("x", embedding=arg, item_id=f"i{n}").evicted)
            evictions[name] = tuple(evicted)
        assert len(set(evictions.values())) == 3, trace
