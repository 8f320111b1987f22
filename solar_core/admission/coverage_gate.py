"""Admission by comparison: store a candidate only if it is worth more than what it displaces."""

from __future__ import annotations

from ..eviction.base import EvictionPolicy
from ..eviction.coverage import CoverageEviction
from ..validation import check_nonnegative
from .base import AdmissionPolicy, Candidate, Verdict


class CoverageGate(AdmissionPolicy):
    """The admission half of ``solar-adaptive``; it works with a
    :class:`~solar_core.eviction.CoverageEviction`.

    - A free slot takes any candidate: an empty slot serves no query, so filling it loses nothing
      (the faithful SOLAR gate leaves half of a K = 100 memory empty).
    - During a regime shift (:attr:`CoverageEviction.shifting`) every candidate that serves some
      remembered query better (gain > 0) is admitted: the memory must catch up with the new
      topics fast, as FIFO does, but not with junk.
    - Otherwise the candidate is admitted iff its gain beats ``(1 + hysteresis)`` times the value
      of the item it would evict, or that item is worth nothing. The hysteresis keeps a memory
      that serves a loop of topics from swapping one topic for an equally useful one at every
      step (cycling, m/K = 5: 0.177 with it, 0.034 without).

    The decision trace reports the gain as ``regret`` and ``(1 + hysteresis) * value`` as
    ``tau``: admitted iff ``regret > tau``, as for the SOLAR gate.

    >>> from solar_core import SolarMemory
    >>> memory = SolarMemory("solar-adaptive", capacity=2, dim=2)
    >>> [memory.add(t, embedding=v).reason for t, v in [("a", [1, 0]), ("b", [0, 1])]]
    ['free slot', 'free slot']
    """

    name = "coverage"
    needs_vector = True

    def __init__(self, hysteresis: float = 0.5) -> None:
        check_nonnegative(hysteresis=hysteresis)
        self.hysteresis = hysteresis
        self._eviction: CoverageEviction | None = None

    def bind(self, eviction: EvictionPolicy) -> None:
        if not isinstance(eviction, CoverageEviction):
            raise TypeError(f"CoverageGate needs a CoverageEviction, got {type(eviction).__name__}")
        if self._eviction is not None and self._eviction is not eviction:
            raise ValueError(
                "this CoverageGate already serves another memory: create one per memory"
            )
        self._eviction = eviction

    def _admit(self, candidate: Candidate) -> Verdict:
        eviction = self._eviction
        if eviction is None or candidate.vector is None:
            raise RuntimeError("CoverageGate works inside a SolarMemory with a CoverageEviction")
        # The similarities are needed whatever the verdict (an insert reuses them); their sum,
        # the gain, only when there is something to compare it with.
        sims = eviction.query_similarities(candidate.vector)
        if candidate.capacity is None or candidate.size < candidate.capacity:
            return Verdict(True, "free slot")
        if eviction.shifting:
            gain = eviction.gain_of(sims)
            if gain > 0.0:  # a shift opens the gate to what serves the new queries, not to junk
                return Verdict(True, "regime shift", None, gain, 0.0)
        _, value = eviction.weakest()
        if value <= 0.0:
            return Verdict(True, "victim worthless", None, None, 0.0)
        gain = eviction.gain_of(sims)
        bar = (1.0 + self.hysteresis) * value
        if gain > bar:
            return Verdict(True, "gain > value", None, gain, bar)
        return Verdict(False, "gain <= value", None, gain, bar)
