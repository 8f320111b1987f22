"""A memory's steps as values, and who runs them (DESIGN.md, "Architecture"). A step holds
checked input only: applying it never fails on its values. Nothing changes a step once built
(not frozen: a frozen dataclass costs a microsecond more to build, on every step).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from solar_core.basics.validation import FloatVector, scaled

_T = TypeVar("_T")


@dataclass(slots=True)
class Lookup:
    """A retrieval of the ``k`` items that best match ``vector`` (a unit vector) and ``query``
    (:mod:`solar_core.retrieval.ranking`); ``record``: a retrieval event (credited, rateable),
    else a look that changes nothing."""

    vector: FloatVector
    query: str | None
    k: int
    record: bool = True
    exclude: Collection[str] = ()
    retrieval: str = "vector"
    floor: float | None = None
    gate: bool = False
    as_of: float | None = None  # only the items current then (``None``: now)
    superseded: bool = False  # superseded items too, ranked below the current ones


@dataclass(slots=True)
class Rating:
    """Feedback on a retrieval (``None``: the latest; a ``Hits`` or an id otherwise)."""

    reward: float
    quality: float
    retrieval: object = None


@dataclass(slots=True)
class Offer:
    """An experience offered for storage. ``row`` times ``scale`` (``None``: 1) is its unit
    vector, made only if the offer needs it. ``prepared``: an evaluator's verdict, given outside
    the lock. ``update``: an item stored under ``item_id`` is replaced by this one. ``key``:
    the fact it states; it supersedes the current item of that key."""

    text: str
    row: FloatVector
    scale: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    item_id: str | None = None
    category: str = "context"
    valid_until: float | None = None
    prepared: object = None
    update: bool = False
    key: str | None = None
    extraction: str | None = None  # what an extractor made of it (its decision says so)

    def unit(self) -> FloatVector:
        return scaled(self.row, self.scale)


@dataclass(slots=True)
class Removal:
    """Delete one item now (not an eviction)."""

    item_id: str


@dataclass(slots=True)
class Clearing:
    """Remove every item and reset the learned state and counters."""


@dataclass(slots=True)
class Sweep:
    """A lifecycle sweep: ``"decay"``, ``"expire"``, ``"lapse"`` (only the items past their
    ``valid_until``) or ``"sweep"`` (the traces)."""

    kind: str


@dataclass(slots=True)
class Renewal:
    """Keep items valid longer: each ``(item_id, seconds, seen)`` gets ``valid_until = now +
    seconds``. Skipped: ids not stored, items without a ``valid_until`` or past it, and items
    whose ``valid_until`` is no longer ``seen`` (``None``: not checked)."""

    lifetimes: tuple[tuple[str, float, float | None], ...]


@dataclass(slots=True)
class Resizing:
    """Hold at most ``capacity`` items from now on, evicting by the policy down to it."""

    capacity: int


Step = Lookup | Rating | Offer | Removal | Clearing | Sweep | Renewal | Resizing


class StepRunner(Protocol):
    """Runs a memory's steps: ``run(step, apply)`` returns ``apply(step)``'s result, having
    done whatever else a step needs (logging it)."""

    def check(self, step: Step) -> Step:
        """The step as it will be applied, or an error if this runner cannot run it (called
        before the lock, before an evaluator is asked)."""

    def run(self, step: Step, apply: Callable[[Step], _T]) -> _T: ...

    def sync(self) -> None:
        """Bring the memory up to date before a read (a persisted one: other processes' steps)."""

    def unrecorded(self, retrieval: object) -> bool:
        """Whether rating ``retrieval`` changes nothing and refuses nothing (a persisted
        memory's retrieval made before its scope was stored)."""


class LocalRunner:
    """A plain memory's runner: applies the step, nothing else (the memory holds its lock)."""

    def check(self, step: Step) -> Step:
        return step

    def run(self, step: Step, apply: Callable[[Step], _T]) -> _T:
        return apply(step)

    def sync(self) -> None:
        pass

    def unrecorded(self, retrieval: object) -> bool:
        return False
