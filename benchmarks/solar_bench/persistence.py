"""``solar-bench persistence``: what a persisted memory costs per step, in steps per second.

One step is one agent interaction on precomputed, seeded random unit vectors (no model):
``retrieve(embedding=q, k=3)``, on every third step ``feedback(like=..., retrieval=hits)``, then
``add(text, embedding=v)``. Every memory is ``solar`` with ``capacity=K``, ``dim=384``,
``seed=0`` and ``bootstrap=K`` (the regret gate admits every item until the memory is full, so
the warm-up fills it; after that the gate decides as usual).

Configurations, each at every K:

- ``memory``: a plain :class:`~solar_core.SolarMemory` (the baseline; with several processes,
  N independent memories: an in-memory memory shares nothing);
- ``sqlite``: a :class:`~solar_core.persistence.MemoryStore` on a fresh SQLite file in a temp
  folder, ``durability="normal"`` (and one single-process row with ``"full"``);
- ``postgres``: a MemoryStore on PostgreSQL (``--postgres URL``, else a throwaway server from
  :func:`~solar_bench.pg_server.start_postgres`; each run in a fresh schema).

Every run happens in fresh worker processes (``fork`` where available, else ``spawn``) on a
fresh database (a new SQLite file, or a new PostgreSQL schema) whose tables the parent made.
Each worker opens its own store (a connection never crosses a fork) and its scope, waits for
the others (a barrier), fills its memory to capacity (not timed: K adds; in a shared scope the
processes share the K adds), waits again, runs the timed steps, waits until all are done, then
closes its store (the closing snapshot is not timed). With several processes the scope is
either the same for all (``scope(user="shared")``: every step of every process lands in one
memory) or separate (``scope(user=f"w{i}")``).

Reported per configuration, the median over repeats of: aggregate steps/s (all processes'
timed steps over the wall time from the first start to the last finish), the median ms per step
(of each process's own step timings; the median of the processes), the mean ms per step (a
process's timed wall time over its steps: includes the snapshot every ``snapshot_every``
logged steps and any wait for another process), and the overhead of persistence: each of those
two minus the in-memory figure with the same number of processes. The configurations of a
repeat run in a shuffled order, so a burst of machine noise hits them alike.

Snapshots: the mean ms per step includes the snapshot written every ``snapshot_every``
(1,000) logged steps. The run also times the snapshot container's raw encode and decode
(:mod:`solar_core.persistence.container`; the decode with what a reopen does after it: a
memory of the parameters built and the state loaded into it) and reports its size, for a
memory of each K after K + 1,000 steps (full traces): :func:`codec_rows`.

After every multi-process same-scope run, a fresh MemoryStore in the parent reopens the scope
and checks that it holds every step (``stats()["steps"]`` counts adds: the K warm-up adds plus
``processes * steps``), that it is full and that its invariants hold.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import random
import secrets
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import numpy as np

from solar_core.engine.memory import SolarMemory

from .execute import limit_blas_threads
from .latency import make_stream

POLICY = "solar"
DIM = 384
CAPACITIES = (100, 1000)
#: timed steps per process: the default bench takes about two minutes on 2 cores (PostgreSQL
#: with 4 processes on one scope is most of it); 500 steps still hold a snapshot at K=1,000
STEPS = 500
REPEATS = 3
PROCESSES = 4
#: seconds a worker waits on a barrier for the others (a dead sibling breaks it sooner)
BARRIER_TIMEOUT = 600.0
#: the goal: persistence adds under 1 ms per step with SQLite (one process)
GOAL_MS = 1.0


@dataclass(frozen=True)
class Config:
    """One configuration: where the memory lives and who shares it."""

    backend: str  # "memory" | "sqlite" | "postgres"
    processes: int
    scope: str  # "own" (one process), "independent" (memory), "same", "separate"
    durability: str = "normal"

    @property
    def label(self) -> str:
        durability = self.durability if self.backend == "sqlite" else "-"
        return f"{self.backend} {durability} x{self.processes} {self.scope}"


@dataclass(frozen=True)
class Job:
    """What one worker process runs."""

    config: Config
    capacity: int
    steps: int
    url: str | None  # None for the in-memory baseline
    blas_threads: int | None


def configs(processes: int, postgres: bool) -> list[Config]:
    """Every configuration to run at one K (no multi-process rows when ``processes == 1``).

    >>> for c in configs(1, False):
    ...     print(c.label)
    memory - x1 own
    sqlite normal x1 own
    sqlite full x1 own
    """
    out = [
        Config("memory", 1, "own"),
        Config("sqlite", 1, "own"),
        Config("sqlite", 1, "own", "full"),
    ]
    if postgres:
        out.append(Config("postgres", 1, "own"))
    if processes > 1:
        out += [
            Config("memory", processes, "independent"),
            Config("sqlite", processes, "same"),
            Config("sqlite", processes, "separate"),
        ]
        if postgres:
            out += [
                Config("postgres", processes, "same"),
                Config("postgres", processes, "separate"),
            ]
    return out


def _user(config: Config, worker: int) -> str:
    return "shared" if config.scope == "same" else f"w{worker}"


def warmup(job: Job, worker: int) -> int:
    """The adds ``worker`` makes before timing: K in its own memory; in a shared scope, its
    share of K (the processes fill the one memory together).

    >>> job = Job(Config("sqlite", 3, "same"), capacity=100, steps=10, url="x", blas_threads=1)
    >>> [warmup(job, w) for w in range(3)]
    [34, 33, 33]
    """
    k, n = job.capacity, job.config.processes
    if job.config.scope != "same":
        return k
    return k // n + (worker < k % n)


def _store_settings(capacity: int) -> dict[str, Any]:
    return dict(policy=POLICY, capacity=capacity, dim=DIM, seed=0, bootstrap=capacity)


# -- one worker ---------------------------------------------------------------------------------
def _steps(job: Job, worker: int, start: Any, done: Any) -> dict[str, Any]:
    """Fill the memory, run the timed steps between the barriers; the timings."""
    limit_blas_threads(job.blas_threads)
    k, steps = job.capacity, job.steps
    items, queries = make_stream(k + steps, DIM, topics=20, seed=1000 * worker + k)
    likes = np.random.default_rng(worker).random(steps) < 0.5
    store = None
    if job.url is None:
        memory = SolarMemory(POLICY, capacity=k, dim=DIM, seed=0, bootstrap=k)
    else:
        from solar_core.persistence import MemoryStore

        store = MemoryStore(job.url, durability=job.config.durability, **_store_settings(k))
    try:
        if store is not None:
            memory = store.scope(user=_user(job.config, worker))
        start.wait(BARRIER_TIMEOUT)  # all open: the warm-ups start together
        for i in range(warmup(job, worker)):  # a full memory (not timed)
            memory.add(f"w{worker} prefill {i}", embedding=items[i])
        times = [0.0] * steps
        refused = 0
        clock = time.perf_counter
        start.wait(BARRIER_TIMEOUT)
        first = clock()
        for t in range(steps):
            began = clock()
            hits = memory.retrieve(embedding=queries[k + t], k=3)
            if t % 3 == 0:
                try:
                    memory.feedback(like=bool(likes[t]), retrieval=hits)
                except ValueError as err:  # pragma: no cover - depends on the scheduler
                    # A scope rates only its last 1,000 retrievals: a process starved of the
                    # lock while three others ran 1,000 steps finds its own one expired.
                    if "expired" not in str(err):
                        raise
                    refused += 1
            memory.add(f"w{worker} step {t}", embedding=items[k + t])
            times[t] = clock() - began
        last = clock()
        done.wait(BARRIER_TIMEOUT)  # nobody closes (snapshots) while others are timed
        size = len(memory)
    finally:
        if store is not None:
            store.close()
    return {"first": first, "last": last, "times": times, "size": size, "refused": refused}


def _worker(job: Job, worker: int, start: Any, done: Any, results: Any) -> None:
    try:
        results.put((worker, _steps(job, worker, start, done)))
    except BaseException as err:
        start.abort()  # the others stop waiting for this one
        done.abort()
        text = "".join(traceback.format_exception_only(type(err), err)).strip()
        results.put((worker, f"{text}\n{traceback.format_exc()}"))


def _context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def run_once(job: Job) -> dict[str, Any]:
    """Run ``job`` in ``job.config.processes`` fresh processes; the run's figures."""
    n = job.config.processes
    ctx = _context()
    start, done, results = ctx.Barrier(n), ctx.Barrier(n), ctx.Queue()
    sys.stdout.flush()  # a forked child flushes its copy of unwritten output at exit
    sys.stderr.flush()
    workers = [
        ctx.Process(target=_worker, args=(job, i, start, done, results), daemon=True)
        for i in range(n)
    ]
    for w in workers:
        w.start()
    got: dict[int, Any] = {}
    try:
        while len(got) < n:
            try:
                worker, result = results.get(timeout=1.0)
                got[worker] = result
            except queue.Empty:  # check that nobody died without a word
                dead = [w for w in workers if w.exitcode not in (None, 0)]
                if dead and results.empty():
                    raise RuntimeError(
                        f"{job.config.label} K={job.capacity}: a worker died "
                        f"(exit code {dead[0].exitcode})"
                    ) from None
    finally:
        for w in workers:
            w.join(timeout=60)
            if w.is_alive():
                w.terminate()
                w.join()
    failed = [r for r in got.values() if isinstance(r, str)]
    if failed:
        raise RuntimeError(f"{job.config.label} K={job.capacity}: a worker failed: {failed[0]}")
    rows = [got[i] for i in range(n)]
    refused = sum(r["refused"] for r in rows)
    if refused:  # pragma: no cover - depends on the scheduler
        print(
            f"note: {job.config.label} K={job.capacity}: {refused} ratings found their retrieval "
            "expired (a worker starved of the lock while others ran 1,000 retrievals)",
            file=sys.stderr,
        )
    wall = max(r["last"] for r in rows) - min(r["first"] for r in rows)
    return {
        "steps_per_s": n * job.steps / wall,
        "median_ms": statistics.median(statistics.median(r["times"]) for r in rows) * 1e3,
        "mean_ms": statistics.median((r["last"] - r["first"]) / job.steps for r in rows) * 1e3,
        "sizes": [r["size"] for r in rows],
    }


# -- where the data lives -----------------------------------------------------------------------
@dataclass
class Places:
    """A fresh database URL per run: a new SQLite file, or a new PostgreSQL schema."""

    folder: str
    postgres: str | None
    runs: int = 0

    @contextmanager
    def fresh(self, config: Config) -> Iterator[str | None]:
        """A new, empty database with the tables made (as a deployed one is: several
        processes creating one SQLite file at once can fail, see _create_tables)."""
        self.runs += 1
        if config.backend == "memory":
            yield None
        elif config.backend == "sqlite":
            path = os.path.join(self.folder, f"run{self.runs}.db")
            try:
                _create_tables(path)
                yield path
            finally:
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(path + suffix):
                        os.remove(path + suffix)
        else:
            assert self.postgres is not None
            schema = f"solar_bench_{os.getpid()}_{self.runs}_{secrets.token_hex(3)}"
            _pg_execute(self.postgres, f"CREATE SCHEMA {schema}")  # a name we made: no input
            try:
                url = with_search_path(self.postgres, schema)
                _create_tables(url)
                yield url
            finally:
                _pg_execute(self.postgres, f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _create_tables(url: str) -> None:
    """Open and close a store on ``url``: its tables exist before the workers start.

    Without it, 4 processes opening a new SQLite file at once sometimes fail: one reads
    ``application_id`` (0) before another's schema commit and the table list after it, and
    refuses the file as "a database of another application".
    """
    from solar_core.persistence import MemoryStore

    MemoryStore(url, policy=POLICY, capacity=1, dim=DIM).close()


def with_search_path(url: str, schema: str) -> str:
    """``url`` with libpq ``options`` that make ``schema`` the only one on the search path.

    >>> with_search_path("postgresql://u@/db?host=/tmp/x", "s1")
    'postgresql://u@/db?host=/tmp/x&options=-c%20search_path%3Ds1'
    """
    if "options=" in url:
        raise ValueError("--postgres: a URL with its own options= is not supported here")
    sep = "&" if "?" in url else "?"
    return f"{url}{sep}options={quote(f'-c search_path={schema}', safe='')}"


def _pg_execute(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.encode())


def find_postgres(url: str | None) -> tuple[str | None, str]:
    """``(url, reason)``: the given server or a throwaway one; ``url`` is None to skip."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None, "psycopg 3 is not installed (pip install 'solar-memory[postgres]')"
    reason = "--postgres"
    if url is None:
        from .pg_server import start_postgres

        url, reason = start_postgres()
        if url is None:
            return None, reason
    try:
        _pg_execute(url, "SELECT 1")
    except Exception as err:
        return None, f"cannot connect to {url}: {err}"
    return url, reason


def check_shared(url: str, job: Job) -> dict[str, Any]:
    """Reopen the shared scope in a fresh store: every step there, invariants hold."""
    expected = sum(warmup(job, w) + job.steps for w in range(job.config.processes))
    return _check_shared(url, job, expected)


def _check_shared(url: str, job: Job, expected: int) -> dict[str, Any]:
    from solar_core.persistence import MemoryStore

    with MemoryStore(url, durability=job.config.durability, **_store_settings(job.capacity)) as s:
        memory = s.scope(user="shared")
        steps = int(memory.stats()["steps"])
        size = len(memory)
        try:
            memory.check_invariants()
            broken = ""
        except AssertionError as err:
            broken = str(err) or "AssertionError"
    return {"steps": steps, "expected": expected, "invariants": broken or "ok", "size": size}


# -- the whole bench ----------------------------------------------------------------------------
def run(
    capacities: Sequence[int] = CAPACITIES,
    steps: int = STEPS,
    repeats: int = REPEATS,
    processes: int = PROCESSES,
    postgres: str | None = None,
    *,
    use_postgres: bool = True,
    codec_repeats: int = 7,
    blas_threads: int | None = 1,
    progress: Callable[[int], None] = lambda n: None,
    total: Callable[[int], None] = lambda n: None,
) -> list[dict[str, Any]]:
    """Every configuration at every K, ``repeats`` times; one row per (configuration, K), then
    the same-scope checks and the PostgreSQL skip reason (if skipped)."""
    notes: list[dict[str, Any]] = []
    pg_url, reason = find_postgres(postgres) if use_postgres else (None, "--no-postgres")
    if pg_url is None:
        notes.append({"workload": "persistence", "setting": "skipped", "reason": reason})
    plan = [(k, c) for k in capacities for c in configs(processes, pg_url is not None)]
    total(repeats * len(plan))
    samples: dict[tuple[int, Config], list[dict[str, Any]]] = {p: [] for p in plan}
    checks: dict[tuple[int, Config], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="solar-bench-persistence-") as folder:
        places = Places(folder, pg_url)
        for repeat in range(repeats):
            for k, config in _order(plan, repeat):
                with places.fresh(config) as url:
                    job = Job(config, k, steps, url, blas_threads)
                    samples[(k, config)].append(run_once(job))
                    if config.scope == "same":
                        assert url is not None
                        check = check_shared(url, job)
                        checks.setdefault((k, config), []).append(check)
                        samples[(k, config)][-1]["sizes"].append(check["size"])
                progress(1)
    rows = [_row(k, c, samples[(k, c)], steps) for k, c in plan]
    for row in rows:
        base = next(
            r
            for r in rows
            if r["backend"] == "memory"
            and r["capacity"] == row["capacity"]
            and r["processes"] == row["processes"]
        )
        row["overhead_median_ms"] = row["median_ms"] - base["median_ms"]
        row["overhead_mean_ms"] = row["mean_ms"] - base["mean_ms"]
    for (k, config), found in sorted(checks.items(), key=lambda kv: plan.index(kv[0])):
        notes.append(
            {
                "workload": "persistence",
                "setting": "check",
                "backend": config.backend,
                "capacity": k,
                "processes": config.processes,
                "steps": steps,
                "expected": found[0]["expected"],
                "found": [c["steps"] for c in found],
                "invariants": [c["invariants"] for c in found],
                "ok": all(c["steps"] == c["expected"] and c["invariants"] == "ok" for c in found),
            }
        )
    return rows + codec_rows(capacities, codec_repeats) + notes


def _order(plan: Sequence[tuple[int, Config]], repeat: int) -> list[tuple[int, Config]]:
    """One repeat's order: the configurations shuffled, so a burst of machine noise hits them
    alike.

    >>> plan = [(100, c) for c in configs(1, False)]
    >>> order = [c.label for _, c in _order(plan, 0)]
    >>> sorted(order) == sorted(c.label for _, c in plan)
    True
    """
    order = list(plan)
    random.Random(repeat).shuffle(order)
    return order


def _row(k: int, config: Config, runs: list[dict[str, Any]], steps: int) -> dict[str, Any]:
    return {
        "workload": "persistence",
        "setting": "run",
        "backend": config.backend,
        "durability": config.durability if config.backend == "sqlite" else None,
        "processes": config.processes,
        "scope": config.scope,
        "policy": POLICY,
        "capacity": k,
        "steps": steps,
        "repeats": len(runs),
        "steps_per_s": statistics.median(r["steps_per_s"] for r in runs),
        "median_ms": statistics.median(r["median_ms"] for r in runs),
        "mean_ms": statistics.median(r["mean_ms"] for r in runs),
        "runs_steps_per_s": [r["steps_per_s"] for r in runs],
        "runs_median_ms": [r["median_ms"] for r in runs],
        "runs_mean_ms": [r["mean_ms"] for r in runs],
        "full": all(s == k for r in runs for s in r["sizes"]),
    }


def render(rows: Sequence[dict[str, Any]]) -> str:
    """The table, the goal line, the same-scope checks and any skip, as text."""
    runs = [r for r in rows if r["setting"] == "run"]
    out = []
    if runs:
        first = runs[0]
        out.append(
            f"== persistence: {first['policy']}, dim {DIM}, {first['steps']} timed steps per "
            f"process, median of {first['repeats']} repeats ==",
        )
        out.append(
            "backend   durability  procs  scope            K   steps/s  median ms"
            "  mean ms  +median ms  +mean ms"
        )
        for i, r in enumerate(runs):
            if i and r["capacity"] != runs[i - 1]["capacity"]:
                out.append("")
            base = r["backend"] == "memory"
            extra = (
                "          -         -"
                if base
                else f"  {r['overhead_median_ms']:10.3f}  {r['overhead_mean_ms']:8.3f}"
            )
            out.append(
                f"{r['backend']:8}  {r['durability'] or '-':10}  {r['processes']:5}  "
                f"{r['scope']:11}  "
                f"{r['capacity']:5}  {r['steps_per_s']:8.0f}  "
                f"{r['median_ms']:9.3f}  {r['mean_ms']:7.3f}{extra}"
                + ("" if r["full"] else "  (memory not full!)")
            )
        out.append(
            "+median / +mean: minus the in-memory figure with as many processes (one process: "
            "one memory; several: as many independent memories)"
        )
        goal = [
            r
            for r in runs
            if r["backend"] == "sqlite" and r["processes"] == 1 and r["durability"] == "normal"
        ]
        if goal:
            worst = max(max(r["overhead_median_ms"], r["overhead_mean_ms"]) for r in goal)
            per_k = ", ".join(
                f"K={r['capacity']}: +{r['overhead_median_ms']:.3f} ms median, "
                f"+{r['overhead_mean_ms']:.3f} ms mean"
                for r in goal
            )
            verdict = "met" if worst < GOAL_MS else "NOT met"
            out.append(
                f"goal (SQLite, one process, under {GOAL_MS:g} ms per step): {verdict} ({per_k})"
            )
    coded = [r for r in rows if r["setting"] == "codec"]
    if coded:
        out.append("")
        out.append(
            f"== snapshot codec: {POLICY}, dim {DIM}, a memory of K items after K + "
            f"{CODEC_STEPS} steps, median of {coded[0]['repeats']} ==",
        )
        out.append("    K   encode ms  decode ms      bytes")
        for r in coded:
            out.append(
                f"{r['capacity']:5}  {r['encode_ms']:10.2f}  {r['decode_ms']:9.2f}  {r['bytes']:9d}"
            )
        out.append(
            "decode: as a reopen does (the container read, a memory of its parameters built and "
            "the state loaded into it, checked)"
        )
    for r in rows:
        if r["setting"] == "check":
            found = ", ".join(map(str, r["found"]))
            state = "no lost step" if r["ok"] else "STEPS LOST OR INVARIANTS BROKEN"
            out.append(
                f"{state}: {r['backend']} x{r['processes']} same scope K={r['capacity']}: "
                f"expected {r['capacity']} warm-up + {r['processes']} x {r['steps']} = "
                f"{r['expected']} steps, found {found}; invariants {', '.join(r['invariants'])}"
            )
    for r in rows:
        if r["setting"] == "skipped":
            out.append(f"postgres: skipped: {r['reason']}")
    return "\n".join(out) + "\n"


# -- the codecs alone ---------------------------------------------------------------------------
#: steps a codec benchmark memory takes after its warm-up (full decision and retrieval traces)
CODEC_STEPS = 1000


def _codec_memory(k: int, steps: int) -> SolarMemory:
    """A memory as the bench's workers leave it: K items, then ``steps`` steps."""
    items, queries = make_stream(k + steps, DIM, topics=20, seed=k)
    memory = SolarMemory(POLICY, capacity=k, dim=DIM, seed=0, bootstrap=k)
    likes = np.random.default_rng(0).random(steps) < 0.5
    for i in range(k):
        memory.add(f"prefill {i}", embedding=items[i])
    for t in range(steps):
        hits = memory.retrieve(embedding=queries[k + t], k=3)
        if t % 3 == 0:
            memory.feedback(like=bool(likes[t]), retrieval=hits)
        memory.add(f"step {t}", embedding=items[k + t])
    return memory


def codec_rows(capacities: Sequence[int], repeats: int = 7) -> list[dict[str, Any]]:
    """The snapshot container's encode and decode time (median of ``repeats``, interleaved)
    and size, for a memory of each K after K + :data:`CODEC_STEPS` steps. The decode is what a
    reopen does: the container read, its parameters compared, a memory built and the state
    loaded (checked) into it."""
    from solar_core.persistence import container
    from solar_core.persistence.journal import snapshot_params

    rows = []
    for k in capacities:
        memory = _codec_memory(k, CODEC_STEPS)
        params = snapshot_params(memory)
        blob = container.dumps(params, memory.state())
        encode, decode = [], []
        for _ in range(repeats):
            began = time.perf_counter()
            container.dumps(snapshot_params(memory), memory.state())
            middle = time.perf_counter()
            read, state = container.loads(blob, "a snapshot")
            donor = SolarMemory.from_params(read, seed=0)
            if snapshot_params(donor) != params:
                raise AssertionError("a snapshot's parameters do not rebuild its memory")
            donor.load_state(state)
            encode.append(middle - began)
            decode.append(time.perf_counter() - middle)
        rows.append(
            {
                "workload": "persistence",
                "setting": "codec",
                "capacity": k,
                "repeats": repeats,
                "encode_ms": statistics.median(encode) * 1e3,
                "decode_ms": statistics.median(decode) * 1e3,
                "bytes": len(blob),
            }
        )
    return rows
