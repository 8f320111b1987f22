"""Check issue 6's bars for ``solar-adaptive`` from ``solar-bench`` JSON results.

Reads ``cycling``, ``working-set``, ``drift``, ``noise-stream`` and ``locomo`` (``<name>.jsonl``
in the folder, as ``benchmarks/reproduce.sh`` writes them) and, when present, ``latency.jsonl``.
One line per bar and setting, then a count. The bars (issue 6):

- every synthetic setting and LoCoMo K: candidate >= best of fifo, lfu, solar, solar-a - 0.01;
- LoCoMo K in {10, 20, 50}, both settings: candidate >= 1.10 x FIFO;
- cycling m/K = 5: hit rate >= 0.19. Printed beside it: the protocol's ceiling
  ``(cycles - 1) / cycles * min(1, K / m)``. Every step is scored and a topic's query comes before
  its first item, so no hit is possible in the first cycle, and each slot can serve at most one
  query per cycle after it (an item enters right after its own topic's query); a memory that keeps
  its first K items and never changes attains the ceiling (0.180 at m/K = 5);
- latency, K = 100, d = 384: median step <= 2 x the faithful ``solar`` step.

    python benchmarks/issue6_bars.py [docs/results] [--candidate NAME] [--locomo FILE] [--misses]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

BASELINES = ("fifo", "lfu", "solar", "solar-a")
WORKLOADS = ("cycling", "working-set", "drift", "noise-stream", "locomo")
CYCLES = 10  # PROTOCOLS.md section 2: T = 10 m


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.open() if line.strip()]


def check(folder: Path, candidate: str, locomo: Path | None = None) -> tuple[list[str], int, int]:
    lines: list[str] = []
    met = total = 0

    def bar(ok: bool, text: str) -> None:
        nonlocal met, total
        total += 1
        met += ok
        lines.append(f"{'met ' if ok else 'MISS'}  {text}")

    for workload in WORKLOADS:
        path = locomo if workload == "locomo" and locomo else folder / f"{workload}.jsonl"
        if not path.is_file():
            lines.append(f"----  {workload}: no results in {path}")
            continue
        metric = "score" if workload == "locomo" else "hit_rate"
        by: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
        for r in load(path):
            if "policy" in r:
                by[(r["setting"], r["capacity"])][r["policy"]] = r[metric]
        for (setting, k), scores in by.items():
            if candidate not in scores or not all(b in scores for b in BASELINES):
                continue
            ours = scores[candidate]
            best = max(BASELINES, key=scores.__getitem__)
            where = f"{workload:12s} {setting:12s} K={k:<5d}"
            bar(
                ours >= scores[best] - 0.01,
                f"{where} {ours:.3f} vs best-0.01 ({best} {scores[best]:.3f})",
            )
            if workload == "locomo" and k in (10, 20, 50):
                ratio = ours / scores["fifo"]
                bar(ratio >= 1.10, f"{where} {ratio:.2f} x fifo (bar 1.10)")
            if workload == "cycling" and setting == "m/K=5":
                ceiling = (CYCLES - 1) / CYCLES * min(1.0, 1 / 5)
                bar(ours >= 0.19, f"{where} {ours:.3f} (bar 0.19; protocol ceiling {ceiling:.3f})")
    latency = folder / "latency.jsonl"
    if latency.is_file():
        med = {
            r["policy"]: r["us_per_step"]
            for r in load(latency)
            if r.get("capacity") == 100 and r.get("dim") == 384 and "policy" in r
        }
        if candidate in med and "solar" in med:
            ratio = med[candidate] / med["solar"]
            bar(ratio <= 2.0, f"latency      K=100 d=384  {ratio:.2f} x solar median (bar 2.00)")
    return lines, met, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folder", nargs="?", type=Path, default=Path("docs/results"))
    parser.add_argument("--candidate", default="solar-adaptive")
    parser.add_argument("--locomo", type=Path, help="LoCoMo results to use instead (more seeds)")
    parser.add_argument("--misses", action="store_true", help="print only the missed bars")
    args = parser.parse_args()
    lines, met, total = check(args.folder, args.candidate, args.locomo)
    for line in lines:
        if not args.misses or not line.startswith("met"):
            print(line)
    print(f"{args.candidate}: {met} of {total} bars met")


if __name__ == "__main__":
    main()
