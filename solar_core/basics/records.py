"""What a memory keeps per item and per recorded retrieval (their fields are part of the
snapshot format), the item categories, and metadata's copies and limits."""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

#: the item categories, from the most to the least protected (:mod:`solar_core.engine.lifecycle`)
CATEGORIES = ("identity", "knowledge", "context")


def check_category(category: object) -> str:
    """``category`` if it is one of :data:`CATEGORIES`.

    >>> check_category("fact")
    Traceback (most recent call last):
    ...
    ValueError: category must be one of identity, knowledge, context, got 'fact'
    """
    if category not in CATEGORIES:
        raise ValueError(f"category must be one of {', '.join(CATEGORIES)}, got {category!r}")
    return str(category)


def content_key(text: str) -> str:
    """An item's key by content (ARC's ghosts: re-offering the same text is a ghost hit)."""
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


#: the values no one can change: a copy of metadata shares them with the stored item
_IMMUTABLE = frozenset({str, int, float, bool, type(None), bytes, complex})
METADATA_DEPTH = 100
#: (each container and plain value counted, one held in several places counted in each)
METADATA_VALUES = 100_000


def copy_metadata(metadata: Mapping[str, Any], what: str = "metadata") -> dict[str, Any]:
    """A copy of an item's metadata sharing nothing changeable with it; metadata inside itself
    or past :data:`METADATA_DEPTH`/:data:`METADATA_VALUES` is a ``ValueError`` naming ``what``."""
    immutable = _IMMUTABLE
    for value in metadata.values():
        if type(value) not in immutable:
            return _Copier(what).top(metadata)
    if len(metadata) >= METADATA_VALUES:
        _Copier(what).count(len(metadata) + 1)
    return dict(metadata)


def read_copy(metadata: dict[str, Any]) -> dict[str, Any]:
    """:func:`copy_metadata` of a stored item's metadata (within the limits), by a short path."""
    immutable = _IMMUTABLE
    for value in metadata.values():
        if type(value) not in immutable:
            memo: dict[int, Any] = {}
            return {
                k: v if type(v) in immutable else _read_copy(v, memo, 1)
                for k, v in metadata.items()
            }
    return metadata.copy()


def _read_copy(value: Any, memo: dict[int, Any], depth: int) -> Any:
    kind = type(value)
    if kind is not dict and kind is not list or depth >= METADATA_DEPTH:
        return _Copier().copy(value, depth)  # other containers and objects: the full copy
    done = memo.get(id(value))
    if done is not None:  # held twice in the stored tree: twice in the copy too
        return done
    immutable, depth = _IMMUTABLE, depth + 1
    if kind is dict:
        copied: Any = {
            k: v if type(v) in immutable else _read_copy(v, memo, depth) for k, v in value.items()
        }
    else:
        copied = [v if type(v) in immutable else _read_copy(v, memo, depth) for v in value]
    memo[id(value)] = copied
    return copied


def read_only(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    """A read-only view of stored metadata for a filter's predicate (of a copy if nested)."""
    immutable = _IMMUTABLE
    for value in metadata.values():
        if type(value) not in immutable:
            return MappingProxyType(read_copy(dict(metadata)))
    return MappingProxyType(metadata)


class _Copier:
    """One deep copy within the limits: shared containers stay shared, each read once (its
    values and levels counted again where it is held again)."""

    __slots__ = ("memo", "open", "values", "reach", "what")

    def __init__(self, what: str = "metadata") -> None:
        self.memo: dict[int, tuple[Any, int, int]] = {}  # id -> (copy, values, levels below)
        self.open: set[int] = set()  # the containers being copied (the path from the top)
        self.values = 0
        self.reach = 0  # the deepest level a container was met at, in the one being copied
        self.what = what

    def top(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        self.count(1 + len(metadata))
        return {k: self.copy(v, 1) for k, v in metadata.items()}

    def count(self, values: int) -> None:
        self.values += values
        if self.values > METADATA_VALUES:
            raise ValueError(
                f"{self.what} holds more than {METADATA_VALUES} values (each dict, list and "
                "plain value counted, one held in several places counted in each): store less "
                "in it, e.g. a reference to data kept elsewhere"
            )

    def copy(self, value: Any, depth: int) -> Any:
        kind = type(value)
        if kind in _IMMUTABLE:
            return value
        key = id(value)
        if key in self.open:
            raise ValueError(
                f"{self.what} holds itself (a list or dict inside itself): store a tree of values"
            )
        done = self.memo.get(key)
        if done is not None:  # held again: its values count again, its levels reach as deep
            copied, values, levels = done
            self.count(values - 1)
            if depth + levels >= METADATA_DEPTH:
                self._too_deep()
            self.reach = max(self.reach, depth + levels)
            return copied
        if depth >= METADATA_DEPTH:
            self._too_deep()
        self.open.add(key)
        before, outer = self.values, self.reach
        self.reach = depth
        try:
            copied = self._copy(value, kind, depth + 1)
        finally:
            self.open.discard(key)
        self.memo[key] = (copied, self.values - before + 1, self.reach - depth)
        self.reach = max(outer, self.reach)
        return copied

    def _too_deep(self) -> None:
        raise ValueError(f"{self.what} nests deeper than {METADATA_DEPTH} levels: store it flatter")

    def _copy(self, value: Any, kind: type, depth: int) -> Any:
        if kind is dict or kind is list or kind is tuple or kind is set or kind is frozenset:
            self.count(len(value))  # each value held counts once here
            if kind is dict:
                return {k: self.copy(v, depth) for k, v in value.items()}
            if kind is set or kind is frozenset:
                return kind(value)  # (their elements are hashable: values, not containers)
            copied = [self.copy(v, depth) for v in value]
            return copied if kind is list else tuple(copied)
        if isinstance(value, dict | list | tuple):
            # a subclass (an OrderedDict) keeps its type, but its contents are checked as JSON
            self._copy(value, dict if isinstance(value, dict) else list, depth)
        try:
            return copy.deepcopy(value)
        except Exception as error:  # RecursionError, an object that cannot be copied, ...
            raise TypeError(
                f"a value of type {kind.__name__} in {self.what} cannot be copied ({error}): "
                "store plain data (str, numbers, lists, dicts)"
            ) from None


@dataclass(slots=True)
class Record:
    """One stored item's text, metadata and lifecycle fields (its vector is in the store)."""

    text: str
    metadata: dict[str, Any]
    step: int
    created_at: float
    category: str = "context"
    importance: float = 0.5
    valid_until: float | None = None
    seen: int = (
        1  # offers of it: 1, and one more for each repeat (``solar_core.retrieval.repeats``)
    )
    last_seen: float | None = None  # when it was last repeated (``None``: never)
    key: str | None = None  # the fact it states: a newer item of the same key supersedes it
    superseded_at: float | None = None  # when a newer item of its key took over (``None``: current)
    superseded_by: str | None = None  # that item's id


@dataclass(slots=True)
class Retrieval:
    """A recorded retrieval that feedback may still rate."""

    slots: npt.NDArray[np.int64]
    records: list[Record]
    step: int
    removals: int  # the memory's removal count then: unchanged means every slot is still live
    rated: bool = False
