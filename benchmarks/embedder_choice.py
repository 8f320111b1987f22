"""How the default embedder was chosen: load time, time per turn, a 1 MB text, weights on disk.

Each candidate of ``solar_bench.embedders`` is timed side by side in one run: its load (import
and first embedding) in a fresh process, the median time of one LoCoMo turn embedded alone
(batch 1, after a warm-up) over a sample of the dev conversations' turns, and one text of 1 MB.
Quality is measured by ``solar-bench dialogue|locomo|response-cache --embedder NAME`` (see
docs/benchmarks/default-embedder.md).

    python benchmarks/embedder_choice.py --data locomo-dev.json \\
        [--embedders static,minilm,wordllama,hash] [--turns 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from solar_bench.dialogue import distinct_texts, load_dialogues
from solar_bench.embedders import embedder_for

_LOAD = """
import time, sys
start = time.perf_counter()
from solar_bench.embedders import embedder_for
embedder = embedder_for(sys.argv[1])[0]()
embedder.embed(["Ann: I adopted a beagle named Max last week."])
print(time.perf_counter() - start)
"""


def load_seconds(name: str) -> float:
    """Import, build and embed one text, in a fresh process (the median of three)."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    times = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", _LOAD, name], capture_output=True, text=True, env=env
        )
        if out.returncode != 0:
            raise SystemExit(f"{name}: {out.stderr.strip().splitlines()[-1]}")
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def per_text_ms(name: str, texts: Sequence[str]) -> tuple[float, float]:
    """The median milliseconds of one text embedded alone, and of one 1 MB text."""
    embedder = embedder_for(name)[0]()
    embedder.embed(list(texts[:50]))  # load and warm up
    times = []
    for text in texts:
        start = time.perf_counter_ns()
        embedder.embed([text])
        times.append(time.perf_counter_ns() - start)
    big = (" ".join(texts) * 20)[:1_000_000]
    start = time.perf_counter_ns()
    embedder.embed([big])
    return statistics.median(times) / 1e6, (time.perf_counter_ns() - start) / 1e6


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--embedders", default="static,minilm,wordllama,hash")
    p.add_argument("--turns", type=int, default=2000, help="turns timed per embedder")
    p.add_argument("--out", type=Path, help="also write the rows as JSON lines")
    args = p.parse_args(argv)
    texts = distinct_texts(load_dialogues(args.data))[: args.turns]
    rows = []
    print(f"{'embedder':<14} {'load s':>7} {'ms/turn':>8} {'1 MB text ms':>13}")
    for name in args.embedders.split(","):
        load = load_seconds(name)
        turn, big = per_text_ms(name, texts)
        rows.append({"embedder": name, "load_s": load, "ms_per_turn": turn, "ms_1mb": big})
        print(f"{name:<14} {load:>7.2f} {turn:>8.3f} {big:>13.0f}", flush=True)
    if args.out is not None:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
