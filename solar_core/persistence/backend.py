"""Where persisted memories live: the tables, and the SQL both backends share.

The data model (one set of tables per database, every row keyed by its scope):

- ``solar_scopes`` -- one row per *stored* scope (created by its first write): its key and
  parts, the settings it was created with (JSON, with the fingerprint of the embedder that made
  its vectors), ``seq`` (the last logged step) and ``snapshot_seq``;
- ``solar_ops`` -- the log: one row per step since the snapshot (its kind, its inputs as JSON,
  the query or item vector as float32 bytes, the clock readings, a digest of the outcome);
- ``solar_snapshots`` -- the latest full state of each scope (see :mod:`.codec`);
- ``solar_items`` -- what each scope stores now (id, text, metadata, vector, category,
  created_at, valid_until, step): the log's outcome, kept in the same transaction for queries
  and audits ("what do we remember about this user?").

Every statement is parameterised: no value is ever formatted into SQL.

**Row checksums.** Every ``solar_ops`` and ``solar_items`` row carries ``checksum``: a BLAKE2b
digest of the row's fields *and of its scope id and step or item id* (a row copied to another
place does not verify there), checked whenever the row is read -- a bit flip in a logged text
or vector is a :class:`PersistenceError`, not a silently different memory. (Not a defence
against whoever can write the database: they can recompute it. That is what the snapshot
format's checks and the replay digests are for.)

**Schema versions.** A database records its schema version (``solar_meta``; SQLite's
``user_version`` too). This version writes schema :data:`SCHEMA_VERSION`; every later change of
the tables appends a migration to :data:`MIGRATIONS` (its position in the list is the version
it upgrades from) and a line to ``CHANGELOG.md``, and a writer opening an older database runs
the migrations it lacks in one transaction. A database of a version this one does not know is
refused, untouched, with what to do.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from solar_core.persistence.errors import PersistenceError

#: the changes of the tables since the first release, in order: ``MIGRATIONS[i]`` brings a
#: database of schema ``i + 1`` to ``i + 2``, in the caller's write transaction
MIGRATIONS: list[Callable[[Backend], None]] = []
#: the schema this code writes: the first one, and one more per migration
SCHEMA_VERSION = 1 + len(MIGRATIONS)
FORMAT = "solar-memory"


def unknown_schema(database: str, version: object) -> PersistenceError:
    """The refusal of a database of a schema version this code does not know."""
    return PersistenceError(
        f"{database} has schema version {version}, which this version of solar-memory does not "
        f"know (it knows 1 to {SCHEMA_VERSION}): it was written by another version of "
        "solar-memory. Open it with that version; it was left untouched"
    )


_TABLES = """
CREATE TABLE IF NOT EXISTS solar_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS solar_scopes (
    id {serial},  -- never reused: a stale handle cannot write into a new scope
    key TEXT NOT NULL UNIQUE,
    org TEXT, project TEXT, user_id TEXT, session TEXT,
    config TEXT NOT NULL,
    seq BIGINT NOT NULL DEFAULT 0,
    snapshot_seq BIGINT NOT NULL DEFAULT 0,
    created_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS solar_ops (
    scope_id BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    kind TEXT NOT NULL,
    args TEXT NOT NULL,
    vector {blob},
    clocks TEXT NOT NULL,
    digest TEXT NOT NULL,
    at DOUBLE PRECISION NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (scope_id, seq)
);
CREATE TABLE IF NOT EXISTS solar_snapshots (
    scope_id BIGINT PRIMARY KEY,
    seq BIGINT NOT NULL,
    state {blob} NOT NULL,
    at DOUBLE PRECISION NOT NULL
);
CREATE TABLE IF NOT EXISTS solar_items (
    scope_id BIGINT NOT NULL,
    item_id TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL,
    vector {blob} NOT NULL,
    category TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    valid_until DOUBLE PRECISION,
    step BIGINT NOT NULL,
    checksum TEXT NOT NULL,
    PRIMARY KEY (scope_id, item_id)
)
"""

#: what a sweep asks (which scopes hold an item past its valid_until?) in time that grows with
#: the items due, not with the items stored
_DUE_INDEX = (
    "CREATE INDEX IF NOT EXISTS solar_items_due ON solar_items (valid_until) "
    "WHERE valid_until IS NOT NULL"
)


def new_database_id() -> str:
    """A database's id: random, drawn once (see :meth:`Backend.database_id`)."""
    return secrets.token_hex(16)


@dataclass(frozen=True, slots=True)
class ScopeRow:
    id: int
    key: str
    config: str
    seq: int
    snapshot_seq: int


@dataclass(frozen=True, slots=True)
class OpRow:
    seq: int
    kind: str
    args: str
    vector: bytes | None
    clocks: str
    digest: str


#: an item change a step made: ("put", id, columns...) or ("del", id)
ItemChange = tuple[Any, ...]

_OP_COLUMNS = "seq, kind, args, vector, clocks, digest"
_ITEM_COLUMNS = "item_id, text, metadata, vector, category, created_at, valid_until, step"


def row_checksum(scope_id: int, fields: Sequence[Any], vector: bytes | None) -> str:
    """The checksum of a log or item row: its scope, its text and number fields (JSON: exact
    for floats, unambiguous) and its vector bytes.

    >>> row_checksum(1, [2, "add", "{}"], b"x") == row_checksum(1, [2, "add", "{}"], b"x")
    True
    >>> row_checksum(1, [2, "add", "{}"], b"x") == row_checksum(2, [2, "add", "{}"], b"x")
    False
    """
    digest = hashlib.blake2b(
        json.dumps([scope_id, *fields], ensure_ascii=False).encode("utf-8", "surrogatepass"),
        digest_size=16,
    )
    if vector is not None:
        digest.update(b"\x01")
        digest.update(vector)
    return digest.hexdigest()


def _op_checksum(scope_id: int, op: OpRow) -> str:
    return row_checksum(scope_id, [op.seq, op.kind, op.args, op.clocks, op.digest], op.vector)


def _item_checksum(scope_id: int, row: Sequence[Any]) -> str:
    """``row``: ``(item_id, text, metadata, vector, category, created_at, valid_until, step)``."""
    vector = None if row[3] is None else bytes(row[3])
    fields = [row[0], row[1], row[2], row[4], float(row[5])]
    fields += [None if row[6] is None else float(row[6]), int(row[7])]
    return row_checksum(scope_id, fields, vector)


def _checked(what: str, stored: object, computed: str) -> None:
    if stored != computed:
        why = "it has no checksum" if stored is None else "checksum mismatch"
        raise PersistenceError(
            f"{what} is corrupted ({why}); the database was damaged or edited outside "
            "solar-memory (or by an older solar-memory still running against it)"
        )


class Backend(ABC):
    """A database connection and the statements of the data model.

    Every method runs inside :meth:`transaction`, which holds :attr:`lock`: one connection
    serves every scope of a store, one statement at a time.

    **A database of your own** is a subclass that implements three methods -- a
    :meth:`transaction` that holds :attr:`lock`, :meth:`execute` (one statement with ``?``
    placeholders: translate them if your driver wants others) and :meth:`close` -- and sets
    :attr:`url` (how the store names it). Its ``__init__`` calls :meth:`create_tables` with its
    SQL types for an auto-increment key and a byte string (override :meth:`lock_schema` if
    two processes may make the tables at once, :meth:`named` if the URL holds a secret). The
    statements are plain SQL
    (``CREATE TABLE IF NOT EXISTS``, ``INSERT ... ON CONFLICT``, a partial index), so any
    database that runs them serves: :class:`~.sqlite_backend.SQLiteBackend` and
    :class:`~.postgres_backend.PostgresBackend` are two such subclasses (each also checks that
    a database is not another application's before writing to it, and PostgreSQL locks a
    scope's row with ``FOR UPDATE``, :attr:`lock_clause`). Pass it as
    ``MemoryStore(backend=...)``.
    """

    #: the SQL of a locking read of a scope row (PostgreSQL: ``FOR UPDATE``)
    lock_clause = ""
    #: ``key`` compared byte by byte (keys are ASCII: percent-encoded), so that a range of keys
    #: is the keys sharing a prefix whatever the database's collation
    ordered_key = "key"
    #: the index that lets a range of ``ordered_key`` be read without a scan
    key_index: str | None = None
    url: str

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._database_id: str | None = None
        #: whether a :class:`MemoryStore` serves from it (one store per backend)
        self.taken = False

    def database_id(self) -> str:
        """The random id drawn when the database was created (or upgraded to schema 3): what
        tells apart two databases' scopes of the same key and row id ("" if it has none: a
        schema 2 database read as it is)."""
        with self.lock:
            if self._database_id is None:
                row = self.execute("SELECT value FROM solar_meta WHERE key = 'database'")
                found = row.fetchone()
                self._database_id = "" if found is None else str(found[0])
            return self._database_id

    # -- connection ---------------------------------------------------------------------------
    @abstractmethod
    def transaction(self, write: bool) -> AbstractContextManager[None]:
        """One transaction; ``write=True`` takes the write lock for the whole of it."""

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """Run one parameterised statement (``?`` placeholders); return its cursor."""

    def version_token(self) -> object:
        """Changes whenever another connection commits (``None``: unknown, always check)."""
        return None

    @abstractmethod
    def close(self) -> None: ...

    def create_tables(self, serial: str, blob: str) -> None:
        """Make the store's tables in a database without them, with ``serial`` the SQL type of
        an auto-increment key and ``blob`` a byte string's (SQLite: ``"INTEGER PRIMARY KEY
        AUTOINCREMENT"``, ``"BLOB"``); in one that has them, check they are this library's and
        upgrade an older schema. One write transaction."""
        with self.transaction(write=True):
            self.lock_schema()
            self.execute(_TABLES.split(";")[0])  # solar_meta: what says whose tables these are
            rows = dict(self.execute("SELECT key, value FROM solar_meta").fetchall())
            if not rows:
                for statement in self._schema(serial, blob):
                    self.execute(statement)
                self.execute(
                    "INSERT INTO solar_meta (key, value) "
                    "VALUES ('format', ?), ('schema', ?), ('database', ?)",
                    (FORMAT, str(SCHEMA_VERSION), new_database_id()),
                )
                return
            if rows.get("format") != FORMAT:
                raise PersistenceError(
                    f"{self.named()} has a solar_meta table of another application; it was "
                    "left untouched"
                )
            version = rows.get("schema", "0")
            if version not in {str(v) for v in range(1, SCHEMA_VERSION + 1)}:
                raise unknown_schema(self.named(), version)
            if int(version) < SCHEMA_VERSION:  # (under the schema lock: one process upgrades)
                self.migrate(int(version))

    def lock_schema(self) -> None:
        """Make concurrent first users of one database wait for each other while
        :meth:`create_tables` runs (in its transaction). SQLite's write transaction does it
        already; PostgreSQL takes an advisory lock."""

    def named(self) -> str:
        """The database as error messages name it (PostgreSQL: not its URL, which may hold a
        password)."""
        return self.url

    def _schema(self, serial: str, blob: str) -> list[str]:
        tables = [s.format(serial=serial, blob=blob) for s in _TABLES.split(";")]
        return tables + self._indexes()

    def _indexes(self) -> list[str]:
        return [_DUE_INDEX] + ([self.key_index] if self.key_index else [])

    def migrate(self, version: int) -> None:
        """Bring a schema ``version`` database to :data:`SCHEMA_VERSION` (in the caller's write
        transaction): the migrations it lacks, in order."""
        for migration in MIGRATIONS[version - 1 :]:
            migration(self)
        self.execute("UPDATE solar_meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))

    # -- scopes -------------------------------------------------------------------------------
    def find_scope(self, key: str, lock: bool = False) -> ScopeRow | None:
        row = self.execute(
            "SELECT id, key, config, seq, snapshot_seq FROM solar_scopes WHERE key = ?"
            + (self.lock_clause if lock else ""),
            (key,),
        ).fetchone()
        return None if row is None else ScopeRow(*row)

    def create_scope(self, key: str, parts: dict[str, str], config: str, now: float) -> bool:
        """Insert the scope's row; ``False`` if another connection inserted it first."""
        cursor = self.execute(
            "INSERT INTO solar_scopes (key, org, project, user_id, session, config, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
            (
                key,
                parts.get("org"),
                parts.get("project"),
                parts.get("user"),
                parts.get("session"),
                config,
                now,
            ),
        )
        return bool(cursor.rowcount == 1)

    def scope_seqs(self, scope_id: int, key: str, lock: bool) -> tuple[int, int, str] | None:
        """``(seq, snapshot_seq, config)`` of the scope, or ``None`` if it was forgotten. (The
        config comes along for free: a process notices another one re-embedding the scope.)"""
        row = self.execute(
            "SELECT seq, snapshot_seq, config FROM solar_scopes WHERE id = ? AND key = ?"
            + (self.lock_clause if lock else ""),
            (scope_id, key),
        ).fetchone()
        return None if row is None else (int(row[0]), int(row[1]), str(row[2]))

    def update_config(self, scope_id: int, old: str, new: str) -> bool:
        """Replace the scope's config if it is still ``old`` (compare and set); whether it was."""
        cursor = self.execute(
            "UPDATE solar_scopes SET config = ? WHERE id = ? AND config = ?", (new, scope_id, old)
        )
        return bool(cursor.rowcount == 1)

    def rebuild_scope(
        self,
        scope_id: int,
        seq: int,
        state: bytes,
        config: str,
        items: list[ItemChange],
        at: float,
    ) -> None:
        """Replace everything a scope holds: its config, its state (a snapshot at ``seq`` and
        no log) and its items rows (``("put", ...)`` changes). A migration, not a step."""
        self.write_snapshot(scope_id, seq, state, at)
        self.execute("DELETE FROM solar_ops WHERE scope_id = ?", (scope_id,))
        self.execute("DELETE FROM solar_items WHERE scope_id = ?", (scope_id,))
        self._put_items(scope_id, items)
        self.execute(
            "UPDATE solar_scopes SET config = ?, seq = ? WHERE id = ?", (config, seq, scope_id)
        )

    def scope_keys(self, where: dict[str, str] | None = None) -> list[str]:
        """Every scope's key, oldest first; ``where`` filters on parts."""
        columns = {"org": "org", "project": "project", "user": "user_id", "session": "session"}
        clauses, params = [], []
        for part, value in (where or {}).items():
            clauses.append(f"{columns[part]} = ?")  # column names from a fixed table
            params.append(value)
        sql = "SELECT key FROM solar_scopes"
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        return [r[0] for r in self.execute(sql + " ORDER BY id", params).fetchall()]

    def scope_keys_from(self, prefix: str) -> list[str]:
        """The keys that begin with ``prefix`` (an ASCII str), oldest first: a range of the
        key index, whatever the number of other scopes."""
        rows = self.execute(
            f"SELECT key, id FROM solar_scopes WHERE {self.ordered_key} >= ? "  # fixed names
            f"AND {self.ordered_key} < ? ORDER BY id",
            (prefix, prefix + "\x7f"),  # past every ASCII key that begins with it
        ).fetchall()
        return [str(r[0]) for r in rows if str(r[0]).startswith(prefix)]

    def due_scope_keys(self, now: float) -> list[str]:
        """The keys of the scopes holding an item whose ``valid_until`` is ``<= now``, oldest
        first (a range of the due index)."""
        rows = self.execute(
            "SELECT s.key, s.id FROM solar_scopes s WHERE s.id IN "
            "(SELECT i.scope_id FROM solar_items i WHERE i.valid_until <= ?) ORDER BY s.id",
            (now,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def scope_summaries(self) -> list[tuple[str, str, int, float, int]]:
        """``(key, config, seq, created_at, items)`` of every scope, oldest first: what a
        listing shows without opening any memory."""
        rows = self.execute(
            "SELECT s.key, s.config, s.seq, s.created_at, "
            "(SELECT COUNT(*) FROM solar_items i WHERE i.scope_id = s.id) "
            "FROM solar_scopes s ORDER BY s.id"
        ).fetchall()
        return [(str(r[0]), str(r[1]), int(r[2]), float(r[3]), int(r[4])) for r in rows]

    def delete_scope(self, scope_id: int) -> None:
        for table in ("solar_ops", "solar_snapshots", "solar_items"):
            self.execute(f"DELETE FROM {table} WHERE scope_id = ?", (scope_id,))
        self.execute("DELETE FROM solar_scopes WHERE id = ?", (scope_id,))

    # -- the log ------------------------------------------------------------------------------
    def ops_after(self, scope_id: int, seq: int, upto: int) -> Iterator[OpRow]:
        """The logged steps ``seq < s <= upto`` in order (``upto``: the seq read with them)."""
        rows = self.execute(
            f"SELECT {_OP_COLUMNS}, checksum FROM solar_ops "
            "WHERE scope_id = ? AND seq > ? AND seq <= ? ORDER BY seq",
            (scope_id, seq, upto),
        ).fetchall()
        for row in rows:
            vector = None if row[3] is None else bytes(row[3])
            op = OpRow(int(row[0]), row[1], row[2], vector, row[4], row[5])
            _checked(f"step {op.seq} of the log", row[6], _op_checksum(scope_id, op))
            yield op

    def append_op(
        self,
        scope_id: int,
        op: OpRow,
        at: float,
        items: list[ItemChange],
    ) -> None:
        self.execute(
            "INSERT INTO solar_ops (scope_id, seq, kind, args, vector, clocks, digest, at, "
            "checksum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                scope_id,
                op.seq,
                op.kind,
                op.args,
                op.vector,
                op.clocks,
                op.digest,
                at,
                _op_checksum(scope_id, op),
            ),
        )
        if items:
            self._put_items(scope_id, items)
        self.execute("UPDATE solar_scopes SET seq = ? WHERE id = ?", (op.seq, scope_id))

    def _put_items(self, scope_id: int, items: list[ItemChange]) -> None:
        for change in items:
            if change[0] == "put":
                self.execute(
                    "INSERT INTO solar_items (scope_id, item_id, text, metadata, vector, "
                    "category, created_at, valid_until, step, checksum) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (scope_id, *change[1:], _item_checksum(scope_id, change[1:])),
                )
            elif change[0] == "del":
                self.execute(
                    "DELETE FROM solar_items WHERE scope_id = ? AND item_id = ?",
                    (scope_id, change[1]),
                )
            else:  # "clear"
                self.execute("DELETE FROM solar_items WHERE scope_id = ?", (scope_id,))

    # -- snapshots ----------------------------------------------------------------------------
    def read_snapshot(self, scope_id: int) -> tuple[int, bytes] | None:
        row = self.execute(
            "SELECT seq, state FROM solar_snapshots WHERE scope_id = ?", (scope_id,)
        ).fetchone()
        return None if row is None else (int(row[0]), bytes(row[1]))

    def write_snapshot(
        self, scope_id: int, seq: int, state: bytes, at: float, purge: bool = True
    ) -> None:
        """Replace the scope's snapshot and drop the log it makes redundant: all of it with
        ``purge`` (a removal: the log must not keep the removed text), else only the steps the
        previous snapshot already covered. The interval kept lets another process that is a
        little behind replay steps instead of reading the whole snapshot."""
        if not purge:
            self.execute(
                "DELETE FROM solar_ops WHERE scope_id = ? AND seq <= "
                "(SELECT snapshot_seq FROM solar_scopes WHERE id = ?)",
                (scope_id, scope_id),
            )
        self.execute(
            "INSERT INTO solar_snapshots (scope_id, seq, state, at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (scope_id) DO UPDATE SET seq = excluded.seq, state = excluded.state, "
            "at = excluded.at",
            (scope_id, seq, state, at),
        )
        if purge:
            self.execute("DELETE FROM solar_ops WHERE scope_id = ? AND seq <= ?", (scope_id, seq))
        self.execute("UPDATE solar_scopes SET snapshot_seq = ? WHERE id = ?", (seq, scope_id))

    # -- inspection ---------------------------------------------------------------------------
    def item_rows(self, scope_id: int) -> list[tuple[Any, ...]]:
        """``(item_id, text, metadata, vector, category, created_at, valid_until, step)`` rows,
        each checked against its checksum."""
        rows = []
        for row in self.execute(
            f"SELECT {_ITEM_COLUMNS}, checksum FROM solar_items WHERE scope_id = ? ORDER BY step",
            (scope_id,),
        ).fetchall():
            _checked(f"the item row {row[0]!r}", row[-1], _item_checksum(scope_id, row[:-1]))
            rows.append(tuple(row[:-1]))
        return rows

    def op_count(self, scope_id: int) -> int:
        row = self.execute(
            "SELECT COUNT(*) FROM solar_ops WHERE scope_id = ?", (scope_id,)
        ).fetchone()
        return int(row[0])
