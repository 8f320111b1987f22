"""Per-step latency of each policy, embedding excluded.

One step = retrieve (top-3) + feedback + add, on precomputed unit vectors, with the memory
already full. Policies are measured side by side in interleaved rounds, so machine noise hits
them alike; the report gives the median and p99 per step and each policy's ratio to FIFO.

    python benchmarks/latency.py --capacity 100 --dim 384 --steps 2000 --rounds 5
"""

from __future__ import annotations

import argparse
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


def time_policy(
    policy: str, capacity: int, items: np.ndarray, queries: np.ndarray, warmup: int, steps: int
) -> list[float]:
    """Microseconds per step for ``steps`` steps after ``warmup`` untimed ones."""
    dim = items.shape[1]
    # Gated policies would reject most of the prefill and be timed on a half-empty memory:
    # let their bootstrap run to full capacity, so every policy is timed on a full memory.
    params = {"bootstrap": capacity} if PRESETS[policy].admission is RegretGate else {}
    memory = SolarMemory(policy, capacity=capacity, dim=dim, seed=0, **params)
    for i in range(capacity):  # fill the memory first: steady state, evictions possible
        memory.add(f"prefill {i}", embedding=items[i])
    out = []
    clock = time.perf_counter
    for t in range(warmup + steps):
        i = capacity + t
        start = clock()
        memory.retrieve(embedding=queries[i], k=3)
        memory.feedback(score=0.5)
        memory.add("experience", embedding=items[i])
        if t >= warmup:
            out.append((clock() - start) * 1e6)
    if len(memory) != capacity and PRESETS[policy].unbounded is False:
        raise RuntimeError(f"{policy}: memory not full ({len(memory)}/{capacity})")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--capacity", type=int, default=100)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--policies", default=",".join(p for p in available_policies()))
    args = parser.parse_args(argv)
    policies = args.policies.split(",")
    n = args.capacity + args.warmup + args.steps
    items, queries = make_stream(n, args.dim, topics=20, seed=42)
    samples: dict[str, list[float]] = {p: [] for p in policies}
    for _ in range(args.rounds):  # interleave policies so noise is shared
        for p in policies:
            samples[p] += time_policy(p, args.capacity, items, queries, args.warmup, args.steps)
    base = statistics.median(samples["fifo"]) if "fifo" in samples else None
    print(f"K={args.capacity} d={args.dim} steps={args.steps}x{args.rounds} (embedding excluded)")
    print(f"{'policy':<10} {'median us':>10} {'p99 us':>10} {'x fifo':>8}")
    for p in policies:
        xs = sorted(samples[p])
        med = statistics.median(xs)
        p99 = xs[int(0.99 * (len(xs) - 1))]
        ratio = f"{med / base:8.2f}" if base else "       -"
        print(f"{p:<10} {med:10.1f} {p99:10.1f} {ratio}")


if __name__ == "__main__":
    main()
