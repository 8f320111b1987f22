"""A policy of your own is one module and one registration line (``tests/support/
newest_out.py``): ``presets.register_policy(name, eviction, admission)`` registers its classes
as parts, stores persist it, and a scope of it reopens bit for bit, as a built-in policy's
does. A composition of registered parts too. A class of yours that learns something says it
with ``params()``, ``state()`` and ``load_state()``; a class no registration names is refused
when a store is created with it."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from solar_core import SolarMemory
from solar_core.basics.state import StateReader, register_part
from solar_core.persistence import MemoryStore
from solar_core.persistence.scope import Scope
from solar_core.policies.deletion import HistoryDeletion
from solar_core.policies.eviction import FifoEviction
from solar_core.policies.presets import PRESETS, Preset, register_policy
from tests.support.persistence import Clock, apply, make_store, reference, same, stream

#: the presets ``tests/support/newest_out.py`` registers when imported, once imported
_REGISTERED: dict[str, Preset] = {}


@pytest.fixture
def newest_out() -> Iterator[ModuleType]:
    """The module of a policy of one's own, imported (which registers it); its names are taken
    out of the presets again afterwards, so no other test sees them."""
    before = set(PRESETS)
    module = importlib.import_module("tests.support.newest_out")
    _REGISTERED.update({name: PRESETS[name] for name in set(PRESETS) - before})
    PRESETS.update(_REGISTERED)  # (imported by an earlier test: registered then)
    yield module
    for name in _REGISTERED:
        PRESETS.pop(name, None)


@pytest.mark.parametrize("policy", ["newest-out", "regret-newest-out"])
def test_a_registered_policy_persists_and_resumes_bit_for_bit(
    tmp_path: Path, policy: str, newest_out: ModuleType
) -> None:
    url = str(tmp_path / "m.db")
    ops = stream(160)
    key = Scope(user="alice").key
    ref_clock, clock = Clock(), Clock()
    ref = reference(policy, {}, ref_clock, key)
    assert isinstance(ref.core.eviction, newest_out.NewestOut)
    expected = [apply(ref, op, ref_clock) for op in ops[:120]]
    store = make_store(url, policy, {}, clock, snapshot_every=50)
    memory = store.scope(user="alice")
    assert [apply(memory, op, clock) for op in ops[:120]] == expected
    before = memory.detached()
    store.close()
    again = make_store(url, policy, {}, clock)
    resumed = again.scope(user="alice")
    assert isinstance(resumed.core.eviction, newest_out.NewestOut)
    same(resumed, before)
    rest = ops[120:]
    assert [apply(resumed, op, clock) for op in rest] == [apply(ref, op, ref_clock) for op in rest]
    again.close()


def test_an_unregistered_class_is_refused_with_the_way_to_register_it(tmp_path: Path) -> None:
    class MyDeletion(HistoryDeletion):
        pass

    with pytest.raises(TypeError, match="not a registered part: register it with solar_core"):
        MemoryStore(tmp_path / "m.db", embedder="hash", deletion=MyDeletion)
    register_part(MyDeletion)  # registered: it persists
    store = MemoryStore(tmp_path / "m.db", embedder="hash", deletion=MyDeletion)
    store.scope(user="a").add("a fact")
    store.close()
    again = MemoryStore(tmp_path / "m.db", embedder="hash", deletion=MyDeletion)
    assert isinstance(again.scope(user="a").core.deletion, MyDeletion)
    again.close()


def test_registration_refuses_what_cannot_be_a_policy_and_changes_nothing(
    newest_out: ModuleType,
) -> None:
    policies = dict(PRESETS)
    with pytest.raises(TypeError, match="EvictionPolicy subclass"):
        register_policy("not-a-policy", dict)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="already defined"):
        register_policy("fifo", newest_out.NewestOut)
    with pytest.raises(ValueError, match="non-blank"):
        register_policy(" ", newest_out.NewestOut)
    assert PRESETS == policies
    again = register_policy("newest-out", newest_out.NewestOut, rule="evict the newest insert")
    assert again == PRESETS["newest-out"]  # the same registration twice is no change
    assert SolarMemory("newest-out", capacity=2, embedder="hash").core.eviction.name == "newest-out"


@pytest.mark.parametrize("value", [{"a": 1}, 3.5, [1, 2], "text", None, {"deep": [[1.5]]}])
def test_a_class_of_yours_says_what_fills_on_use_in_its_state(
    tmp_path: Path, value: object
) -> None:
    """An attribute of your class that fills on use is its learned state: its ``state()`` says
    it as a JSON value and its ``load_state()`` takes it back, checked; a scope of it reopens
    with it."""
    name = f"fills-{len(PRESETS)}"

    class Fills(FifoEviction):
        def __init__(self) -> None:
            super().__init__()
            self._last: object = None

        def on_remove(self, slot: int, evicted: bool) -> Any:
            if evicted:
                self._last = value
            return super().on_remove(slot, evicted)

        def state(self) -> dict[str, Any]:
            return {**super().state(), "last": self._last}

        def load_state(self, state: Mapping[str, Any]) -> None:
            rest = dict(state)
            last = StateReader({"last": rest.pop("last")}, "Fills's state").json("last")
            super().load_state(rest)
            self._last = last

    Fills.__qualname__ = Fills.__name__ = f"Fills{tmp_path.name.replace('-', '_')}"
    register_policy(name, Fills)
    url = str(tmp_path / "s.db")
    try:
        with MemoryStore(url, policy=name, capacity=3, embedder="hash", snapshot_every=1) as store:
            memory = store.scope(user="a")
            for text in ("one", "two", "three", "four"):
                memory.add(text)
            assert memory.core.eviction._last == value  # type: ignore[attr-defined]
        with MemoryStore(url, policy=name, capacity=3, embedder="hash") as store:
            assert store.scope(user="a").core.eviction._last == value  # type: ignore[attr-defined]
    finally:
        PRESETS.pop(name)
