"""Run one policy over one synthetic workload through the public :class:`SolarMemory` API."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .policy_spec import memory_for
from .workload import NO_ITEM, Workload

LAMBDA = 5.0  # paper Eq. 1: the price of one cache modification


@dataclass(frozen=True)
class RunResult:
    """Per-run metrics over the scored steps (the unit that seeds are averaged over).

    ``score`` is the set-level F1 of the top-k against the relevant items; ``cost`` is paper
    Eq. 1 over the whole run (warm-up included), ``sum(1 - score) + LAMBDA * modifications``;
    ``mean_size`` the average number of stored items during the scored steps (shows a gate that
    under-fills its cache).
    """

    hits: np.ndarray
    scores: np.ndarray
    loss: float  # sum of 1 - score over every step, scored or not
    admitted: int
    offered: int
    evicted: int
    mean_size: float
    seconds: float
    steps: int

    def metrics(self) -> dict[str, float]:
        n = len(self.hits)
        half = n // 2
        hit_rate = float(self.hits.mean()) if n else 0.0
        return {
            "hit_rate": hit_rate,
            "score": float(self.scores.mean()) if n else 0.0,
            # one scored step has no first half: report the whole, as the reference runners do
            "first_half": float(self.hits[:half].mean()) if half else hit_rate,
            "second_half": float(self.hits[half:].mean()) if n - half else 0.0,
            "store_rate": self.admitted / self.offered if self.offered else 0.0,
            "modifications": float(self.admitted),
            "evictions": float(self.evicted),
            "cost": self.loss + LAMBDA * self.admitted,
            "mean_size": self.mean_size,
            "us_per_step": 1e6 * self.seconds / self.steps if self.steps else 0.0,
        }


def set_f1(retrieved: list[str], relevant: frozenset[str]) -> float:
    """F1 of the retrieved ids as a set against the relevant ids (0 when either is empty).

    >>> set_f1(["a", "x", "y"], frozenset({"a", "b"}))
    0.4
    """
    tp = len(relevant.intersection(retrieved))
    if tp == 0:
        return 0.0
    precision, recall = tp / len(set(retrieved)), tp / len(relevant)
    return 2 * precision * recall / (precision + recall)


def run(
    workload: Workload, policy: str, capacity: int | None, seed: int, *, k: int = 3
) -> RunResult:
    """Replay ``workload`` against a fresh ``SolarMemory(policy, capacity, seed=seed)``.

    Each step retrieves for the step's query (a retrieval event the policy learns from), scores
    the hit, then offers the step's item under its workload id; an item that is still stored is
    a re-offer (nothing stored, the step still ends), as in the reference runners. Prefill items
    go through admission like any other. No like/dislike: these workloads have no feedback.

    >>> from solar_bench.generators import cycling
    >>> r = run(cycling(10, seed=42), "fifo", 10, seed=42)
    >>> round(r.metrics()["hit_rate"], 2), r.admitted
    (0.9, 100)
    """
    memory = memory_for(policy, capacity=capacity, dim=workload.dim, k=k, seed=seed, trace_size=1)
    ids, items = workload.item_ids, workload.items
    for i in workload.prefill:
        memory.add(ids[i], embedding=items[i], item_id=ids[i])
    relevant = [frozenset(r) for r in workload.relevant]
    stream = workload.stream.tolist()
    scored = workload.warmup
    hits = np.zeros(workload.steps - scored)
    scores = np.zeros(workload.steps - scored)
    size_sum, loss = 0, 0.0
    start = time.perf_counter()
    for t, query in enumerate(workload.queries):
        got = [h.id for h in memory.retrieve(embedding=query)]
        f1 = set_f1(got, relevant[t])
        loss += 1.0 - f1
        if t >= scored:
            hits[t - scored] = not relevant[t].isdisjoint(got)
            scores[t - scored] = f1
            size_sum += len(memory)
        item = stream[t]
        if item != NO_ITEM:
            memory.add(ids[item], embedding=items[item], item_id=ids[item])
    seconds = time.perf_counter() - start
    stats = memory.stats()
    return RunResult(
        hits,
        scores,
        loss,
        stats["admitted"],
        workload.offered,
        stats["evicted"],
        size_sum / len(hits) if len(hits) else 0.0,
        seconds,
        workload.steps,
    )
