"""Sentences per second of the default MiniLM embedder (batch 64, CPU), after one warm-up batch.

python benchmarks/embed_throughput.py --sentences 1000 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time

from solar_core import MiniLMEmbedder
from solar_core.demo_script import TURNS


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    # Short, realistic sentences (the demo's Q/A turns), made distinct by a counter.
    base = [f"Q: {q}\nA: {a}" for _, q, a in TURNS]
    texts = [f"{base[i % len(base)]} ({i})" for i in range(args.sentences)]
    embedder = MiniLMEmbedder(batch_size=64)
    embedder.embed(texts[:64])  # load the model and warm up
    rates = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        embedder.embed(texts)
        rates.append(args.sentences / (time.perf_counter() - start))
    runs = ", ".join(f"{r:.0f}" for r in rates)
    print(
        f"MiniLM batch 64: median {statistics.median(rates):.0f} sentences/s "
        f"over {args.repeats} runs of {args.sentences} (runs: {runs})"
    )


if __name__ == "__main__":
    main()
