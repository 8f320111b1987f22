"""Databases written by earlier versions, and what those versions did next: the fixtures in
``former_stores/``, which the store-format tests open with today's code.

Each file was written by running this module from a checkout of the version it is named after::

    PYTHONPATH=. python tests/support/former_stores.py tests/support/former_stores/NAME

For every policy that version had, one scope takes :data:`BEFORE` steps and is closed (a
snapshot), is reopened and takes :data:`TAIL` more, snapshotted every :data:`SNAPSHOT_EVERY` steps
so that logged steps follow the last snapshot. The database is copied then (``NAME.sqlite``), and
the open scopes take :data:`AFTER` more steps, whose outcomes are ``NAME.json``. Today's code,
opening the copy, must take those steps exactly so: the same hits, the same scores up to float32
rounding (a dot product's last bits depend on the machine's SIMD kernels), the same items.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).with_name("former_stores")
DIM, CAPACITY, SEED = 16, 6, 7
BEFORE, TAIL, AFTER = 14, 9, 12
SNAPSHOT_EVERY = 4
T0 = 1_700_000_000.0
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()


class Clock:
    """Time that each step sets (how often a version reads its clock does not matter)."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def text(step: int) -> str:
    words = [WORDS[(step * 5 + j * 7) % len(WORDS)] for j in range(3)]
    return f"note {step}: " + " ".join(words)


def query(step: int) -> str:
    return " ".join(WORDS[(step * 3 + j) % len(WORDS)] for j in range(2))


def run(memory: Any, clock: Clock, first: int, count: int) -> list[Any]:
    """``count`` steps from step ``first``: retrieve, rate every third, add; their outcomes."""
    out: list[Any] = []
    for step in range(first, first + count):
        clock.now = T0 + 3600.0 * step
        hits = memory.retrieve(query(step), k=3)
        if step % 3 == 0 and hits:
            memory.feedback(like=step % 2 == 0)
        memory.add(text(step))
        out.append([[h.id, float(h.score)] for h in hits])
    out.append(sorted(item.id for item in memory.items()))
    return out


def store_for(path: Path, policy: str, clock: Clock, **reading: Any) -> Any:
    """The store each version opened (``reading``: today's ranking and relevance floor, which
    versions before hybrid ranking did not have: they ranked by vector alone, with no floor)."""
    from solar_core import HashEmbedder, MemoryStore

    return MemoryStore(
        str(path),
        policy=policy,
        capacity=CAPACITY,
        embedder=HashEmbedder(DIM),
        seed=SEED,
        clock=clock,
        snapshot_every=SNAPSHOT_EVERY,
        **reading,
    )


def main(prefix: str) -> None:
    from solar_core.presets import PRESETS

    db, copy = Path(prefix + ".work.sqlite"), Path(prefix + ".sqlite")
    for stale in (db, copy):
        stale.unlink(missing_ok=True)
    policies = sorted(PRESETS)
    clock = Clock()
    for policy in policies:
        store = store_for(db, policy, clock)
        run(store.scope(user=policy), clock, 0, BEFORE)
        store.close()
    stores = {policy: store_for(db, policy, clock) for policy in policies}
    scopes = {policy: store.scope(user=policy) for policy, store in stores.items()}
    for scope in scopes.values():
        run(scope, clock, BEFORE, TAIL)
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)  # the log as it is now, with the write-ahead part
    target = sqlite3.connect(copy)
    target.execute("PRAGMA journal_mode=DELETE")  # one file
    target.execute("VACUUM")
    target.close()
    expected = {policy: run(scope, clock, BEFORE + TAIL, AFTER) for policy, scope in scopes.items()}
    Path(prefix + ".json").write_text(json.dumps(expected, indent=0) + "\n")
    for leftover in db.parent.glob(db.name + "*"):
        leftover.unlink()
    os._exit(0)  # no close: the copy's scopes end in logged steps after their last snapshot


if __name__ == "__main__":
    main(sys.argv[1])
