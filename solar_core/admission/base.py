"""The admission-policy interface: should this step's experience be stored?"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ..eviction.base import EvictionPolicy


@dataclass(slots=True)
class Candidate:
    """What an admission policy sees of an offered item.

    Attributes:
        size: items stored now.
        capacity: the memory's capacity (``None`` = unbounded).
        score: the step's explicit quality from ``feedback()``, or ``None`` without feedback.
        similarities: cosine of the candidate to every used slot (``-inf`` for empty slots), or
            ``None`` when the policy did not ask for them (``needs_similarities``).
        vector: the candidate's unit vector when the policy asked for it (``needs_vector``).
        text: the offered text (``None`` when a policy is driven directly, outside a memory).
        metadata: the offered metadata (read-only by convention; ``{}`` when none).
        prepared: what the policy's :meth:`AdmissionPolicy.prepare` returned for this offer.
    """

    size: int
    capacity: int | None
    score: float | None = None
    similarities: npt.NDArray[np.float32] | None = None
    vector: npt.NDArray[np.float32] | None = None
    text: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    prepared: object = None


class Verdict(NamedTuple):
    """An admission decision and the numbers behind it (for the decision trace)."""

    admitted: bool
    reason: str
    cost: float | None = None
    regret: float | None = None
    tau: float | None = None

    def __bool__(self) -> bool:  # `if gate.admit(c):` must mean "admitted", not "non-empty tuple"
        return self.admitted


class AdmissionPolicy(ABC):
    """Decides whether an offered item enters the memory.

    Public :meth:`admit` validates and delegates to :meth:`_admit`.
    """

    name = "base"
    #: whether :attr:`Candidate.similarities` must be filled in
    needs_similarities = False
    #: whether :attr:`Candidate.vector` must be filled in
    needs_vector = False

    def bind(self, eviction: EvictionPolicy) -> None:
        """Called once by the memory with its eviction policy (for gates that compare the
        candidate with the item it would evict)."""

    def admit(self, candidate: Candidate) -> Verdict:
        if candidate.size < 0:
            raise ValueError("candidate.size must be >= 0")
        if candidate.score is not None and not 0.0 <= candidate.score <= 1.0:
            raise ValueError(f"candidate.score must be in [0, 1], got {candidate.score}")
        return self._admit(candidate)

    @abstractmethod
    def _admit(self, candidate: Candidate) -> Verdict: ...

    def observe(self, candidate: Candidate) -> Verdict:
        """See a step whose item another rule refused (e.g. an evaluator): learn from it as from
        any step, store nothing. Returns the verdict ``admit`` would have given, without its side
        effects on storage (a gate that resets state on a store does not reset it here)."""
        return Verdict(False, "refused elsewhere")

    def prepare(self, text: str, metadata: Mapping[str, Any]) -> object:
        """Work that needs no memory state, done before the memory takes its lock (e.g. an LLM
        judge's call); the result reaches :meth:`admit` as ``Candidate.prepared``."""
        return None

    def clear(self) -> None:
        """Forget learned state (the memory was cleared)."""

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if internal state is inconsistent."""

    @property
    def regret(self) -> float | None:
        return None

    @property
    def tau(self) -> float | None:
        return None


class AlwaysAdmit(AdmissionPolicy):
    """Store every offered item (FIFO, LRU, LFU, ARC, SOLAR-E; the study's pi_all)."""

    name = "always"

    def _admit(self, candidate: Candidate) -> Verdict:
        return ALWAYS


#: AlwaysAdmit's verdict on every candidate (immutable: one shared instance)
ALWAYS = Verdict(True, "always")
