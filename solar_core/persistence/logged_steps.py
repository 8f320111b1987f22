"""The steps a scope's log holds: one entry per kind, its fields by name, and the checks a
replay makes -- those the call itself makes before it is logged.

A log row is ``kind``, a JSON object of the step's inputs and, for a retrieval or an add, the
unit vector. :data:`KINDS` says, for each kind, which fields it has (some only when set), how to
check them and which step they make; :func:`read` is the one way a row becomes a step.

>>> unit = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
>>> step = read("add", {"text": "tea at five", "metadata": {}, "id": None,
...     "category": "context", "valid_until": None, "verdict": None}, unit, 4)
>>> type(step).__name__, step.text
('Offer', 'tea at five')
>>> read("add", {"text": "tea at five", "metadata": {}, "id": None, "category": "context",
...     "valid_until": float("nan"), "verdict": None}, unit, 4)
Traceback (most recent call last):
...
ValueError: its inputs are not an add step's: valid_until must be a finite clock time, got nan
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from solar_core.basics.validation import FloatVector, check_k, check_offer, check_text
from solar_core.engine.steps import Clearing, Lookup, Offer, Rating, Removal, Renewal, Step, Sweep
from solar_core.persistence.errors import PersistenceError
from solar_core.retrieval.ranking import RETRIEVALS

#: how far from 1 a logged vector's squared norm may be (the store's check of its rows)
UNIT_TOLERANCE = 1e-4


class _Bad(ValueError):
    """A field the call would have refused."""


def _is(value: object, *kinds: type) -> bool:
    """``type(value)`` is one of ``kinds`` exactly (a ``bool`` is not an ``int`` here)."""
    return type(value) in kinds


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise _Bad(what)


def storable(text: str, what: str) -> None:
    """A text every backend can store as is: UTF-8 encodable (no lone surrogate) and without
    NUL (PostgreSQL's text cannot hold one). Checked before a step changes anything."""
    if "\x00" in text:
        raise ValueError(f"{what} contains a NUL character, which cannot be persisted")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(
            f"{what} is not valid Unicode ({err.reason}): cannot be persisted"
        ) from None


def _retrieve(args: dict[str, Any]) -> None:
    _need(args["ranking"] in RETRIEVALS, f"ranking {args['ranking']!r}")
    floor = args["floor"]
    _need(floor is None or _is(floor, float) and math.isfinite(floor), f"floor {floor!r}")
    _need(args.get("gate", True) is True, "a gate that is not true")  # logged only when set
    _need(args.get("superseded", True) is True, "a superseded flag that is not true")
    at = args.get("as_of")
    _need(at is None or _is(at, float, int) and math.isfinite(at), f"as_of {at!r}")
    if args["query"] is not None:
        check_text(args["query"], "query")
    check_k(args["k"])  # (as retrieve checks it: any int from 1)
    exclude = args["exclude"]
    _need(_is(exclude, list) and all(_is(i, str) for i in exclude), "exclude")


def _unit(value: object) -> bool:
    return _is(value, int, float) and 0.0 <= value <= 1.0  # type: ignore[operator]


def _feedback(args: dict[str, Any]) -> None:
    _need(_unit(args["reward"]) and _unit(args["quality"]), "a reward or quality outside [0, 1]")
    _need(_is(args["retrieval"], int, type(None)), f"retrieval {args['retrieval']!r}")


def _add(args: dict[str, Any]) -> None:
    # what add checks before it logs: the text, the id, the category, the expiry
    _need(_is(args["metadata"], dict) and _is(args["category"], str), "metadata or category")
    _need(_is(args["verdict"], bool, type(None)), f"verdict {args['verdict']!r}")
    _need(args.get("update", True) is True, "an update that is not true")  # logged when set
    key = args.get("key", "key")
    _need(_is(key, str) and bool(key.strip()), f"key {key!r}")
    storable(key, "key")
    _need(_is(args.get("extraction", ""), str), "an extraction note that is not a str")
    check_text(args["text"])
    storable(args["text"], "text")
    item_id = args["id"]
    check_offer(args["metadata"], item_id, args["category"], args["valid_until"], "update" in args)
    if item_id is not None:
        storable(item_id, "item_id")


def _remove(args: dict[str, Any]) -> None:
    _need(_is(args["id"], str), f"id {args['id']!r}")


def _renew(args: dict[str, Any]) -> None:
    entries = args["lifetimes"]
    _need(_is(entries, list) and len(entries) > 0, "no lifetimes")  # an empty renewal is no step
    for entry in entries:
        _need(_is(entry, list) and len(entry) == 3 and _is(entry[0], str), f"entry {entry!r}")
        seconds, seen = entry[1], entry[2]
        _need(_is(seconds, float) and 0.0 < seconds < math.inf, f"seconds {seconds!r}")
        _need(seen is None or _is(seen, int, float) and math.isfinite(seen), f"seen {seen!r}")
    _need(len({entry[0] for entry in entries}) == len(entries), "an id renewed twice")


def _nothing(args: dict[str, Any]) -> None:
    return None


def _sweep(kind: str) -> Callable[[dict[str, Any], FloatVector | None], Step]:
    return lambda args, vector: Sweep(kind)


@dataclass(frozen=True)
class Kind:
    """One kind of logged step: its fields (``optional``: logged only when set), whether it
    carries a vector, the checks of its fields and the step they make."""

    fields: frozenset[str]
    optional: frozenset[str]
    vector: bool
    check: Callable[[dict[str, Any]], None]
    build: Callable[[dict[str, Any], FloatVector | None], Step]


def _kind(
    fields: str,
    check: Callable[[dict[str, Any]], None],
    build: Callable[[dict[str, Any], Any], Step],
    optional: str = "",
    vector: bool = False,
) -> Kind:
    return Kind(frozenset(fields.split()), frozenset(optional.split()), vector, check, build)


KINDS: dict[str, Kind] = {
    "retrieve": _kind(
        "query k exclude ranking floor",
        _retrieve,
        lambda a, v: Lookup(
            v,
            a["query"],
            a["k"],
            True,
            set(a["exclude"]),
            a["ranking"],
            a["floor"],
            a.get("gate", False),
            a.get("as_of"),
            a.get("superseded", False),
        ),
        optional="gate as_of superseded",
        vector=True,
    ),
    "feedback": _kind(
        "reward quality retrieval",
        _feedback,
        lambda a, v: Rating(a["reward"], a["quality"], a["retrieval"]),
    ),
    "add": _kind(
        "text metadata id category valid_until verdict",
        _add,
        lambda a, v: Offer(
            a["text"],
            v,
            None,
            a["metadata"],
            a["id"],
            a["category"],
            a["valid_until"],
            a["verdict"],
            a.get("update", False),
            a.get("key"),
            a.get("extraction"),
        ),
        optional="update key extraction",
        vector=True,
    ),
    "remove": _kind("id", _remove, lambda a, v: Removal(a["id"])),
    "clear": _kind("", _nothing, lambda a, v: Clearing()),
    "renew": _kind(
        "lifetimes",
        _renew,
        lambda a, v: Renewal(tuple((i, s, seen) for i, s, seen in a["lifetimes"])),
    ),
    **{
        sweep: _kind("", _nothing, _sweep(sweep)) for sweep in ("decay", "expire", "lapse", "sweep")
    },
}


def read(kind: str, args: object, vector: FloatVector | None, dim: int) -> Step:
    """The step a log row holds, once its inputs are what the call could have logged; else
    ``ValueError`` saying what is not (``PersistenceError`` for a kind no version wrote)."""
    entry = KINDS.get(kind)
    if entry is None:
        raise PersistenceError(f"unknown step kind {kind!r}")
    article = "an" if kind[0] in "aeiou" else "a"
    try:
        _need(type(args) is dict, "not a JSON object")
        assert isinstance(args, dict)
        keys = args.keys()
        _need(entry.fields <= keys <= entry.fields | entry.optional, f"fields {sorted(keys)}")
        if entry.vector:
            _need(vector is not None and vector.shape == (dim,), "no vector of the dimension")
            assert vector is not None
            _need(bool(np.isfinite(vector).all()), "a vector that is not finite")
            # a logged vector is the unit vector the call made: within the store's tolerance
            norm = abs(float(vector.dot(vector)) - 1.0)
            _need(norm <= UNIT_TOLERANCE, "a vector that is not of unit length")
        else:
            _need(vector is None, "a vector")  # only a retrieval and an add log one
        entry.check(args)
    except (TypeError, ValueError) as err:
        raise ValueError(f"its inputs are not {article} {kind} step's: {err}") from None
    return entry.build(args, vector)
