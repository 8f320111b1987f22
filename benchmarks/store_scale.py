"""LangGraph stores with many namespaces: ``SolarStore`` on SQLite beside ``InMemoryStore``.

A LangGraph agent keeps a namespace per user. This builds ``N`` namespaces (one item each, put
with a TTL), then times, in one namespace at a time:

- ``search`` (``query=``, limit 5) in a namespace just used (*warm*: its memory is open) and in
  a namespace picked at random (*cold*: for ``SolarStore`` it is read from the database unless
  it is among the ``max_open_scopes`` kept open);
- ``put`` of a new key into a random namespace (an item more in that namespace);
- ``get`` of a stored key in a random namespace;

and, for ``SolarStore``, a TTL sweep: the clock moves past the deadline of the items of 1 % of
the namespaces, ``sweep_ttl`` runs in a thread, and the main thread keeps making ``get`` +
``search`` calls in random namespaces meanwhile. Reported: the sweep's time, and the 99th
percentile, longest and number over 50 ms of those calls, beside as many calls made right after
with no sweep (a shared host's stalls and the garbage collections of evicted memories show in
both). Then the database's bytes per namespace and the process's resident memory. A full
garbage collection scans every object of the process, the libraries' included (about 100 ms
here): ``--freeze`` calls ``gc.freeze()`` once the imports are done, as a server may at
startup, so that those collections skip them.

Both stores embed with the same cheap deterministic ``Embeddings`` (16 dims: embedding is timed
elsewhere; this is the store's own work). Medians of ``--calls`` calls; BLAS capped at one
thread.

    python benchmarks/store_scale.py --namespaces 1000 10000 100000
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is imported

import argparse
import gc
import random
import resource
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langchain_solar import SolarStore

DIMS = 16
TTL_MINUTES = 60.0


class Clock:
    """A clock the benchmark moves (the TTL deadlines are read from it)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _timed(call: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000.0)
    return out


def _ms(samples: list[float]) -> str:
    """The median and the 99th percentile."""
    return f"{statistics.median(samples):7.2f}  (p99 {_p99(samples):.2f})"


def _build(store: BaseStore, n: int, expiring: set[int] | None) -> float:
    """Put one item into each of ``n`` namespaces (with a TTL unless ``expiring`` is None)."""
    start = time.perf_counter()
    for i in range(n):
        value = {"text": f"user {i} likes green tea"}
        if expiring is None:
            store.put(("users", f"u{i}"), "k0", value)
        else:
            store.put(("users", f"u{i}"), "k0", value, ttl=1.0 if i in expiring else TTL_MINUTES)
    return time.perf_counter() - start


def _calls(store: BaseStore, n: int, calls: int, rng: random.Random) -> dict[str, list[float]]:
    def pick() -> tuple[str, str]:
        return ("users", f"u{rng.randrange(n)}")

    warm = ("users", "u0")
    made = iter(range(10**9))
    return {
        "search warm": _timed(lambda: store.search(warm, query="tea", limit=5), calls),
        "search cold": _timed(lambda: store.search(pick(), query="tea", limit=5), calls),
        "put": _timed(lambda: store.put(pick(), f"x{next(made)}", {"text": "coffee too"}), calls),
        "get": _timed(lambda: store.get(pick(), "k0"), calls),
    }


def _sweep(store: SolarStore, clock: Clock, n: int, rng: random.Random) -> dict[str, float]:
    """The longest call while a sweep runs, and without one (same calls, same run)."""

    def call() -> None:
        namespace = ("users", f"u{rng.randrange(n)}")
        store.get(namespace, "k0")
        store.search(namespace, query="tea", limit=5)

    clock.now += 2 * 60.0  # past the 1-minute items' deadline
    during: list[float] = []
    done = threading.Event()
    result: dict[str, Any] = {}

    def sweep() -> None:
        start = time.perf_counter()
        result["gone"] = store.sweep_ttl()
        result["seconds"] = time.perf_counter() - start
        done.set()

    thread = threading.Thread(target=sweep)
    thread.start()
    while not done.is_set():
        during += _timed(call, 1)
    thread.join()
    quiet = _timed(call, len(during))  # as many calls again, with no sweep beside them
    return {
        "gone": float(result["gone"]),
        "sweep s": result["seconds"],
        "calls": float(len(during)),
        "during p99": _p99(during),
        "during max": max(during),
        "during > 50": float(sum(t > 50 for t in during)),
        "quiet p99": _p99(quiet),
        "quiet max": max(quiet),
        "quiet > 50": float(sum(t > 50 for t in quiet)),
    }


def _p99(samples: list[float]) -> float:
    return sorted(samples)[int(len(samples) * 0.99)]


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--namespaces", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--skip-inmemory", action="store_true")
    parser.add_argument(
        "--freeze",
        action="store_true",
        help="gc.freeze() once imports are done, as a server may at startup: full garbage "
        "collections then skip the libraries' objects",
    )
    args = parser.parse_args(argv)
    if args.freeze:
        gc.collect()
        gc.freeze()
    embed = DeterministicFakeEmbedding(size=DIMS)
    index: Any = {"dims": DIMS, "embed": embed, "fields": ["text"]}
    print("median ms per call (calls in one namespace); sweep: 1 % of namespaces expired")
    for n in args.namespaces:
        rng = random.Random(args.seed)
        expiring = set(rng.sample(range(n), max(1, n // 100)))
        folder = tempfile.mkdtemp()
        path = os.path.join(folder, "store.db")
        clock = Clock()
        solar = SolarStore(
            path, index=index, capacity=20, ttl={"default_ttl": TTL_MINUTES}, clock=clock
        )
        built = _build(solar, n, expiring)
        timings = _calls(solar, n, args.calls, random.Random(args.seed))
        swept = _sweep(solar, clock, n, random.Random(args.seed))
        solar.close()
        size = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        print(f"\nN = {n:,} namespaces")
        print(f"  SolarStore (SQLite): built in {built:.0f} s ({built / n * 1000:.2f} ms a put)")
        for name, samples in timings.items():
            print(f"    {name:12s} {_ms(samples)}")
        print(
            f"    sweep: {swept['gone']:.0f} items in {swept['sweep s']:.2f} s; "
            f"{swept['calls']:.0f} get+search calls during it: p99 {swept['during p99']:.1f} "
            f"ms, longest {swept['during max']:.1f}, {swept['during > 50']:.0f} over 50 ms; "
            f"as many without a sweep: p99 {swept['quiet p99']:.1f} ms, longest "
            f"{swept['quiet max']:.1f}, {swept['quiet > 50']:.0f} over 50 ms"
        )
        print(f"    disk: {size / n:.0f} bytes a namespace; peak RSS so far {_rss_mb():.0f} MB")
        if not args.skip_inmemory:
            memory = InMemoryStore(index=index)
            built = _build(memory, n, None)
            timings = _calls(memory, n, args.calls, random.Random(args.seed))
            print(f"  InMemoryStore: built in {built:.0f} s")
            for name, samples in timings.items():
                print(f"    {name:12s} {_ms(samples)}")
            print(f"    peak RSS so far {_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
