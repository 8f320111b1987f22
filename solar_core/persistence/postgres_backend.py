"""PostgreSQL for many processes and machines (psycopg 3)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from solar_core.persistence.backend import (
    FORMAT,
    SCHEMA_VERSION,
    Backend,
    ItemChange,
    OpRow,
    unknown_schema,
)
from solar_core.persistence.errors import PersistenceError

#: ``pg_advisory_xact_lock`` key that serialises schema creation by concurrent first users
_SCHEMA_LOCK = 0x534F4C52


class PostgresBackend(Backend):
    """A PostgreSQL database, reached by a libpq URL (``postgresql://user@host/db``).

    Each step is one transaction that starts by locking its scope's row (``SELECT ... FOR
    UPDATE``): steps on one scope serialise across processes, steps on different scopes never
    wait for each other. A row lock rather than an advisory lock: the commit, or the rollback
    the server makes when a client dies, releases it, so no code path can leak it. Vectors are
    ``bytea`` (float32): similarity is computed in the process, never in the database.
    """

    lock_clause = " FOR UPDATE"
    # The key's UNIQUE index follows the database's collation, where "a%2" may sort between
    # "a" and "a%" (locales ignore punctuation): byte order has its own index.
    ordered_key = 'key COLLATE "C"'
    key_index = 'CREATE INDEX IF NOT EXISTS solar_scopes_key_c ON solar_scopes (key COLLATE "C")'

    def __init__(self, url: str, read_only: bool = False) -> None:
        super().__init__()
        self.read_only = read_only
        try:
            import psycopg
        except ImportError as err:  # pragma: no cover - depends on the install
            raise ImportError(
                "PostgreSQL needs psycopg 3: pip install 'solar-memory[postgres]'"
            ) from err
        self._psycopg = psycopg
        self.url = url
        self._conn = self._connect()
        try:
            if read_only:
                self._check_readable()
            else:
                self.create_tables("BIGSERIAL PRIMARY KEY", "BYTEA")
        except BaseException:
            self._conn.close()
            raise

    def _connect(self) -> Any:
        try:
            conn = self._psycopg.connect(self.url, autocommit=True)
            if self.read_only:
                # The server then refuses every write of this session, whatever code runs.
                conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
            return conn
        except self._psycopg.Error as err:
            raise PersistenceError(f"cannot connect to PostgreSQL: {err}") from err

    def _check_readable(self) -> None:
        """Refuse, for reading, a database without this schema version's tables (reading
        creates and upgrades nothing)."""
        with self.transaction(write=False):
            exists = self.execute("SELECT to_regclass('solar_meta') IS NOT NULL").fetchone()[0]
            rows = {}
            if exists:
                rows = dict(self.execute("SELECT key, value FROM solar_meta").fetchall())
        if rows.get("format") != FORMAT:
            raise PersistenceError(
                "this PostgreSQL database (and search_path) holds no solar-memory store: give "
                "the URL a MemoryStore writes to; it was left untouched"
            )
        version = rows.get("schema")
        if version not in {str(v) for v in range(1, SCHEMA_VERSION + 1)}:
            raise unknown_schema("the database", version)
        if version != str(SCHEMA_VERSION):
            raise PersistenceError(
                f"the database has schema version {version}; reading needs version "
                f"{SCHEMA_VERSION}: open it once with MemoryStore (which migrates it), then "
                "read it. It was left untouched"
            )

    def lock_schema(self) -> None:
        # Two first users would both create the tables, and CREATE TABLE IF NOT EXISTS races in
        # PostgreSQL (a unique violation in its catalogue): the second waits for the first.
        self.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))

    def named(self) -> str:
        return "this PostgreSQL database"

    @contextmanager
    def transaction(self, write: bool) -> Iterator[None]:
        with self.lock:
            if self._conn.closed or self._conn.broken:  # a lost connection: start a new one
                self._conn = self._connect()
            try:
                with self._conn.transaction():
                    if not write:
                        # One snapshot for the whole read: under the default READ COMMITTED a
                        # catch-up could see a scope's seq and then a log that has moved on.
                        # (A step needs no such thing: the scope's row lock keeps its other
                        # writers out.)
                        self._conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                    yield
            except self._psycopg.Error as err:  # the driver's words, under our name
                raise PersistenceError(f"PostgreSQL: {err}") from err

    def append_op(self, scope_id: int, op: OpRow, at: float, items: list[ItemChange]) -> None:
        # The writes of a step need no answers: one round trip for all of them (pipeline mode)
        # instead of one each, while the scope's row lock is held.
        with self._conn.pipeline():
            super().append_op(scope_id, op, at, items)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql.replace("?", "%s"), params)

    def close(self) -> None:
        with self.lock:
            self._conn.close()
