"""Many writers: threads sharing one SQLite-backed store, and processes sharing one
PostgreSQL (or SQLite) scope or working on separate scopes. No step is lost or applied twice,
no item is lost or duplicated, and the database replays to exactly the live memory."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import MemoryStore, PersistenceError, SolarMemory, UnknownItemError
from tests.support.persistence import same
from tests.support.persistence_worker import DIM, open_store, spawn


class Tally:
    """What the threads did to one scope, as they saw it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.logged = 0
        self.adds = 0
        self.admitted: list[str] = []
        self.gone: list[str] = []  # evicted or removed

    def record(self, logged: int = 0, **kw: Any) -> None:
        with self.lock:
            self.logged += logged
            self.adds += kw.get("adds", 0)
            self.admitted += kw.get("admitted", [])
            self.gone += kw.get("gone", [])


def check_scope(memory: SolarMemory, tally: Tally) -> None:
    journal = memory.runner
    assert journal is not None
    memory.check_invariants()
    stats = memory.stats()
    assert journal.seq == tally.logged  # every step logged once: none lost, none twice
    assert stats["steps"] == tally.adds
    assert stats["admitted"] == len(tally.admitted)
    assert len(set(tally.admitted)) == len(tally.admitted)  # no id handed out twice
    assert Counter(tally.gone) == Counter(set(tally.gone))
    assert sorted(i.id for i in memory.items()) == sorted(set(tally.admitted) - set(tally.gone))


@pytest.mark.slow
def test_eight_threads_two_thousand_mixed_operations_on_one_sqlite_store(tmp_path: Path) -> None:
    eight_threads_on_one_sqlite_store(tmp_path, 2_000)


@pytest.mark.slow
def test_eight_threads_ten_thousand_mixed_operations_on_one_sqlite_store(tmp_path: Path) -> None:
    eight_threads_on_one_sqlite_store(tmp_path, 10_000)


def eight_threads_on_one_sqlite_store(tmp_path: Path, operations: int) -> None:
    """Eight threads, ``operations`` each (adds, retrievals, feedback, removals, previews):
    four on one scope, four on their own; every scope ends with exactly its tally."""
    url = str(tmp_path / "m.db")
    # Every removal writes a snapshot (it purges the log): a 100-entry trace keeps each one
    # small, so the run measures the threads' interleaving rather than the encoding of traces.
    config = {"policy": "solar", "capacity": 40, "dim": DIM, "seed": 1, "trace_size": 100}
    store = MemoryStore(url, snapshot_every=500, **config)
    tallies = {"shared": Tally(), **{f"own{i}": Tally() for i in range(4, 8)}}
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(t: int) -> None:
        rng = np.random.default_rng(t)
        name = "shared" if t < 4 else f"own{t}"
        memory, tally = store.scope(user=name), tallies[name]
        mine: list[str] = []
        hits = None
        barrier.wait()
        try:
            for i in range(operations):
                r = rng.random()
                v = rng.normal(size=DIM).astype(np.float32)
                if r < 0.40:
                    d = memory.add(f"t{t} op {i}", embedding=v, metadata={"t": t})
                    tally.record(
                        1,
                        adds=1,
                        admitted=[d.item_id] if d.admitted else [],
                        gone=[d.evicted] if d.evicted else [],
                    )
                    if d.admitted:
                        mine.append(str(d.item_id))
                elif r < 0.70:
                    hits = memory.retrieve(embedding=v, k=3)
                    # (before the scope's first write a retrieval records nothing: no step)
                    tally.record(int(hits.retrieval_id is not None))
                elif r < 0.80 and hits is not None:
                    try:
                        memory.feedback(like=bool(i % 2), retrieval=hits)
                        # (a rating of a retrieval that recorded nothing changes nothing)
                        tally.record(int(hits.retrieval_id is not None))
                    except ValueError:  # rated already, or too old
                        pass
                elif r < 0.85 and mine:
                    victim = mine.pop(int(rng.integers(len(mine))))
                    try:
                        memory.remove(victim)
                        tally.record(1, gone=[victim])
                    except UnknownItemError:  # evicted meanwhile
                        pass
                else:
                    memory.retrieve(embedding=v, k=2, record=False)
                    assert len(memory) <= 40
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors[:3]
    for name, tally in tallies.items():
        check_scope(store.scope(user=name), tally)
    # The file alone rebuilds every scope exactly (abandoned: from snapshots plus the log).
    again = MemoryStore(url, **config)
    for name in tallies:
        same(again.scope(user=name), store.scope(user=name))
    store.close()
    again.close()


def workers(url: str, users: list[str], steps: int) -> list[dict[str, Any]]:
    procs = [
        spawn(url, "--steps", str(steps), "--user", user, "--worker", str(w))
        for w, user in enumerate(users)
    ]
    summaries = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
        summaries.append(json.loads(out.split("done ", 1)[1]))
    return summaries


def check_processes(url: str, users: list[str], summaries: list[dict[str, Any]]) -> None:
    store = open_store(url)
    for user in set(users):
        mine = [s for s, u in zip(summaries, users, strict=True) if u == user]
        tally = Tally()
        for s in mine:
            tally.record(s["logged"], admitted=s["admitted"], gone=s["evicted"])
        tally.adds = sum(len(s["admitted"]) for s in mine)  # steps checked below instead
        memory = store.scope(user=user)
        memory.check_invariants()
        steps = memory.stats()["steps"]
        assert (
            steps
            == sum(s["logged"] for s in mine)
            - memory.stats()["retrievals"]
            - (memory.stats()["feedbacks"])
        )
        tally.adds = steps
        check_scope(memory, tally)
    store.close()


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["same scope", "separate scopes"])
def test_four_processes_two_thousand_steps(db_url: str, layout: str) -> None:
    steps = 2000 if db_url.startswith("postgresql") else 500
    users = ["shared"] * 4 if layout == "same scope" else [f"w{i}" for i in range(4)]
    summaries = workers(db_url, users, steps)
    check_processes(db_url, users, summaries)
    if layout == "same scope":
        assert sum(len(s["admitted"]) for s in summaries) > 0


def test_postgres_locks_one_scope_not_the_others() -> None:
    """A step on a scope whose row another transaction holds waits for it; a step on another
    scope does not (the row lock is per scope)."""
    import psycopg

    from tests.support.postgres import postgres_schema_url

    url = postgres_schema_url("t_row_locks")
    a_store, b_store = open_store(url), open_store(url)
    a, b = a_store.scope(user="a"), b_store.scope(user="b")
    v = np.ones(DIM, dtype=np.float32)
    a.add("first", embedding=v)
    b.add("first", embedding=v)
    holder = psycopg.connect(url)
    holder.execute("SELECT id FROM solar_scopes WHERE key = 'user=a' FOR UPDATE")
    done: dict[str, float] = {}

    def step(name: str, memory: SolarMemory) -> None:
        memory.add("second", embedding=v)
        done[name] = time.monotonic()

    started = time.monotonic()
    blocked = threading.Thread(target=step, args=("a", a))
    free = threading.Thread(target=step, args=("b", b))
    blocked.start()
    free.start()
    free.join(timeout=10)
    assert "b" in done and "a" not in done  # b went through while a waits for the lock
    time.sleep(0.3)
    assert "a" not in done
    holder.rollback()  # release
    blocked.join(timeout=10)
    assert done["a"] - started >= 0.3
    holder.close()
    assert [i.text for i in a.items()] == ["first", "second"]
    a_store.close()
    b_store.close()


def test_a_scope_forgotten_by_another_process_is_an_error_not_a_resurrection(
    db_url: str,
) -> None:
    one, two = open_store(db_url), open_store(db_url)
    memory = one.scope(user="gone")
    memory.add("x", embedding=np.ones(DIM, dtype=np.float32))
    assert two.forget({"user": "gone"})
    with pytest.raises(PersistenceError, match="forgotten"):
        memory.add("y", embedding=np.ones(DIM, dtype=np.float32))
    assert "user=gone" not in one.names()
    one.close()
    two.close()


def _open_and_close(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        MemoryStore(path, policy="fifo", capacity=5, dim=DIM).close()
        results.put("ok")
    except Exception as err:  # reported to the parent
        results.put(repr(err))


@pytest.mark.slow
def test_processes_creating_one_new_file_together_all_succeed(tmp_path: Path) -> None:
    """The header check and the schema creation race: every opener sees a whole schema or
    none (and the switch to WAL waits for the file instead of failing)."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    for i in range(12):
        path = str(tmp_path / f"{i}.db")
        barrier, results = ctx.Barrier(4), ctx.Queue()
        procs = [
            ctx.Process(target=_open_and_close, args=(path, barrier, results)) for _ in range(4)
        ]
        for proc in procs:
            proc.start()
        outcomes = [results.get(timeout=60) for _ in procs]
        for proc in procs:
            proc.join(timeout=60)
        assert outcomes == ["ok"] * 4, outcomes
