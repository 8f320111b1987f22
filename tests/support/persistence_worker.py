"""A writer process for the crash and multi-process tests:
``python -m tests.support.persistence_worker``.

It opens a store, continues a deterministic stream of steps from wherever the scope's log
ends, and prints ``ack N`` after each step returns (N = the scope's step count), so the parent
knows which steps were acknowledged before it kills this process.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from solar_core import MemoryStore, SolarMemory

DIM = 16
CLOCK = 1_000_000.0


def crash_ops(n: int, seed: int = 0) -> list[tuple[str, Any]]:
    """``n`` interactions as steps that are each logged exactly once: retrieve, feedback on
    every third, add (unique texts), so the log's length says how far the stream got."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(8, DIM))
    ops: list[tuple[str, Any]] = []
    for i in range(n):
        v = (centres[i % 8] + rng.normal(scale=0.4, size=DIM)).astype(np.float32)
        ops.append(("retrieve", v))
        if i % 3 == 0:
            ops.append(("feedback", bool(i % 2)))
        ops.append(("add", (f"experience {i}", v, {"i": i})))
    return ops


def run_op(memory: SolarMemory, op: tuple[str, Any]) -> None:
    kind, arg = op
    # Before a scope's first write (the stream's first add) its memory records no retrieval
    # and takes no rating: a plain reference is read the same way.
    unwritten = memory.stats()["steps"] == 0
    if kind == "retrieve":
        memory.retrieve(embedding=arg, k=3, record=not unwritten)
    elif kind == "feedback" and unwritten:
        return
    elif kind == "feedback":
        # the stream's latest retrieval, named: a restarted worker did not make it itself
        memory.feedback(like=arg, retrieval=next(reversed(memory.core._recent)))
    else:
        text, v, meta = arg
        memory.add(text, embedding=v, metadata=meta)


def open_store(url: str, snapshot_every: int = 25) -> MemoryStore:
    return MemoryStore(
        url,
        policy="solar",
        capacity=20,
        dim=DIM,
        seed=3,
        clock=lambda: CLOCK,
        snapshot_every=snapshot_every,
        trace_size=100,
    )


def spawn(*args: str, module: str = "tests.support.persistence_worker") -> subprocess.Popen[str]:
    """``module`` (this one by default) as a child process (text pipes, offline), with
    ``args`` on its command line."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"},
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--interactions", type=int, default=400)
    parser.add_argument("--user", default="alice")
    parser.add_argument("--steps", type=int, default=0, help="multi-process mode: run N adds")
    parser.add_argument("--worker", type=int, default=0)
    args = parser.parse_args(argv)
    store = open_store(args.url)
    memory = store.scope(user=args.user)
    if args.steps:  # many writers on one scope: independent streams, unique texts
        rng = np.random.default_rng(args.worker)
        logged, admitted, evicted = 0, [], []
        for i in range(args.steps):
            v = rng.normal(size=DIM).astype(np.float32)
            hits = memory.retrieve(embedding=v, k=3)
            recorded = hits.retrieval_id is not None  # (none before the scope's first write)
            logged += recorded
            if i % 4 == 0:
                try:
                    # a rating of a retrieval that recorded nothing is accepted, changes nothing
                    memory.feedback(like=True, retrieval=hits)
                    logged += recorded
                except ValueError as err:
                    # A scope rates only its last 1,000 retrievals: a worker starved of the lock
                    # while the others ran 1,000 steps finds its own one expired (refused, not
                    # logged), as the persistence benchmark does. Anything else is a failure.
                    if "expired" not in str(err):
                        raise
            d = memory.add(f"w{args.worker} step {i}", embedding=v, metadata={"w": args.worker})
            logged += 1
            if d.admitted:
                admitted.append(d.item_id)
            if d.evicted:
                evicted.append(d.evicted)
        store.close()
        summary = {"logged": logged, "admitted": admitted, "evicted": evicted}
        print("done " + json.dumps(summary), flush=True)
        return 0
    journal = memory.runner
    assert journal is not None
    ops = crash_ops(args.interactions)
    out = sys.stdout
    # The ops before the first add are no steps of the scope (it is not stored yet): the log
    # holds the ops from the first add on, one step each.
    first = next(i for i, (kind, _) in enumerate(ops) if kind == "add")
    for op in ops[journal.seq + first if journal.seq else 0 :]:
        run_op(memory, op)
        out.write(f"ack {journal.seq}\n")
        out.flush()
    store.close()
    out.write("done\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
