"""Items' records as state columns, and read back checked: the memory's slots and its history
of superseded values (:mod:`solar_core.engine.history`) hold the same fields."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from solar_core.basics.records import CATEGORIES, Record, copy_metadata
from solar_core.basics.state import MOST_COUNT, State, StateReader


def record_columns(records: Sequence[Record | None], prefix: str = "") -> State:
    """The fields of ``records`` as columns named ``prefix`` + field (``None``: an empty slot).

    >>> cols = record_columns([Record("tea", {}, 1, 0.0), None], "item.")
    >>> cols["item.text"], cols["item.step"].tolist()
    (['tea', None], [1, 0])
    """

    def column(name: str, fill: Any = None) -> list[Any]:  # ``fill`` in empty slots
        return [fill if r is None else getattr(r, name) for r in records]

    listed = ("text", "metadata", "category", "valid_until", "last_seen", "key")
    return {
        **{prefix + name: column(name) for name in listed},
        prefix + "step": np.asarray(column("step", 0), dtype=np.int64),
        prefix + "created_at": np.asarray(column("created_at", 0.0), dtype=np.float64),
        prefix + "importance": np.asarray(column("importance", 0.0), dtype=np.float64),
        prefix + "seen": np.asarray(column("seen", 0), dtype=np.int64),
        prefix + "superseded_at": column("superseded_at"),
        prefix + "superseded_by": column("superseded_by"),
    }


def read_records(
    read: StateReader,
    used: Sequence[bool],
    prefix: str = "",
    where: Callable[[int], str] = "the item in slot {}".format,
) -> dict[int, Record]:
    """The records of :func:`record_columns`, by position, for the positions ``used`` (the
    others must be empty), each field checked; ``where(i)`` names position ``i`` in an error."""
    n = len(used)
    texts = read.listed(prefix + "text", n)
    metadata = read.value(prefix + "metadata")  # checked as add() checks it, below
    if type(metadata) is not list or len(metadata) != n:
        raise read.fail(f"{prefix}metadata must be a list of {n}")
    categories = read.listed(prefix + "category", n)
    until = read.listed(prefix + "valid_until", n)
    steps = read.array(prefix + "step", np.int64, (n,), lo=0, hi=MOST_COUNT).tolist()
    created = read.array(prefix + "created_at", np.float64, (n,)).tolist()
    importance = read.array(prefix + "importance", np.float64, (n,), lo=0.0, hi=1.0).tolist()
    seen = read.array(prefix + "seen", np.int64, (n,), lo=0, hi=MOST_COUNT).tolist()
    last_seen = read.listed(prefix + "last_seen", n)
    keys, since = read.listed(prefix + "key", n), read.listed(prefix + "superseded_at", n)
    by = read.listed(prefix + "superseded_by", n)
    records: dict[int, Record] = {}
    for i in range(n):
        text, valid, here = texts[i], until[i], where(i)
        if not used[i]:
            if text is not None or metadata[i] is not None:
                raise read.fail(f"empty slot {i} holds an item")
            continue
        if type(text) is not str or not text.strip():
            raise read.fail(f"{here} has no text")
        if type(metadata[i]) is not dict:
            raise read.fail(f"the metadata of {here} is not a mapping")
        if categories[i] not in CATEGORIES:
            raise read.fail(f"{here} has no known category")
        if valid is not None and not (number(valid) and math.isfinite(valid)):
            raise read.fail(f"{here} has a bad valid_until {valid!r}")
        last, key, at, after = last_seen[i], keys[i], since[i], by[i]
        if seen[i] < 1 or last is not None and not (number(last) and math.isfinite(last)):
            raise read.fail(f"{here} has bad repeat counts")
        if not (
            (key is None or type(key) is str and key)
            and (at is None) == (after is None)
            and (at is None or key is not None and number(at) and math.isfinite(at))
            and (after is None or type(after) is str)
        ):
            raise read.fail(f"{here} has a bad key or supersession")
        try:
            meta = copy_metadata(metadata[i], f"the metadata of {here}")
        except ValueError as err:
            raise read.fail(str(err)) from None
        records[i] = Record(
            *(text, meta, steps[i], created[i], categories[i], importance[i]),
            *(valid, seen[i], None if last is None else float(last)),
            *(key, None if at is None else float(at), after),
        )
    return records


#: the largest int a float holds
LARGEST = int(np.finfo(np.float64).max)


def number(value: object) -> bool:
    """A number a float holds (an int past the floats' range is none)."""
    return type(value) is float or (type(value) is int and abs(value) <= LARGEST)
