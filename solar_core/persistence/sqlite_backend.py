"""The embedded default: one SQLite file in WAL mode (stdlib ``sqlite3``)."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

from solar_core.persistence.backend import (
    FORMAT,
    SCHEMA_VERSION,
    Backend,
    new_database_id,
    unknown_schema,
)
from solar_core.persistence.errors import PersistenceError

#: ``PRAGMA application_id`` of our files ("SOLR"): tells them from every other SQLite file
APPLICATION_ID = 0x534F4C52
_DURABILITY = {"normal": "NORMAL", "full": "FULL"}


class SQLiteBackend(Backend):
    """A SQLite database file (or ``":memory:"``).

    WAL lets readers run beside the one writer; ``BEGIN IMMEDIATE`` takes the write lock for a
    whole step, so processes sharing the file serialise their steps (waiting up to
    ``busy_timeout`` seconds). ``durability="normal"`` (``synchronous=NORMAL``) survives any
    crash of the process -- a step acknowledged is in the WAL -- and can lose the last steps
    only to an OS crash or power loss; ``"full"`` syncs every commit to disk.

    A file that is not a SQLite database, or is one of another application, is refused before
    anything is written to it.

    ``read_only=True`` opens an existing file as SQLite's ``mode=ro``: the engine itself refuses
    every write, nothing is created, switched or upgraded, and the database file stays
    byte-identical. (To read a WAL database while other processes write it, SQLite may create
    its ``-wal`` and ``-shm`` files beside it, as any reader does.)
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        durability: str = "normal",
        busy_timeout: float = 30.0,
        read_only: bool = False,
    ) -> None:
        super().__init__()
        self.read_only = read_only
        if durability not in _DURABILITY:
            raise ValueError(f"durability must be 'normal' or 'full', got {durability!r}")
        self.path = os.path.expanduser(os.fspath(path))  # "~/agent.db": in the home folder
        self.url = self.path
        self._busy_timeout = busy_timeout
        if self.path != ":memory:" and os.path.isdir(self.path):
            raise PersistenceError(f"{self.path} is a directory, not a database file")
        folder = os.path.dirname(os.path.abspath(self.path))
        if self.path != ":memory:" and not read_only and not os.path.isdir(folder):
            # (not created for you: a mistyped path would start an empty store somewhere new)
            why = "is not a folder" if os.path.exists(folder) else "does not exist"
            raise PersistenceError(
                f"cannot create the database {self.path}: its folder {folder} {why}. Create "
                f"the folder first (os.makedirs({folder!r}, exist_ok=True) or mkdir -p), or "
                "give a path in an existing folder"
            )
        target, uri = self.path, False
        if read_only:
            if self.path == ":memory:" or not os.path.isfile(self.path):
                raise PersistenceError(
                    f"there is no database file at {self.path}: give the path of a store's "
                    "SQLite file (reading never creates one)"
                )
            target, uri = f"file:{quote(os.path.abspath(self.path))}?mode=ro", True
            target += self._read_only_folder()
        try:
            self._conn = sqlite3.connect(
                target,
                isolation_level=None,
                check_same_thread=False,
                timeout=busy_timeout,
                uri=uri,
            )
        except sqlite3.Error as err:
            raise PersistenceError(f"cannot open {self.path}: {err}") from err
        try:
            self._open(durability)
        except BaseException:
            self._conn.close()
            raise

    def _open(self, durability: str) -> None:
        conn = self._conn
        try:
            # Reading the header is the first thing: a foreign file fails here, untouched. One
            # read transaction: another process creating the schema commits the tables and the
            # application id together, and we must see both or neither.
            conn.execute("BEGIN")
            try:
                app_id = conn.execute("PRAGMA application_id").fetchone()[0]
                tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")
        except sqlite3.DatabaseError as err:
            read_only = self._read_only(err)
            if read_only is not None:
                raise read_only from err
            raise PersistenceError(
                f"{self.path} is not a SQLite database ({err}); it was left untouched"
            ) from err
        if self.read_only:
            self._check_readable(app_id)
            return
        if app_id not in (0, APPLICATION_ID) or (app_id == 0 and tables):
            raise PersistenceError(
                f"{self.path} is a database of another application (application_id "
                f"{app_id:#x}, tables {sorted(tables)[:5]}); it was left untouched"
            )
        if app_id == APPLICATION_ID:
            self._check_version()
        elif not tables:
            # Pages a pruned log frees go back to the file on close (see close), not kept as
            # free pages the file never returns: set before the first table, or never.
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        self._wal()
        conn.execute(f"PRAGMA synchronous={_DURABILITY[durability]}")  # from a fixed table
        if app_id == 0:
            self._create()

    def _read_only_folder(self) -> str:
        """What a reader must add to its URI when it may not write the database's folder:
        nothing when it may (or the -shm file is there); ``&immutable=1`` on a read-only file
        system (nobody can write the file, so it cannot change under us); else an error,
        since SQLite needs to create the -shm file to read a WAL database safely while others
        write it (and another user may be writing it: immutable would read torn pages)."""
        folder = os.path.dirname(os.path.abspath(self.path))
        if os.access(folder, os.W_OK) or os.path.exists(self.path + "-shm"):
            return ""
        try:
            frozen = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
        except (OSError, AttributeError):  # no statvfs (Windows): assume it may change
            frozen = False
        if frozen and not os.path.exists(self.path + "-wal"):
            return "&immutable=1"
        raise PersistenceError(
            f"cannot read {self.path} from this account: SQLite must create {self.path}-shm "
            f"beside it to read a WAL database while others may write it, and may not write "
            f"its folder {folder}. Read it as a user who may (e.g. the service's), or copy the "
            "database file somewhere writable; it was left untouched"
        )

    def _check_readable(self, app_id: int) -> None:
        """Refuse, for reading, a file that is not a store of this schema version (a newer
        one this library cannot read; an older one it would have to upgrade, a write)."""
        if app_id != APPLICATION_ID:
            raise PersistenceError(
                f"{self.path} is not a solar-memory database (application_id {app_id:#x}): "
                "give the file a MemoryStore writes; it was left untouched"
            )
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if not 1 <= version <= SCHEMA_VERSION:
            raise unknown_schema(self.path, version)
        if version < SCHEMA_VERSION:
            raise PersistenceError(
                f"{self.path} has schema version {version}; reading needs version "
                f"{SCHEMA_VERSION}: open it once with MemoryStore (which migrates it), then "
                "read it. It was left untouched"
            )

    def _wal(self) -> None:
        """Switch to WAL (once per file: it persists). The switch needs the file to itself and
        SQLite's busy timeout does not cover it, so processes opening a new file together
        retry for a while."""
        deadline = time.monotonic() + self._busy_timeout
        while True:
            try:
                if self._conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    # (":memory:" answers "memory": there is no file to share)
                    self._conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as err:
                read_only = self._read_only(err)
                if read_only is not None:
                    raise read_only from err
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise PersistenceError(f"cannot switch {self.path} to WAL: {err}") from err
                time.sleep(0.01)

    def _check_version(self) -> None:
        version = self._conn.execute("PRAGMA user_version").fetchone()[0]
        if not 1 <= version <= SCHEMA_VERSION:
            raise unknown_schema(self.path, version)
        if version < SCHEMA_VERSION:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Another process may have upgraded it since we looked; or a backend of the
                # caller's, which records the schema in solar_meta only (Backend.create_tables).
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                meta = conn.execute("SELECT value FROM solar_meta WHERE key = 'schema'").fetchone()
                version = max(version, int(meta[0]) if meta and str(meta[0]).isdigit() else 0)
                if not 1 <= version <= SCHEMA_VERSION:
                    raise unknown_schema(self.path, version)
                if version < SCHEMA_VERSION:
                    self.migrate(version)
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")  # a constant
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

    def _create(self) -> None:
        conn = self._conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have created it since we looked.
            if conn.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                for statement in self._schema("INTEGER PRIMARY KEY AUTOINCREMENT", "BLOB"):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO solar_meta (key, value) "
                    "VALUES ('format', ?), ('schema', ?), ('database', ?)",
                    (FORMAT, str(SCHEMA_VERSION), new_database_id()),
                )
                conn.execute(f"PRAGMA application_id={APPLICATION_ID}")  # constants only
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    @contextmanager
    def transaction(self, write: bool) -> Iterator[None]:
        with self.lock:
            conn = self._conn
            try:
                # (SQLite's busy handler does the waiting. Polling at sub-millisecond intervals
                # was measured instead: with 4 processes on 2 cores the pollers took the CPU
                # from the lock holder, and steps/s fell by 40 %.)
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            except sqlite3.Error as err:
                raise self._error(err) from err
            try:
                yield
                conn.execute("COMMIT")
            except BaseException as err:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if isinstance(err, sqlite3.Error):  # the driver's words, under our name
                    raise self._error(err) from err
                raise

    def _error(self, err: sqlite3.Error) -> PersistenceError:
        return self._read_only(err) or PersistenceError(f"{self.path}: {err}")

    def _read_only(self, err: sqlite3.Error) -> PersistenceError | None:
        """The real reason when SQLite failed because it may not write the file or its folder
        (a read-only file is otherwise reported as "unable to open database file", which reads
        like a damaged one); ``None`` if that is not why."""
        if self.path == ":memory:" or not os.path.exists(self.path) or self.read_only:
            return None  # (a reader's errors are SQLite's own: it asks for no write access)
        folder = os.path.dirname(os.path.abspath(self.path))
        file_ok, folder_ok = os.access(self.path, os.W_OK), os.access(folder, os.W_OK)
        readonly = "readonly" in str(err) or "read-only" in str(err)
        if file_ok and folder_ok and not readonly:
            return None
        if not file_ok:
            what = f"the file {self.path} is read-only for this process"
        elif not folder_ok:
            what = (
                f"its folder {folder} is read-only for this process (SQLite keeps the "
                "database's -wal and -shm files beside it)"
            )
        else:
            what = "SQLite reports it read-only"
        return PersistenceError(
            f"cannot use {self.path}: {what} ({err}). A MemoryStore writes to its database, "
            "even to open it: give this user write permission on the file and its folder "
            f"(e.g. chmod u+w {self.path} {folder}), or copy the file somewhere writable; it "
            "was left untouched"
        )

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._conn.execute(sql, params)

    def version_token(self) -> object:
        # Changes iff another connection committed: a single writer never re-reads its scope.
        with self.lock:
            try:
                return self._conn.execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.Error as err:
                raise self._error(err) from err

    def close(self) -> None:
        with self.lock:
            if not self.read_only:
                try:  # give the free pages back (a no-op for a file made without auto_vacuum)
                    # (a script runs it to the end: one execute() frees a single page)
                    self._conn.executescript("PRAGMA incremental_vacuum;")
                except sqlite3.Error:
                    pass  # (a file another process holds locked: it keeps them until then)
            self._conn.close()
