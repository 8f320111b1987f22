"""Values for the tests of bounded metadata and store values."""

from __future__ import annotations

from typing import Any


def doubled(levels: int) -> Any:
    """``levels`` + 1 lists, ``2**levels`` values spelled out: each list holds the next twice."""
    value: Any = [1]
    for _ in range(levels):
        value = [value, value]
    return value
