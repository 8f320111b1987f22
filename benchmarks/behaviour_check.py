"""Does a change of the code leave every deterministic benchmark result as it was?

Runs the seeded benchmarks (the five synthetic workloads, the LoCoMo experience and dialogue-turn
protocols, the RegAgent study and the two adapter benchmarks) into a folder, and compares two
such folders row by row. Every field must be equal except the timings (``us_per_step``,
``us_per_turn``), which no two runs share. A refactoring is behaviour-preserving when
``compare`` prints nothing and exits 0.

    # the commit before the change, from a checkout of it:
    python benchmarks/behaviour_check.py collect /tmp/before --data LOCOMO.json
    # the commit after it:
    python benchmarks/behaviour_check.py collect /tmp/after --data LOCOMO.json
    python benchmarks/behaviour_check.py compare /tmp/before /tmp/after

``collect`` runs the checkout it lives in (its ``solar_core`` and ``solar_bench`` first on the
path, whatever the environment has installed), so one environment serves both commits.

``latency`` times the step (embedding excluded, memory full, K = 100) of two checkouts in one
run, taking turns: each repeat runs the before checkout then the after checkout (or the other
way round, alternately), each in a fresh process, and reports the median microseconds per step
of each side and the median of the per-repeat after/before ratios.

    python benchmarks/behaviour_check.py latency /path/to/before/checkout . --repeats 7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WORKLOADS = ("cycling", "working-set", "drift", "noise-static", "noise-stream")
#: fields that measure time, never equal between runs
TIMINGS = frozenset({"us_per_step", "us_per_turn"})
#: result files that hold timings only (an adapter benchmark's latency table)
TIMING_FILES = "-latency.jsonl"


def _run(argv: list[str], env: dict[str, str]) -> None:
    start = time.monotonic()
    subprocess.run(argv, check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    print(f"{' '.join(argv[1:4])}: {time.monotonic() - start:.0f} s", file=sys.stderr)


def collect(out: Path, data: Path | None) -> None:
    """Write every deterministic result file of this checkout into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["OPENBLAS_NUM_THREADS"] = env["OMP_NUM_THREADS"] = "1"
    # This checkout's packages before any installed (editable) ones.
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "benchmarks")])
    bench = [sys.executable, "-m", "solar_bench"]
    for workload in WORKLOADS:
        _run([*bench, workload, "--format", "json", "--out", str(out / f"{workload}.jsonl")], env)
    _run([*bench, "regagent", "--format", "json", "--out", str(out / "regagent.jsonl")], env)
    if data is None:
        print("no LoCoMo file given: the LoCoMo and adapter results are skipped", file=sys.stderr)
        return
    for protocol in ("locomo", "dialogue"):
        _run(
            [*bench, protocol, "--data", str(data), "--format", "json"]
            + ["--out", str(out / f"{protocol}.jsonl")],
            env,
        )
    adapters = [sys.executable, str(ROOT / "benchmarks" / "adapter_bench.py"), "--data", str(data)]
    for part in ("locomo", "llamaindex"):
        _run([*adapters, "--only", part, "--out-dir", str(out)], env)


_TIMING = """
import json, sys
from solar_bench.latency import measure
rows = measure(sys.argv[1].split(","), capacity=int(sys.argv[2]), steps=int(sys.argv[3]))
print(json.dumps({r["policy"]: r["us_per_step"] for r in rows}))
"""


def _timed(tree: Path, policies: str, capacity: int, steps: int) -> dict[str, float]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(tree), str(tree / "benchmarks")])
    argv = [sys.executable, "-c", _TIMING, policies, str(capacity), str(steps)]
    done = subprocess.run(argv, check=True, env=env, capture_output=True, text=True, cwd=tree)
    timed: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return timed


def latency(
    before: Path, after: Path, policies: str, capacity: int, steps: int, repeats: int
) -> list[dict[str, Any]]:
    """Per policy: the median step time of each checkout and the median after/before ratio."""
    runs: list[tuple[dict[str, float], dict[str, float]]] = []
    for repeat in range(repeats):
        if repeat % 2 == 0:  # neither side always runs first
            old = _timed(before, policies, capacity, steps)
            new = _timed(after, policies, capacity, steps)
        else:
            new = _timed(after, policies, capacity, steps)
            old = _timed(before, policies, capacity, steps)
        runs.append((old, new))
        print(f"repeat {repeat + 1}: before {old}, after {new}", file=sys.stderr)
    rows = []
    for policy in policies.split(","):
        olds = [old[policy] for old, _ in runs]
        news = [new[policy] for _, new in runs]
        rows.append(
            {
                "policy": policy,
                "capacity": capacity,
                "before_us": statistics.median(olds),
                "after_us": statistics.median(news),
                "ratio": statistics.median([n / o for o, n in zip(olds, news, strict=True)]),
                "repeats": repeats,
            }
        )
    return rows


def _rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows.append({k: v for k, v in row.items() if k not in TIMINGS})
    return rows


def compare(before: Path, after: Path) -> list[str]:
    """The differences between two collected folders (empty: the same behaviour)."""
    problems = []
    names = sorted(p.name for p in before.glob("*.jsonl") if not p.name.endswith(TIMING_FILES))
    if not names:
        return [f"{before} holds no result files"]
    for name in names:
        other = after / name
        if not other.exists():
            problems.append(f"{name}: missing in {after}")
            continue
        old, new = _rows(before / name), _rows(other)
        if len(old) != len(new):
            problems.append(f"{name}: {len(old)} rows before, {len(new)} after")
        for i, (a, b) in enumerate(zip(old, new, strict=False)):
            if a != b:
                keys = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
                shown = ", ".join(f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in keys[:4])
                problems.append(f"{name} row {i + 1}: {shown}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="run the deterministic benchmarks into a folder")
    c.add_argument("out", type=Path)
    c.add_argument("--data", type=Path, default=None, help="the LoCoMo JSON file")
    d = sub.add_parser("compare", help="compare two collected folders")
    d.add_argument("before", type=Path)
    d.add_argument("after", type=Path)
    t = sub.add_parser("latency", help="step time of two checkouts, side by side")
    t.add_argument("before", type=Path, help="the checkout before the change")
    t.add_argument("after", type=Path, help="the checkout after it")
    t.add_argument("--policies", default="solar-adaptive,solar,fifo")
    t.add_argument("--capacity", type=int, default=100)
    t.add_argument("--steps", type=int, default=2000)
    t.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    if args.command == "collect":
        collect(args.out, args.data)
        return 0
    if args.command == "latency":
        rows = latency(
            args.before.resolve(),
            args.after.resolve(),
            args.policies,
            args.capacity,
            args.steps,
            args.repeats,
        )
        print(f"{'policy':16} {'K':>5} {'before us':>10} {'after us':>10} {'after/before':>13}")
        for r in rows:
            print(
                f"{r['policy']:16} {r['capacity']:>5} {r['before_us']:>10.1f} "
                f"{r['after_us']:>10.1f} {r['ratio']:>13.3f}"
            )
        return 0
    problems = compare(args.before, args.after)
    for problem in problems:
        print(problem)
    if not problems:
        files = sum(not p.name.endswith(TIMING_FILES) for p in args.before.glob("*.jsonl"))
        print(f"{files} result files, every row identical (timings aside)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
