"""What a logged step asks of SQLite (its statements), and the SQLite transaction it runs in:
committed, rolled back on any failure (the block's error raised as it is, a driver's under our
name), and the backend's lock let go of in every case."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import PersistenceError
from solar_core.engine.steps import Lookup
from solar_core.persistence import MemoryStore
from solar_core.persistence.journal import Journal
from solar_core.persistence.sqlite_backend import SQLiteBackend


def test_a_lookup_excluding_ids_that_are_no_json_is_refused_before_it_runs() -> None:
    ids: set[Any] = {object()}
    lookup = Lookup(np.ones(4, np.float32), "q", 3, True, ids, "hybrid", None, False)
    with pytest.raises(TypeError, match="exclude must be JSON-serialisable"):
        _journal_check(lookup)


_STORE = MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash", seed=0)


def _journal_check(step: Any) -> Any:
    """What a scope's journal makes of ``step`` before it runs."""
    journal = _STORE.scope(user="checks").runner
    assert isinstance(journal, Journal)
    return journal.check(step)


# -- the SQLite transaction ---------------------------------------------------------------------
@pytest.fixture
def backend(tmp_path: Path) -> SQLiteBackend:
    made = SQLiteBackend(tmp_path / "t.db", busy_timeout=0.05)
    made.execute("CREATE TABLE t (x INTEGER)")
    return made


def _count(backend: SQLiteBackend) -> int:
    with backend.transaction(write=False):
        return int(backend.execute("SELECT COUNT(*) FROM t").fetchone()[0])


def _lock_is_free(backend: SQLiteBackend) -> bool:
    """Whether another thread can take the backend's lock (its transaction let go of it)."""
    taken: list[bool] = []

    def take() -> None:
        taken.append(backend.lock.acquire(timeout=1))
        if taken[0]:
            backend.lock.release()

    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return taken[0]


def test_a_transaction_commits_what_its_block_wrote(backend: SQLiteBackend) -> None:
    with backend.transaction(write=True):
        backend.execute("INSERT INTO t VALUES (1)")
    assert _count(backend) == 1 and _lock_is_free(backend)


def test_a_failed_block_is_rolled_back_and_its_error_raised_as_it_is(
    backend: SQLiteBackend,
) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with backend.transaction(write=True):
            backend.execute("INSERT INTO t VALUES (1)")
            raise Boom
    assert _count(backend) == 0 and _lock_is_free(backend)


def test_a_drivers_error_in_a_block_is_a_persistence_error(backend: SQLiteBackend) -> None:
    with pytest.raises(PersistenceError, match="no such table"):
        with backend.transaction(write=True):
            backend.execute("INSERT INTO t VALUES (1)")
            backend.execute("INSERT INTO missing VALUES (1)")
    assert _count(backend) == 0 and _lock_is_free(backend)


def test_a_transaction_that_cannot_begin_lets_go_of_the_lock(
    backend: SQLiteBackend, tmp_path: Path
) -> None:
    other = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with pytest.raises(PersistenceError, match="locked"):
            with backend.transaction(write=True):
                pytest.fail("began")  # pragma: no cover
        assert _lock_is_free(backend)
    finally:
        other.execute("ROLLBACK")
        other.close()
    with backend.transaction(write=True):  # and it begins once the other one is done
        backend.execute("INSERT INTO t VALUES (1)")
    assert _count(backend) == 1


# -- the statements of a step -------------------------------------------------------------------
def test_a_step_is_one_transaction_of_five_statements(tmp_path: Path) -> None:
    """A retrieval of a stored scope, nobody else writing: the transaction, one look at whether
    another process committed, the log row, the scope's seq. Nothing is read twice."""
    store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=5, embedder="hash", seed=0)
    memory = store.scope(user="ann")
    memory.add("my locker code is 1234")
    statements: list[str] = []
    connection = store.backend._conn  # type: ignore[attr-defined]
    connection.set_trace_callback(statements.append)
    try:
        hits = memory.retrieve("locker code", k=1)
    finally:
        connection.set_trace_callback(None)
    assert [h.text for h in hits] == ["my locker code is 1234"]
    assert [s.split(" (")[0].split(" SET")[0] for s in statements] == [
        "BEGIN IMMEDIATE",
        "PRAGMA data_version",
        "INSERT INTO solar_ops",
        "UPDATE solar_scopes",
        "COMMIT",
    ]
    store.close()


def test_a_commit_interrupted_is_rolled_back_and_its_interruption_raised(
    backend: SQLiteBackend,
) -> None:
    class Interrupted(BaseException):
        pass

    class Connection:
        """The backend's connection, whose COMMIT is interrupted (a signal, say)."""

        def __init__(self, real: sqlite3.Connection) -> None:
            self.real = real

        def execute(self, sql: str, params: Any = ()) -> Any:
            if sql == "COMMIT":
                raise Interrupted
            return self.real.execute(sql, params)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.real, name)

    real = backend._conn
    backend._conn = Connection(real)  # type: ignore[assignment]
    try:
        with pytest.raises(Interrupted):
            with backend.transaction(write=True):
                backend.execute("INSERT INTO t VALUES (1)")
    finally:
        backend._conn = real
    assert not real.in_transaction and _count(backend) == 0 and _lock_is_free(backend)
