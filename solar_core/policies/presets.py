"""Named compositions of an admission and an eviction policy."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from solar_core.basics.state import register_part
from solar_core.policies.admission import AdmissionPolicy, AlwaysAdmit, CoverageGate, RegretGate
from solar_core.policies.admission.evaluator_gate import Evaluator, EvaluatorGate
from solar_core.policies.deletion import DeletionPolicy
from solar_core.policies.eviction import (
    ArcEviction,
    CoverageEviction,
    EvictionPolicy,
    FifoEviction,
    LfuEviction,
    LruEviction,
    MultiScoreEviction,
    SalienceEviction,
    ThompsonEviction,
)


@dataclass(frozen=True)
class Preset:
    """A policy by name: which admission and eviction classes, and what the rule is."""

    name: str
    rule: str
    #: ``None``: the eviction policy decides admission too (one object in both roles)
    admission: Callable[..., AdmissionPolicy] | None
    eviction: Callable[..., EvictionPolicy]
    unbounded: bool = False  # ignores capacity: stores everything


#: the policy of every memory built without one
DEFAULT_POLICY = "solar-adaptive"
#: the policy the chat adapters default to
CHAT_POLICY = "solar-dialogue"

_RULES = {
    "fifo": "store every item; evict the oldest insert",
    "lru": "store every item; evict the least recently retrieved",
    "lfu": "store every item; evict the least often retrieved (ties: oldest)",
    "arc": "store every item; ARC's recency/frequency lists with ghost hits",
    "solar": "regret-gated admission; Thompson-sampling eviction (the paper's SOLAR)",
    "solar-a": "regret-gated admission; recency+frequency+diversity eviction",
    "solar-e": "store every item; Thompson-sampling eviction",
    "solar-adaptive": "store when the gain beats the weakest item's value; evict by coverage value",
    "solar-dialogue": "keep the dialogue turns a salience prior and ratings value most",
    "unlimited": "store every item; never evict (capacity ignored)",
}
PRESETS: dict[str, Preset] = {
    name: Preset(name, _RULES[name], admission, eviction, unbounded=name == "unlimited")
    for name, admission, eviction in [
        ("fifo", AlwaysAdmit, FifoEviction),
        ("lru", AlwaysAdmit, LruEviction),
        ("lfu", AlwaysAdmit, LfuEviction),
        ("arc", None, ArcEviction),
        ("solar", RegretGate, ThompsonEviction),
        ("solar-a", RegretGate, MultiScoreEviction),
        ("solar-e", AlwaysAdmit, ThompsonEviction),
        ("solar-adaptive", None, CoverageEviction),
        ("solar-dialogue", None, SalienceEviction),
        ("unlimited", AlwaysAdmit, FifoEviction),
    ]
}


def register_policy(
    name: str,
    eviction: type[EvictionPolicy],
    admission: type[AdmissionPolicy] | None = AlwaysAdmit,
    *,
    rule: str = "",
    unbounded: bool = False,
) -> Preset:
    """Make ``name`` a policy like the built-in ones, of registered parts (``admission=None``:
    the eviction policy decides admission too); call it where the policy is defined:

    >>> from solar_core import SolarMemory
    >>> from solar_core.policies.eviction import FifoEviction
    >>> class NewestOut(FifoEviction):
    ...     "Evict the item inserted last."
    ...     def _ranking(self, step):
    ...         return reversed(self._order)
    >>> _ = register_policy("last-in-out", NewestOut, rule="evict the newest insert")
    >>> memory = SolarMemory("last-in-out", capacity=2, embedder="hash")
    >>> for text in ["one", "two", "three"]:
    ...     _ = memory.add(text)
    >>> [item.text for item in memory.items()]
    ['one', 'three']
    >>> _ = PRESETS.pop("last-in-out")  # (a name for this example only)
    """
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise ValueError(f"a policy name must be a non-blank str, got {name!r}")
    if not (isinstance(eviction, type) and issubclass(eviction, EvictionPolicy)):
        raise TypeError(f"eviction must be an EvictionPolicy subclass, got {eviction!r}")
    if admission is None and not issubclass(eviction, AdmissionPolicy):
        raise TypeError(f"admission=None needs an eviction that admits too, not {eviction!r}")
    if admission is not None and not (
        isinstance(admission, type) and issubclass(admission, AdmissionPolicy)
    ):
        raise TypeError(f"admission must be an AdmissionPolicy subclass, got {admission!r}")
    preset = Preset(name, rule or name, admission, eviction, unbounded)
    known = PRESETS.get(name)
    if known is not None and known != preset:
        raise ValueError(f"policy {name!r} is already defined ({known.rule}): pick another name")
    for cls in (eviction, admission):
        if cls is not None:
            register_part(cls)
    PRESETS[name] = preset
    return preset


def available_policies() -> list[str]:
    """Names accepted by ``SolarMemory(policy=...)``.

    >>> available_policies()
    ['arc', 'fifo', 'lfu', 'lru', 'solar', 'solar-a', 'solar-adaptive', 'solar-dialogue', 'solar-e',
     'unlimited']
    """
    return sorted(PRESETS)


def _parameters(factory: Callable[..., Any]) -> set[str]:
    """The parameters ``factory`` takes by name."""
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {name for name, p in inspect.signature(factory).parameters.items() if p.kind in named}


def build_policies(
    name: str, capacity: int | None, params: dict[str, Any]
) -> tuple[AdmissionPolicy, EvictionPolicy, int | None]:
    """Preset ``name``'s admission and eviction policies and its capacity; ``params`` go to
    whichever class takes them."""
    if not isinstance(name, str):
        raise TypeError(f"policy must be a str, got {type(name).__name__}")
    preset = PRESETS.get(name)
    if preset is None:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(available_policies())}")
    adm_names = set() if preset.admission is None else _parameters(preset.admission)
    ev_names = _parameters(preset.eviction) - {"capacity", "gate"}
    unknown = sorted(set(params) - adm_names - ev_names)
    if unknown:
        accepted = ", ".join(sorted(adm_names | ev_names)) or "none"
        raise TypeError(
            f"policy {name!r} got unknown parameter(s) {', '.join(unknown)}; accepted: {accepted}"
        )
    if preset.unbounded:
        capacity = None
    ev_params = {k: v for k, v in params.items() if k in ev_names}
    if "capacity" in _parameters(preset.eviction):
        if capacity is None:
            raise ValueError(f"policy {name!r} needs a finite capacity")
        ev_params["capacity"] = capacity
    eviction = preset.eviction(**ev_params)
    if preset.admission is None:
        assert isinstance(eviction, AdmissionPolicy)
        return eviction, eviction, capacity
    admission = preset.admission(**{k: v for k, v in params.items() if k in adm_names})
    return admission, eviction, capacity


def join(admission: AdmissionPolicy | None, eviction: EvictionPolicy) -> AdmissionPolicy:
    """The admission policy of a memory composed by hand: a policy that decides admission
    itself takes the gate's part (ARC asks the gate; a ``CoverageGate`` gives its hysteresis).

    >>> arc = ArcEviction()
    >>> join(RegretGate(), arc) is arc, type(arc.gate).__name__
    (True, 'RegretGate')
    """
    if eviction.bound:  # refuse before changing it
        name = type(eviction).__name__
        raise ValueError(f"this {name} already serves another memory: create one per memory")
    if isinstance(admission, CoverageGate):
        if not isinstance(eviction, CoverageEviction):
            raise TypeError(f"CoverageGate needs a CoverageEviction, got {type(eviction).__name__}")
        eviction.hysteresis = admission.hysteresis
        return eviction
    if isinstance(eviction, ArcEviction):
        if admission is not None and admission is not eviction:
            if type(eviction.gate) is not AlwaysAdmit:
                raise TypeError("this ArcEviction has a gate already: pass the gate once")
            eviction.gate = admission
        return eviction
    return admission if admission is not None else AlwaysAdmit()


def compose(
    policy: str | None,
    capacity: int | None,
    admission: AdmissionPolicy | None,
    eviction: EvictionPolicy | None,
    evaluator: Evaluator | None,
    deletion: DeletionPolicy | None,
    policy_params: dict[str, Any],
) -> tuple[AdmissionPolicy, EvictionPolicy, int | None, str]:
    """A memory's gate, eviction policy, capacity and policy name from
    :class:`~solar_core.SolarMemory`'s arguments.

    >>> compose("solar", 10, AlwaysAdmit(), None, None, None, {})
    Traceback (most recent call last):
    ...
    TypeError: pass either policy= or admission=/eviction=, not both
    """
    if admission is not None or eviction is not None:
        if policy is not None:
            raise TypeError("pass either policy= or admission=/eviction=, not both")
        if policy_params:
            raise TypeError("policy parameters go to the policy objects when you pass them")
        if not isinstance(eviction, EvictionPolicy):
            raise TypeError("eviction must be an EvictionPolicy when composing by hand")
        if admission is not None and not isinstance(admission, AdmissionPolicy):
            raise TypeError("admission must be an AdmissionPolicy")
        given = admission
        admission = join(admission, eviction)
        name = f"{'always' if given is None else given.name}+{eviction.name}"
    else:
        name = DEFAULT_POLICY if policy is None else policy
        admission, eviction, capacity = build_policies(name, capacity, policy_params)
    if evaluator is not None:
        admission = EvaluatorGate(evaluator, inner=admission)
        name = f"{name}+evaluator"
    if deletion is not None and not isinstance(deletion, DeletionPolicy):
        raise TypeError(f"deletion must be a DeletionPolicy, got {type(deletion).__name__}")
    if deletion is not None and deletion.bound:  # refuse before binding anything else
        name = type(deletion).__name__
        raise ValueError(f"this {name} already serves another memory: create one per memory")
    return admission, eviction, capacity, name
