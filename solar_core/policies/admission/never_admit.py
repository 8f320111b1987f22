"""Store nothing after an initial set: the experience-following study's fixed memory."""

from __future__ import annotations

from typing import Any

from solar_core.basics.state import StateReader, register_part
from solar_core.basics.validation import check_nonnegative_int
from solar_core.policies.admission.base import AdmissionPolicy, Candidate, Verdict


@register_part
class NeverAdmit(AdmissionPolicy):
    """Admit the first ``initial`` offers (the seed memory), then nothing (``pi_fixed``).

    >>> from solar_core.policies.admission import Candidate
    >>> gate = NeverAdmit(initial=2)
    >>> [gate.admit(Candidate(size=n, capacity=None)).reason for n in range(3)]
    ['initial', 'initial', 'never']
    """

    name = "never"
    param_names = "initial"

    def __init__(self, initial: int = 0) -> None:
        self.initial = check_nonnegative_int(initial, "initial")
        self._offers = 0

    def _admit(self, candidate: Candidate) -> Verdict:
        if candidate.refused is not None:  # (not counted)
            return Verdict(False, candidate.refused)
        self._offers += 1
        if self._offers <= self.initial:
            return Verdict(True, "initial")
        return Verdict(False, "never")

    def clear(self) -> None:
        self._offers = 0

    def state(self) -> dict[str, Any]:
        return {"offers": self._offers}

    def _read(self, reader: StateReader) -> dict[str, Any]:
        return {"_offers": reader.integer("offers")}
