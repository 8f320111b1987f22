"""Step time on dialogue turns, policies side by side: what one turn costs each memory.

The dialogue-turn protocol's stream (``solar-bench dialogue``, ``end`` mode without the
questions): for every turn of every conversation, one recorded top-5 retrieval with the turn,
then the turn is offered. Embeddings are precomputed (MiniLM, from the benchmark's cache), so
the time is the memory's alone. The policies take turns within each repeat (the order rotates
from one repeat to the next), so that noise on a shared machine hits all of them alike; the
figure is the median over every step of every repeat, and the ratio to ``fifo`` is the median
of the per-repeat ratios of medians. BLAS is held to one thread.

    python benchmarks/dialogue_steps.py --data locomo-dev.json [--k 100] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

import numpy as np  # noqa: E402

from solar_bench.dialogue import (  # noqa: E402
    Dialogue,
    Vectors,
    distinct_texts,
    load_dialogues,
    prior_kind,
)
from solar_bench.embed_cache import EmbeddingCache  # noqa: E402
from solar_bench.policy_spec import memory_for  # noqa: E402

POLICIES = ("fifo", "solar-adaptive", "solar-dialogue")


def steps(dialogues: Sequence[Dialogue], vector: Vectors, policy: str, k: int) -> list[int]:
    """Nanoseconds of each turn's retrieval plus offer, over every conversation."""
    out: list[int] = []
    clock = time.perf_counter_ns
    for d in dialogues:
        # The MiniLM prior, as a memory with the default embedder gets (timing only: which
        # conversations it was trained on does not matter here).
        extra = {"prior": "dialogue-minilm"} if prior_kind(policy, "minilm") == "minilm" else {}
        memory = memory_for(policy, capacity=k, dim=384, k=5, seed=1, trace_size=1, **extra)
        for turn in d.turns:
            v = vector(turn.text)
            start = clock()
            memory.retrieve(embedding=v)
            memory.add(turn.text, embedding=v, metadata={"dia_id": turn.dia_id})
            out.append(clock() - start)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--k", type=int, default=100, help="capacity")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--policies", default=",".join(POLICIES))
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    args = p.parse_args(argv)
    policies = [q.strip() for q in args.policies.split(",") if q.strip()]
    if "fifo" not in policies:
        raise SystemExit("dialogue_steps: the ratios are to fifo: include it in --policies")
    dialogues = [d for d in load_dialogues(args.data) if d.turns]
    from solar_core.embedders.minilm import MiniLMEmbedder

    cache = EmbeddingCache(MiniLMEmbedder, "all-MiniLM-L6-v2", args.cache_dir)
    vectors = cache.vectors(distinct_texts(dialogues))
    medians: dict[str, list[float]] = {q: [] for q in policies}
    for r in range(args.repeats):
        order = policies[r % len(policies) :] + policies[: r % len(policies)]
        for policy in order:
            medians[policy].append(
                float(np.median(steps(dialogues, vectors.__getitem__, policy, args.k))) / 1000
            )
    print(f"K = {args.k}, {len(dialogues)} conversations, {args.repeats} repeats")
    print(f"{'policy':<16} {'us/step':>8} {'/ fifo':>7}")
    for policy in policies:
        ratios = [a / b for a, b in zip(medians[policy], medians["fifo"], strict=True)]
        print(
            f"{policy:<16} {statistics.median(medians[policy]):8.1f} "
            f"{statistics.median(ratios):7.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
