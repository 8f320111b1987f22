"""What reading a snapshot back before writing it costs: a stored memory's snapshot is decoded
and checked as a reopen would, and written only if that accepts it.

    python benchmarks/snapshot_check.py --capacities 100 1000 --repeats 7

For each capacity K, a ``solar`` scope (a 384-dimension hash embedder, as MiniLM's) after K +
1,000 steps (adds, recorded retrievals, ratings); prints one JSON line per K: the snapshot's
bytes and the median ms of encoding it alone (what a snapshot cost before the check) and of
encoding plus reading it back (what it costs now), over ``--repeats`` runs. The check runs once
per snapshot (every 1,000 logged steps and on close), not per step.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

from solar_core import MemoryStore
from solar_core.embedders.hash_embedder import HashEmbedder
from solar_core.persistence import container
from solar_core.persistence.journal import Journal, snapshot_params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--capacities", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    for capacity in args.capacities:
        with tempfile.TemporaryDirectory() as tmp:
            store = MemoryStore(
                os.path.join(tmp, "m.db"),
                policy="solar",
                capacity=capacity,
                embedder=HashEmbedder(dim=384),
                seed=0,
                snapshot_every=10**9,  # none while filling: timed below
            )
            memory = store.scope(user="alice")
            for i in range(capacity + 1000):
                memory.add(f"fact {i} about topic {i % 37} and thing {i * 7 % 101}")
                if i % 2 == 0:
                    memory.retrieve(f"topic {i % 37}")
                    memory.feedback(like=i % 4 == 0)
            journal = memory.runner
            assert isinstance(journal, Journal)
            encode, checked = [], []
            for _ in range(args.repeats):
                start = time.perf_counter()
                blob = container.dumps(snapshot_params(memory), memory.state())
                encode.append(time.perf_counter() - start)
                start = time.perf_counter()
                journal._snapshot_of(memory, journal.seq)  # noqa: SLF001 (what a write runs)
                checked.append(time.perf_counter() - start)
            row = {
                "capacity": capacity,
                "bytes": len(blob),
                "encode_ms": round(statistics.median(encode) * 1e3, 2),
                "encode_and_check_ms": round(statistics.median(checked) * 1e3, 2),
            }
            print(json.dumps(row), flush=True)
            store.close()


if __name__ == "__main__":
    main()
