"""A PostgreSQL schema per test on the throwaway server (a failure, not a skip, when CI requires
PostgreSQL)."""

from __future__ import annotations

import pytest


def _postgres_admin_url() -> str:
    """The throwaway server's URL; a failure when CI requires PostgreSQL, else a skip."""
    import os

    from solar_bench.pg_server import start_postgres

    url, reason = start_postgres()
    if url is None:
        if os.environ.get("SOLAR_REQUIRE_POSTGRES"):
            pytest.fail(f"PostgreSQL is required here (SOLAR_REQUIRE_POSTGRES) but: {reason}")
        pytest.skip(f"no PostgreSQL server could be started: {reason}")
    return url


def postgres_schema_url(name: str) -> str:
    """A URL whose tables live in a new, empty schema ``name`` (one per test: isolation without
    the cost of a database per test)."""
    import psycopg

    admin = _postgres_admin_url()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')  # name from the test itself
        conn.execute(f'CREATE SCHEMA "{name}"')
    sep = "&" if "?" in admin else "?"
    return f"{admin}{sep}options=-csearch_path%3D{name}"
