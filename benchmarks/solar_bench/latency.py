"""Per-step latency of each policy (embedding excluded) and the embedder's throughput.

One step = ``retrieve`` (top-3) + ``feedback`` + ``add`` on precomputed unit vectors, with every
memory full before timing starts. The policies take turns in short blocks (50 consecutive steps
each, in a shuffled order every round): within a block a memory runs warm, as inside one agent,
and a burst of machine noise, which lasts far longer than a block, hits every policy alike. So the
ratio to FIFO is trustworthy on a shared, noisy machine even when absolute times drift.

With ``retrievals`` beyond ``"vector"``, every policy also runs once per ranking in the same
rotation: each item and query then has a text too (a dozen words, most from its topic's own
vocabulary, the rest common to all), and the step retrieves with the query's text and vector.
``x_vector`` is a row's time over the same policy's vector-only step, measured side by side.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.engine.memory import SolarMemory
from solar_core.policies.admission import RegretGate
from solar_core.policies.presets import PRESETS

from .policy_spec import deletion_for, parse_policy, policy_name, split_params

F32 = npt.NDArray[np.float32]


def make_stream(n: int, dim: int, topics: int, seed: int) -> tuple[F32, F32]:
    """``n`` item and query unit vectors around ``topics`` random centres."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(topics, dim)).astype(np.float32)
    pick = rng.integers(0, topics, size=n)
    items = centres[pick] + rng.normal(scale=0.3, size=(n, dim)).astype(np.float32)
    queries = centres[pick] + rng.normal(scale=0.3, size=(n, dim)).astype(np.float32)
    items /= np.linalg.norm(items, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return items, queries


def stream_topics(n: int, dim: int, topics: int, seed: int) -> list[int]:
    """The topic :func:`make_stream` gives each of its ``n`` items (the same draws)."""
    rng = np.random.default_rng(seed)
    rng.normal(size=(topics, dim))
    picked: list[int] = rng.integers(0, topics, size=n).tolist()
    return picked


def make_texts(
    topic_of: Sequence[int], topics: int, seed: int, words: int = 12
) -> tuple[list[str], list[str]]:
    """An item text and a query text of each topic in ``topic_of``: two thirds of each
    text's words from its topic's 40, the rest from 400 common ones.

    >>> items, queries = make_texts([0, 2], 3, seed=0)
    >>> len(items[0].split()), len(queries[0].split())
    (12, 6)
    """
    rng = np.random.default_rng(seed)
    own = [[f"t{t}w{j}" for j in range(40)] for t in range(topics)]
    common = [f"c{j}" for j in range(400)]

    def text(topic: int, length: int) -> str:
        mine = rng.choice(own[topic], size=2 * length // 3)
        rest = rng.choice(common, size=length - len(mine))
        return " ".join([*mine.tolist(), *rest.tolist()])

    return [text(t, words) for t in topic_of], [text(t, words // 2) for t in topic_of]


def full_memory(
    policy: str, capacity: int, items: F32, texts: Sequence[str] | None = None, **extra: Any
) -> SolarMemory:
    """A memory of ``policy`` holding ``capacity`` items (steady state: evictions possible);
    ``texts``: the items' texts (else a placeholder each); ``extra``: more memory settings."""
    # A gated policy would reject most of the prefill and be timed on a half-empty memory: let
    # its bootstrap run to full capacity, so every policy is timed on a full memory.
    name, params = parse_policy(policy)
    deletion = deletion_for(params)
    params, _ = split_params(params)
    if PRESETS[name].admission is RegretGate:
        params["bootstrap"] = capacity
    memory = SolarMemory(
        name, capacity=capacity, dim=items.shape[1], seed=0, deletion=deletion, **params, **extra
    )
    for i in range(capacity):
        memory.add(f"prefill {i}" if texts is None else texts[i], embedding=items[i])
    return memory


def step(
    memory: SolarMemory,
    query: F32,
    item: F32,
    query_text: str | None = None,
    item_text: str = "experience",
) -> float:
    """Run one full step; return its wall time in microseconds."""
    start = time.perf_counter()
    memory.retrieve(query_text, embedding=query, k=3)
    memory.feedback(score=0.5)
    memory.add(item_text, embedding=item)
    return (time.perf_counter() - start) * 1e6


def measure(
    policies: Sequence[str],
    capacity: int,
    dim: int = 384,
    steps: int = 5000,
    *,
    warmup: int = 200,
    block: int = 50,
    progress: Callable[[int], None] = lambda n: None,
    retrievals: Sequence[str] = ("vector",),
) -> list[dict[str, Any]]:
    """Median and p99 microseconds per step of each policy, measured side by side.

    >>> rows = measure(["fifo", "solar"], capacity=20, dim=16, steps=100, warmup=10)
    >>> [r["policy"] for r in rows], rows[0]["x_fifo"]
    (['fifo', 'solar'], 1.0)
    """
    total = warmup + steps
    items, queries = make_stream(capacity + total, dim, topics=20, seed=42)
    texted = list(retrievals) != ["vector"]
    item_texts: list[str] = []
    query_texts: list[str] = []
    if texted:
        topic_of = stream_topics(capacity + total, dim, topics=20, seed=42)
        item_texts, query_texts = make_texts(topic_of, 20, seed=42)
    runs = [(p, r) for r in retrievals for p in policies]
    memories = {
        (p, r): full_memory(p, capacity, items, item_texts or None, retrieval=r) for p, r in runs
    }
    samples: dict[tuple[str, str], list[float]] = {run: [] for run in runs}
    order = list(runs)
    shuffle = random.Random(0).shuffle
    for first in range(0, total, block):
        shuffle(order)  # no policy always runs first or last in a round
        for run in order:
            for t in range(first, min(first + block, total)):
                i = capacity + t
                if texted:
                    elapsed = step(
                        memories[run], queries[i], items[i], query_texts[i], item_texts[i]
                    )
                else:
                    elapsed = step(memories[run], queries[i], items[i])
                if t >= warmup:
                    samples[run].append(elapsed)
        progress(min(block, total - first))
    for (p, _), memory in memories.items():
        if not PRESETS[policy_name(p)].unbounded and len(memory) != capacity:
            raise RuntimeError(f"{p}: memory not full ({len(memory)}/{capacity})")
    rows: list[dict[str, Any]] = []
    for p, ranking in runs:
        xs = sorted(samples[p, ranking])
        rows.append(
            {
                "workload": "latency",
                "setting": f"d={dim}" if ranking == "vector" else f"d={dim} {ranking}",
                "retrieval": ranking,
                "policy": p,
                "capacity": capacity,
                "dim": dim,
                "steps": steps,
                "us_per_step": statistics.median(xs),
                "p99_us": xs[int(0.99 * (len(xs) - 1))],
            }
        )
    base = next((r["us_per_step"] for r in rows if r["policy"] == "fifo"), None)
    vector = {r["policy"]: r["us_per_step"] for r in rows if r["retrieval"] == "vector"}
    for r in rows:
        r["x_fifo"] = r["us_per_step"] / base if base else None
        if texted and r["policy"] in vector:
            r["x_vector"] = r["us_per_step"] / vector[r["policy"]]
    return rows


def embed_throughput(
    texts: Sequence[str], repeats: int = 3, batch_size: int = 64
) -> dict[str, Any]:
    """Sentences per second of the default MiniLM embedder (CPU), the median of ``repeats``."""
    from solar_core.embedders.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder(batch_size=batch_size)
    embedder.embed(list(texts[:batch_size]))  # load the model and warm up
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        embedder.embed(list(texts))
        rates.append(len(texts) / (time.perf_counter() - start))
    return {
        "workload": "latency",
        "setting": f"embed batch={batch_size}",
        "policy": "minilm",
        "capacity": None,
        "sentences_per_s": statistics.median(rates),
        "runs": rates,
    }
