"""A stored scope records every parameter of its policy when it is created, given or default, and
is built from them ever after: a later change of a library default changes no scope, and a
snapshot cannot give a scope parameters other than the recorded ones."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from solar_core import MemoryStore, PersistenceError, SolarMemory
from solar_core.admission import AdmissionPolicy, AlwaysAdmit, RegretGate
from solar_core.admission.base import Candidate, Verdict
from solar_core.eviction import FifoEviction, ThompsonEviction
from solar_core.persistence import codec
from solar_core.persistence.reader import MemoryReader
from solar_core.presets import PRESETS, register_policy
from solar_core.registry import settings, state_class
from tests.support.persistence import DIM, Clock, apply, stream


def _store(path: Path, **params: Any) -> MemoryStore:
    return MemoryStore(path, policy="solar", capacity=20, dim=DIM, seed=3, clock=Clock(), **params)


def _config(path: Path) -> dict[str, Any]:
    with sqlite3.connect(path) as db:
        (text,) = db.execute("SELECT config FROM solar_scopes").fetchone()
    config: dict[str, Any] = json.loads(text)
    return config


def _stored(path: Path, steps: int = 3) -> dict[str, Any]:
    """A scope stored with ``steps`` steps and closed (a snapshot); its config, to edit."""
    store = _store(path)
    _fill(store, steps)
    store.close()
    return _config(path)


def _set_config(path: Path, config: object) -> None:
    """Write ``config`` as the scope's, as a writer of the database could."""
    with sqlite3.connect(path) as db:
        db.execute("UPDATE solar_scopes SET config = ?", (json.dumps(config),))


def _fill(store: MemoryStore, steps: int = 30) -> None:
    memory, clock = store.scope(user="alice"), Clock()
    for op in stream(steps):
        apply(memory, op, clock)


def test_a_new_scope_records_every_parameter_given_or_default(tmp_path: Path) -> None:
    from solar_core.presets import settings_of

    store = _store(tmp_path / "m.db", window=12)
    _fill(store, 3)
    config = _config(tmp_path / "m.db")
    store.close()
    assert config["params"] == {"window": 12}  # what was given, as before
    assert config["settings"] == settings_of("solar", {"window": 12})
    assert config["settings"]["window"] == 12 and config["settings"]["ema"] == 0.7
    assert config["settings"]["prior_alpha"] == 2.0  # the eviction policy's too


def _change_default(monkeypatch: pytest.MonkeyPatch, function: Any, name: str, value: Any) -> None:
    """Make ``value`` the default of ``function``'s parameter ``name``, as a later version of the
    library might."""
    code = function.__code__
    names = code.co_varnames[1 : code.co_argcount]  # (after self)
    defaults = list(function.__defaults__)
    defaults[names.index(name) - (len(names) - len(defaults))] = value
    monkeypatch.setattr(function, "__defaults__", tuple(defaults))


def test_a_changed_default_changes_no_stored_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path / "m.db")
    memory = store.scope(user="alice")
    for i, (_, vector) in enumerate(op for op in stream(30) if op[0] == "retrieve"):
        memory.add(f"fact {i}", embedding=vector)  # (the first stores the scope)
        memory.retrieve(embedding=vector, k=2)
    # logged, no snapshot: a reopen replays the log on a new memory
    with sqlite3.connect(tmp_path / "m.db") as db:
        assert db.execute("SELECT COUNT(*) FROM solar_snapshots").fetchone() == (0,)
    _change_default(monkeypatch, RegretGate.__init__, "window", 31)
    _change_default(monkeypatch, ThompsonEviction.__init__, "decay", 0.5)
    assert RegretGate().window == 31  # (the change took)
    reader = _store(tmp_path / "m.db")
    memory = reader.scope(user="alice")
    assert memory.core.admission.window == 30  # type: ignore[attr-defined]
    assert memory.core.eviction.decay == 0.05  # type: ignore[attr-defined]
    reader.close()  # a snapshot: the reopened scope keeps them too
    store.close()
    again = _store(tmp_path / "m.db")
    assert again.scope(user="alice").core.admission.window == 30  # type: ignore[attr-defined]
    again.close()


def _forge(path: Path, change: Any) -> None:
    """Rewrite the scope's snapshot after ``change(state)``, as a writer of the database could."""
    with sqlite3.connect(path) as db:
        (blob,) = db.execute("SELECT state FROM solar_snapshots").fetchone()
        state = codec.loads(bytes(blob), "the snapshot")
        change(state)
        db.execute("UPDATE solar_snapshots SET state = ?", (codec.dumps(state),))


@pytest.mark.parametrize(
    ("part", "name", "value"),
    [("_admission", "window", 7), ("_eviction", "decay", 0.9), ("_eviction", "neighbours", 40)],
)
def test_a_snapshot_cannot_give_a_scope_other_parameters(
    tmp_path: Path, part: str, name: str, value: object
) -> None:
    store = _store(tmp_path / "m.db")
    _fill(store)
    store.close()  # a snapshot
    _forge(tmp_path / "m.db", lambda state: setattr(state[part], name, value))
    again = _store(tmp_path / "m.db")
    with pytest.raises(PersistenceError, match=rf"\.{name} is {value!r}, not the scope's"):
        again.scope(user="alice")
    again.close()


def test_a_scope_that_recorded_no_settings_keeps_its_snapshots(tmp_path: Path) -> None:
    """A scope created before settings were recorded: its snapshot's parameters stand (a default
    changed since must not make it unreadable)."""
    config = _stored(tmp_path / "m.db", 30)
    del config["settings"]
    _set_config(tmp_path / "m.db", config)
    _forge(tmp_path / "m.db", lambda state: setattr(state["_eviction"], "decay", 0.9))
    again = _store(tmp_path / "m.db")
    assert again.scope(user="alice").core.eviction.decay == 0.9  # type: ignore[attr-defined]
    again.close()


def test_unreadable_recorded_settings_are_refused_by_name(tmp_path: Path) -> None:
    config = _stored(tmp_path / "m.db")
    for recorded in (["window"], {"window": -4}, {"window": "wide"}):
        _set_config(tmp_path / "m.db", {**config, "settings": recorded})
        again = _store(tmp_path / "m.db")
        with pytest.raises(PersistenceError, match="settings|cannot build"):
            again.scope(user="alice")
        again.close()


class _Patience(FifoEviction):
    """A policy of one's own with a parameter: it names the attribute that holds it."""

    setting_names: ClassVar[tuple[str, ...]] = settings("patience")

    def __init__(self, patience: int = 3) -> None:
        super().__init__()
        self.patience = patience


class _Misnamed(FifoEviction):
    """One that names an attribute it does not have."""

    setting_names: ClassVar[tuple[str, ...]] = settings("patience")


@pytest.fixture
def own_policies() -> Iterator[None]:
    register_policy("patient-fifo", _Patience)
    register_policy("misnamed-fifo", _Misnamed)
    yield
    PRESETS.pop("patient-fifo")
    PRESETS.pop("misnamed-fifo")


def test_a_policy_of_ones_own_has_its_parameters_recorded_and_held(
    tmp_path: Path, own_policies: None
) -> None:
    def store() -> MemoryStore:
        return MemoryStore(tmp_path / "m.db", policy="patient-fifo", dim=DIM, seed=3, patience=5)

    first = store()
    _fill(first, 5)
    first.close()
    assert _config(tmp_path / "m.db")["settings"] == {"patience": 5}
    _forge(tmp_path / "m.db", lambda state: setattr(state["_eviction"], "patience", 9))
    again = store()
    with pytest.raises(PersistenceError, match=r"\.patience is 9, not the scope's 5"):
        again.scope(user="alice")
    again.close()


def test_a_setting_name_the_class_does_not_hold_is_refused_when_the_store_opens(
    tmp_path: Path, own_policies: None
) -> None:
    with pytest.raises(TypeError, match="has no attribute 'patience', which its setting_names"):
        MemoryStore(tmp_path / "m.db", policy="misnamed-fifo", dim=DIM)


# -- policies of one's own: what the recorded settings must not change ----------------------------
class _WindowFifo(FifoEviction):
    """FIFO with a ``window`` parameter of its own, whose default is not the regret gate's."""

    def __init__(self, window: int | None = None) -> None:
        super().__init__()
        self.window = window


class _TwoSpeedGate(AdmissionPolicy):
    """Two regret gates of different windows in one policy."""

    name = "two-speed"

    def __init__(self, short: int = 10, long: int = 50) -> None:
        super().__init__()
        self.fast, self.slow = RegretGate(window=short), RegretGate(window=long)

    def _admit(self, candidate: Candidate) -> Verdict:
        fast, slow = self.fast.admit(candidate), self.slow.admit(candidate)
        return fast if fast.admitted else slow


class _Annealed(ThompsonEviction):
    """Thompson eviction whose decay anneals as it runs: a subclass may change what its base's
    parameters do, so it does not inherit the base's ``setting_names``."""

    def on_retrieve(self, *args: Any, **kwargs: Any) -> None:
        super().on_retrieve(*args, **kwargs)
        self.decay *= 0.9


class _Slack(FifoEviction):
    """A positional-only parameter: never passed by name, so never recorded."""

    def __init__(self, slack: int = 0, /) -> None:
        super().__init__()
        self.slack = slack


def _parameters(policy: object) -> dict[str, object]:
    return {
        name: value
        for name, value in vars(policy).items()
        if not name.startswith("_") and isinstance(value, int | float | str | tuple | None)
    }


_OWN = {
    "regret-window-fifo": (_WindowFifo, RegretGate),
    "two-speed-fifo": (FifoEviction, _TwoSpeedGate),
    "annealed": (_Annealed, AlwaysAdmit),
    "slack-fifo": (_Slack, AlwaysAdmit),
}


@pytest.fixture
def more_policies() -> Iterator[None]:
    for name, (eviction, admission) in _OWN.items():
        register_policy(name, eviction, admission)
    yield
    for name in _OWN:
        PRESETS.pop(name)


@pytest.mark.parametrize("policy", list(_OWN))
def test_a_stored_scope_is_the_memory_its_policy_builds_and_reopens(
    tmp_path: Path, policy: str, more_policies: None
) -> None:
    def store() -> MemoryStore:
        return MemoryStore(tmp_path / "m.db", policy=policy, capacity=8, dim=DIM, seed=3)

    first = store()
    memory = first.scope(user="alice")
    plain = SolarMemory(policy, capacity=8, dim=DIM, seed=3)
    for name in ("admission", "eviction"):  # the same parameters as without a store
        ours, theirs = getattr(memory.core, name), getattr(plain.core, name)
        assert _parameters(ours) == _parameters(theirs), name
    for i, (_, vector) in enumerate(op for op in stream(8) if op[0] == "retrieve"):
        memory.add(f"fact {i}", embedding=vector)
        memory.retrieve(embedding=vector, k=2)
    held = len(memory)
    first.close()  # a snapshot
    again = store()
    assert len(again.scope(user="alice")) == held
    again.close()


def test_a_recorded_parameter_a_later_version_removed_is_left_out(tmp_path: Path) -> None:
    config = _stored(tmp_path / "m.db")
    config["settings"]["retired_knob"] = 4  # recorded by a version whose gate took it
    _set_config(tmp_path / "m.db", config)
    again = _store(tmp_path / "m.db")
    assert len(again.scope(user="alice")) > 0
    again.close()


@pytest.mark.parametrize("params", [{"trace_retention_days": 5}, {"no_such": 1}, ["window"]])
def test_parameters_edited_into_a_scope_are_refused_by_name(tmp_path: Path, params: object) -> None:
    config = _stored(tmp_path / "m.db")
    _set_config(tmp_path / "m.db", {**config, "params": params})
    for opener in (
        lambda: MemoryStore(tmp_path / "m.db", dim=DIM),
        lambda: MemoryReader(tmp_path / "m.db"),
    ):
        again = opener()
        with pytest.raises(PersistenceError, match="parameters|cannot build"):
            scope = (
                again.scope(user="alice")
                if isinstance(again, MemoryStore)
                else again.memory({"user": "alice"})
            )
            len(scope)
        again.close()


class _TtlFifo(FifoEviction):
    """A parameter named as one of the memory's own arguments: ``SolarMemory(ttl_days=...)``
    is the memory's, so this class only ever has its default."""

    def __init__(self, ttl_days: float = 1.0) -> None:
        super().__init__()
        self.ttl = ttl_days


class _TopKFifo(FifoEviction):
    """A parameter named as an alias the memory refuses (``top_k`` for ``k``)."""

    def __init__(self, top_k: int = 5) -> None:
        super().__init__()
        self.top = top_k


class _RingFifo(FifoEviction):
    """A ``window`` whose default is not a scalar, beside the regret gate's ``window=30``."""

    def __init__(self, window: tuple[int, int] = (4, 8)) -> None:
        super().__init__()
        self.window = window


@pytest.mark.parametrize(
    ("policy", "eviction", "admission"),
    [
        ("ttl-fifo", _TtlFifo, AlwaysAdmit),
        ("topk-fifo", _TopKFifo, AlwaysAdmit),
        ("regret-ring-fifo", _RingFifo, RegretGate),
    ],
)
def test_a_stored_scope_of_these_policies_is_the_memory_they_build(
    tmp_path: Path, policy: str, eviction: type[FifoEviction], admission: type[AdmissionPolicy]
) -> None:
    register_policy(policy, eviction, admission)
    try:
        store = MemoryStore(tmp_path / "m.db", policy=policy, capacity=8, dim=DIM, seed=3)
        memory, plain = store.scope(user="alice"), SolarMemory(policy, capacity=8, dim=DIM)
        assert memory.lifecycle.ttl_days == plain.lifecycle.ttl_days == 7.0
        for name in ("admission", "eviction"):
            ours, theirs = getattr(memory.core, name), getattr(plain.core, name)
            assert _parameters(ours) == _parameters(theirs), name
        store.close()
    finally:
        PRESETS.pop(policy)


@state_class
class _Level:
    """A registered part whose parameter is declared; a holder of several."""

    setting_names: ClassVar[tuple[str, ...]] = settings("level")

    def __init__(self, level: int) -> None:
        self.level = level


@state_class
class _Levels:
    def __init__(self, *levels: int) -> None:
        self.kids = [_Level(level) for level in levels]


def _load(snapshot: _Levels, template: _Levels, *examples: _Levels) -> list[int]:
    back = codec.loads(codec.dumps(snapshot), "the snapshot", template, examples, True)
    return [kid.level for kid in back.kids]


def test_a_parameter_is_exact_where_the_templates_agree_on_it() -> None:
    assert _load(_Levels(1, 1), _Levels(1), _Levels(1, 1)) == [1, 1]
    with pytest.raises(PersistenceError, match=r"\.level is 9, not the scope's 1"):
        _load(_Levels(9), _Levels(1), _Levels(1, 1))


def test_a_parameter_two_objects_hold_apart_in_the_examples_is_checked_by_kind() -> None:
    """A memory after a few steps may hold a second object of a class with another value: its
    own snapshot must load."""
    assert _load(_Levels(1, 2), _Levels(1), _Levels(1, 2)) == [1, 2]
    assert _load(_Levels(2, 1, 1), _Levels(2, 1, 1)) == [2, 1, 1]
