"""The least a keyword index can add to a step: why hybrid steps cost ~2x vector ones.

``solar-bench latency --retrieval hybrid`` times whole steps (retrieve, feedback, add). This
times, in the same loop and on the same texts, a vector-only ``fifo`` step and beside it only
the keyword work a hybrid step cannot skip, on a bare
:class:`~solar_core.retrieval.lexical.LexicalIndex` kept as the memory's would be: the query's
words, their BM25 shares, the new item's words
indexed and the evicted item's taken out. No fusion, no bookkeeping: ``(vector + keyword) /
vector`` is a floor under what any hybrid step built on this index can cost.

    python benchmarks/keyword_costs.py [--k 100 1000] [--steps 5000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence

from solar_bench.latency import full_memory, make_stream, make_texts, stream_topics
from solar_core.retrieval.lexical import LexicalIndex, words


def measure(capacity: int, steps: int, warmup: int = 200) -> tuple[float, float, float]:
    """Median microseconds of a vector-only fifo step, of the keyword work beside it, and of
    the two summed step by step."""
    total = capacity + warmup + steps
    items, queries = make_stream(total, 384, topics=20, seed=42)
    item_texts, query_texts = make_texts(stream_topics(total, 384, topics=20, seed=42), 20, 42)
    memory = full_memory("fifo", capacity, items, item_texts, retrieval="vector")
    index = LexicalIndex()
    for slot in range(capacity):
        index.add(slot, item_texts[slot])
    vector, keyword = [], []
    for i in range(capacity, total):
        start = time.perf_counter()
        memory.retrieve(query_texts[i], embedding=queries[i], k=3)
        memory.feedback(score=0.5)
        memory.add(item_texts[i], embedding=items[i])
        middle = time.perf_counter()
        index.scores(words(query_texts[i]))
        index.remove(i - capacity)  # fifo: the oldest goes
        index.add(i, item_texts[i])
        end = time.perf_counter()
        if i >= capacity + warmup:
            vector.append(middle - start)
            keyword.append(end - middle)
    both = [a + b for a, b in zip(vector, keyword, strict=True)]
    return tuple(statistics.median(x) * 1e6 for x in (vector, keyword, both))  # type: ignore[return-value]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--k", type=int, nargs="+", default=[100, 1000])
    p.add_argument("--steps", type=int, default=5000)
    args = p.parse_args(argv)
    print("== the keyword work a hybrid step cannot skip (median us, same loop) ==")
    print("    K  vector step  keyword work  both  floor on hybrid/vector")
    for capacity in args.k:
        vector, keyword, both = measure(capacity, args.steps)
        print(f"{capacity:5d}  {vector:11.1f}  {keyword:12.1f}  {both:4.1f}  {both / vector:22.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
