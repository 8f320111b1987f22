"""Policy specs: a preset name, optionally with constructor parameters, for ablations.

``"solar-adaptive[shift=0]"`` is the ``solar-adaptive`` preset with ``shift=0``; several
parameters are separated by ``;`` (``"solar-adaptive[shift=0;hysteresis=0]"``). The spec string
is the policy's label in every table, so an ablation reads as one more column.

``deletion=history|periodic|combined`` adds a deletion sweep (``solar_core.policies.deletion``) with
the study's RegAgent settings, which ``deletion_n``, ``deletion_beta``, ``deletion_window`` and
``deletion_alpha`` override: ``"fifo[deletion=history;deletion_n=3]"``.
"""

from __future__ import annotations

import ast
import re
from typing import Any

from solar_core.engine.memory import SolarMemory
from solar_core.policies.deletion import (
    CombinedDeletion,
    DeletionPolicy,
    HistoryDeletion,
    PeriodicDeletion,
)
from solar_core.policies.presets import PRESETS, available_policies, build_policies

_SPEC = re.compile(r"^([\w-]+)(?:\[([^\[\]]*)\])?$")


def parse_policy(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``spec`` into the preset name and its parameters; raises ``ValueError`` on a bad
    spec, an unknown preset or a parameter the preset does not take.

    >>> parse_policy("solar-adaptive[shift=0;hysteresis=0.25]")
    ('solar-adaptive', {'shift': 0, 'hysteresis': 0.25})
    >>> parse_policy("fifo")
    ('fifo', {})
    >>> parse_policy("solar-adaptive[shift]")
    Traceback (most recent call last):
    ...
    ValueError: bad parameter 'shift' in 'solar-adaptive[shift]': write name=value
    """
    match = _SPEC.match(spec.strip())
    if match is None:
        raise ValueError(f"bad policy spec {spec!r}: write name or name[param=value;...]")
    name, body = match.group(1), match.group(2)
    if name not in PRESETS:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(available_policies())}")
    params: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in (body or "").split(";"))):
        key, eq, raw = part.partition("=")
        if not eq or not key.strip().isidentifier():
            raise ValueError(f"bad parameter {part!r} in {spec!r}: write name=value")
        try:
            value: Any = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            value = raw.strip()  # a bare word: a string parameter
        if key.strip() in params:
            raise ValueError(f"parameter {key.strip()!r} given twice in {spec!r}")
        params[key.strip()] = value
    policy_params = {k: v for k, v in params.items() if k not in _DELETION_KEYS | _MEMORY_KEYS}
    try:
        build_policies(name, 10, policy_params)  # the preset's checks: unknown names, bad values
        deletion_for(params)
        SolarMemory(name, dim=2, **{k: v for k, v in params.items() if k in _MEMORY_KEYS})
    except TypeError as err:
        raise ValueError(str(err)) from None
    return name, params


_DELETION_KEYS = {"deletion", "deletion_n", "deletion_beta", "deletion_window", "deletion_alpha"}
#: SolarMemory settings a spec may carry besides the policy's own parameters
_MEMORY_KEYS = {"importance_weight"}


def deletion_for(params: dict[str, Any]) -> DeletionPolicy | None:
    """The deletion policy a spec's ``deletion*`` parameters describe (``None``: no deletion)."""
    kind = params.get("deletion")
    extra = sorted(k for k in params if k in _DELETION_KEYS - {"deletion"})
    if kind is None:
        if extra:
            raise ValueError(f"{', '.join(extra)} need deletion=history|periodic|combined")
        return None
    applies = {
        "history": {"deletion_n", "deletion_beta"},
        "periodic": {"deletion_window", "deletion_alpha"},
        "combined": {"deletion_n", "deletion_beta", "deletion_window", "deletion_alpha"},
    }
    if kind in applies and set(extra) - applies[kind]:
        unused = ", ".join(sorted(set(extra) - applies[kind]))
        raise ValueError(f"{unused} do not apply to deletion={kind}")
    history = HistoryDeletion(params.get("deletion_n", 5), params.get("deletion_beta", 0.5))
    periodic = PeriodicDeletion(params.get("deletion_window", 500), params.get("deletion_alpha", 0))
    choices: dict[str, DeletionPolicy] = {
        "history": history,
        "periodic": periodic,
        "combined": CombinedDeletion(periodic, history),
    }
    if kind not in choices:
        raise ValueError(f"deletion must be history, periodic or combined, got {kind!r}")
    return choices[kind]


def split_policies(text: str) -> list[str]:
    """Comma-separated specs; commas inside ``[...]`` belong to the spec (a malformed spec is
    kept whole, for :func:`parse_policy` to refuse).

    >>> split_policies("fifo, solar-adaptive[shift=0],solar")
    ['fifo', 'solar-adaptive[shift=0]', 'solar']
    """
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += {"[": 1, "]": -1}.get(char, 0)
        current += char
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def policy_name(spec: str) -> str:
    """The preset name of a spec (``"solar-adaptive[shift=0]"`` -> ``"solar-adaptive"``)."""
    return spec.split("[", 1)[0].strip()


def memory_for(spec: str, **kwargs: Any) -> SolarMemory:
    """A :class:`SolarMemory` for ``spec`` (``kwargs``: capacity, dim, k, seed, ...)."""
    name, params = parse_policy(spec)
    policy_params, _ = split_params(params)
    policy_params = {k: v for k, v in policy_params.items() if k not in kwargs}  # kwargs win
    return SolarMemory(name, **kwargs, **policy_params, deletion=deletion_for(params))


def split_params(params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``params`` as (the policy's own and memory settings, the deletion ones)."""
    return (
        {k: v for k, v in params.items() if k not in _DELETION_KEYS},
        {k: v for k, v in params.items() if k in _DELETION_KEYS},
    )
