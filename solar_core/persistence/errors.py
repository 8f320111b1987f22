"""The error persistence raises when a database cannot be used as asked."""

from __future__ import annotations


class PersistenceError(RuntimeError):
    """A database, snapshot or log that cannot be used: foreign, corrupted, from a newer
    version, or in disagreement with the memory being opened. Nothing was written."""
