"""A policy of your own is one module and one registration line (``tests/support/
newest_out.py``): stores persist it, and a scope of it reopens bit for bit, as a built-in
policy's does. A composition of registered parts too."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any, Optional, Protocol

import numpy as np
import pytest

from solar_core import SolarMemory
from solar_core.deletion import HistoryDeletion
from solar_core.eviction import FifoEviction
from solar_core.persistence import MemoryStore
from solar_core.persistence.scope import Scope
from solar_core.presets import PRESETS, Preset, register_policy
from solar_core.registry import state_class
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

    with pytest.raises(TypeError, match="must be registered: solar_core.presets.register_policy"):
        MemoryStore(tmp_path / "m.db", embedder="hash", deletion=MyDeletion)
    state_class(MyDeletion)  # registered: it persists
    store = MemoryStore(tmp_path / "m.db", embedder="hash", deletion=MyDeletion)
    store.scope(user="a").add("a fact")
    store.close()
    again = MemoryStore(tmp_path / "m.db", embedder="hash", deletion=MyDeletion)
    assert isinstance(again.scope(user="a").core.deletion, MyDeletion)
    again.close()


def test_registration_refuses_what_cannot_be_a_policy_and_changes_nothing(
    newest_out: ModuleType,
) -> None:
    class Restores(FifoEviction):
        def __setstate__(self, state: dict[str, object]) -> None:
            self.__dict__.update(state)

    policies = dict(PRESETS)
    with pytest.raises(TypeError, match="defines __setstate__"):
        register_policy("restores", Restores)
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


class _Sized(Protocol):
    def __len__(self) -> int: ...


@pytest.mark.parametrize(
    ("annotation", "value"),
    [
        (Any, {"a": 1}),
        (Optional[Any], 3.5),  # noqa: UP045 (the spelling a user may write)
        (Mapping[str, int] | None, {"a": 1}),
        (np.floating | None, np.float64(0.5)),
        (_Sized | None, [1, 2]),
        (object | None, "text"),
        (dict | None, {"a": 1}),
    ],
)
def test_a_class_of_yours_declares_what_fills_on_use_as_it_likes(
    tmp_path: Path, annotation: object, value: object
) -> None:
    """An attribute of your class that is None in a new memory and fills on use may be declared
    with any annotation: ``Any``, ``object``, an abstract type or a protocol check nothing (they
    refused every value, or the store's settings); a concrete type checks it."""
    name = f"fills-{len(PRESETS)}"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        FifoEviction.__init__(self, *args, **kwargs)
        self._last = None

    def on_remove(self: Any, slot: int, evicted: bool) -> Any:
        if evicted:
            self._last = value
        return FifoEviction.on_remove(self, slot, evicted)

    namespace = {"__annotations__": {"_last": annotation}, "__module__": "yours"}
    cls = type(
        "Fills", (FifoEviction,), {**namespace, "__init__": __init__, "on_remove": on_remove}
    )
    cls.__qualname__ = cls.__name__ = f"Fills{tmp_path.name.replace('-', '_')}"
    register_policy(name, cls)
    url = str(tmp_path / "s.db")
    try:
        with MemoryStore(url, policy=name, capacity=3, embedder="hash", snapshot_every=1) as store:
            memory = store.scope(user="a")
            for text in ("one", "two", "three", "four"):
                memory.add(text)
            assert memory.core.eviction._last is not None
        with MemoryStore(url, policy=name, capacity=3, embedder="hash") as store:
            assert store.scope(user="a").core.eviction._last == value
    finally:
        PRESETS.pop(name)
