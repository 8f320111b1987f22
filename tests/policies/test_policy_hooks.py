"""The policy interfaces stay small: every hook a policy base class offers serves at least two
policies, or it is gone. A hook is a member of the base class that a policy overrides (a
method, a property or a flag); the base's own entry points, which do real work for every
policy (``admit`` validates, ``victim`` protects identity items, ``bind`` wires the store), are
not hooks. The count is read from the classes the library ships, so a hook added for one new
policy fails here until a second policy needs it."""

from __future__ import annotations

import inspect

import pytest

from solar_core.policies import admission, deletion, eviction
from solar_core.policies.admission import AdmissionPolicy
from solar_core.policies.deletion import DeletionPolicy
from solar_core.policies.eviction import EvictionPolicy

#: the bases' entry points: they work for every policy, none need override them
ENTRY_POINTS = {"admit", "victim", "bind", "store", "bound", "listens_to_feedback"}


def policies(base: type) -> list[type]:
    """Every class of the library that is a ``base`` (the base itself aside)."""
    found: dict[str, type] = {}
    for package in (admission, deletion, eviction):
        for module in [package, *(m for _, m in inspect.getmembers(package, inspect.ismodule))]:
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if issubclass(cls, base) and cls is not base:
                    found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return list(found.values())


def users(base: type, hook: str) -> list[str]:
    """The policies that override ``hook``: in their class, or as an instance attribute their
    constructor sets (a flag such as ``neighbours``)."""
    out = []
    for cls in policies(base):
        init = vars(cls).get("__init__")
        sets = init is not None and f"self.{hook} =" in inspect.getsource(init)
        if hook in vars(cls) or sets:
            out.append(cls.__name__)
    return out


@pytest.mark.parametrize("base", [AdmissionPolicy, EvictionPolicy, DeletionPolicy])
def test_every_hook_serves_at_least_two_policies(base: type) -> None:
    hooks = [
        name
        for name in vars(base)
        if not (name.startswith("__") or name in ENTRY_POINTS)
        and name not in {"_abc_impl"}
        and not isinstance(vars(base)[name], staticmethod)
    ]
    assert hooks, f"{base.__name__} has no hooks?"
    lonely = {hook: users(base, hook) for hook in hooks if len(users(base, hook)) < 2}
    assert not lonely, f"{base.__name__} hooks serving fewer than two policies: {lonely}"


def test_the_removed_single_policy_hooks_stay_gone() -> None:
    """What the interfaces lost when ARC and the coverage policy became one object each, when
    the candidate started computing what a gate reads, and when the memory took over
    protecting identity items: none of these may come back."""
    gone = {
        AdmissionPolicy: ["bind", "observe", "prepare", "needs_vector", "needs_similarities"],
        EvictionPolicy: [
            *("on_query", "needs_queries", "on_reoffer", "prepare_insert", "uses_content_key"),
        ],
        DeletionPolicy: ["members"],
    }
    for base, names in gone.items():
        assert not [name for name in names if hasattr(base, name)], base.__name__


def test_a_policy_in_both_roles_is_one_object() -> None:
    from solar_core import SolarMemory

    for name in ("arc", "solar-adaptive"):
        memory = SolarMemory(name, capacity=4, dim=2)
        assert memory.core.admission is memory.core.eviction, name
    memory = SolarMemory("solar", capacity=4, dim=2)
    assert memory.core.admission is not memory.core.eviction
