"""Where the reference data lies (it is never copied into the repository)."""

from __future__ import annotations

import os
from pathlib import Path


def data_path(name: str) -> Path:
    """``name`` in the reference data folder (LoCoMo, the paper's synthetic workloads), which is
    read where it lies, never copied into the repository: ``$SOLAR_DATA/name``. Tests that need
    it skip when ``SOLAR_DATA`` is not set."""
    return Path(os.environ.get("SOLAR_DATA") or "/SOLAR_DATA-is-not-set") / name
