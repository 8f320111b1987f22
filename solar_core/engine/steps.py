"""A memory's steps as values, and who runs them.

Every change of a memory is one of these steps: a recorded :class:`Lookup`, a :class:`Rating`,
an :class:`Offer`, a :class:`Removal`, a :class:`Clearing`, a lifecycle :class:`Sweep` or a
:class:`Renewal` of items' validity. The memory checks its input, builds the step, and hands it
to its :class:`StepRunner`, which applies it (``apply(step)``) under the memory's lock. A plain
memory runs it directly; a persisted memory's runner
(:class:`~solar_core.persistence.journal.Journal`) first catches up with other processes, then
applies and logs the step's inputs in one transaction, and replays logged steps through the
same ``apply``. A step holds checked input only: applying it never fails on its values. Steps
are values: nothing changes one once it is built (they are not frozen only because a frozen
dataclass costs a microsecond more to build, on every step).
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
    by ``retrieval`` (:mod:`solar_core.retrieval.ranking`), none scoring below ``floor``, and none
    at all if ``gate`` and the memory holds nothing about the query
    (:func:`~solar_core.retrieval.ranking.
    relevant`); ``record``: a retrieval event (credited, rateable), else a look that changes
    nothing."""

    vector: FloatVector
    query: str | None
    k: int
    record: bool = True
    exclude: Collection[str] = ()
    retrieval: str = "vector"
    floor: float | None = None
    gate: bool = False


@dataclass(slots=True)
class Rating:
    """Feedback on a retrieval (``None``: the latest; a ``Hits`` or an id otherwise)."""

    reward: float
    quality: float
    retrieval: object = None


@dataclass(slots=True)
class Offer:
    """An experience offered for storage. ``row`` times ``scale`` is its unit vector
    (``scale`` is ``None`` when ``row`` is one already): the product is only made if the
    offer needs it, a refused one usually does not. ``prepared`` is what the admission gate
    prepared outside the lock (an evaluator's verdict), if anything. ``update``: an item
    stored under ``item_id`` is replaced by this one, in this step, whatever the policy says.

    >>> import numpy as np
    >>> offer = Offer("likes tea", np.array([3.0, 4.0], np.float32), scale=0.2)
    >>> offer.unit().tolist()
    [0.6000000238418579, 0.800000011920929]
    """

    text: str
    row: FloatVector
    scale: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    item_id: str | None = None
    category: str = "context"
    valid_until: float | None = None
    prepared: object = None
    update: bool = False

    def unit(self) -> FloatVector:
        """The offer's unit vector."""
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
    seconds``, ``now`` being the step's clock reading. Skipped: ids not stored, items without a
    ``valid_until`` (they never expire) or past it, and items whose ``valid_until`` is no longer
    ``seen`` (the one the caller read: another writer re-put or renewed the item since;
    ``None``: not checked)."""

    lifetimes: tuple[tuple[str, float, float | None], ...]


Step = Lookup | Rating | Offer | Removal | Clearing | Sweep | Renewal


class StepRunner(Protocol):
    """Runs a memory's steps: ``run(step, apply)`` returns ``apply(step)``'s result, having
    done whatever else a step needs (holding the lock; logging it)."""

    def check(self, step: Step) -> Step:
        """The step as it will be applied, or an error if this runner cannot run it (called
        before the lock, before an evaluator is asked)."""
        ...

    def run(self, step: Step, apply: Callable[[Step], _T]) -> _T: ...

    def sync(self) -> None:
        """Bring the memory up to date before a read (a persisted one: other processes' steps)."""
        ...

    def unrecorded(self, retrieval: object) -> bool:
        """Whether rating ``retrieval`` changes nothing and refuses nothing (a persisted
        memory's retrieval made before its scope was stored)."""
        ...


class LocalRunner:
    """A plain memory's runner: applies the step, nothing else (the memory holds its lock)."""

    def check(self, step: Step) -> Step:
        return step

    def run(self, step: Step, apply: Callable[[Step], _T]) -> _T:
        return apply(step)

    def sync(self) -> None:
        """Nothing to catch up with."""

    def unrecorded(self, retrieval: object) -> bool:
        return False
