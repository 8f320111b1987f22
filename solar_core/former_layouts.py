"""A memory's policy state as earlier versions laid it out, brought to today's layout.

Snapshots (and pickles) outlive the code that wrote them. Until snapshot format 3, ARC and the
adaptive coverage policy were two objects each: an admission gate beside the eviction policy
(``AlwaysAdmit`` + ``ArcEviction``; ``CoverageGate`` + ``CoverageEviction``, which the gate read
through a reference to it), and an ``EvaluatorGate`` copied two flags of its inner gate. Today
each of those policies is one object in both roles, asked through one ``admit``. :func:`upgrade`
rewrites a state of the former layout in place; a state of today's layout passes unchanged.
It only moves attributes between objects that are already there (no object of a new class is
made, no code of the data's choosing runs), and whatever it leaves is checked like any state.

>>> from solar_core import SolarMemory
>>> from solar_core.admission import AlwaysAdmit
>>> state = SolarMemory("arc", capacity=4, dim=2).__getstate__()
>>> arc = state["_eviction"]
>>> state["_admission"] = AlwaysAdmit(); del arc.__dict__["gate"]  # the former layout
>>> upgrade(state)
>>> state["_admission"] is arc, type(arc.gate).__name__
(True, 'AlwaysAdmit')
"""

from __future__ import annotations

from typing import Any

from .admission import AdmissionPolicy, CoverageGate, EvaluatorGate
from .eviction import ArcEviction, CoverageEviction

#: the hysteresis of a coverage eviction that had no gate of its own (it was never read)
_DEFAULT_HYSTERESIS = 0.5


def upgrade(state: dict[str, Any]) -> None:
    """Bring the policies of a memory's flat state (``_admission``, ``_eviction``) to today's
    layout, in place. Raises ``AttributeError`` or ``TypeError`` on a state no version wrote."""
    admission, eviction = state.get("_admission"), state.get("_eviction")
    outer = admission if isinstance(admission, EvaluatorGate) else None
    gate: AdmissionPolicy | None = outer.inner if outer is not None else admission
    if outer is not None:
        for flag in ("needs_similarities", "needs_vector"):  # copies of the inner gate's flags
            outer.__dict__.pop(flag, None)
    if isinstance(eviction, CoverageEviction) and "hysteresis" not in vars(eviction):
        if isinstance(gate, CoverageGate):  # the gate's one parameter moves into the policy
            eviction.hysteresis = vars(gate)["hysteresis"]
            gate = eviction
        else:
            eviction.hysteresis = _DEFAULT_HYSTERESIS
    elif isinstance(eviction, ArcEviction) and "gate" not in vars(eviction):
        if not isinstance(gate, AdmissionPolicy):
            raise TypeError(f"an ArcEviction beside a {type(gate).__name__}, not a gate")
        eviction.gate = gate  # ARC asks the gate that stood beside it
        gate = eviction
    else:
        return
    if outer is not None:
        if not isinstance(gate, AdmissionPolicy):
            raise TypeError(f"an evaluator around a {type(gate).__name__}, not a gate")
        outer.inner = gate
    else:
        state["_admission"] = gate
