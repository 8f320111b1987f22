"""Persistent, scoped memories: SQLite by default, PostgreSQL for many processes.

>>> from solar_core.persistence import MemoryStore, Scope
>>> with MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash") as store:
...     _ = store.scope(user="alice", org="acme").add("prefers tea")
...     store.names()
['org=acme&user=alice']
"""

from .backend import Backend
from .errors import PersistenceError
from .memory_store import DEFAULT_CAPACITY, MemoryStore, ScopeView, open_backend
from .postgres_backend import PostgresBackend
from .scope import Scope
from .sqlite_backend import SQLiteBackend

__all__ = [
    "DEFAULT_CAPACITY",
    "Backend",
    "MemoryStore",
    "PersistenceError",
    "PostgresBackend",
    "SQLiteBackend",
    "Scope",
    "ScopeView",
    "open_backend",
]
