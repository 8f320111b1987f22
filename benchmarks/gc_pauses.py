"""Garbage-collection pauses of a server serving many users: one ``MemoryStore`` process.

Opens ``--scopes`` scopes one after the other (``add`` one fact to each, so each is stored), in
a store keeping ``--max-open-scopes`` open: every new scope past that evicts the least recently
used one, as a server with many users does all day. Automatic garbage collection stays on with
the interpreter's default thresholds; every collection (automatic or a ``gc.collect()`` call)
is timed through ``gc.callbacks``. Reported: the collections per generation, the longest and the
median pause, the total time paused, and the run's wall time.

A memory that is a reference cycle is freed only by a collection, so a store evicting such
memories leaves them to the collector (or runs one itself); a memory without one is freed by
reference counting the moment it is let go, and the collections that remain are the
interpreter's own young-generation ones.

    OPENBLAS_NUM_THREADS=1 python benchmarks/gc_pauses.py --scopes 100000 --json
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

import argparse
import gc
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from solar_core import MemoryStore


class Pauses:
    """Every collection's pause, by generation (a ``gc.callbacks`` hook)."""

    def __init__(self) -> None:
        self.started: float | None = None
        self.pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
        self.collected: dict[int, int] = {0: 0, 1: 0, 2: 0}

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        elif self.started is not None:
            self.pauses[info["generation"]].append(time.perf_counter() - self.started)
            self.collected[info["generation"]] += info["collected"]
            self.started = None

    def summary(self) -> dict[str, Any]:
        every = [p for ps in self.pauses.values() for p in ps]
        ms = [p * 1000.0 for p in every]
        return {
            "collections": {f"gen{g}": len(ps) for g, ps in self.pauses.items()},
            "collected_objects": {f"gen{g}": n for g, n in self.collected.items()},
            "longest_ms": max(ms, default=0.0),
            "median_ms": statistics.median(ms) if ms else 0.0,
            "total_ms": sum(ms),
            "longest_ms_by_generation": {
                f"gen{g}": max(ps, default=0.0) * 1000.0 for g, ps in self.pauses.items()
            },
            "total_ms_by_generation": {
                f"gen{g}": sum(ps) * 1000.0 for g, ps in self.pauses.items()
            },
        }


def run(scopes: int, max_open: int, progress: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store = MemoryStore(
            str(Path(tmp) / "memory.db"),
            policy="solar",
            embedder="hash",
            seed=0,
            max_open_scopes=max_open,
        )
        gc.collect()  # start clean: only the run's collections are counted
        pauses = Pauses()
        gc.callbacks.append(pauses)
        start = time.perf_counter()
        try:
            for i in range(scopes):
                store.scope(user=f"u{i}").add(f"user {i} likes tea number {i % 97}")
                if progress and (i + 1) % 5000 == 0:
                    elapsed = time.perf_counter() - start
                    print(f"  {i + 1} scopes in {elapsed:.1f} s", file=sys.stderr, flush=True)
            wall = time.perf_counter() - start
        finally:
            gc.callbacks.remove(pauses)
        stored = len(store.names())
        store.close()
    result = {
        "scopes": scopes,
        "max_open_scopes": max_open,
        "stored_scopes": stored,
        "wall_s": wall,
        "ms_per_scope": wall * 1000.0 / max(scopes, 1),
        "gc_thresholds": list(gc.get_threshold()),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "python": sys.version.split()[0],
    }
    result.update(pauses.summary())
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scopes", type=int, default=100_000, help="scopes opened (default 1e5)")
    parser.add_argument(
        "--max-open-scopes", type=int, default=256, help="the store's max_open_scopes (256)"
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    if not gc.isenabled():
        gc.enable()
    result = run(args.scopes, args.max_open_scopes, not args.quiet)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"{result['scopes']:,} scopes (max_open_scopes={result['max_open_scopes']}): "
        f"{result['wall_s']:.1f} s ({result['ms_per_scope']:.2f} ms a scope)"
    )
    counts = ", ".join(f"{g}: {n}" for g, n in result["collections"].items())
    print(f"  collections: {counts}")
    print(
        f"  pauses: longest {result['longest_ms']:.1f} ms, median {result['median_ms']:.3f} ms, "
        f"total {result['total_ms']:.0f} ms"
    )
    by_gen = ", ".join(f"{g}: {ms:.1f}" for g, ms in result["longest_ms_by_generation"].items())
    print(f"  longest by generation (ms): {by_gen}; peak RSS {result['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    main()
