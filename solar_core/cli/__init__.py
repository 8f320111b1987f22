"""The ``solar-memory`` command: list a store's scopes, read a scope's items and decisions,
export them, plot how a memory evolved, and forget scopes (see :mod:`.main`)."""

from solar_core.cli.main import main

__all__ = ["main"]
