"""Check the bars the default policy must meet, from ``solar-bench`` and adapter-benchmark results.

Reads ``cycling``, ``working-set``, ``drift``, ``noise-static``, ``noise-stream`` and ``locomo``
(``<name>.jsonl`` in the folder, as ``benchmarks/reproduce.sh`` writes them), and when present
``latency.jsonl``, ``adapters-locomo.jsonl`` (LangChain) and ``adapters-llamaindex.jsonl``. One
line per bar and setting, then a count. The bars:

- every synthetic setting: candidate >= best of fifo, lfu, solar, solar-a - 0.01;
- cycling, every m/K: candidate >= 0.95 x the protocol's ceiling
  ``(cycles - 1) / cycles * min(1, K / m)``. Every step is scored and a topic's query comes before
  its first item, so no hit is possible in the first cycle, and each slot can serve at most one
  query per cycle after it (an item enters right after its own topic's query); a memory that
  keeps its first K items and never changes attains the ceiling (``cycling_ceiling.py``);
- LoCoMo (judge it on the 30-seed run, ``--locomo``), both settings: candidate >= best - 0.01 at
  K = 20, 50, 100, and >= FIFO at K = 10;
- every adapter-benchmark cell: the adapter over the candidate >= the same adapter over a FIFO
  inner memory of the same capacity - 0.01, and > the plain window (``ChatMemoryBuffer``) at the
  same prompt budget;
- latency, K = 100, d = 384: median step <= 2 x ``fifo``'s, in the same run.

    python benchmarks/policy_bars.py [docs/results] [--candidate NAME] [--locomo FILE] [--misses]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

BASELINES = ("fifo", "lfu", "solar", "solar-a")
SYNTHETIC = ("cycling", "working-set", "drift", "noise-static", "noise-stream")
CYCLES = 10  # the cycling protocol runs T = 10 m steps: ten laps over the m topics
CEILING_SHARE = 0.95
ADAPTERS = {"adapters-locomo": "window", "adapters-llamaindex": "buffer"}


def load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.open() if line.strip()]


def ceiling(setting: str) -> float:
    """The cycling protocol's best possible hit rate at ``m/K=<ratio>``."""
    ratio = float(setting.split("=")[1])
    return (CYCLES - 1) / CYCLES * min(1.0, 1.0 / ratio)


def check(folder: Path, candidate: str, locomo: Path | None = None) -> tuple[list[str], int, int]:
    lines: list[str] = []
    met = total = 0

    def bar(ok: bool, text: str) -> None:
        nonlocal met, total
        total += 1
        met += ok
        lines.append(f"{'met ' if ok else 'MISS'}  {text}")

    for workload in (*SYNTHETIC, "locomo"):
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
            if workload == "locomo" and k == 10:
                fifo = scores["fifo"]
                bar(ours >= fifo, f"{where} {ours:.3f} vs fifo {fifo:.3f}")
            elif workload != "locomo" or k in (20, 50, 100):
                bar(
                    ours >= scores[best] - 0.01,
                    f"{where} {ours:.3f} vs best-0.01 ({best} {scores[best]:.3f})",
                )
            if workload == "cycling":
                top = ceiling(setting)
                bar(
                    ours >= CEILING_SHARE * top,
                    f"{where} {ours:.3f} vs {CEILING_SHARE} x ceiling {top:.3f}",
                )
    for name, plain in ADAPTERS.items():
        check_adapters(folder / f"{name}.jsonl", name, plain, candidate, bar, lines)
    latency = folder / "latency.jsonl"
    if latency.is_file():
        med = {
            r["policy"]: r["us_per_step"]
            for r in load(latency)
            if r.get("capacity") == 100 and r.get("dim") == 384 and "policy" in r
        }
        if candidate in med and "fifo" in med:
            ratio = med[candidate] / med["fifo"]
            bar(ratio <= 2.0, f"latency      K=100 d=384  {ratio:.3f} x fifo median (bar 2.00)")
    return lines, met, total


def check_adapters(
    path: Path, name: str, plain: str, candidate: str, bar: Any, lines: list[str]
) -> None:
    """The adapter rows of ``path``: over ``candidate`` vs over ``fifo`` and vs ``plain``."""
    if not path.is_file():
        lines.append(f"----  {name}: no results in {path}")
        return
    rows = load(path)
    for r in rows:
        if r.get("memory") != candidate or r.get("setting") not in ("feedback", "no feedback"):
            continue
        budget = r.get("budget") or r.get("token_limit")
        same = [
            o
            for o in rows
            if (o.get("budget") or o.get("token_limit")) == budget
            and o.get("setting") in (r["setting"], "either")
        ]
        fifo = [
            o["score"]
            for o in same
            if o["memory"] == "fifo"
            and o.get("capacity") == r.get("capacity")
            and o.get("recall_token_ratio") == r.get("recall_token_ratio")
        ]
        window = [o["score"] for o in same if o["memory"] == plain]
        if not fifo or not window:
            continue
        ratio = r.get("recall_token_ratio")
        where = f"{name:19s} {r['setting']:11s} B={budget:<4d} C={r.get('capacity')}" + (
            "" if ratio is None else f" r={ratio}"
        )
        ours = r["score"]
        bar(ours >= fifo[0] - 0.01, f"{where} {ours:.3f} vs fifo-0.01 ({fifo[0]:.3f})")
        bar(ours > window[0], f"{where} {ours:.3f} vs {plain} {window[0]:.3f}")


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
