"""Per-step latency of each policy, embedding excluded.

One step = retrieve (top-3) + feedback + add, on precomputed unit vectors, with every memory full
before timing starts. The policies take turns in short blocks (50 consecutive steps each, in a
shuffled order every round): within a block a memory runs warm, as it would inside one agent,
and a burst of machine noise, which lasts far longer than a block, hits every policy alike. The
report gives each policy's median and p99 per step and its ratio to FIFO's median.

    python benchmarks/latency.py --capacity 100 --dim 384 --steps 5000
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

from solar_core import PRESETS, RegretGate, SolarMemory, available_policies


def make_stream(n: int, dim: int, topics: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(topics, dim)).astype(np.float32)
    pick = rng.integers(0, topics, size=n)
    items = centres[pick] + rng.normal(scale=0.3, size=(n, dim)).astype(np.float32)
    queries = centres[pick] + rng.normal(scale=0.3, size=(n, dim)).astype(np.float32)
    items /= np.linalg.norm(items, axis=1, keepdims=True)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    return items, queries


def full_memory(policy: str, capacity: int, items: np.ndarray) -> SolarMemory:
    """A memory of ``policy`` holding ``capacity`` items (steady state: evictions possible)."""
    # Gated policies would reject most of the prefill and be timed on a half-empty memory:
    # let their bootstrap run to full capacity, so every policy is timed on a full memory.
    params = {"bootstrap": capacity} if PRESETS[policy].admission is RegretGate else {}
    memory = SolarMemory(policy, capacity=capacity, dim=items.shape[1], seed=0, **params)
    for i in range(capacity):
        memory.add(f"prefill {i}", embedding=items[i])
    return memory


def step(memory: SolarMemory, query: np.ndarray, item: np.ndarray) -> float:
    """Run one full step; return its wall time in microseconds."""
    start = time.perf_counter()
    memory.retrieve(embedding=query, k=3)
    memory.feedback(score=0.5)
    memory.add("experience", embedding=item)
    return (time.perf_counter() - start) * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacity", type=int, default=100)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--block", type=int, default=50, help="consecutive steps per turn")
    parser.add_argument("--policies", default=",".join(available_policies()))
    args = parser.parse_args(argv)
    policies = args.policies.split(",")
    total = args.warmup + args.steps
    items, queries = make_stream(args.capacity + total, args.dim, topics=20, seed=42)
    memories = {p: full_memory(p, args.capacity, items) for p in policies}
    samples: dict[str, list[float]] = {p: [] for p in policies}
    order = list(policies)
    shuffle = random.Random(0).shuffle
    for first in range(0, total, args.block):
        shuffle(order)  # no policy always runs first or last in a round
        for p in order:
            for t in range(first, min(first + args.block, total)):
                i = args.capacity + t
                elapsed = step(memories[p], queries[i], items[i])
                if t >= args.warmup:
                    samples[p].append(elapsed)
    for p, memory in memories.items():
        if not PRESETS[p].unbounded and len(memory) != args.capacity:
            raise RuntimeError(f"{p}: memory not full ({len(memory)}/{args.capacity})")
    base = statistics.median(samples["fifo"]) if "fifo" in samples else None
    print(
        f"K={args.capacity} d={args.dim} steps={args.steps} in blocks of {args.block} "
        "(embedding excluded)"
    )
    print(f"{'policy':<10} {'median us':>10} {'p99 us':>10} {'x fifo':>8}")
    for p in policies:
        xs = sorted(samples[p])
        med = statistics.median(xs)
        p99 = xs[int(0.99 * (len(xs) - 1))]
        ratio = f"{med / base:8.2f}" if base else "       -"
        print(f"{p:<10} {med:10.1f} {p99:10.1f} {ratio}")


if __name__ == "__main__":
    main()
