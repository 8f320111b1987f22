"""``MemoryStore(backend=...)``: an open database instead of a URL -- SQLite, PostgreSQL, or a
:class:`Backend` of your own, which implements ``transaction``, ``execute`` and ``close``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from solar_core.persistence import (
    Backend,
    MemoryStore,
    PersistenceError,
    SQLiteBackend,
    open_backend,
)


class AppConnection(Backend):
    """A backend over a ``sqlite3`` connection the application owns (and keeps open): the
    whole of what a database of your own implements."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        super().__init__()
        self.url, self._conn, self.closed = "the app's connection", conn, 0
        self.create_tables("INTEGER PRIMARY KEY AUTOINCREMENT", "BLOB")

    @contextmanager
    def transaction(self, write: bool) -> Iterator[None]:
        with self.lock:
            self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql, params)

    def close(self) -> None:
        self.closed += 1  # the application's connection: it closes it


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, check_same_thread=False)


def _steps(store: MemoryStore, start: int, n: int) -> list[object]:
    memory, seen = store.scope(user="alice"), []
    for i in range(start, start + n):
        seen.append(memory.add(f"fact {i} about tea {i % 5}").evicted)
        hits = memory.retrieve(f"tea {i % 5}", k=2)
        seen.append([(h.id, round(h.score, 6)) for h in hits])
        if hits:
            memory.feedback(like=i % 3 != 0)
    return seen


def test_a_backend_of_your_own_persists_and_resumes_exactly(tmp_path: Path) -> None:
    settings: dict[str, Any] = {"policy": "solar", "capacity": 6, "embedder": "hash", "seed": 3}
    reference = MemoryStore(str(tmp_path / "reference.db"), **settings)
    expected = _steps(reference, 0, 30)
    reference.close()
    reference = MemoryStore(str(tmp_path / "reference.db"), **settings)
    expected += _steps(reference, 30, 20)

    conn = _connect(tmp_path / "app.db")
    backend = AppConnection(conn)
    store = MemoryStore(backend=backend, **settings)
    assert store.url == "the app's connection"
    got = _steps(store, 0, 30)
    store.close()
    assert backend.closed == 1
    again = MemoryStore(backend=AppConnection(conn), **settings)  # tables found, not remade
    got += _steps(again, 30, 20)
    assert got == expected
    assert again.names() == ["user=alice"]
    again.close()
    conn.close()


def test_a_table_of_another_application_is_left_untouched(tmp_path: Path) -> None:
    conn = _connect(tmp_path / "other.db")
    conn.execute("CREATE TABLE solar_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO solar_meta VALUES ('format', 'theirs')")
    with pytest.raises(PersistenceError, match="another application; it was left untouched"):
        AppConnection(conn)
    tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    assert tables == [("solar_meta",)]
    assert conn.execute("SELECT * FROM solar_meta").fetchall() == [("format", "theirs")]


def test_an_opened_backend_of_each_database_serves_a_store(db_url: str) -> None:
    store = MemoryStore(backend=open_backend(db_url), policy="fifo", embedder="hash")
    store.scope(user="bob").add("prefers tea")
    store.close()
    with MemoryStore(db_url, embedder="hash") as again:
        assert [item.text for item in again.scope(user="bob").items()] == ["prefers tea"]


def test_a_store_is_given_a_url_or_a_backend(tmp_path: Path) -> None:
    backend = SQLiteBackend(tmp_path / "m.db")
    with pytest.raises(TypeError, match="a url or a backend, not both"):
        MemoryStore(str(tmp_path / "m.db"), backend=backend, embedder="hash")
    with pytest.raises(TypeError, match="SQLiteBackend\\(durability=...\\)"):
        MemoryStore(backend=backend, durability="full", embedder="hash")
    with pytest.raises(TypeError, match="backend must be a solar_core.persistence.Backend"):
        MemoryStore(backend=sqlite3.connect(":memory:"), embedder="hash")  # type: ignore[arg-type]
    with MemoryStore(backend=backend, embedder="hash") as store:  # still usable: nothing taken
        store.scope(user="a").add("x")


def test_one_backend_serves_one_store(tmp_path: Path) -> None:
    """Two stores on one connection did not see each other's steps (SQLite's data_version does
    not move for the connection's own commits): the next write of the first collided."""
    backend = SQLiteBackend(tmp_path / "m.db")
    first = MemoryStore(backend=backend, embedder="hash")
    with pytest.raises(ValueError, match="one backend per store"):
        MemoryStore(backend=backend, embedder="hash")
    first.scope(user="a").add("still served")
    first.close()


def test_a_file_a_backend_of_your_own_wrote_to_opens_by_its_path(tmp_path: Path) -> None:
    """A file made by its path, written through a backend of your own (which finds the tables
    and the schema ``solar_meta`` records), opens by its path again with every step."""
    path = tmp_path / "app.db"
    with MemoryStore(str(path), policy="fifo", embedder="hash") as store:
        store.scope(user="u").add("kept fact")
    conn = _connect(path)
    with MemoryStore(backend=AppConnection(conn), embedder="hash") as store:
        assert [item.text for item in store.scope(user="u").items()] == ["kept fact"]
        store.scope(user="u").add("and one more")
    conn.close()
    with MemoryStore(str(path), embedder="hash") as store:
        memory = store.scope(user="u")
        assert [item.text for item in memory.items()] == ["kept fact", "and one more"]
        memory.add("and a third")
        memory.check_invariants()


def test_postgres_first_users_wait_for_each_other_while_the_tables_are_made() -> None:
    """Two processes opening one new PostgreSQL database would both create the tables (and
    ``CREATE TABLE IF NOT EXISTS`` races there): the schema is made under an advisory lock,
    so a second opener waits while another holds it, then finds the tables made."""
    import threading

    import psycopg

    from solar_core.persistence import PostgresBackend
    from solar_core.persistence.postgres_backend import _SCHEMA_LOCK
    from tests.support.postgres import postgres_schema_url

    url = postgres_schema_url("t_schema_lock")
    opened: list[PostgresBackend] = []
    with psycopg.connect(url, autocommit=True) as holder:
        with holder.transaction():
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            opener = threading.Thread(target=lambda: opened.append(PostgresBackend(url)))
            opener.start()
            opener.join(timeout=2.0)
            assert opener.is_alive() and not opened  # waiting for the lock
            made = holder.execute("SELECT to_regclass('solar_meta') IS NOT NULL").fetchone()
            assert made == (False,)
        opener.join(timeout=60)
    assert opened, "the opener did not finish once the lock was released"
    store = MemoryStore(backend=opened[0], embedder="hash")
    store.scope(user="alice").add("tea with lemon")
    store.close()
