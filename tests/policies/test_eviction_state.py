"""The eviction policies' explicit state: params(), state() and load_state().

A policy rebuilt from its spec and loaded with a memory's policy's state must write the same
state, and take the same steps as the original; load_state must refuse (with StateError only)
whatever state could make a later hook raise or misbehave.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solar_core import SolarMemory
from solar_core.basics.state import StateError, build, part_of, register_part, spec
from solar_core.policies.admission import AlwaysAdmit, RegretGate
from solar_core.policies.eviction import ArcEviction, CoverageEviction, EvictionPolicy

PRESETS = [
    "fifo",
    "lru",
    "lfu",
    "arc",
    "solar",
    "solar-a",
    "solar-e",
    "solar-adaptive",
    "solar-dialogue",
    "unlimited",
]
CASES = [*PRESETS, "arc+regret"]
WORDS = (
    "tea coffee beagle Lisbon March train budget garden piano river chess winter cat soup "
    "ticket doctor laptop bicycle concert sister"
).split()


#: the gates given a stand-in explicit state (it checks nothing: their values are not mutated)
STAND_INS: set[type] = set()


def _explicit_state_for(cls: type) -> None:
    """A stand-in for the explicit state of a gate not migrated yet (the admission policies
    are migrated separately): its constructor's arguments and its private attributes."""
    if hasattr(cls, "load_state"):
        return
    STAND_INS.add(cls)
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    init = inspect.signature(cls.__init__).parameters.values()
    names = [p.name for p in init if p.name != "self" and p.kind in kinds]

    def params(self: Any) -> dict[str, Any]:
        return {name: getattr(self, name) for name in names}

    def state(self: Any) -> dict[str, Any]:
        return {k[1:]: copy.deepcopy(v) for k, v in vars(self).items() if k.startswith("_")}

    def load_state(self: Any, state: Mapping[str, Any]) -> None:
        mine = {k[1:] for k in vars(self) if k.startswith("_")}
        if set(state) != mine:
            raise StateError(f"{cls.__name__}'s state: names {sorted(state)} != {sorted(mine)}")
        for name, value in state.items():
            setattr(self, "_" + name, copy.deepcopy(value))

    cls.params, cls.state, cls.load_state = params, state, load_state  # type: ignore[attr-defined]
    register_part(cls)


_explicit_state_for(AlwaysAdmit)
_explicit_state_for(RegretGate)


# -- memories -----------------------------------------------------------------------------------
def memory_of(case: str, seed: int = 0) -> SolarMemory:
    if case == "arc+regret":
        return SolarMemory(
            eviction=ArcEviction(), admission=RegretGate(), capacity=8, embedder="hash", seed=seed
        )
    return SolarMemory(case, capacity=8, embedder="hash", seed=seed)


def text_of(rng: np.random.Generator) -> str:
    # A small vocabulary: texts come back (ARC's ghost hits, re-offers) and resemble each other
    speaker = ("Ann", "Bo")[int(rng.integers(2))]
    words = rng.choice(WORDS, size=int(rng.integers(2, 6)))
    return f"{speaker}: " + " ".join(words) + ("?" if rng.random() < 0.2 else ".")


def drive(memory: SolarMemory, rng: np.random.Generator, steps: int) -> list[Any]:
    """``steps`` random operations; what each returned, comparable across twins."""
    seen: list[Any] = []
    for _ in range(steps):
        r = rng.random()
        if r < 0.45:
            decision = memory.add(text_of(rng))
            seen.append(("add", decision.admitted, decision.evicted, decision.item_id))
        elif r < 0.85:
            hits = memory.retrieve(text_of(rng), k=int(rng.integers(1, 4)))
            seen.append(("retrieve", [(h.id, h.score) for h in hits]))
            if rng.random() < 0.6:
                memory.feedback(like=bool(rng.random() < 0.5))
                seen.append("feedback")
        else:
            ids = sorted(item.id for item in memory.items())
            if ids:
                victim = ids[int(rng.integers(len(ids)))]
                memory.remove(victim)
                seen.append(("remove", victim))
    return seen


def twin_of(memory: SolarMemory, state: Mapping[str, Any] | None = None) -> SolarMemory:
    """A copy of ``memory`` (store, core and other parts copied) whose eviction policy is a new
    one built from the original's spec and loaded with ``state`` (the original's by default)."""
    original = memory.core.eviction
    twin = copy.deepcopy(memory)
    core = twin.core
    policy = build(spec(original), "the test's policy")  # type: ignore[arg-type]
    policy.bind(core._store, core.rng)  # as MemoryCore.__init__ binds it
    policy.load_state(original.state() if state is None else state)  # type: ignore[attr-defined]
    one = core.admission is core.eviction
    core.eviction = policy
    if one:
        core.admission = policy
    if isinstance(policy, CoverageEviction) and core._recent and policy.last_slots is not None:
        # The memory's part on loading: its latest retrieval holds the policy's array again
        latest = next(reversed(core._recent.values()))
        if np.array_equal(latest.slots, policy.last_slots):
            latest.slots = policy.last_slots
    return twin


@cache
def driven(case: str, seed: int = 0, steps: int = 60) -> SolarMemory:
    memory = memory_of(case, seed)
    drive(memory, np.random.default_rng(seed + 100), steps)
    return memory


def fresh(case: str) -> SolarMemory:
    """A private copy of the driven memory (the cached one is never changed)."""
    return copy.deepcopy(driven(case))


def assert_same_state(a: Mapping[str, Any], b: Mapping[str, Any]) -> None:
    assert a.keys() == b.keys()
    for name, value in a.items():
        other = b[name]
        if isinstance(value, np.ndarray):
            assert isinstance(other, np.ndarray), name
            assert value.dtype == other.dtype and value.shape == other.shape, name
            assert np.array_equal(value, other), name
        else:
            assert type(value) is type(other) and value == other, name


def check_values(state: Mapping[str, Any]) -> None:
    """Only plain values: no objects, sets, tuples, deques or numpy scalars."""
    plain = (int, float, bool, str, type(None), list, dict, np.ndarray)
    for name, value in state.items():
        assert not name.startswith("_"), name
        assert type(value) in plain, (name, type(value))


# -- round trips ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_a_loaded_policy_continues_as_the_original(case: str) -> None:
    memory = fresh(case)
    original = memory.core.eviction
    state = original.state()  # type: ignore[attr-defined]
    check_values(state)
    twin = twin_of(memory)
    loaded = twin.core.eviction
    assert type(loaded) is type(original)
    assert loaded.params() == original.params()  # type: ignore[attr-defined]
    assert_same_state(loaded.state(), state)  # type: ignore[attr-defined]
    loaded.check_invariants()
    for round_ in range(3):  # the same steps, the same RNG: the same outcomes
        a = drive(memory, np.random.default_rng(round_), 40)
        b = drive(twin, np.random.default_rng(round_), 40)
        assert a == b
        assert_same_state(loaded.state(), original.state())  # type: ignore[attr-defined]
        original.check_invariants()
        loaded.check_invariants()
    assert [i.id for i in memory.items()] == [i.id for i in twin.items()]


@pytest.mark.parametrize("case", CASES)
def test_params_rebuild_an_equal_policy(case: str) -> None:
    policy = driven(case).core.eviction
    params = policy.params()  # type: ignore[attr-defined]
    again = build(spec(policy), "test")  # type: ignore[arg-type]
    assert again.params() == params
    if not hasattr(type(policy), "from_params"):
        assert type(policy)(**params).params() == params


def test_params_keep_their_types() -> None:
    from solar_core.policies.eviction import ThompsonEviction, UtilityEviction

    params = ThompsonEviction(prior_alpha=3, decay_every=7, novelty_bonus=0).params()
    assert params["prior_alpha"] == 3 and type(params["prior_alpha"]) is int
    assert type(params["decay_every"]) is int
    assert ThompsonEviction(**params).params() == params
    assert UtilityEviction(**UtilityEviction(prior=0.25).params()).params()["prior"] == 0.25


def test_arc_holds_its_gate() -> None:
    arc = driven("arc+regret").core.eviction
    params = arc.params()  # type: ignore[attr-defined]
    assert params["capacity"] == 8 and params["gate"]["class"] == "RegretGate"
    rebuilt = ArcEviction.from_params(params)
    assert type(rebuilt.gate) is RegretGate and rebuilt.gate is not arc.gate  # type: ignore[attr-defined]
    gate_state = part_of("gate", arc.state())  # type: ignore[attr-defined]
    assert gate_state.keys() == arc.gate.state().keys() and gate_state  # type: ignore[attr-defined]


def test_salience_names_the_prior_it_picked() -> None:
    from solar_core.policies.eviction import SalienceEviction
    from solar_core.policies.salience import load_prior

    policy = driven("solar-dialogue").core.eviction
    assert policy.params()["prior"] == "dialogue-static"  # type: ignore[attr-defined]
    assert SalienceEviction().params()["prior"] is None  # nothing picked yet
    custom = dataclasses.replace(load_prior("dialogue-text"), name="mine", bias=0.25)
    document = SalienceEviction(custom).params()["prior"]
    assert isinstance(document, dict) and document["bias"] == 0.25
    assert SalienceEviction(document).prior == custom


# -- refusals ---------------------------------------------------------------------------------
def refused(case: str, change: Callable[[dict[str, Any]], object]) -> None:
    """Load the driven memory's state, changed by ``change``: a StateError, and the policy it
    was loaded into unchanged."""
    memory = fresh(case)
    state = dict(memory.core.eviction.state())  # type: ignore[attr-defined]
    change(state)
    twin = copy.deepcopy(memory)
    target = twin.core.eviction
    before = target.state()  # type: ignore[attr-defined]
    with pytest.raises(StateError):
        target.load_state(state)  # type: ignore[attr-defined]
    assert_same_state(target.state(), before)  # type: ignore[attr-defined]


def arrays_of(case: str) -> dict[str, np.ndarray]:
    state = driven(case).core.eviction.state()  # type: ignore[attr-defined]
    return {k: v for k, v in state.items() if isinstance(v, np.ndarray)}


@pytest.mark.parametrize("case", CASES)
def test_wrong_lengths_are_refused(case: str) -> None:
    for name, array in arrays_of(case).items():
        if name == "last_slots":  # any retrieval's length
            continue

        def longer(state: dict[str, Any], name: str = name, array: np.ndarray = array) -> None:
            state[name] = np.concatenate([array, array[:1] if len(array) else array[:0]])
            if len(array) == 0:
                state[name] = np.zeros((1, *array.shape[1:]), dtype=array.dtype)

        refused(case, longer)
        if len(array):
            refused(case, lambda s, name=name, array=array: s.__setitem__(name, array[:-1]))
        refused(case, lambda s, name=name, array=array: s.__setitem__(name, array.tolist()))


@pytest.mark.parametrize("case", CASES)
def test_non_finite_numbers_are_refused(case: str) -> None:
    state = driven(case).core.eviction.state()  # type: ignore[attr-defined]
    for name, value in state.items():
        if name.startswith("gate."):  # the gate's own
            continue
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.size:
            for bad in (np.nan, np.inf):
                changed = value.copy()
                changed.flat[len(changed.flat) // 2] = bad
                refused(case, lambda s, name=name, changed=changed: s.__setitem__(name, changed))
        elif type(value) is float:
            refused(case, lambda s, name=name: s.__setitem__(name, float("nan")))


@pytest.mark.parametrize("case", CASES)
def test_negative_counts_are_refused(case: str) -> None:
    state = driven(case).core.eviction.state()  # type: ignore[attr-defined]
    for name, value in state.items():
        if name.startswith("gate."):  # the gate's own
            continue
        if type(value) is int:
            refused(case, lambda s, name=name: s.__setitem__(name, -5))
        elif isinstance(value, np.ndarray) and value.dtype.kind == "i" and value.size:
            if name in ("steps", "last_slots"):  # FIFO's insert steps, any slots
                continue
            changed = value.copy()
            changed[len(changed) // 2] = -5
            refused(case, lambda s, name=name, changed=changed: s.__setitem__(name, changed))


@pytest.mark.parametrize("case", CASES)
def test_unknown_and_missing_names_are_refused(case: str) -> None:
    refused(case, lambda s: s.__setitem__("bogus", 1))
    for name in driven(case).core.eviction.state():  # type: ignore[attr-defined]
        refused(case, lambda s, name=name: s.pop(name))


@pytest.mark.parametrize(("case", "name"), [("fifo", "order"), ("lru", "order"), ("arc", "t")])
def test_orders_must_list_the_stored_slots_once(case: str, name: str) -> None:
    arrays = arrays_of(case)
    if name == "t":  # ARC's longer list
        name = max(("t1", "t2"), key=lambda n: len(arrays[n]))
    order = arrays[name]
    assert len(order) >= 2
    twice = order.copy()
    twice[-1] = twice[0]
    refused(case, lambda s: s.__setitem__(name, twice))
    store = driven(case).core.eviction.store
    empty = [*np.setdiff1d(np.arange(store.high_water), store.active_slots()), store.high_water]
    for slot in empty:
        elsewhere = order.copy()
        elsewhere[-1] = slot
        refused(case, lambda s, elsewhere=elsewhere: s.__setitem__(name, elsewhere))
    elsewhere = order.copy()
    elsewhere[-1] = -1
    refused(case, lambda s: s.__setitem__(name, elsewhere))
    refused(case, lambda s: s.__setitem__(name, order[::-1][:-1]))


def test_arc_lists_must_partition_and_fit() -> None:
    state = driven("arc").core.eviction.state()  # type: ignore[attr-defined]
    t1, t2 = state["t1"], state["t2"]
    both = np.concatenate([t1, t2])
    refused("arc", lambda s: s.update(t1=both, t2=both))  # in both
    refused("arc", lambda s: s.update(b1=["k"] * 2))
    refused("arc", lambda s: s.update(b1=["k"], b2=["k"]))
    refused("arc", lambda s: s.update(b1=[f"k{i}" for i in range(9)]))
    refused("arc", lambda s: s.update(b1=[1]))
    refused("arc", lambda s: s.update(p=9.0))
    refused("arc+regret", lambda s: s.update({"gate.bogus": 1}))


def test_beliefs_and_values_must_agree() -> None:
    alpha = arrays_of("solar")["alpha"]
    store = driven("solar").core.eviction.store
    slot = int(store.active_slots()[0])
    zero = alpha.copy()
    zero[slot] = 0.0
    refused("solar", lambda s: s.update(alpha=zero))
    if not store.active_mask.all():
        stale = alpha.copy()
        stale[~store.active_mask] = 2.0
        refused("solar", lambda s: s.update(alpha=stale))
    value = arrays_of("solar-adaptive")["value"]
    more = value.copy()
    more[int(driven("solar-adaptive").core.eviction.store.active_slots()[0])] += 0.5
    refused("solar-adaptive", lambda s: s.update(value=more))
    key = arrays_of("solar-dialogue")["key"]
    moved = key.copy()
    moved[int(driven("solar-dialogue").core.eviction.store.active_slots()[0])] += 0.5
    refused("solar-dialogue", lambda s: s.update(key=moved))
    dialogue = driven("solar-dialogue").core.eviction.store
    refused("solar-dialogue", lambda s: s.update(weakest=dialogue.high_water))
    refused("solar-dialogue", lambda s: s.update(weakest=-1))


# -- anything accepted is safe ------------------------------------------------------------------
@st.composite
def mutations(draw: st.DrawFn) -> tuple[str, str, Any]:
    case = draw(st.sampled_from(CASES))
    state = driven(case).core.eviction.state()  # type: ignore[attr-defined]
    names = [n for n in sorted(state) if not n.startswith("gate.") or RegretGate not in STAND_INS]
    name = draw(st.sampled_from(names))
    value = state[name]
    ints = st.integers(-3, 40) | st.integers(-(2**63), 2**63 - 1)
    floats = st.floats(-3.0, 12.0) | st.floats(allow_nan=True, allow_infinity=True)
    if isinstance(value, np.ndarray):
        how = draw(st.sampled_from(["element", "longer", "shorter"]))
        changed = value.copy()
        if how == "element" and changed.size:
            at = draw(st.integers(0, changed.size - 1))
            if changed.dtype.kind == "f":
                with np.errstate(over="ignore"):
                    changed.flat[at] = draw(floats)
            else:
                changed.flat[at] = draw(st.integers(-3, 40) | st.integers(-(2**62), 2**62))
        elif how == "longer":
            row = np.zeros((1, *changed.shape[1:]), dtype=changed.dtype)
            changed = np.concatenate([changed, row])
        else:
            changed = changed[:-1]
        return case, name, changed
    if type(value) is bool:
        return case, name, not value
    if type(value) is list:
        return case, name, draw(st.sampled_from([[], value[:-1], value + value[:1], [0]]))
    if type(value) is str:
        return case, name, draw(st.sampled_from([None, "", value + "?"]))
    return case, name, draw(st.none() | ints | floats)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutations(), st.integers(0, 2**32 - 1))
def test_a_state_load_state_accepts_is_safe(mutation: tuple[str, str, Any], seed: int) -> None:
    case, name, value = mutation
    memory = fresh(case)
    state = dict(memory.core.eviction.state())  # type: ignore[attr-defined]
    state[name] = value
    try:
        twin = twin_of(memory, state)
    except StateError:
        return
    policy: EvictionPolicy = twin.core.eviction
    policy.check_invariants()
    with np.errstate(all="ignore"):  # what a forged value may do to a float is not the question
        drive(twin, np.random.default_rng(seed), 20)
    policy.check_invariants()
    for slot in policy.store.active_slots().tolist():
        policy.describe(slot)
    policy.clear()
    policy.reserve(policy.store.slots)


@pytest.mark.parametrize("case", CASES)
def test_a_name_that_is_not_a_string_is_refused(case: str) -> None:
    """It escaped as a TypeError (ARC: an AttributeError) where the names were sorted."""
    refused(case, lambda state: state.__setitem__(7, 1))
