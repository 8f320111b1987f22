"""``CoverageGate``: the name under which ``solar-adaptive``'s admission is composed by hand."""

from __future__ import annotations

from solar_core.basics.state import register_part
from solar_core.basics.validation import check_nonnegative
from solar_core.policies.admission.base import AdmissionPolicy, Candidate, Verdict


@register_part
class CoverageGate(AdmissionPolicy):
    """Compose ``solar-adaptive`` by hand: the memory hands the gate's ``hysteresis`` to the
    :class:`~solar_core.policies.eviction.CoverageEviction`, which decides admission itself.

    >>> from solar_core import SolarMemory
    >>> from solar_core.policies.eviction import CoverageEviction
    >>> memory = SolarMemory(admission=CoverageGate(0.25), eviction=CoverageEviction(), dim=2)
    >>> memory.core.admission is memory.core.eviction, memory.core.eviction.hysteresis
    (True, 0.25)
    """

    name = "coverage"
    param_names = "hysteresis"

    def __init__(self, hysteresis: float = 0.5) -> None:
        check_nonnegative(hysteresis=hysteresis)
        self.hysteresis = hysteresis

    def _admit(self, candidate: Candidate) -> Verdict:
        raise RuntimeError(
            "CoverageGate decides nothing alone: compose it with a CoverageEviction "
            "(SolarMemory(admission=CoverageGate(), eviction=CoverageEviction())), or use "
            'policy="solar-adaptive"'
        )
