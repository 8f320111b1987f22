"""Shared helpers for the test suite."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from solar_core import SolarMemory, available_policies

POLICIES = available_policies()


def data_path(name: str) -> Path:
    """``name`` in the reference data folder (LoCoMo, the paper's synthetic workloads), which is
    read where it lies, never copied into the repository: ``$SOLAR_DATA/name``. Tests that need
    it skip when ``SOLAR_DATA`` is not set."""
    return Path(os.environ.get("SOLAR_DATA") or "/SOLAR_DATA-is-not-set") / name


class Clock:
    """A clock the test moves by hand (``clock.now += DAY``): decay and expiry see days pass."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def full_state(memory: SolarMemory) -> bytes:
    """Everything a memory holds (store, policies, RNG, counters, trace) as bytes.

    Two equal results mean the memory is exactly as it was: tests for bad input compare this
    before and after the failing call.
    """
    return pickle.dumps(memory, protocol=pickle.HIGHEST_PROTOCOL)


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def topic_vectors(
    n_topics: int, per_topic: int, dim: int = 32, spread: float = 0.1, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Topic centres ``(n_topics, dim)`` and items ``(n_topics, per_topic, dim)``, unit rows."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.normal(size=(n_topics, dim)))
    items = unit(centres[:, None, :] + rng.normal(scale=spread, size=(n_topics, per_topic, dim)))
    return centres, items


@pytest.fixture(params=POLICIES)
def policy(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# -- exact-sequence helpers: one axis per item, so retrieval hits are fully controlled ----------
def onehot(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def stored_ids(memory: SolarMemory) -> list[str]:
    return [item.id for item in memory.items()]


def add_onehot(memory: SolarMemory, name: str, axis: int) -> str | None:
    """Add item ``name`` on ``axis``; it must be admitted. Returns the evicted id, if any."""
    decision = memory.add(f"text {name}", embedding=onehot(axis, memory.dim), item_id=name)
    assert decision.admitted and decision.item_id == name
    memory.check_invariants()
    return decision.evicted


def hit_axes(memory: SolarMemory, *weighted: tuple[int, float]) -> list[str]:
    """Retrieve with a query that ranks the given axes by weight (k = number of axes)."""
    query = np.zeros(memory.dim, dtype=np.float32)
    for axis, weight in weighted:
        query[axis] = weight
    hits = memory.retrieve(embedding=query, k=len(weighted))
    memory.check_invariants()
    return [h.id for h in hits]


@pytest.fixture(scope="session")
def minilm() -> object:
    """One all-MiniLM-L6-v2 embedder for the whole session (loading it takes seconds)."""
    from solar_core import MiniLMEmbedder

    return MiniLMEmbedder()


# -- persistence: a database URL per test, SQLite and PostgreSQL --------------------------------
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


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: object) -> str:
    """A fresh database: a SQLite file, or a PostgreSQL schema of the test server."""
    import re
    from pathlib import Path

    if request.param == "sqlite":
        return str(Path(str(tmp_path)) / "memory.db")
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[-50:]
    return postgres_schema_url(name)
