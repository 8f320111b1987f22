"""Per-step latency of each policy (embedding excluded) and the embedder's throughput.

One step = ``retrieve`` (top-3) + ``feedback`` + ``add`` on precomputed unit vectors, with every
memory full before timing starts. The policies take turns in short blocks (50 consecutive steps
each, in a shuffled order every round): within a block a memory runs warm, as inside one agent,
and a burst of machine noise, which lasts far longer than a block, hits every policy alike. So the
ratio to FIFO is trustworthy on a shared, noisy machine even when absolute times drift.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.admission import RegretGate
from solar_core.memory import SolarMemory
from solar_core.presets import PRESETS

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


def full_memory(policy: str, capacity: int, items: F32) -> SolarMemory:
    """A memory of ``policy`` holding ``capacity`` items (steady state: evictions possible)."""
    # A gated policy would reject most of the prefill and be timed on a half-empty memory: let
    # its bootstrap run to full capacity, so every policy is timed on a full memory.
    name, params = parse_policy(policy)
    deletion = deletion_for(params)
    params, _ = split_params(params)
    if PRESETS[name].admission is RegretGate:
        params["bootstrap"] = capacity
    memory = SolarMemory(
        name, capacity=capacity, dim=items.shape[1], seed=0, deletion=deletion, **params
    )
    for i in range(capacity):
        memory.add(f"prefill {i}", embedding=items[i])
    return memory


def step(memory: SolarMemory, query: F32, item: F32) -> float:
    """Run one full step; return its wall time in microseconds."""
    start = time.perf_counter()
    memory.retrieve(embedding=query, k=3)
    memory.feedback(score=0.5)
    memory.add("experience", embedding=item)
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
) -> list[dict[str, Any]]:
    """Median and p99 microseconds per step of each policy, measured side by side.

    >>> rows = measure(["fifo", "solar"], capacity=20, dim=16, steps=100, warmup=10)
    >>> [r["policy"] for r in rows], rows[0]["x_fifo"]
    (['fifo', 'solar'], 1.0)
    """
    total = warmup + steps
    items, queries = make_stream(capacity + total, dim, topics=20, seed=42)
    memories = {p: full_memory(p, capacity, items) for p in policies}
    samples: dict[str, list[float]] = {p: [] for p in policies}
    order = list(policies)
    shuffle = random.Random(0).shuffle
    for first in range(0, total, block):
        shuffle(order)  # no policy always runs first or last in a round
        for p in order:
            for t in range(first, min(first + block, total)):
                elapsed = step(memories[p], queries[capacity + t], items[capacity + t])
                if t >= warmup:
                    samples[p].append(elapsed)
        progress(min(block, total - first))
    for p, memory in memories.items():
        if not PRESETS[policy_name(p)].unbounded and len(memory) != capacity:
            raise RuntimeError(f"{p}: memory not full ({len(memory)}/{capacity})")
    rows: list[dict[str, Any]] = []
    for p in policies:
        xs = sorted(samples[p])
        rows.append(
            {
                "workload": "latency",
                "setting": f"d={dim}",
                "policy": p,
                "capacity": capacity,
                "dim": dim,
                "steps": steps,
                "us_per_step": statistics.median(xs),
                "p99_us": xs[int(0.99 * (len(xs) - 1))],
            }
        )
    base = next((r["us_per_step"] for r in rows if r["policy"] == "fifo"), None)
    for r in rows:
        r["x_fifo"] = r["us_per_step"] / base if base else None
    return rows


def embed_throughput(
    texts: Sequence[str], repeats: int = 3, batch_size: int = 64
) -> dict[str, Any]:
    """Sentences per second of the default MiniLM embedder (CPU), the median of ``repeats``."""
    from solar_core.minilm import MiniLMEmbedder

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
