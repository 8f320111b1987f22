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
    """The hits of one retrieval, best first, with its id (``None`` if not recorded) and the
    memory that made it (``origin``), so ``feedback(retrieval=hits)`` rates *this* one."""

    def __init__(
        self, hits: list[Hit], retrieval_id: int | None, origin: str | None = None
    ) -> None:
        list.__init__(self, hits)  # not super(): it costs ~0.1 us per retrieval
        self.retrieval_id, self.origin = retrieval_id, origin

    @property
    def handle(self) -> RetrievalId | None:
        """``retrieval_id`` as a :class:`RetrievalId` (``None`` for a lookup not recorded)."""
        return None if self.retrieval_id is None else RetrievalId(self.retrieval_id, self.origin)


class RetrievalId(int):
    """A retrieval id (an ``int``) that remembers which memory made it, so ``feedback`` refuses
    one from another memory or scope (serialised, a plain int: unchecked).

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
    """A stored item as seen from outside; ``policy``: what the eviction policy knows of it."""

    id: str
    text: str
    metadata: Mapping[str, Any]
    created_step: int
    created_at: float
    policy: Mapping[str, float] = field(default_factory=dict)
    category: str = "context"
    importance: float = 0.5
    valid_until: float | None = None
    seen: int = 1  # how often it was offered: once, plus its repeats
    last_seen: float | None = None  # when it was last repeated (``None``: never)
    key: str | None = None  # the fact it states (``add(key=...)``)
    superseded_at: float | None = None  # when a newer item of its key took over (``None``: current)
    superseded_by: str | None = None  # that item's id


@dataclass(slots=True)
class Decision:
    """Why the memory changed, or did not, when a step's experience was offered."""

    step: int  # 1-based index of the step this ``add`` ended (a resize: the last one)
    admitted: bool
    item_id: str | None  # the new item's id, ``None`` when rejected (and for a resize)
    evicted: str | None  # the id evicted to make room (a resize: to fit its new capacity)
    reason: str  # the admission rule that decided ("always", "bootstrap", "regret > tau", ...)
    cost: float | None = None  # the step cost fed to the admission policy, if it uses one
    regret: float | None = None  # accumulated regret when the decision was taken (before reset)
    tau: float | None = None  # the admission threshold then
    victim_score: float | None = None  # the eviction score that chose the victim (lowest wins)
    contenders: tuple[tuple[str, float], ...] = ()  # the lowest-scored (id, score), victim first
    # items the deletion policy removed at the end of this step, (id, reason), in order
    deleted: tuple[tuple[str, str], ...] = ()
    superseded: str | None = None  # the item of the same key this one took over from
    extraction: str | None = None  # what an extractor made of the offer (its facts, or why none)
