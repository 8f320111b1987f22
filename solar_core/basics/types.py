"""Value objects returned by :class:`~solar_core.SolarMemory`: hits, decisions, items."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class UnknownItemError(KeyError, ValueError):
    """No item with this id is stored. Both a ``KeyError`` and a ``ValueError``."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0]) if self.args else "unknown item"


@dataclass(slots=True)
class Hit:
    """A retrieved item: id, text, cosine similarity to the query, metadata, rank (0 = best)."""

    id: str
    text: str
    score: float
    metadata: Mapping[str, Any] = field(default_factory=dict)
    rank: int = 0


class Hits(list[Hit]):
    """The hits of one retrieval, best first: a ``list[Hit]`` that remembers which retrieval it was.

    Pass it to ``SolarMemory.feedback(retrieval=hits)`` to rate *this* retrieval even when other
    retrievals (other threads, sessions or requests) happened since. ``retrieval_id`` is ``None``
    for a ``record=False`` lookup, which cannot be rated.

    ``origin`` names the memory that made the retrieval (a token kept in the memory's state, so
    the same after a snapshot, a reopen or in another process opening the same scope; never
    shared by two memories or scopes). Retrieval ids restart at 1 in every memory, so a memory
    refuses hits of another origin rather than rate its own retrieval of the same number.
    ``None`` (hits made by hand) is not checked.
    """

    def __init__(
        self, hits: list[Hit], retrieval_id: int | None, origin: str | None = None
    ) -> None:
        list.__init__(self, hits)  # not super(): one per retrieval, and super() costs ~0.1 us
        self.retrieval_id = retrieval_id
        self.origin = origin

    @property
    def handle(self) -> RetrievalId | None:
        """``retrieval_id`` as a :class:`RetrievalId` that remembers ``origin`` (``None`` for a
        lookup that was not recorded): what adapters put in documents' metadata and state."""
        if self.retrieval_id is None:
            return None
        return RetrievalId(self.retrieval_id, self.origin)


class RetrievalId(int):
    """A retrieval id (an ``int``, equal to the plain id) that remembers which memory made it.

    Adapters hand these out where a plain id used to go (a retrieved document's
    ``metadata["retrieval_id"]``, an agent's state), so ``feedback(retrieval=...)`` refuses one
    from another memory or scope. Serialised (JSON, a checkpoint) it becomes a plain int, which
    a memory takes as one of its own retrievals: the check needs the object.

    >>> rid = RetrievalId(3, "a1b2")
    >>> rid == 3, rid.origin, RetrievalId(3, "a1b2") + 0
    (True, 'a1b2', 3)
    """

    origin: str | None

    def __new__(cls, value: int, origin: str | None = None) -> RetrievalId:
        self = super().__new__(cls, value)
        self.origin = origin
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (RetrievalId, (int(self), self.origin))

    def __repr__(self) -> str:
        return int.__repr__(self)


@dataclass(frozen=True)
class MemoryItem:
    """A stored item as seen from outside, with the eviction policy's statistics for it.

    ``policy`` holds what the eviction policy knows of the item, e.g. ``{"alpha": 3.0, "beta": 1.05,
    "mean": 0.74}`` for Thompson sampling, ``{"count": 2}`` for LFU.
    """

    id: str
    text: str
    metadata: Mapping[str, Any]
    created_step: int
    created_at: float
    policy: Mapping[str, float] = field(default_factory=dict)
    category: str = "context"
    importance: float = 0.5
    valid_until: float | None = None


@dataclass(slots=True)
class Decision:
    """Why the memory changed, or did not, when a step's experience was offered.

    Attributes:
        step: 1-based index of the step this ``add`` ended.
        admitted: whether the item was stored.
        item_id: the new item's id, or ``None`` when rejected.
        evicted: the id evicted to make room, or ``None``.
        reason: the admission rule that decided (``"always"``, ``"bootstrap"``, ``"regret > tau"``,
            ``"regret <= tau"``).
        cost: the step cost fed to the admission policy (``1 - score`` with feedback, else the
            policy's implicit cost), or ``None`` for policies that use none.
        regret: accumulated regret when the decision was taken (before any reset).
        tau: the admission threshold at that moment.
        victim_score: the eviction score that chose the victim (lowest wins), if the policy scores.
        contenders: the lowest-scored items considered for eviction, ``(id, score)``, victim first.
        deleted: items the memory's deletion policy removed at the end of this step,
            ``(id, reason)``, in deletion order.
    """

    step: int
    admitted: bool
    item_id: str | None
    evicted: str | None
    reason: str
    cost: float | None = None
    regret: float | None = None
    tau: float | None = None
    victim_score: float | None = None
    contenders: tuple[tuple[str, float], ...] = ()
    deleted: tuple[tuple[str, str], ...] = ()
