"""Persistent, scoped memories: SQLite by default, PostgreSQL for many processes.

>>> from solar_core.persistence import MemoryStore, Scope
>>> with MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash") as store:
...     _ = store.scope(user="alice", org="acme").add("prefers tea")
...     store.names()
['org=acme&user=alice']
"""

from solar_core.persistence.backend import Backend
from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.journal import deferred_retrievals
from solar_core.persistence.memory_store import (
    DEFAULT_CAPACITY,
    MemoryStore,
    ScopeView,
    default_capacity,
    open_backend,
)
from solar_core.persistence.postgres_backend import PostgresBackend
from solar_core.persistence.scope import Scope
from solar_core.persistence.sqlite_backend import SQLiteBackend

__all__ = [
    "DEFAULT_CAPACITY",
    "Backend",
    "MemoryStore",
    "PersistenceError",
    "PostgresBackend",
    "SQLiteBackend",
    "Scope",
    "ScopeView",
    "default_capacity",
    "deferred_retrievals",
    "open_backend",
]
