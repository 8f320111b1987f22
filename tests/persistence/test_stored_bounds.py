"""A scope's stored settings and state get the checks the API gives its arguments: a setting
edited in the database (a window of a billion queries, a capacity of a billion slots, a seed
that is no int) is refused with a ``PersistenceError`` naming it, before anything is allocated
by it; a snapshot's counters and the parts its settings make are bounded and exact, so a
snapshot that loads can always take the next step."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from solar_core import HashEmbedder, MemoryStore, PersistenceError, SolarMemory
from solar_core.persistence import codec
from solar_core.persistence.journal import snapshot_state
from solar_core.validation import MAX_CAPACITY, MAX_NEIGHBOURS, MAX_WINDOW
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
    assert name in config["settings"]
    config["settings"][name] = value
    _set(path, "solar_scopes", "config", json.dumps(config))
    with pytest.raises(PersistenceError, match=f"{name} must be at most"):
        _reopen(path)
    with pytest.raises(ValueError, match=f"{name} must be at most"):  # as the API says
        params: dict[str, Any] = {name: value}
        SolarMemory(policy, 20, dim=DIM, **params)


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("capacity", MAX_CAPACITY + 1, "capacity must be at most"),
        ("capacity", 2.5, "capacity must be an int"),
        ("seed", 1.5, "seed must be an int"),
        ("seed", "7", "seed must be an int"),
        ("seed", 2**64, "seed must be in"),
        ("policy", ["fifo"], "policy must be a str"),
        ("dim", True, "dim must be an int"),
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
    config[name] = value
    _set(path, "solar_scopes", "config", json.dumps(config))
    with pytest.raises(PersistenceError, match=f"{name}=.*{says}"):
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
            (edited["settings"] if name != "capacity" else edited)[name] = 10**9
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


def _load(state: dict[str, Any]) -> Any:
    """``state`` read back as a store reads a snapshot (see test_hostile_snapshots)."""
    new, used = snapshot_state(_memory(0)), snapshot_state(_memory(3))
    return codec.loads(codec.dumps(state), "the snapshot", new, (used,))


@pytest.mark.parametrize(
    ("part", "value"),
    [("_prepares", 2**64), ("_prepares", True), ("dim", 31), ("policy", "fifo"), ("capacity", 11)],
)
def test_a_part_the_settings_make_must_be_the_scopes(part: str, value: object) -> None:
    """(Before: ``_prepares = 2**64`` loaded, then every add raised: the memory asked an
    evaluator gate it does not have to prepare.)"""
    state = snapshot_state(_memory())
    state[part] = value
    with pytest.raises(PersistenceError, match=f"the memory's {part} is"):
        _load(state)


@pytest.mark.parametrize("value", [2**63, 2**64, -(2**63), float("inf"), float("nan"), 1e300])
@pytest.mark.parametrize("owner", ["_eviction", "_admission"])
def test_a_counter_beyond_the_bound_is_refused(owner: str, value: float) -> None:
    """(Before: ``_seq = 2**63`` loaded, then every add raised ``OverflowError``.)"""
    state = snapshot_state(_memory())
    state[owner]._seq = value
    with pytest.raises(PersistenceError, match="_seq is"):
        _load(state)


def test_a_counter_at_the_bound_loads_and_takes_steps() -> None:
    state = snapshot_state(_memory())
    state["_eviction"]._seq = state["_admission"]._seq = codec.MOST_COUNT
    memory = SolarMemory.__new__(SolarMemory)
    loaded = _load(state)
    loaded["_embedder"], loaded["_clock"] = HashEmbedder(32), time.time
    memory.__setstate__(loaded)
    for i in range(12):
        memory.add(f"a new fact {i} about coffee")
        memory.retrieve("coffee")
    memory.check_invariants()


def test_a_forged_snapshot_is_refused_when_the_store_opens_it(tmp_path: Path) -> None:
    """The same through a store: the scope does not open (before: it opened, and its next
    add raised ``AttributeError``)."""
    path = tmp_path / "m.db"
    _stored(path)
    (blob,) = _snapshot_rows(path)[0][1:]
    state = codec.loads(blob, "the snapshot")
    state["_prepares"] = 2**64
    _set(path, "solar_snapshots", "state", codec.dumps(state))
    with pytest.raises(PersistenceError, match="_prepares"):
        _reopen(path)
