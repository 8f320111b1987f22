"""What the published package carries: the Apache-2.0 text, its SPDX licence, the project URLs."""

from __future__ import annotations

import hashlib
import sys
import zipfile
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10 has no tomllib; pytest itself depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
LICENSE = ROOT / "LICENSE"
#: sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt (newlines as LF)
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
#: the intended public home of the project
HOME = "https://github.com/solar-agent-memory/solar-memory"
URL_NAMES = {"Homepage", "Documentation", "Repository", "Issues"}


def pyproject() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def license_text() -> str:
    # a checkout with CRLF line endings (git autocrlf) holds the same licence
    return LICENSE.read_text(encoding="utf-8").replace("\r\n", "\n")


def test_license_is_the_apache_2_text() -> None:
    text = license_text()
    assert "Apache License\n                           Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX" in text
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == APACHE_2_SHA256  # word for word


def test_pyproject_declares_the_license_and_the_urls() -> None:
    meta = pyproject()
    project = meta["project"]
    assert project["license"] == "Apache-2.0"  # PEP 639: an SPDX expression, not a table
    assert project["license-files"] == ["LICENSE"]
    urls = project["urls"]
    assert set(urls) == URL_NAMES
    assert all(
        u.startswith("https://github.com/solar-agent-memory/solar-memory") for u in urls.values()
    )
    assert urls["Issues"].endswith("/issues")
    assert urls["Documentation"].endswith("#readme")
    # license-files and License-Expression metadata need hatchling 1.27 (PEP 639 support)
    assert "hatchling>=1.27" in meta["build-system"]["requires"]


def test_the_built_wheel_carries_the_license_and_the_urls(tmp_path: Path) -> None:
    try:
        from hatchling.builders.wheel import WheelBuilder
    except ImportError:  # a missing build backend must fail CI, not skip the check
        pytest.fail("hatchling is not installed: it belongs in the `dev` extra (hatchling>=1.27)")
    builder = WheelBuilder(str(ROOT))
    (wheel,) = builder.build(directory=str(tmp_path), versions=["standard"])
    version = pyproject()["project"]["version"]
    dist_info = f"solar_memory-{version}.dist-info"
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        assert f"{dist_info}/licenses/LICENSE" in names
        carried = whl.read(f"{dist_info}/licenses/LICENSE").decode("utf-8")
        metadata = HeaderParser().parsestr(whl.read(f"{dist_info}/METADATA").decode("utf-8"))
        entry_points = whl.read(f"{dist_info}/entry_points.txt").decode("utf-8")
    assert "solar-memory = solar_core.cli.main:run" in entry_points
    assert carried.replace("\r\n", "\n") == license_text()
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    project_urls = dict(line.split(", ", 1) for line in metadata.get_all("Project-URL") or [])
    assert project_urls == pyproject()["project"]["urls"]
    # the four packages are what ships: tests, docs and data stay out of the wheel
    tops = {name.split("/")[0] for name in names} - {dist_info}
    assert tops == {"solar_core", "langchain_solar", "llamaindex_solar", "mcp_solar"}
    # nothing in it serves only benchmarks, demos or tests: those are benchmarks/'s distribution
    modules = {name for name in names if name.endswith(".py")}
    assert not {m for m in modules if "bench" in m or "demo" in m or "pg_server" in m}
    requires = metadata.get_all("Requires-Dist") or []
    assert [r for r in requires if "extra ==" not in r] == ["numpy>=1.24"]  # the core: numpy


def test_the_core_imports_without_pydantic() -> None:
    """Only the adapters' parameter models use pydantic (the frameworks bring it): the core
    install, numpy alone, imports every module of ``solar_core``, the adapters' shared
    ``integrations`` included (the optional MiniLM and PostgreSQL modules aside)."""
    import subprocess

    code = (
        "import importlib, pkgutil, sys\n"
        "sys.modules['pydantic'] = None\n"  # any import of pydantic now fails
        "import solar_core\n"
        "for info in pkgutil.walk_packages(solar_core.__path__, 'solar_core.'):\n"
        "    if info.name not in ('solar_core.embedders.minilm',\n"
        "                         'solar_core.persistence.postgres_backend'):\n"
        "        importlib.import_module(info.name)\n"
        "m = solar_core.SolarMemory('solar', capacity=3, embedder='hash'); m.add('x')\n"
        "print(len(m))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "1"


def test_the_benchmarks_are_their_own_distribution() -> None:
    with (ROOT / "benchmarks" / "pyproject.toml").open("rb") as f:
        bench = tomllib.load(f)
    assert bench["project"]["scripts"] == {
        "solar-bench": "solar_bench.cli:main",
        "solar-demo": "solar_bench.demo:main",
    }
    assert bench["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["solar_bench"]
    # the library's wheel installs one command of its own: the one that looks inside a store
    assert pyproject()["project"]["scripts"] == {"solar-memory": "solar_core.cli.main:run"}
