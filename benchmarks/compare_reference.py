"""Compare our policies with the paper's reference runners on byte-identical workloads.

``docs/results/reference-runners.jsonl`` holds the hit rates of the reference implementation
(github ysunbp/SOLAR @ 8d01e934, ``synthetic_workloads/runners.py``) run on its own workload files
in its ``solar_synthetic`` data folder (one line per experiment, tag, capacity, method and seed).
Our side comes from ``solar-bench <workload> --data <solar_synthetic> --format json``, which replays
the same files. Prints one markdown table per workload: ours, reference, difference.

    python benchmarks/compare_reference.py docs/results/replay-*.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

METHOD = {"solar_e": "solar-e", "solar_a": "solar-a"}  # reference name -> preset
EXPERIMENT = {"cycling": "cycling", "working_set": "working-set", "topic_drift": "drift",
              "retrieval_noise_static": "noise-static"}  # fmt: skip


def setting_of(experiment: str, tag: str, capacity: int) -> str:
    if experiment == "cycling":
        return f"m/K={int(tag[1:]) / capacity:g}"
    if experiment == "working_set":
        return tag.removeprefix("dist")
    if experiment == "topic_drift":
        return f"phase={tag.removeprefix('plen')}"
    return "static"


def reference(path: Path) -> dict[tuple[str, str, int, str], dict[int, float]]:
    out: dict[tuple[str, str, int, str], dict[int, float]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        r = json.loads(line)
        if r["method"] == "embedder_unlimited":
            continue  # run at capacity K it is FIFO, not our "unlimited"
        key = (
            EXPERIMENT[r["experiment"]],
            setting_of(r["experiment"], r["tag"], r["capacity"]),
            r["capacity"],
            METHOD.get(r["method"], r["method"]),
        )
        out[key][r["seed"]] = r["avg_hit_rate"]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ours", type=Path, nargs="+", help="solar-bench --format json outputs")
    parser.add_argument("--reference", type=Path,
                        default=Path("docs/results/reference-runners.jsonl"))  # fmt: skip
    args = parser.parse_args(argv)
    ref = reference(args.reference)
    worst: dict[str, float] = defaultdict(float)
    for path in args.ours:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        print(f"\n{rows[0]['workload']} ({path.name}):\n")
        print("| setting | K | policy | ours | reference | ours - reference |")
        print("|---|---|---|---|---|---|")
        for row in rows:
            key = (row["workload"], row["setting"], row["capacity"], row["policy"])
            seeds = ref.get(key, {})
            if not seeds or set(row["seeds"]) != set(seeds):
                continue
            theirs = statistics.mean(seeds.values())
            diff = row["hit_rate"] - theirs
            worst[row["policy"]] = max(worst[row["policy"]], abs(diff))
            print(f"| {row['setting']} | {row['capacity']} | {row['policy']} | "
                  f"{row['hit_rate']:.3f} | {theirs:.3f} | {diff:+.3f} |")  # fmt: skip
    print("\nlargest |ours - reference| per policy: "
          + ", ".join(f"{p} {d:.3f}" for p, d in sorted(worst.items())))  # fmt: skip


if __name__ == "__main__":
    main()
