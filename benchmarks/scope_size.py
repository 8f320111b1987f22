"""What a stored scope costs on disk: the snapshot of a one-item memory of each policy, and a
SQLite database of many one-item users (the default policy and embedder).

    python benchmarks/scope_size.py --users 10000

Prints one JSON line: ``snapshot_bytes`` per policy (capacity 100, the default embedder's 256
dimensions, one add and one retrieval), and the database's size for ``--users`` scopes of one
item each, in all and per scope (``--snapshot-each``: each scope's state in a snapshot).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from solar_core import MemoryStore, SolarMemory
from solar_core.persistence import container
from solar_core.persistence.journal import snapshot_params
from solar_core.policies.presets import PRESETS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument(
        "--snapshot-each",
        action="store_true",
        help="close the store every 200 users, so every scope is stored as a snapshot (else "
        "most keep a log row instead: a scope evicted from the open ones after one step)",
    )
    args = parser.parse_args()
    sizes = {}
    for policy in sorted(PRESETS):
        memory = SolarMemory(policy, capacity=100, seed=0)
        memory.add("hello world")
        memory.retrieve("hello", k=3)
        sizes[policy] = len(container.dumps(snapshot_params(memory), memory.state()))
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "users.db")
        batch = 200 if args.snapshot_each else args.users
        start = time.perf_counter()
        for first in range(0, args.users, batch):
            store = MemoryStore(path, seed=0)
            for user in range(first, min(first + batch, args.users)):
                store.scope(user=f"u{user}").add(f"user {user} drinks tea")
            store.close()
        seconds = time.perf_counter() - start
        total = os.path.getsize(path)
    print(
        json.dumps(
            {
                "snapshot_bytes": sizes,
                "users": args.users,
                "snapshot_each": args.snapshot_each,
                "database_mb": round(total / 2**20, 1),
                "bytes_per_scope": round(total / args.users),
                "seconds": round(seconds, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
