"""Fixtures for the whole suite (helpers live in :mod:`tests.support`)."""

from __future__ import annotations

import os

import pytest

from solar_core.embedders.minilm import minilm_installed
from tests.support.memories import POLICIES
from tests.support.postgres import postgres_schema_url
from tests.support.profiles import PROFILE

#: a module that registers policies when imported: only its own tests import it (through a
#: fixture that takes the names out again), not the collection of doctests, which imports
#: every module and would show its policies to every later test
collect_ignore = ["support/newest_out.py"]


def pytest_report_header() -> list[str]:
    minilm = "installed" if minilm_installed() else "not installed: tests marked minilm skip"
    return [
        f"hypothesis profile: {PROFILE} (HYPOTHESIS_PROFILE=fast|thorough); MiniLM {minilm}",
        f"BLAS: {blas_kernels()} (the tests marked ranking run under two kernels in CI)",
    ]


def blas_kernels() -> str:
    """The BLAS numpy computes cosines with and the kernel it picked for this processor (which
    ``OPENBLAS_CORETYPE`` overrides), as threadpoolctl reports them."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # a plain `pip install -e .[dev]`: benchmarks/ brings threadpoolctl
        return "unknown (threadpoolctl not installed)"
    import numpy as np

    np.ones(2) @ np.ones(2)  # numpy loads its BLAS on first use
    found = [
        f"{i['internal_api']} {i.get('version')} {i.get('architecture', '')}".strip()
        for i in threadpool_info()
        if i["user_api"] == "blas"
    ]
    return ", ".join(found) or "none found"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests of all-MiniLM-L6-v2 (marked ``minilm``) need the ``minilm`` extra (torch), which
    ``make test`` leaves out: they skip without it, unless ``SOLAR_REQUIRE_MINILM=1`` (CI, which
    runs ``make test MINILM=1``) makes the missing extra an error."""
    if minilm_installed():
        return
    if os.environ.get("SOLAR_REQUIRE_MINILM") == "1":
        raise pytest.UsageError(
            "SOLAR_REQUIRE_MINILM=1 but the minilm extra is not installed: run make test MINILM=1"
        )
    skip = pytest.mark.skip(reason="needs the minilm extra (torch): make test MINILM=1")
    for item in items:
        if "minilm" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=POLICIES)
def policy(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def minilm() -> object:
    """One all-MiniLM-L6-v2 embedder for the whole session (loading it takes seconds)."""
    from solar_core import MiniLMEmbedder

    return MiniLMEmbedder()


# -- persistence: a database URL per test, SQLite and PostgreSQL --------------------------------


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: object) -> str:
    """A fresh database: a SQLite file, or a PostgreSQL schema of the test server."""
    import re
    from pathlib import Path

    if request.param == "sqlite":
        return str(Path(str(tmp_path)) / "memory.db")
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[-50:]
    return postgres_schema_url(name)
