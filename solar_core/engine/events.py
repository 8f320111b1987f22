"""Subscriptions to a memory's changes (see :meth:`SolarMemory.subscribe
<solar_core.SolarMemory.subscribe>`): who hears of stored items and of deletions."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from typing import Any

from solar_core.basics.records import Record
from solar_core.basics.validation import FloatVector
from solar_core.engine.core import StepListener

OnStore = Callable[[str, str, FloatVector, dict[str, Any]], None]
OnDelete = Callable[[list[str], str], None]


@dataclass(slots=True)
class _Subscriber:
    """One subscription; ``gone``: the running step's ``(item_id, reason)`` deletions."""

    on_store: OnStore | None
    on_delete: OnDelete | None
    gone: list[tuple[str, str]] = field(default_factory=list)


class Subscribers(StepListener):
    """A memory's subscriptions: noted while a step runs (as its listener), told once it is
    complete, so a callback that raises cannot leave a step half done.

    >>> events = Subscribers()
    >>> heard = []
    >>> events.add(None, lambda ids, why: heard.append((ids, why)))
    >>> events.removed("m1", "evicted"); events.removed("m2", "evicted")
    >>> events.gone(["m3"], "expired")
    >>> events.tell_deletions()
    >>> heard
    [(['m1', 'm2'], 'evicted'), (['m3'], 'expired')]
    """

    def __init__(self) -> None:
        self._all: list[_Subscriber] = []
        self.active = False  # whether anyone subscribed (read on every step: a plain flag)
        self.last_stored: tuple[str, FloatVector] | None = None  # the latest stored item

    def __bool__(self) -> bool:
        return self.active

    @staticmethod
    def check(on_store: object, on_delete: object) -> None:
        """Refuse a subscription that is not one or two callables."""
        if on_store is None and on_delete is None:
            raise TypeError("subscribe() needs a callable callback, on_delete or both")
        for name, given in (("callback", on_store), ("on_delete", on_delete)):
            if given is not None and not callable(given):
                raise TypeError(f"{name} must be callable, got {type(given).__name__}")

    def add(self, on_store: OnStore | None, on_delete: OnDelete | None) -> None:
        self._all.append(_Subscriber(on_store, on_delete))
        self.active = True

    # -- as a step listener ---------------------------------------------------------------------
    def stored(self, item_id: str, record: Record, vector: FloatVector) -> None:
        self.last_stored = (item_id, vector)

    def removed(self, item_id: str, reason: str) -> None:
        self.gone([item_id], reason)

    def cleared(self, item_ids: list[str]) -> None:
        self.gone(item_ids, "cleared")

    # -- telling --------------------------------------------------------------------------------
    def gone(self, item_ids: list[str], reason: str) -> None:
        """Note deleted items for the subscribers that hear deletions."""
        for subscriber in self._all:
            if subscriber.on_delete is not None:
                subscriber.gone.extend([(item_id, reason) for item_id in item_ids])

    def tell_deletions(self) -> None:
        """Tell the subscribers of the deletions noted since last told, one call per run of the
        same reason (a callback that raises leaves the others' for later)."""
        for subscriber in self._all:
            if subscriber.gone and subscriber.on_delete is not None:
                gone, subscriber.gone = subscriber.gone, []
                for reason, run in groupby(gone, key=itemgetter(1)):
                    subscriber.on_delete([item_id for item_id, _ in run], reason)

    def tell_stored(
        self, item_id: str, text: str, vector: FloatVector, metadata: dict[str, Any]
    ) -> None:
        """Tell the subscribers of a stored item."""
        for subscriber in self._all:
            if subscriber.on_store is not None:
                subscriber.on_store(item_id, text, vector, metadata)
