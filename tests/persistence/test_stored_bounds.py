"""A scope's stored settings and state get the checks the API gives its arguments: a setting
edited in the database (a window of a billion queries, a capacity of a billion slots, a seed
that is no int) is refused with a ``PersistenceError`` naming it, before anything is allocated
by it; a snapshot's counters are bounded and its parameters must be the scope's, so a
snapshot that loads can always take the next step.

A scope's settings are its row's ``config``: ``{"params": memory.params() (less k, retrieval
and min_score), "seed": int, "embedder": fingerprint}``; a policy's own settings are its
part's spec, ``params["eviction"]["params"]``."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from solar_core import HashEmbedder, MemoryStore, PersistenceError, SolarMemory
from solar_core.basics.state import MOST_COUNT, StateError
from solar_core.basics.validation import MAX_CAPACITY, MAX_NEIGHBOURS, MAX_WINDOW
from solar_core.persistence import container
from tests.support.persistence import DIM


def _open(path: Path, **settings: Any) -> MemoryStore:
    return MemoryStore(path, dim=DIM, seed=3, **settings)


def _stored(path: Path, policy: str = "solar-adaptive") -> dict[str, Any]:
    """A scope of ``policy`` stored with a few steps and a snapshot; its config, to edit."""
    store = _open(path, policy=policy, capacity=20)
    memory = store.scope(user="alice")
    for i in range(6):
        vector = [float((i + j) % 3) + 0.5 for j in range(DIM)]
        memory.add(f"fact {i}", embedding=vector)
        memory.retrieve(embedding=vector, k=2)
    store.close()
    with sqlite3.connect(path) as db:
        (text,) = db.execute("SELECT config FROM solar_scopes").fetchone()
    config: dict[str, Any] = json.loads(text)
    return config


def _set(path: Path, table: str, column: str, value: object) -> None:
    """Write ``value`` into the scope's row, as a writer of the database could."""
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE {table} SET {column} = ?", (value,))


def _reopen(path: Path) -> SolarMemory:
    """The scope, opened by a store that leaves its settings out (each scope keeps its own)."""
    store = _open(path)
    try:
        memory = store.scope(user="alice")
        len(memory)
        return memory
    finally:
        store.close()


def _policy_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The stored settings of a scope's policy (its eviction part's parameters)."""
    settings: dict[str, Any] = config["params"]["eviction"]["params"]
    return settings


@pytest.mark.parametrize(
    ("policy", "name", "value"),
    [
        ("solar-adaptive", "window", MAX_WINDOW + 1),
        ("solar-adaptive", "max_window", MAX_WINDOW + 1),
        ("solar-adaptive", "window_per_slot", MAX_WINDOW + 1),
        ("solar", "novelty_neighbours", MAX_NEIGHBOURS + 1),
    ],
)
def test_a_stored_size_beyond_the_apis_bound_is_refused(
    tmp_path: Path, policy: str, name: str, value: int
) -> None:
    """(Before: the scope was built with it: a window of 10**9 allocated 7.7 GB.)"""
    path = tmp_path / "m.db"
    config = _stored(path, policy)
    assert name in _policy_settings(config)
    _policy_settings(config)[name] = value
    _set(path, "solar_scopes", "config", json.dumps(config))
    with pytest.raises(PersistenceError, match=f"{name} must be at most"):
        _reopen(path)
    with pytest.raises(ValueError, match=f"{name} must be at most"):  # as the API says
        params: dict[str, Any] = {name: value}
        SolarMemory(policy, 20, dim=DIM, **params)


def _edit(config: dict[str, Any], name: str, value: object) -> None:
    """Set the stored setting ``name``: the seed is the row's own, the others the memory's."""
    (config if name == "seed" else config["params"])[name] = value


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("capacity", MAX_CAPACITY + 1, "capacity must be at most"),
        ("capacity", 2.5, "capacity must be an int"),
        ("seed", 1.5, "seed must be an int"),
        ("seed", "7", "seed must be an int"),
        ("seed", 2**64, "seed must be in"),
        ("policy", ["fifo"], "policy must be"),
        ("dim", True, "created with dim="),  # (a bool is no dimension: refused, named)
    ],
)
def test_a_stored_setting_the_api_refuses_is_refused(
    tmp_path: Path, name: str, value: object, says: str
) -> None:
    """(Before: a capacity past the bound was allocated; a float or a str seed was made an int,
    so the scope ran with a seed it never had.)"""
    path = tmp_path / "m.db"
    config = _stored(path, "fifo")
    before = _snapshot_rows(path)
    _edit(config, name, value)
    _set(path, "solar_scopes", "config", json.dumps(config))
    with pytest.raises(PersistenceError, match=says):
        _reopen(path)
    assert _snapshot_rows(path) == before  # nothing written


def _snapshot_rows(path: Path) -> list[Any]:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT seq, state FROM solar_snapshots").fetchall()


def test_a_billion_is_refused_before_it_is_allocated(tmp_path: Path) -> None:
    """In a process that may allocate 1.5 GB: before, the first of these ran out of memory
    (``MemoryError``), the others allocated what they could."""
    path = tmp_path / "m.db"
    config = _stored(path)
    script = textwrap.dedent(
        f"""
        import json, resource, sqlite3, sys
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
        from solar_core import MemoryStore, PersistenceError
        config = json.loads(sys.argv[1])
        for name in ("window", "max_window", "capacity"):
            edited = json.loads(json.dumps(config))
            params = edited["params"]
            (params["eviction"]["params"] if name != "capacity" else params)[name] = 10**9
            with sqlite3.connect({str(path)!r}) as db:
                db.execute("UPDATE solar_scopes SET config = ?", (json.dumps(edited),))
            store = MemoryStore({str(path)!r}, dim={DIM})
            try:
                len(store.scope(user="alice"))
            except PersistenceError as err:
                assert name in str(err), err
            else:
                raise AssertionError(name + " was taken")
            store.close()
        print("refused")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script, json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.stdout.strip() == "refused", done.stderr[-2000:]


# -- a snapshot's state ----------------------------------------------------------------------


def _memory(steps: int = 8) -> SolarMemory:
    memory = SolarMemory("solar-adaptive", capacity=10, embedder=HashEmbedder(32), seed=0)
    for i in range(steps):
        if memory.retrieve(f"tea {i % 3}", k=2):
            memory.feedback(like=i % 2 == 0)
        memory.add(f"fact {i} about tea {i % 3}")
    return memory


def _load(params: dict[str, Any], state: dict[str, Any]) -> SolarMemory:
    """``state`` read back as a store reads a snapshot (see test_hostile_snapshots): through
    the container, into a new memory of ``params``."""
    params, state = container.loads(container.dumps(params, state), "the snapshot")
    memory = SolarMemory.from_params(params, embedder=HashEmbedder(32), seed=0)
    memory.load_state(state)
    return memory


@pytest.mark.parametrize(
    ("part", "value"),
    [("evaluator", {"threshold": 0.5, "initial": 0}), ("dim", 31), ("policy", "fifo")]
    + [("capacity", 11)],
)
def test_a_part_the_settings_make_must_be_the_scopes(
    tmp_path: Path, part: str, value: object
) -> None:
    """A snapshot's parameters are the scope's: one written by a memory of others is refused.
    (Before: ``_prepares = 2**64`` loaded, then every add raised: the memory asked an
    evaluator gate it does not have to prepare.)"""
    path = tmp_path / "m.db"
    _stored(path)
    (blob,) = _snapshot_rows(path)[0][1:]
    params, state = container.loads(blob, "the snapshot")
    params[part] = value
    _set(path, "solar_snapshots", "state", container.dumps(params, state))
    with pytest.raises(PersistenceError, match=f"other parameters than the scope's \\({part}\\)"):
        _reopen(path)


@pytest.mark.parametrize("value", [2**63, 2**64, -(2**63), float("inf"), float("nan"), 1e300])
@pytest.mark.parametrize("name", ["eviction.seq", "eviction.version", "steps", "id_counter"])
def test_a_counter_beyond_the_bound_is_refused(name: str, value: float) -> None:
    """(Before: ``_seq = 2**63`` loaded, then every add raised ``OverflowError``.)"""
    memory = _memory()
    state = memory.state()
    state[name] = value
    with pytest.raises(StateError, match=f"{name.rpartition('.')[2]} must be an int"):
        _load(memory.params(), state)


def test_a_counter_at_the_bound_loads_and_takes_steps() -> None:
    memory = _memory()
    state = memory.state()
    state["eviction.seq"] = state["eviction.version"] = MOST_COUNT
    loaded = _load(memory.params(), state)
    for i in range(12):
        loaded.add(f"a new fact {i} about coffee")
        loaded.retrieve("coffee")
    loaded.check_invariants()


@pytest.mark.parametrize(("name", "value"), [("eviction.seq", 2**64), ("eviction.head", -1)])
def test_a_forged_snapshot_is_refused_when_the_store_opens_it(
    tmp_path: Path, name: str, value: int
) -> None:
    """The same through a store: the scope does not open (before: it opened, and its next
    add raised ``AttributeError``)."""
    path = tmp_path / "m.db"
    _stored(path)
    (blob,) = _snapshot_rows(path)[0][1:]
    params, state = container.loads(blob, "the snapshot")
    state[name] = value
    _set(path, "solar_snapshots", "state", container.dumps(params, state))
    short = name.rpartition(".")[2]
    with pytest.raises(PersistenceError, match=f"does not hold a memory's state.*{short} must be"):
        _reopen(path)
