"""Summarise the solar-adaptive ablation (benchmarks/ablation.sh); check the default's bars.

For every workload group: the mean hit rate (LoCoMo: mean soft hit) over its settings, and how
many settings fall more than 0.01 below the best of fifo, lfu, solar and solar-a (the bar).

    python benchmarks/ablation_table.py [docs/results] > docs/results/ablation.txt
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

BASELINES = ("fifo", "lfu", "solar", "solar-a")
GROUPS = (
    ("cycling", "cycling", "hit_rate", None),
    ("working-set", "working-set", "hit_rate", None),
    ("drift", "drift", "hit_rate", None),
    ("noise-stream", "noise-stream", "hit_rate", None),
    ("locomo fb", "locomo", "score", "feedback"),
    ("locomo no fb", "locomo", "score", "no feedback"),
)


def main(folder: Path, prefix: str = "ablation-") -> str:
    table: dict[str, dict[str, tuple[float, int, int, float]]] = defaultdict(dict)
    policies: list[str] = []
    for label, workload, metric, setting in GROUPS:
        rows = [json.loads(line) for line in (folder / f"{prefix}{workload}.jsonl").open()]
        by: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
        for r in rows:
            if setting is None or r["setting"] == setting:
                by[(r["setting"], r["capacity"])][r["policy"]] = r[metric]
        for p in dict.fromkeys(r["policy"] for r in rows):
            if p not in policies:
                policies.append(p)
            values = [v[p] for v in by.values()]
            misses = [max(v[b] for b in BASELINES) - v[p] for v in by.values()]
            below = sum(m > 0.01 + 1e-9 for m in misses)
            table[p][label] = (sum(values) / len(values), below, len(values), max(misses))
    head = f"{'policy':38s}" + "".join(f"{g[0]:>22s}" for g in GROUPS)
    lines = [
        "mean over the group's settings; [n/N] = settings more than 0.01 below the best of "
        "fifo, lfu, solar, solar-a; worst = largest shortfall (negative: always ahead)",
        head,
    ]
    for p in policies:
        cells = []
        for g in GROUPS:
            mean, below, n, worst = table[p][g[0]]
            cells.append(f"{mean:8.3f} [{below}/{n}] {worst:+.3f}")
        lines.append(f"{p:38s}" + "".join(f"{c:>22s}" for c in cells))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    args = sys.argv[1:]
    folder = Path(args[0]) if args else Path("docs/results")
    prefix = args[1] if len(args) > 1 else "ablation-"
    sys.stdout.write(main(folder, prefix))
