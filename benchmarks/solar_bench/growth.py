"""``solar-bench growth``: a process's resident memory as the number of users it served grows.

One process serves N distinct users (default N = 1,000, 5,000 and 20,000), each once, through:

- ``store``: a :class:`~solar_core.persistence.MemoryStore` on a fresh SQLite file (default
  settings: the default policy, capacity 50, ``max_open_scopes`` 256), the ``"hash"`` embedder
  (model-free) and ``seed=0``. Each user gets a scope (``scope(user=...)``): :data:`ADDS` adds
  of short facts, then one recorded retrieval;
- ``response-cache``: one :class:`~solar_core.ResponseCache` (``"hash"`` embedder,
  ``relate=0.3``) with a scope per session (``{"session": ...}``): each session stores one
  answer, then learns a related fact, which evicts it (the session's scope is left empty).

Each (case, N) runs in a fresh Python process (``python -m solar_bench.growth``), so the
figures are independent. A worker reads its resident set size (RSS: ``/proc/self/statm`` on
Linux, else the peak from ``resource.getrusage``) after its imports and setup (``rss_start``),
serves its users (timed: users per second, ms per user), and reads it again (``rss``) before
closing; ``peak`` is the process's peak RSS.

The bar: RSS flat in the number of users ever served: ``rss(N_max) - rss(N_min)`` under
:data:`FLAT_MB` (50 MB) for each case (a ``check`` row; with the default N, 20,000 vs 1,000
users: a store that kept every scope open would hold ~150 KB per user, ~3 GB at 20,000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

#: users served per run, each in a fresh process
USERS = (1000, 5000, 20000)
#: what serves them
CASES = ("store", "response-cache")
#: adds per user in the ``store`` case (then one recorded retrieval)
ADDS = 3
#: the flatness bar: RSS after the most users minus RSS after the fewest, in MB
FLAT_MB = 50.0


def rss_mb() -> float:
    """This process's resident set size now, in MB (its peak where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return peak_mb()


def peak_mb() -> float:
    """This process's peak resident set size, in MB."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10  # bytes vs KB


def _serve_store(users: int, folder: str) -> dict[str, Any]:
    from solar_core.persistence import MemoryStore

    store = MemoryStore(os.path.join(folder, "growth.db"), embedder="hash", seed=0)
    warm = store.scope(user="warm-up")  # loads what the first user would (container, SQL)
    warm.add("warming up")
    warm.retrieve("warming")
    del warm
    start_rss = rss_mb()
    start = time.perf_counter()
    for i in range(users):
        memory = store.scope(user=f"u{i}")
        for j in range(ADDS):
            memory.add(f"user {i} fact {j}: likes topic {(i * 7 + j) % 97}")
        memory.retrieve(f"what does user {i} like?")
    elapsed = time.perf_counter() - start
    del memory
    end_rss = rss_mb()
    open_scopes = len(store.open_scopes)
    stored = len(store.names())
    store.close()
    return {
        "rss_start_mb": start_rss,
        "rss_mb": end_rss,
        "seconds": elapsed,
        "open_scopes": open_scopes,
        "max_open_scopes": store.max_open_scopes,
        "stored_scopes": stored,
    }


def _serve_cache(users: int) -> dict[str, Any]:
    from solar_core.engine.response_cache import ResponseCache

    cache = ResponseCache("hash", relate=0.3)
    cache.store("warming up?", "yes", scope={"session": "warm-up"})
    cache.learn("warming up now", scope={"session": "warm-up"})
    start_rss = rss_mb()
    start = time.perf_counter()
    lost = 0
    for i in range(users):
        session = {"session": f"s{i}"}
        cache.store("What plan am I on?", f"plan {i % 3}", scope=session)
        lost += cache.learn("I am on the Team plan now", scope=session)
    elapsed = time.perf_counter() - start
    end_rss = rss_mb()
    held = getattr(cache, "_scopes", None)
    return {
        "rss_start_mb": start_rss,
        "rss_mb": end_rss,
        "seconds": elapsed,
        "entries_lost": lost,
        "scopes_held": None if held is None else len(held),
    }


def serve(case: str, users: int) -> dict[str, Any]:
    """Serve ``users`` users through ``case`` in this process; what it measured."""
    if case == "store":
        with tempfile.TemporaryDirectory(prefix="solar-growth-") as folder:
            found = _serve_store(users, folder)
    elif case == "response-cache":
        found = _serve_cache(users)
    else:
        raise ValueError(f"unknown case {case!r}; use one of {', '.join(CASES)}")
    return {**found, "peak_mb": peak_mb()}


def run_once(case: str, users: int, blas_threads: int = 1) -> dict[str, Any]:
    """One (case, N) in a fresh Python process: its row."""
    env = {**os.environ}
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(blas_threads)
    done = subprocess.run(
        [sys.executable, "-m", "solar_bench.growth", case, str(users)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"solar-bench growth: the {case} worker for {users} users failed:\n{done.stderr}"
        )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    seconds = found.pop("seconds")
    return {
        "workload": "growth",
        "setting": "run",
        "case": case,
        "users": users,
        **found,
        "growth_mb": found["rss_mb"] - found["rss_start_mb"],
        "users_per_s": users / seconds if seconds > 0 else float("inf"),
        "ms_per_user": 1000.0 * seconds / users,
    }


def run(
    users: Sequence[int] = USERS,
    cases: Sequence[str] = CASES,
    blas_threads: int = 1,
    progress: Callable[[int], None] = lambda n: None,
    total: Callable[[int], None] = lambda n: None,
) -> list[dict[str, Any]]:
    """Every (case, N) in its own process, then a flatness check per case."""
    counts = sorted(set(users))
    total(len(cases) * len(counts))
    rows: list[dict[str, Any]] = []
    for case in cases:
        for n in counts:
            rows.append(run_once(case, n, blas_threads))
            progress(1)
    for case in cases:
        mine = [r for r in rows if r["case"] == case]
        low, high = mine[0], mine[-1]
        delta = high["rss_mb"] - low["rss_mb"]
        rows.append(
            {
                "workload": "growth",
                "setting": "check",
                "case": case,
                "from_users": low["users"],
                "to_users": high["users"],
                "rss_delta_mb": delta,
                "limit_mb": FLAT_MB,
                "flat": delta < FLAT_MB,
            }
        )
    return rows


def render(rows: Sequence[dict[str, Any]]) -> str:
    """The table and the flatness verdicts, as text."""
    runs = [r for r in rows if r["setting"] == "run"]
    out = [
        "== growth: RSS of one process after serving N distinct users (a fresh process per N) ==",
        "case              users  rss start MB  rss MB  +MB    peak MB  users/s  ms/user  held",
    ]
    for r in runs:
        held = r.get("open_scopes") if r["case"] == "store" else r.get("scopes_held")
        out.append(
            f"{r['case']:16}  {r['users']:5}  {r['rss_start_mb']:12.1f}  {r['rss_mb']:6.1f}  "
            f"{r['growth_mb']:5.1f}  {r['peak_mb']:7.1f}  {r['users_per_s']:7.0f}  "
            f"{r['ms_per_user']:7.3f}  {'-' if held is None else held}"
        )
    out.append(
        "held: store: open scopes (at most max_open_scopes); response-cache: scopes it keeps"
    )
    for r in rows:
        if r["setting"] == "check":
            verdict = "flat" if r["flat"] else "NOT flat"
            out.append(
                f"{r['case']}: {verdict}: RSS({r['to_users']} users) - RSS({r['from_users']}) = "
                f"{r['rss_delta_mb']:+.1f} MB (bar: under {r['limit_mb']:g} MB)"
            )
    return "\n".join(out) + "\n"


def _worker(argv: Sequence[str]) -> int:
    case, users = argv[0], int(argv[1])
    print(json.dumps(serve(case, users)))
    return 0


if __name__ == "__main__":
    raise SystemExit(_worker(sys.argv[1:]))
