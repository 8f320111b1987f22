"""What a snapshot holds of an object is declared by its class (``snapshot_names``, made with
:func:`solar_core.registry.stored`): the library's classes declare exactly the attributes their
objects have, and a renamed attribute keeps its stored name, so a rename changes no snapshot."""

from __future__ import annotations

import dataclasses
import itertools
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from solar_core.deletion import (
    CombinedDeletion,
    DeletionPolicy,
    HistoryDeletion,
    PeriodicDeletion,
)
from solar_core.persistence import MemoryStore, codec
from solar_core.persistence.journal import snapshot_state
from solar_core.presets import available_policies
from solar_core.registry import stored

_DELETIONS: dict[str, Callable[[], DeletionPolicy] | None] = {
    "none": None,
    "history": lambda: HistoryDeletion(n=2),
    "combined": lambda: CombinedDeletion(HistoryDeletion(n=2), PeriodicDeletion(window=5)),
}


def _objects(state: object) -> Iterator[object]:
    """Every object of a state class that ``state`` holds, each once."""
    shapes, seen, todo = codec._state_shapes(), set(), [state]
    while todo:
        value = todo.pop()
        if id(value) in seen or isinstance(value, str | bytes | int | float | np.ndarray):
            continue
        seen.add(id(value))
        shape = shapes.get(type(value))
        if shape is not None:
            yield value
            todo.extend(shape.attributes(value).values())
            if isinstance(value, list | tuple):
                todo.extend(value)
        elif isinstance(value, dict):
            todo.extend(value.values())
        elif isinstance(value, list | tuple | set | frozenset | deque):
            todo.extend(value)


def _declared(cls: type) -> set[str] | None:
    """The attributes ``cls`` declares a snapshot holds (``None``: it declares nothing)."""
    if dataclasses.is_dataclass(cls):
        return {field.name for field in dataclasses.fields(cls)}
    found = [
        vars(klass)["snapshot_names"] for klass in cls.__mro__ if "snapshot_names" in vars(klass)
    ]
    return set().union(*found) if found else None


def test_every_state_class_of_the_library_declares_what_a_snapshot_holds() -> None:
    for cls, shape in codec._state_shapes().items():
        if cls.__module__.startswith("solar_core.") and shape.has_dict:
            assert _declared(cls) is not None, f"{shape.name} declares no snapshot_names"


def test_the_parameters_a_class_names_are_among_what_a_snapshot_holds() -> None:
    named = 0
    for cls, shape in codec._state_shapes().items():
        if shape.settings and cls.__module__.startswith("solar_core."):
            named += 1
            declared = _declared(cls)
            assert declared is not None and set(shape.settings) <= declared, shape.name
    assert named >= 8  # (every built-in policy with parameters)


@pytest.mark.parametrize(
    ("policy", "deletion", "judged"),
    list(itertools.product(available_policies(), _DELETIONS, [False, True])),
)
def test_a_snapshot_holds_exactly_the_declared_attributes(
    tmp_path: Path, policy: str, deletion: str, judged: bool
) -> None:
    store = MemoryStore(
        tmp_path / "m.db",
        policy=policy,
        capacity=4,
        embedder="hash",
        seed=0,
        deletion=_DELETIONS[deletion],
        evaluator=(lambda q, e, m: len(e) % 3 != 0) if judged else None,
    )
    memory = store.scope(user="alice")
    states = [snapshot_state(memory)]
    for i in range(12):  # enough for every policy to fill what fills on use
        memory.add(f"fact {i} about topic {i % 3}", valid_until=None if i % 4 else 4e9)
        hits = memory.retrieve(f"topic {i % 3}", k=2)
        if hits.retrieval_id is not None and i % 2:
            memory.feedback(like=i % 4 == 1, retrieval=hits)
    states.append(snapshot_state(memory))
    store.close()
    for state in states:
        for obj in _objects(state):
            cls = type(obj)
            if (
                not cls.__module__.startswith("solar_core.")
                or not codec._state_shapes()[cls].has_dict
            ):
                continue
            held = set(codec._state_shapes()[cls].attributes(obj))
            assert held == _declared(cls), f"{cls.__qualname__}: holds {sorted(held)}"


# -- a rename -----------------------------------------------------------------------------------


def _tally_deletion(renamed: bool) -> type[HistoryDeletion]:
    """A deletion policy of one's own that counts its sweeps: as first written (``_tally``), and
    as a later version names that private attribute (``_sweeps``, stored as ``_tally``)."""

    class TallyDeletion(HistoryDeletion):
        snapshot_names: ClassVar[dict[str, str]] = (
            stored(_sweeps="_tally") if renamed else stored("_tally")
        )

        def __init__(self, n: int = 2) -> None:
            super().__init__(n=n)
            setattr(self, self._name, 0)

        _name = "_sweeps" if renamed else "_tally"

        def sweep(self, step: int) -> Any:
            setattr(self, self._name, getattr(self, self._name) + 1)
            return super().sweep(step)

    return TallyDeletion


@pytest.fixture
def versions(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[type], None]]:
    """Make a class the registered one under its name (the next version of its module)."""
    from solar_core import registry

    names = []

    def use(cls: type) -> None:
        names.append(f"{cls.__module__}.{cls.__qualname__}")
        monkeypatch.setitem(registry._REGISTERED, names[-1], cls)
        monkeypatch.setattr(codec, "_shapes", None)  # the codec sees the new class

    yield use
    for name in names:  # (the registry and the codec's classes are put back as they were)
        codec._by_name.pop(name, None)


def test_a_renamed_attribute_changes_no_snapshot(versions: Callable[[type], None]) -> None:
    first, later = _tally_deletion(renamed=False), _tally_deletion(renamed=True)
    old, new = first(n=3), later(n=3)
    for policy in (old, new):
        policy.sweep(1)
    versions(first)
    written = codec.dumps({"deletion": old})
    versions(later)
    assert codec.dumps({"deletion": new}) == written  # the same bytes
    back = codec.loads(written, "a snapshot")["deletion"]
    assert type(back) is later and vars(back)["_sweeps"] == 1 and "_tally" not in vars(back)


def test_a_scope_reopens_after_a_class_renamed_an_attribute(
    tmp_path: Path, versions: Callable[[type], None]
) -> None:
    first, later = _tally_deletion(renamed=False), _tally_deletion(renamed=True)
    versions(first)
    store = MemoryStore(tmp_path / "m.db", embedder="hash", seed=0, deletion=first)
    memory = store.scope(user="alice")
    for i in range(5):
        memory.add(f"fact {i}")
    store.close()
    versions(later)
    again = MemoryStore(tmp_path / "m.db", embedder="hash", seed=0, deletion=later)
    resumed = again.scope(user="alice")
    deletion = resumed.core.deletion
    assert type(deletion) is later and vars(deletion)["_sweeps"] == 5
    resumed.add("fact 5")
    assert vars(deletion)["_sweeps"] == 6
    again.close()


def test_a_declaration_names_each_attribute_once_under_its_own_name() -> None:
    with pytest.raises(ValueError, match="once"):
        stored("a b", c="a")
    with pytest.raises(ValueError, match="once"):
        stored("a a")

    class Base:
        snapshot_names: ClassVar[dict[str, str]] = stored("a")

    class Renamed(Base):  # b stored as a: two attributes under one name
        snapshot_names: ClassVar[dict[str, str]] = stored(b="a")

    with pytest.raises(TypeError, match="two attributes as one"):
        codec._Shape(Renamed)


def test_registering_a_class_with_malformed_stored_names_says_how_to_declare_them() -> None:
    from solar_core.registry import state_class

    class Listed(HistoryDeletion):
        snapshot_names = ["_tally"]  # type: ignore[assignment]

    with pytest.raises(TypeError, match=r"make it with stored\("):
        state_class(Listed)


def test_registering_a_class_that_stores_two_attributes_as_one_fails_there() -> None:
    # It registered, and every store of the process then failed to write any snapshot.
    from solar_core.eviction import FifoEviction
    from solar_core.registry import registered, state_class

    class Mine(FifoEviction):  # _mine stored as the _order FIFO has
        snapshot_names: ClassVar[dict[str, str]] = stored(_mine="_order")

    with pytest.raises(TypeError, match="Mine: its snapshot_names store two attributes as one"):
        state_class(Mine)
    assert Mine not in registered()
