"""``solar-bench response-cache``: how often tier 2 answers, how often wrongly, and how fast.

No paraphrase data set ships with the repository, so the pairs come from LoCoMo's questions. Two
questions of one conversation form a *paraphrase pair* when they have exactly the same evidence
(the same dialogue turns answer both), and a *different pair* when their evidence is disjoint.

- **Pairs**: at each threshold, the share of paraphrase pairs whose cosine is above it (tier 2
  would serve the cached answer: a useful hit) and the share of different pairs above it (a
  false hit: an answer to another question).
- **Stream**: each conversation's questions in a seeded order go through a
  :class:`~solar_core.engine.response_cache.ResponseCache` (one scope per conversation; a miss
  stores the question). This gives the share of lookups answered at tier 2, and the share of those
  answers whose cached question has different evidence from the asked one.
- **Latency**: median microseconds of a tier-2 lookup in a cache of the conversation's
  questions, against tier 3 (a top-3 retrieval from a ``SolarMemory`` of its experiences plus
  a LangChain ``FakeListChatModel`` call). The query embedding is excluded from both: it is
  computed once either way. A real LLM call adds 0.3-5 s to tier 3.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from solar_core.engine.memory import SolarMemory
from solar_core.engine.response_cache import ResponseCache

from .locomo import Conversation

THRESHOLDS = (0.85, 0.87, 0.89, 0.91, 0.93, 0.95, 0.97)


class _Precomputed:
    """An embedder over a lookup table, so the cache never re-embeds (vectors passed in)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("the benchmark passes every vector explicitly")


def pair_rows(
    conversations: Sequence[Conversation], vector: Callable[[str], np.ndarray]
) -> list[dict[str, Any]]:
    """One row per threshold: paraphrase-pair hit rate and different-pair false-hit rate."""
    same: list[float] = []
    different: list[float] = []
    for conv in conversations:
        qs = list({qa.question: qa for qa in conv.qa}.values())
        vecs = {qa.question: vector(qa.question) for qa in qs}
        for a, b in combinations(qs, 2):
            if a.evidence == b.evidence:
                same.append(float(vecs[a.question] @ vecs[b.question]))
            elif not a.evidence & b.evidence:
                different.append(float(vecs[a.question] @ vecs[b.question]))
    s, d = np.asarray(same), np.asarray(different)
    return [
        dict(
            workload="response-cache",
            setting="pairs",
            threshold=t,
            paraphrase_pairs=len(s),
            different_pairs=len(d),
            hit_rate=float((s > t).mean()) if len(s) else float("nan"),
            false_hit_rate=float((d > t).mean()) if len(d) else float("nan"),
        )
        for t in THRESHOLDS
    ]


def stream_rows(
    conversations: Sequence[Conversation],
    vector: Callable[[str], np.ndarray],
    seeds: Sequence[int],
) -> list[dict[str, Any]]:
    """One row per threshold: tier-2 share of lookups and the false share of tier-2 answers."""
    dim = len(vector(conversations[0].qa[0].question))
    rows = []
    for t in THRESHOLDS:
        lookups = hits = false = 0
        for seed in seeds:
            for conv in conversations:
                cache = ResponseCache(_Precomputed(dim), threshold=t)
                evidence = {qa.question: qa.evidence for qa in conv.qa}
                order = list(conv.qa)
                random.Random(seed).shuffle(order)
                for qa in order:
                    v = vector(qa.question)
                    hit = cache.lookup(qa.question, vector=v)
                    lookups += 1
                    if hit is not None and hit.tier == 2:
                        hits += 1
                        assert hit.cached_query is not None
                        false += evidence[hit.cached_query] != qa.evidence
                    elif hit is None:
                        cache.store(qa.question, qa.answer, vector=v, response_text=" ")
        rows.append(
            dict(
                workload="response-cache",
                setting="stream",
                threshold=t,
                lookups=lookups,
                hit_rate=hits / lookups,
                false_share=false / hits if hits else float("nan"),
            )
        )
    return rows


def latency_rows(
    conversations: Sequence[Conversation], vector: Callable[[str], np.ndarray], rounds: int = 3
) -> list[dict[str, Any]]:
    """Median microseconds of a tier-2 lookup and of tier 3 (retrieve + fake chat model)."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    conv = max(conversations, key=lambda c: len(c.qa))
    dim = len(vector(conv.qa[0].question))
    cache = ResponseCache(_Precomputed(dim), threshold=0.95)
    memory = SolarMemory("fifo", capacity=None, dim=dim)
    for qa in conv.qa:
        cache.store(qa.question, qa.answer, vector=vector(qa.question), response_text=" ")
        memory.add(qa.experience, embedding=vector(qa.experience))
    llm = FakeListChatModel(responses=["an answer"])
    tier2: list[float] = []
    tier3: list[float] = []
    for _ in range(rounds):
        for qa in conv.qa:
            v = vector(qa.question) + 0.01  # a near-paraphrase: not the exact stored text
            start = time.perf_counter()
            cache.lookup(qa.question + " (again)", vector=v)
            tier2.append(time.perf_counter() - start)
            start = time.perf_counter()
            hits = memory.retrieve(embedding=v, k=3)
            llm.invoke("\n".join(h.text for h in hits) + "\n" + qa.question)
            tier3.append(time.perf_counter() - start)
    t2, t3 = statistics.median(tier2) * 1e6, statistics.median(tier3) * 1e6
    return [
        dict(
            workload="response-cache",
            setting="latency",
            entries=len(conv.qa),
            tier2_us=t2,
            tier3_us=t3,
            ratio=t3 / t2,
        )
    ]


def render(rows: Sequence[dict[str, Any]]) -> str:
    """The three tables as text."""
    out = ["== response-cache: LoCoMo question pairs (same evidence vs disjoint evidence) =="]
    pairs = [r for r in rows if r["setting"] == "pairs"]
    if pairs:
        out.append(
            f"paraphrase pairs {pairs[0]['paraphrase_pairs']}, "
            f"different pairs {pairs[0]['different_pairs']}"
        )
        out.append("threshold  paraphrase hit  false hit")
        for r in pairs:
            out.append(f"{r['threshold']:9.2f}  {r['hit_rate']:14.3f}  {r['false_hit_rate']:9.4f}")
    stream = [r for r in rows if r["setting"] == "stream"]
    if stream:
        out.append("")
        out.append(
            f"== stream: tier-2 share of {stream[0]['lookups']} lookups, "
            "and the share of tier-2 answers for another question =="
        )
        out.append("threshold  tier-2 hits  false share")
        for r in stream:
            out.append(f"{r['threshold']:9.2f}  {r['hit_rate']:11.3f}  {r['false_share']:11.3f}")
    for r in rows:
        if r["setting"] == "latency":
            out.append("")
            out.append(
                f"== latency ({r['entries']} cached questions, embedding excluded): tier 2 "
                f"{r['tier2_us']:.1f} us, tier 3 (retrieve + fake chat model) "
                f"{r['tier3_us']:.1f} us, {r['ratio']:.1f}x =="
            )
    return "\n".join(out) + "\n"
