"""Metadata filters: which stored items a retrieval may return (``retrieve(filter=...)``).

A filter maps metadata keys to what their values must be, by the rule of LangGraph's stores
(``BaseStore.search(filter=...)``), and every key must match:

- a plain value matches by equality: ``{"topic": "billing"}``;
- a dict of operators must satisfy each of them: ``{"price": {"$gte": 10, "$lt": 20}}``;
  ``$eq`` and ``$ne`` compare by equality, ``$gt``, ``$gte``, ``$lt``, ``$lte`` as numbers;
- any other dict matches a nested dict key by key: ``{"user": {"tier": "gold"}}``;
- a list matches a list (or tuple) of the same length, element by element.

A value that is missing, or is not a number, never satisfies ``$gt``/``$gte``/``$lt``/``$lte``:
the item does not match (a filter on a field some items lack must not fail the retrieval);
``$ne`` matches a missing value, which is not the one named.

A retrieval may also take a predicate of an item's metadata, ``(metadata) -> bool``: what the
adapters turn their frameworks' own filters into (LlamaIndex's ``MetadataFilters``).

>>> wanted = check_filter({"topic": "billing", "n": {"$gte": 2}})
>>> matches({"topic": "billing", "n": 3}, wanted), matches({"topic": "billing"}, wanted)
(True, False)
>>> check_filter({"n": {"$in": [1, 2]}})
Traceback (most recent call last):
...
ValueError: unsupported filter operator '$in' at 'n': use one of $eq, $ne, $gt, $gte, $lt, $lte
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypeAlias

from .records import Record
from .types import Hits

#: the operators of a filter: LangGraph's stores' (``$eq``/``$ne``: equality; the rest: numbers)
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
_NUMERIC: dict[str, Callable[[float, float], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}

#: what ``retrieve(filter=...)`` takes: a filter mapping, or a predicate of an item's metadata
Filter: TypeAlias = Mapping[str, Any] | Callable[[Mapping[str, Any]], bool]


def matches(metadata: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` matches the filter ``wanted`` (checked by :func:`check_filter`).

    >>> meta = {"topic": "billing", "user": {"tier": "gold"}, "tags": ["a", "b"], "n": 2}
    >>> matches(meta, {"user": {"tier": "gold"}, "tags": ["a", "b"]})
    True
    >>> matches(meta, {"n": {"$gt": 1, "$ne": 2}}), matches(meta, {"missing": {"$lt": 5}})
    (False, False)
    >>> matches(meta, {"missing": {"$ne": 5}}), matches(meta, {})
    (True, True)
    """
    return all(_compare(metadata.get(key), value) for key, value in wanted.items())


def _compare(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if any(key.startswith("$") for key in wanted):
            return all(_operator(value, op, operand) for op, operand in wanted.items())
        if not isinstance(value, Mapping):
            return False
        return all(_compare(value.get(key), w) for key, w in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(v, w) for v, w in zip(value, wanted, strict=False))
        )
    return bool(value == wanted)


def _operator(value: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(value == operand)
    if op == "$ne":
        return bool(value != operand)
    try:
        number = float(value)
    except (TypeError, ValueError):  # missing, or not a number: not in any range
        return False
    return _NUMERIC[op](number, float(operand))


def check_filter(wanted: object, *, predicate: bool = True) -> Filter:
    """``wanted`` if it is a filter :func:`matches` can apply (or, unless ``predicate=False``,
    a predicate), else a ``TypeError``/``ValueError`` that says how to write it. A mapping is
    copied: a caller changing it later changes no retrieval.

    >>> check_filter({"price": {"$gt": "cheap"}})
    Traceback (most recent call last):
    ...
    ValueError: filter operator '$gt' at 'price' compares numbers, got 'cheap': pass a number
    >>> check_filter({"$eq": 1})
    Traceback (most recent call last):
    ...
    ValueError: a filter's keys name metadata fields, got '$eq': put the operator under one, \
e.g. {'price': {'$eq': 1}}
    >>> check_filter("billing")
    Traceback (most recent call last):
    ...
    TypeError: filter must be a mapping of metadata keys to the values wanted, e.g. \
{'topic': 'billing'} (or a predicate of an item's metadata), got str
    >>> check_filter(len, predicate=False)  # where only a filter mapping will do
    Traceback (most recent call last):
    ...
    TypeError: filter must be a mapping ... {'topic': 'billing'}, got builtin_function_or_method
    """
    if predicate and callable(wanted) and not isinstance(wanted, Mapping):
        return wanted
    if not isinstance(wanted, Mapping):
        either = " (or a predicate of an item's metadata)" if predicate else ""
        raise TypeError(
            "filter must be a mapping of metadata keys to the values wanted, e.g. "
            f"{{'topic': 'billing'}}{either}, got {type(wanted).__name__}"
        )
    for key, value in wanted.items():
        _check_key(key, "")
        if key.startswith("$"):
            raise ValueError(
                f"a filter's keys name metadata fields, got {key!r}: put the operator under "
                f"one, e.g. {{'price': {{{key!r}: {value!r}}}}}"
            )
        _check_value(value, key)
    return dict(wanted)


def _check_key(key: object, where: str) -> None:
    if not isinstance(key, str):
        at = f" at {where!r}" if where else ""
        raise TypeError(f"filter keys are metadata keys (str), got {key!r}{at}")


def _check_value(wanted: object, where: str) -> None:
    """A filter's value at the path ``where`` (dotted, for the error)."""
    if isinstance(wanted, Mapping):
        for key in wanted:
            _check_key(key, where)
        ops = [key for key in wanted if key.startswith("$")]
        if not ops:
            for key, value in wanted.items():
                _check_value(value, f"{where}.{key}")
            return
        if len(ops) != len(wanted):
            raise ValueError(
                f"the filter at {where!r} mixes operators and metadata keys ({list(wanted)}): "
                "nest the keys under their own field"
            )
        for op, operand in wanted.items():
            if op not in OPERATORS:
                raise ValueError(
                    f"unsupported filter operator {op!r} at {where!r}: use one of "
                    f"{', '.join(OPERATORS)}"
                )
            if op in _NUMERIC:
                try:
                    float(operand)
                except (TypeError, ValueError):
                    raise ValueError(
                        f"filter operator {op!r} at {where!r} compares numbers, got "
                        f"{operand!r}: pass a number"
                    ) from None
    elif isinstance(wanted, list | tuple):
        for i, value in enumerate(wanted):
            _check_value(value, f"{where}[{i}]")


def keeps(wanted: Filter, metadata: Mapping[str, Any]) -> bool:
    """Whether the checked filter or predicate ``wanted`` keeps an item with ``metadata`` (a
    predicate sees a read-only view: it cannot change the stored item)."""
    if callable(wanted):
        return bool(wanted(MappingProxyType(metadata)))
    return matches(metadata, wanted)


def left_out(
    records: Iterable[tuple[str, Record]], wanted: Filter, exclude: Collection[str] = ()
) -> set[str]:
    """The ids a filtered retrieval excludes: ``exclude`` plus every item ``wanted`` refuses.

    A retrieval's filter becomes the ids it leaves out, so the step a persisted memory logs is
    a plain retrieval with an ``exclude``, which a replay repeats exactly.

    >>> records = [(i, Record(f"item {i}", {"n": n}, 0, 0.0)) for i, n in [("a", 1), ("b", 5)]]
    >>> sorted(left_out(records, {"n": {"$gt": 2}}, exclude=["z"]))
    ['a', 'z']
    """
    out = set(exclude)
    out.update(item_id for item_id, record in records if not keeps(wanted, record.metadata))
    return out


def only_matching(hits: Hits, wanted: Filter) -> Hits:
    """``hits`` without any ``wanted`` refuses (the same object when every hit matches, the
    usual case). A persisted memory reads what to leave out before its step catches up with
    other processes: an item another process stored in between is not left out by id, and is
    dropped here, so a filtered retrieval never returns an item its filter refuses.

    >>> from solar_core.types import Hit
    >>> hits = Hits([Hit("a", "x", 0.9, {"n": 1}, 0), Hit("b", "y", 0.8, {"n": 5}, 1)], 7)
    >>> kept = only_matching(hits, {"n": 5})
    >>> [h.id for h in kept], kept.retrieval_id
    (['b'], 7)
    """
    if all(keeps(wanted, hit.metadata) for hit in hits):
        return hits
    kept = [hit for hit in hits if keeps(wanted, hit.metadata)]
    return Hits(kept, hits.retrieval_id, hits.origin)
