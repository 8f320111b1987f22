"""The admission and deletion policies' explicit state: ``params()``, ``state()`` and a checked
``load_state()`` (see :mod:`solar_core.basics.state`).

A policy rebuilt from its parameters and loaded with a driven policy's state reports the same
parameters and state and, swapped into the memory, takes every later step as the original
does. A state that is not one a policy can have is refused with a ``StateError`` (never an
``IndexError``, ``KeyError`` or ``AssertionError``), and one that is accepted never breaks a
later step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solar_core import SolarMemory
from solar_core.basics.state import StateError, build, spec
from solar_core.policies.admission import (
    AdmissionPolicy,
    AlwaysAdmit,
    CoverageGate,
    EvaluatorGate,
    NeverAdmit,
    RegretGate,
)
from solar_core.policies.deletion import (
    CombinedDeletion,
    DeletionPolicy,
    HistoryDeletion,
    PeriodicDeletion,
)
from solar_core.policies.eviction import FifoEviction
from tests.support.profiles import examples

WORDS = "alpha beta gamma delta omega tea coffee rain sun moon star river stone leaf".split()


def even(query: str | None, execution: str, metadata: Mapping[str, Any]) -> bool:
    """The evaluator of the examples: accepts an execution of even length."""
    return len(execution) % 2 == 0


@dataclass(frozen=True)
class Case:
    """A memory, and which of its parts is under test (``admission`` or ``deletion``)."""

    name: str
    make: Callable[[], SolarMemory]
    role: str
    kind: type


def memory(*args: Any, **kw: Any) -> SolarMemory:
    ticks = iter(range(10**9))
    kw.setdefault("capacity", 8)
    return SolarMemory(
        *args, embedder="hash", seed=0, min_score=None, clock=lambda: float(next(ticks)), **kw
    )


CASES = [
    Case("solar", lambda: memory("solar"), "admission", RegretGate),
    Case("solar-a", lambda: memory("solar-a"), "admission", RegretGate),
    Case("solar-window-5", lambda: memory("solar", window=5, bootstrap=2), "admission", RegretGate),
    Case("fifo", lambda: memory("fifo"), "admission", AlwaysAdmit),
    Case("solar+evaluator", lambda: memory("solar", evaluator=even), "admission", EvaluatorGate),
    Case(
        "adaptive+evaluator",  # the inner gate is the memory's eviction policy
        lambda: memory(evaluator=even),
        "admission",
        EvaluatorGate,
    ),
    Case("fifo+evaluator", lambda: memory("fifo", evaluator=even), "admission", EvaluatorGate),
    Case("arc+evaluator", lambda: memory("arc", evaluator=even), "admission", EvaluatorGate),
    Case(
        "never",
        lambda: memory(admission=NeverAdmit(initial=5), eviction=FifoEviction()),
        "admission",
        NeverAdmit,
    ),
    Case(
        "periodic",
        lambda: memory("fifo", deletion=PeriodicDeletion(window=4, alpha=0)),
        "deletion",
        PeriodicDeletion,
    ),
    Case(
        "history",
        lambda: memory("lru", capacity=None, deletion=HistoryDeletion(n=1, beta=0.6)),
        "deletion",
        HistoryDeletion,
    ),
    Case(
        "combined",
        lambda: memory(
            "solar",
            deletion=CombinedDeletion(PeriodicDeletion(window=5), HistoryDeletion(n=1, beta=0.6)),
        ),
        "deletion",
        CombinedDeletion,
    ),
]
CASES.append(
    Case(
        "nested",
        lambda: memory(
            "fifo",
            deletion=CombinedDeletion(
                HistoryDeletion(n=2, beta=0.9),
                CombinedDeletion(PeriodicDeletion(window=3), HistoryDeletion(n=1, beta=0.6)),
            ),
        ),
        "deletion",
        CombinedDeletion,
    )
)
BY_NAME = {case.name: case for case in CASES}


def part(mem: SolarMemory, role: str) -> Any:
    return mem.core.admission if role == "admission" else mem.core.deletion


def fresh(mem: SolarMemory, role: str) -> Any:
    """A new part built from the parameters of ``mem``'s, wired as the memory wires it."""
    old = part(mem, role)
    if isinstance(old, EvaluatorGate):
        return EvaluatorGate.from_params(old.params(), even, eviction=mem.core.eviction)
    new = build(spec(old), "test")
    if role == "deletion":
        new.bind(mem.core.store)
    return new


def swap(mem: SolarMemory, role: str, new: Any) -> None:
    """Make ``new`` the memory's part (as a memory built around it would hold it)."""
    if role == "admission":
        mem.core.admission = new
    else:
        mem.core.deletion = new


def reloaded(mem: SolarMemory, role: str, state: Mapping[str, Any] | None = None) -> Any:
    """``mem``'s part rebuilt and loaded with ``state`` (its own by default), swapped in."""
    new = fresh(mem, role)
    new.load_state(part(mem, role).state() if state is None else state)
    swap(mem, role, new)
    return new


def drive(mem: SolarMemory, seed: int, steps: int) -> list[Any]:
    """``steps`` random calls (adds, retrieves, ratings, a few removals); what each returned."""
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    rateable = False  # the latest retrieval is not rated yet
    for _ in range(steps):
        roll = rng.random()
        text = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 4))).tolist())
        if roll < 0.45:
            d = mem.add(text)
            out.append(("add", d.admitted, d.item_id, d.evicted, d.reason, d.cost, d.regret, d.tau))
            out.append(("deleted", d.deleted))
        elif roll < 0.75:
            hits = mem.retrieve(text, k=2)
            out.append(("retrieve", [(h.id, h.score) for h in hits]))
            rateable = True
        elif roll < 0.93:
            if rateable:
                out.append(("feedback", mem.feedback(like=bool(rng.random() < 0.5))))
                rateable = False
        else:
            items = mem.items()
            if items:
                victim = items[int(rng.integers(len(items)))].id
                mem.remove(victim)
                out.append(("remove", victim))
    # end mid-step: a rated retrieval the deletion policies have not swept yet
    hits = mem.retrieve(" ".join(WORDS[:3]), k=3)
    out.append(("retrieve", [(h.id, h.score) for h in hits], mem.feedback(like=True)))
    stats = mem.stats()
    out.append(("stats", stats["tau"], stats["regret"], stats["size"], stats["deleted"]))
    mem.check_invariants()
    return out


def same_state(one: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    if set(one) != set(other):
        return False
    for name, value in one.items():
        theirs = other[name]
        if isinstance(value, np.ndarray):
            if not (
                isinstance(theirs, np.ndarray)
                and value.dtype == theirs.dtype
                and np.array_equal(value, theirs)
            ):
                return False
        elif type(value) is not type(theirs) or value != theirs:
            return False
    return True


def plain_values(state: Mapping[str, Any]) -> None:
    """Every value is a plain one: no object, set, tuple, deque or numpy scalar."""
    for name, value in state.items():
        assert isinstance(name, str) and not name.startswith("_"), name
        assert value is None or type(value) in (int, float, bool, str, list, dict, np.ndarray), (
            name,
            type(value),
        )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_loaded_part_continues_as_the_original(case: Case) -> None:
    one, two = case.make(), case.make()
    assert drive(one, 1, 100) == drive(two, 1, 100)
    old = part(two, case.role)
    assert type(old) is case.kind
    new = reloaded(two, case.role)
    assert type(new) is case.kind and new is not old
    assert new.params() == old.params()
    assert same_state(new.state(), old.state())
    plain_values(new.state())
    # the same further calls: the same answers, the same state after them
    assert drive(one, 2, 100) == drive(two, 2, 100)
    assert same_state(part(one, case.role).state(), part(two, case.role).state())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_params_build_an_equal_part(case: Case) -> None:
    mem = case.make()
    drive(mem, 3, 20)
    old = part(mem, case.role)
    params = old.params()
    if isinstance(old, EvaluatorGate | CombinedDeletion):
        again = fresh(mem, case.role)
    else:
        again = type(old)(**params)
    assert again.params() == params
    assert spec(again) == spec(old)


def test_params_keep_their_python_types() -> None:
    gate = RegretGate(switching_cost=5, lipschitz=np.float64(2.5), window=np.int64(12))
    params = gate.params()
    assert type(params["switching_cost"]) is int and type(params["lipschitz"]) is float
    assert type(params["window"]) is int and params["bootstrap"] is None
    assert RegretGate(**params).params() == params
    assert CoverageGate(0.25).params() == {"hysteresis": 0.25}
    assert build(spec(CoverageGate(0.25)), "test").hysteresis == 0.25
    assert NeverAdmit(3).params() == {"initial": 3} and AlwaysAdmit().params() == {}


def test_evaluator_gate_params_name_its_inner_gate_or_the_eviction() -> None:
    mem = BY_NAME["solar+evaluator"].make()
    gate = mem.core.admission
    assert gate.params()["inner"]["class"] == "RegretGate"
    assert "inner.regret" in gate.state()
    adaptive = BY_NAME["adaptive+evaluator"].make()
    gate = adaptive.core.admission
    assert gate.params()["inner"] == "eviction"
    assert not [name for name in gate.state() if name.startswith("inner.")]
    # rebuilt: the new memory's eviction policy is the inner gate
    eviction = adaptive.core.eviction
    assert EvaluatorGate.from_params(gate.params(), even, eviction=eviction).inner is eviction


def test_evaluator_gate_needs_its_evaluator() -> None:
    gate = BY_NAME["solar+evaluator"].make().core.admission
    with pytest.raises(StateError, match="evaluator"):
        build(spec(gate), "test")
    with pytest.raises(TypeError, match="eviction"):
        EvaluatorGate.from_params({"threshold": 0.5, "initial": 0, "inner": "eviction"}, even)
    coverage = {"threshold": 0.5, "initial": 0, "inner": spec(CoverageGate())}
    with pytest.raises(TypeError, match="eviction"):
        EvaluatorGate.from_params(coverage, even)


def test_combined_params_hold_its_policies() -> None:
    combined = CombinedDeletion(PeriodicDeletion(window=3, alpha=1), HistoryDeletion(n=2))
    params = combined.params()
    assert params == {
        "policies": [
            {"class": "PeriodicDeletion", "params": {"window": 3, "alpha": 1}},
            {"class": "HistoryDeletion", "params": {"n": 2, "beta": 0.5}},
        ]
    }
    again = build(spec(combined), "test")
    assert type(again) is CombinedDeletion and again.params() == params
    for bad in ({"policies": []}, {"policies": "x"}, {"policies": [], "x": 1}, {}):
        with pytest.raises(StateError):
            build({"class": "CombinedDeletion", "params": bad}, "test")


# -- refusals ----------------------------------------------------------------------------------


def driven(name: str, steps: int = 100) -> tuple[SolarMemory, Any, dict[str, Any]]:
    case = BY_NAME[name]
    mem = case.make()
    drive(mem, 5, steps)
    return mem, part(mem, case.role), part(mem, case.role).state()


def refused(mem: SolarMemory, role: str, state: Mapping[str, Any], match: str = "") -> None:
    new = fresh(mem, role)
    before = new.state()
    with pytest.raises(StateError, match=match):
        new.load_state(state)
    assert same_state(new.state(), before)  # nothing was assigned


def changed(state: Mapping[str, Any], **values: Any) -> dict[str, Any]:
    return {**state, **values}


def without(state: Mapping[str, Any], name: str) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != name}


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_unknown_and_missing_names_are_refused(name: str) -> None:
    mem, policy, state = driven(name)
    refused(mem, BY_NAME[name].role, changed(state, extra=1), "unknown state extra")
    refused(mem, BY_NAME[name].role, changed(state, **{"_head": 1}), "unknown")
    refused(mem, BY_NAME[name].role, {**state, 3: 1}, "strings")
    for missing in state:
        refused(mem, BY_NAME[name].role, without(state, missing), "missing")
    with pytest.raises(StateError):
        fresh(mem, BY_NAME[name].role).load_state([])  # type: ignore[arg-type]


def test_regret_gate_refusals() -> None:
    mem, gate, state = driven("solar-window-5")
    assert len(state["costs"]) == 5 and state["l_ema"] is not None
    role = "admission"
    costs = state["costs"]
    refused(mem, role, changed(state, costs=np.append(costs, 0.1)), "more than the window")
    refused(mem, role, changed(state, costs=costs[:-1]), "seen")
    refused(mem, role, changed(state, costs=costs.astype(np.float32)), "costs")
    refused(mem, role, changed(state, costs=costs.tolist()), "costs")
    refused(mem, role, changed(state, costs=np.where(costs == costs[0], np.nan, costs)), "finite")
    refused(mem, role, changed(state, costs=costs + 2.0), "above")
    refused(mem, role, changed(state, regret=math.nan), "regret")
    refused(mem, role, changed(state, regret=-0.5), "regret")
    refused(mem, role, changed(state, regret=math.inf), "regret")
    refused(mem, role, changed(state, seen=-1), "seen")
    refused(mem, role, changed(state, seen=state["seen"] + 1), "head")
    refused(mem, role, changed(state, seen=True), "seen")
    refused(mem, role, changed(state, head=5), "head")
    refused(mem, role, changed(state, head=-1), "head")
    refused(mem, role, changed(state, sum=state["sum"] + 1.0), "sum")
    refused(mem, role, changed(state, sumsq=math.nan), "sumsq")
    refused(mem, role, changed(state, l_ema=None), "l_ema")
    refused(mem, role, changed(state, l_ema=0.0), "l_ema")
    refused(mem, role, changed(state, l_ema=state["l_ema"] * 1.5), "tau")
    refused(mem, role, changed(state, tau=gate.tau_max + 1.0), "tau")
    refused(mem, role, changed(state, tau="1"), "tau")
    # a window filling up: the first tau, no l_ema, sums exact
    young = RegretGate(window=5)
    young.load_state(young.state())
    start = young.state()
    assert start["costs"].shape == (0,) and start["l_ema"] is None
    with pytest.raises(StateError, match="tau"):
        RegretGate(window=5).load_state(changed(start, tau=1.0))
    with pytest.raises(StateError, match="l_ema"):
        RegretGate(window=5).load_state(changed(start, l_ema=1.0))
    with pytest.raises(StateError, match="seen"):
        RegretGate(window=5).load_state(changed(start, seen=2))


def test_evaluator_gate_refusals() -> None:
    mem, gate, state = driven("solar+evaluator")
    role = "admission"
    refused(mem, role, changed(state, offers=-1), "offers")
    refused(mem, role, changed(state, judged=1), "judged")
    refused(mem, role, changed(state, judged="yes"), "judged")
    refused(mem, role, changed(state, **{"inner.regret": math.nan}), "regret")
    refused(mem, role, changed(state, **{"inner.extra": 1}), "extra")
    refused(mem, role, without(state, "inner.costs"), "costs")
    # a refused inner state leaves the outer gate as it was too (checked before assigned)
    new = fresh(mem, role)
    with pytest.raises(StateError):
        new.load_state(changed(state, offers=7, **{"inner.head": 99}))
    assert new.state()["offers"] == 0
    # the inner gate that is the eviction policy has no state here
    adaptive, _, shared = driven("adaptive+evaluator")
    refused(adaptive, role, changed(shared, **{"inner.regret": 0.0}), "unknown")


def test_never_admit_refusals() -> None:
    mem, _, state = driven("never")
    refused(mem, "admission", changed(state, offers=-3), "offers")
    refused(mem, "admission", changed(state, offers=2.0), "offers")
    refused(mem, "admission", changed(state, offers=2**63), "offers")


def test_periodic_refusals() -> None:
    mem, policy, state = driven("periodic")
    role = "deletion"
    high = mem.core.store.high_water
    assert state["count"].shape == (high,) and high > 0
    for name in ("count", "mark", "born"):
        values = state[name]
        refused(mem, role, changed(state, **{name: values[:-1]}), "shape")
        refused(mem, role, changed(state, **{name: np.append(values, 0)}), "shape")
        refused(mem, role, changed(state, **{name: values.astype(np.float64)}), "int64")
        refused(mem, role, changed(state, **{name: values - values.max() - 1}), "below")
        refused(mem, role, changed(state, **{name: values.reshape(1, -1)}), "shape")
    refused(mem, role, changed(state, mark=state["count"] + 1), "mark exceeds count")
    unbound = PeriodicDeletion(window=4)
    with pytest.raises(RuntimeError, match="not bound"):
        unbound.load_state(state)


def test_history_refusals() -> None:
    mem, policy, state = driven("history")
    role = "deletion"
    store = mem.core.store
    high = store.high_water
    total, uses = state["sum"], state["uses"]
    assert uses.sum() > 0, "the drive rated nothing"
    refused(mem, role, changed(state, sum=total[:-1]), "shape")
    refused(mem, role, changed(state, uses=np.append(uses, 0)), "shape")
    refused(mem, role, changed(state, sum=np.full(high, np.nan)), "finite")
    refused(mem, role, changed(state, sum=total - 1.0), "below")
    refused(mem, role, changed(state, uses=uses - uses.max() - 1), "below")
    refused(mem, role, changed(state, sum=uses.astype(np.float64) + 0.5), "exceeds")
    refused(mem, role, changed(state, dirty=[high]), "dirty")
    refused(mem, role, changed(state, dirty=[-1]), "dirty")
    refused(mem, role, changed(state, dirty=[0, 0]), "twice")
    refused(mem, role, changed(state, dirty=["0"]), "dirty")
    empty = [slot for slot in range(high) if not store.active_full[slot]]
    if empty:
        refused(mem, role, changed(state, dirty=[empty[0]]), "empty slot")
    active = store.active_slots()
    accepted = fresh(mem, role)
    accepted.load_state(changed(state, dirty=np.asarray(active[:2], dtype=np.int64)))
    assert accepted.state()["dirty"] == sorted(active[:2].tolist())


def test_combined_refusals() -> None:
    mem, policy, state = driven("combined")
    role = "deletion"
    refused(mem, role, changed(state, **{"2.count": state["0.count"]}), "unknown state 2.count")
    refused(mem, role, changed(state, count=state["0.count"]), "unknown state count")
    refused(mem, role, without(state, "1.uses"), "missing")
    refused(mem, role, changed(state, **{"1.sum": state["1.sum"][:-1]}), "shape")
    # the first policy's good state is not assigned when the second's is refused
    new = fresh(mem, role)
    before = new.state()
    with pytest.raises(StateError):
        new.load_state(changed(state, **{"1.dirty": [-1]}))
    assert same_state(new.state(), before)


def test_a_policy_that_learns_nothing_has_an_empty_state() -> None:
    for gate in (AlwaysAdmit(), CoverageGate(), NeverAdmit()):
        assert isinstance(gate, AdmissionPolicy)
    assert AlwaysAdmit().state() == {} and CoverageGate().state() == {}
    with pytest.raises(StateError, match="unknown"):
        AlwaysAdmit().load_state({"offers": 1})

    class Own(DeletionPolicy):
        def __init__(self, days: int) -> None:
            super().__init__()

        def sweep(self, step: int) -> list[tuple[int, str]]:
            return []

    with pytest.raises(NotImplementedError, match="days"):
        Own(3).params()


# -- any one value changed: refused, or harmless -------------------------------------------------

MUTABLE = [
    *("solar-window-5", "solar+evaluator", "never", "periodic", "history", "combined", "nested"),
]

replacements = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.lists(st.integers(-3, 40), max_size=4),
    st.just({}),
)


def mutated(value: Any, data: st.DataObject) -> Any:
    """``value`` with one thing changed: replaced, or (an array) one entry, its length or
    its dtype."""
    if isinstance(value, np.ndarray) and data.draw(st.booleans(), "array edit"):
        how = data.draw(st.sampled_from(["entry", "shorter", "longer", "dtype"]), "how")
        if how == "dtype":
            return value.astype(np.float64 if value.dtype.kind == "i" else np.int64)
        if how == "shorter":
            return value[:-1]
        if how == "longer":
            return np.append(value, value[-1:] if len(value) else np.zeros(1, value.dtype))
        if not len(value):
            return value
        out = value.copy()
        at = data.draw(st.integers(0, len(value) - 1), "at")
        if value.dtype.kind == "f":
            out[at] = data.draw(st.floats(allow_nan=True, allow_infinity=True), "entry")
        else:
            out[at] = data.draw(st.integers(-5, 2**40), "entry")
        return out
    if isinstance(value, float) and data.draw(st.booleans(), "nudge"):
        return value + data.draw(st.sampled_from([-1.0, -1e-9, 1e-9, 0.5, 3.0]), "by")
    if isinstance(value, int) and not isinstance(value, bool) and data.draw(st.booleans(), "step"):
        return value + data.draw(st.integers(-3, 3), "by")
    return data.draw(replacements, "replacement")


@pytest.mark.parametrize("name", MUTABLE)
@settings(max_examples=examples(40), deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_state_with_one_value_changed_is_refused_or_harmless(
    name: str, data: st.DataObject
) -> None:
    case = BY_NAME[name]
    mem = case.make()
    drive(mem, 7, 60)
    state = part(mem, case.role).state()
    key = data.draw(st.sampled_from(sorted(state)), "name")
    state = changed(state, **{key: mutated(state[key], data)})
    new = fresh(mem, case.role)
    try:
        new.load_state(state)
    except StateError:
        return
    swap(mem, case.role, new)
    drive(mem, 8, 40)  # survives further calls, check_invariants and the stats
