"""Combined deletion: delete what any of several policies would."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from solar_core.basics.state import build, part_of, prefixed, register_part, spec
from solar_core.policies.admission.base import reader_of, run_stages, staged
from solar_core.policies.deletion.base import DeletionPolicy
from solar_core.retrieval.item_table import ItemTable


def _each(hook: str) -> Callable[..., None]:
    def call(self: CombinedDeletion, *args: Any) -> None:
        for p in self.policies:
            getattr(p, hook)(*args)

    return call


@register_part
class CombinedDeletion(DeletionPolicy):
    """Delete an item if any of ``policies`` would (the study's ``phi_per OR phi_hist``), once,
    with the first reason."""

    name = "combined"

    def __init__(self, *policies: DeletionPolicy) -> None:
        super().__init__()
        if not policies:
            raise ValueError("CombinedDeletion needs at least one policy")
        for p in policies:
            if not isinstance(p, DeletionPolicy):
                raise TypeError(f"expected DeletionPolicy instances, got {type(p).__name__}")
        members = [m for p in policies for m in _members(p)]
        if len({id(m) for m in members}) != len(members):
            raise ValueError("CombinedDeletion got the same policy object twice")
        if any(m.bound for m in members):
            raise ValueError("CombinedDeletion got a policy that already serves a memory")
        self.policies = policies

    def bind(self, store: ItemTable) -> None:
        super().bind(store)
        for p in self.policies:
            p.bind(store)

    reserve = _each("reserve")
    check_invariants = _each("check_invariants")
    on_insert = _each("on_insert")
    on_remove = _each("on_remove")
    on_retrieve = _each("on_retrieve")
    on_feedback = _each("on_feedback")
    clear = _each("clear")

    def sweep(self, step: int) -> list[tuple[int, str]]:
        seen: dict[int, str] = {}
        for p in self.policies:
            for slot, reason in p.sweep(step):
                seen.setdefault(slot, reason)
        return list(seen.items())

    def describe(self, slot: int) -> Mapping[str, float]:
        out: dict[str, float] = {}
        for p in self.policies:
            out.update(p.describe(slot))
        return out

    def params(self) -> dict[str, Any]:
        return {"policies": [spec(p) for p in self.policies]}

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> CombinedDeletion:
        described = params.get("policies")
        if set(params) != {"policies"} or type(described) is not list:
            raise ValueError(f"CombinedDeletion takes {{'policies': [...]}}, got {params!r}")
        return cls(*(build(d, f"CombinedDeletion's policy {i}") for i, d in enumerate(described)))

    def state(self) -> dict[str, Any]:
        """Each policy's state under its position: ``0.count``, ``1.sum``, ..."""
        out: dict[str, Any] = {}
        for i, p in enumerate(self.policies):
            out.update(prefixed(str(i), p.state()))
        return out

    def checked_state(self, state: Mapping[str, Any]) -> Callable[[], None]:
        reader = reader_of(self, state)
        known = {str(i) for i in range(len(self.policies))}
        unknown = [name for name in state if name.partition(".")[0] not in known or "." not in name]
        if unknown:
            raise reader.fail(f"unknown state {', '.join(sorted(unknown))}")
        stages = [staged(p, part_of(str(i), state)) for i, p in enumerate(self.policies)]
        return lambda: run_stages(stages)


def _members(policy: DeletionPolicy) -> list[DeletionPolicy]:
    """``policy`` and every policy it combines, however deep (for the duplicate checks)."""
    if isinstance(policy, CombinedDeletion):
        return [policy, *(m for p in policy.policies for m in _members(p))]
    return [policy]
