"""A stored scope records every parameter of its memory when it is created, given or default (its
row's ``config["params"]``: the memory's ``params()`` less what only reads: k, retrieval,
min_score), and is built from them ever after: a later change of a library default changes no
scope, and a snapshot cannot give a scope parameters other than the recorded ones."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from solar_core import MemoryStore, PersistenceError, SolarMemory
from solar_core.basics.state import part_of, prefixed
from solar_core.persistence import container
from solar_core.persistence.journal import snapshot_params
from solar_core.persistence.reader import MemoryReader
from solar_core.policies.admission import AdmissionPolicy, AlwaysAdmit, RegretGate
from solar_core.policies.admission.base import Candidate, Verdict
from solar_core.policies.eviction import FifoEviction, ThompsonEviction
from solar_core.policies.presets import PRESETS, register_policy
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
    store = _store(tmp_path / "m.db", window=12)
    _fill(store, 3)
    config = _config(tmp_path / "m.db")
    store.close()
    plain = SolarMemory("solar", capacity=20, dim=DIM, window=12)
    assert config["params"] == snapshot_params(plain)  # the memory's parameters
    admission = config["params"]["admission"]
    assert admission["class"] == "RegretGate"
    assert admission["params"]["window"] == 12 and admission["params"]["ema"] == 0.7
    eviction = config["params"]["eviction"]  # the eviction policy's too
    assert eviction["class"] == "ThompsonEviction" and eviction["params"]["prior_alpha"] == 2.0


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
    """Rewrite the scope's snapshot after ``change(params, state)``, as a writer of the database
    could."""
    with sqlite3.connect(path) as db:
        (blob,) = db.execute("SELECT state FROM solar_snapshots").fetchone()
        params, state = container.loads(bytes(blob), "the snapshot")
        change(params, state)
        db.execute("UPDATE solar_snapshots SET state = ?", (container.dumps(params, state),))


def _set_param(part: str, name: str, value: object) -> Any:
    """A forgery setting parameter ``name`` of the snapshot's part ``part``."""

    def change(params: dict[str, Any], state: dict[str, Any]) -> None:
        params[part]["params"][name] = value

    return change


@pytest.mark.parametrize(
    ("part", "name", "value"),
    [
        ("admission", "window", 7),
        ("eviction", "decay", 0.9),
        ("eviction", "novelty_neighbours", 40),
    ],
)
def test_a_snapshot_cannot_give_a_scope_other_parameters(
    tmp_path: Path, part: str, name: str, value: object
) -> None:
    store = _store(tmp_path / "m.db")
    _fill(store)
    store.close()  # a snapshot
    _forge(tmp_path / "m.db", _set_param(part, name, value))
    again = _store(tmp_path / "m.db")
    with pytest.raises(PersistenceError, match=rf"other parameters than the scope's \({part}\)"):
        again.scope(user="alice")
    again.close()


def _with_admission(config: dict[str, Any], recorded: object) -> dict[str, Any]:
    params = {**config["params"], "admission": {"class": "RegretGate", "params": recorded}}
    return {**config, "params": params}


def test_unreadable_recorded_settings_are_refused_by_name(tmp_path: Path) -> None:
    config = _stored(tmp_path / "m.db")
    for recorded in (["window"], {"window": -4}, {"window": "wide"}):
        _set_config(tmp_path / "m.db", _with_admission(config, recorded))
        again = _store(tmp_path / "m.db")
        with pytest.raises(PersistenceError, match="RegretGate|window"):
            again.scope(user="alice")
        again.close()


class _Patience(FifoEviction):
    """A policy of one's own with a parameter: its ``params()`` say it."""

    def __init__(self, patience: int = 3) -> None:
        super().__init__()
        self.patience = patience

    def params(self) -> dict[str, Any]:
        return {"patience": self.patience}


@pytest.fixture
def own_policies() -> Iterator[None]:
    register_policy("patient-fifo", _Patience)
    yield
    PRESETS.pop("patient-fifo")


def test_a_policy_of_ones_own_has_its_parameters_recorded_and_held(
    tmp_path: Path, own_policies: None
) -> None:
    def store() -> MemoryStore:
        return MemoryStore(tmp_path / "m.db", policy="patient-fifo", dim=DIM, seed=3, patience=5)

    first = store()
    _fill(first, 5)
    first.close()
    recorded = _config(tmp_path / "m.db")["params"]["eviction"]
    assert recorded == {"class": f"{__name__}._Patience", "params": {"patience": 5}}
    again = store()
    assert again.scope(user="alice").core.eviction.patience == 5  # type: ignore[attr-defined]
    again.close()
    _forge(tmp_path / "m.db", _set_param("eviction", "patience", 9))
    again = store()
    with pytest.raises(PersistenceError, match=r"other parameters than the scope's \(eviction\)"):
        again.scope(user="alice")
    again.close()


# -- policies of one's own: what the recorded settings must not change ----------------------------
class _WindowFifo(FifoEviction):
    """FIFO with a ``window`` parameter of its own, whose default is not the regret gate's."""

    def __init__(self, window: int | None = None) -> None:
        super().__init__()
        self.window = window

    def params(self) -> dict[str, Any]:
        return {"window": self.window}


class _TwoSpeedGate(AdmissionPolicy):
    """Two regret gates of different windows in one policy."""

    name = "two-speed"

    def __init__(self, short: int = 10, long: int = 50) -> None:
        super().__init__()
        self.fast, self.slow = RegretGate(window=short), RegretGate(window=long)

    def _admit(self, candidate: Candidate) -> Verdict:
        fast, slow = self.fast.admit(candidate), self.slow.admit(candidate)
        return fast if fast.admitted else slow

    def params(self) -> dict[str, Any]:
        return {"short": self.fast.window, "long": self.slow.window}

    def state(self) -> dict[str, Any]:
        return {**prefixed("fast", self.fast.state()), **prefixed("slow", self.slow.state())}

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.fast.load_state(part_of("fast", state))
        self.slow.load_state(part_of("slow", state))


class _Annealed(ThompsonEviction):
    """Thompson eviction whose decay anneals as it runs: a subclass may change what its base's
    parameters do. Its parameters stay those it was built with; the decay it has annealed to
    is learned state (its ``state()`` and ``load_state()`` carry it)."""

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._built = super().params()

    def params(self) -> dict[str, Any]:
        return dict(self._built)

    def state(self) -> dict[str, Any]:
        return {**super().state(), "decay": self.decay}

    def load_state(self, state: Mapping[str, Any]) -> None:
        rest = dict(state)
        decay = rest.pop("decay")
        super().load_state(rest)
        self.decay = float(decay)

    def on_retrieve(self, *args: Any, **kwargs: Any) -> None:
        super().on_retrieve(*args, **kwargs)
        self.decay *= 0.9


class _Slack(FifoEviction):
    """A positional-only parameter: never passed by name, so it is always its default and its
    ``params()`` record none."""

    def __init__(self, slack: int = 0, /) -> None:
        super().__init__()
        self.slack = slack

    def params(self) -> dict[str, Any]:
        return {}


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


def test_a_recorded_parameter_its_class_does_not_take_is_refused_by_name(tmp_path: Path) -> None:
    """The recorded parameters are its parts' constructors' keyword arguments: one its class
    does not take (a database of another version, or edited) is refused, naming it."""
    config = _stored(tmp_path / "m.db")
    config["params"]["admission"]["params"]["retired_knob"] = 4
    _set_config(tmp_path / "m.db", config)
    again = _store(tmp_path / "m.db")
    with pytest.raises(PersistenceError, match="cannot build.*retired_knob"):
        again.scope(user="alice")
    again.close()


@pytest.mark.parametrize("edit", [{"trace_retention_days": 5}, {"no_such": 1}, ["window"]])
def test_parameters_edited_into_a_scope_are_refused_by_name(tmp_path: Path, edit: object) -> None:
    config = _stored(tmp_path / "m.db")
    params = {**config["params"], **edit} if isinstance(edit, dict) else edit
    _set_config(tmp_path / "m.db", {**config, "params": params})
    for opener in (
        lambda: MemoryStore(tmp_path / "m.db", dim=DIM),
        lambda: MemoryReader(tmp_path / "m.db"),
    ):
        again = opener()
        with pytest.raises(PersistenceError, match="parameters|cannot build|settings"):
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

    def params(self) -> dict[str, Any]:
        return {"ttl_days": self.ttl}


class _TopKFifo(FifoEviction):
    """A parameter named as an alias the memory refuses (``top_k`` for ``k``)."""

    def __init__(self, top_k: int = 5) -> None:
        super().__init__()
        self.top = top_k

    def params(self) -> dict[str, Any]:
        return {"top_k": self.top}


class _RingFifo(FifoEviction):
    """A ``window`` whose default is not a scalar, beside the regret gate's ``window=30``."""

    def __init__(self, window: tuple[int, int] | list[int] = (4, 8)) -> None:
        super().__init__()
        self.window = tuple(window)

    def params(self) -> dict[str, Any]:
        return {"window": list(self.window)}  # (as JSON: a list)


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
