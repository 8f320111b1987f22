"""Every package an install of this project brings is pinned, so a commit installs the same
versions on any day: ``constraints.txt`` holds the pins chosen by hand, ``constraints.lock`` all
that they resolve to (``make lock`` writes it), and the Makefile installs with both."""

from __future__ import annotations

import importlib.metadata
import re
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
#: the project's own distributions, installed editable from the checkout: never locked
OWN = {canonicalize_name("solar-memory"), canonicalize_name("solar-memory-bench")}


def pins(path: Path) -> dict[str, str]:
    """``name -> version`` of a constraints file's ``name==version`` lines (comments skipped)."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            requirement = Requirement(line)
            (spec,) = requirement.specifier  # one exact pin per line
            assert spec.operator == "==", f"{path.name}: {line!r} is not an exact pin"
            name = canonicalize_name(requirement.name)
            assert name not in out, f"{path.name} pins {name} twice"
            out[name] = spec.version
    return out


def test_the_lock_pins_exact_versions_and_agrees_with_the_hand_pins() -> None:
    # pip refuses two constraints files that pin one package to two versions: a hand pin
    # changed without `make lock` fails here first, with the fix in the message
    lock = pins(ROOT / "constraints.lock")
    assert not OWN & set(lock), "the project's own packages are installed editable, not locked"
    for name, version in pins(ROOT / "constraints.txt").items():
        assert name in lock, f"{name} is pinned in constraints.txt but not locked: run make lock"
        spec = Requirement(f"{name}=={version}").specifier
        assert spec.contains(lock[name], prereleases=True), (
            f"constraints.txt pins {name}=={version}, the lock {lock[name]}: run make lock"
        )


def test_the_makefile_installs_with_the_lock() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^LOCK\s*:=\s*constraints\.lock$", makefile, re.M)
    assert re.search(r"^PIP\s*:=.*-c constraints\.txt -c \$\(LOCK\)$", makefile, re.M)


def test_every_installed_package_is_pinned_in_the_lock() -> None:
    """The environment the tests run in holds only locked packages, each at its locked
    version: a dependency added without regenerating the lock fails here. Checked in the
    environment the Makefile builds (``make test`` without torch, CI with it: the lock holds
    both); any other environment may hold anything its owner installed."""
    if not (Path(sys.prefix) / ".installed-stamp").is_file():
        pytest.skip("not the environment `make install` builds (.venv with its stamp)")
    lock = pins(ROOT / "constraints.lock")
    unpinned = []
    for dist in importlib.metadata.distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name in OWN:
            continue
        if name not in lock or Version(lock[name]) != Version(dist.version):
            locked = f"locked at {lock[name]}" if name in lock else "not in the lock"
            unpinned.append(f"{name}=={dist.version} ({locked})")
    assert not unpinned, (
        "installed but not pinned by constraints.lock (run `make lock`, then `make install`):\n"
        + "\n".join(sorted(unpinned))
    )
