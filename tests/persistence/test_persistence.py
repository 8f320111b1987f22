"""Persistence: exact resume, isolation of scopes, bad input and foreign files (SQLite and
PostgreSQL: every test that takes ``db_url`` runs on both)."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sqlite3
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import MemoryStore, PersistenceError, Scope, SolarMemory, UnknownItemError
from solar_core.engine.response_cache import ResponseCache
from solar_core.engine.steps import LocalRunner
from solar_core.persistence import container
from solar_core.persistence.journal import Journal
from solar_core.policies.deletion import HistoryDeletion
from tests.support.persistence import (
    DIM,
    SETTINGS,
    Clock,
    apply,
    core_state,
    make_store,
    reference,
    same,
    stream,
)


@pytest.mark.parametrize(("policy", "extra"), SETTINGS, ids=[f"{p}-{e}" for p, e in SETTINGS])
def test_exact_resume_across_close_crash_and_snapshots(
    db_url: str, policy: str, extra: dict[str, Any]
) -> None:
    """A memory closed, abandoned (a crash: no close, no final snapshot) and reopened at random
    points makes exactly the decisions of one that never stopped, Thompson sampling included."""
    ops = stream(140)
    key = Scope(user="alice").key
    ref_clock, clock = Clock(), Clock()
    ref = reference(policy, extra, ref_clock, key)
    expected = [apply(ref, op, ref_clock) for op in ops]

    rng = np.random.default_rng(1)
    cuts = sorted(rng.choice(np.arange(1, len(ops)), size=6, replace=False).tolist())
    got: list[object] = []
    start = 0
    stores = []
    for n, cut in enumerate([*cuts, len(ops)]):
        store = make_store(db_url, policy, extra, clock, snapshot_every=9)
        stores.append(store)
        memory = store.scope(user="alice")
        got += [apply(memory, op, clock) for op in ops[start:cut]]
        start = cut
        if n % 2 == 0:
            store.close()  # a clean stop: snapshot; odd ones are abandoned (replayed from log)
    assert got == expected
    final = make_store(db_url, policy, extra, clock)
    resumed = final.scope(user="alice")
    same(resumed, ref)
    resumed.check_invariants()
    # And it goes on identically: the next random draws are the same.
    more = stream(30, seed=9)
    assert [apply(resumed, op, clock) for op in more] == [apply(ref, op, ref_clock) for op in more]
    for store in [*stores, final]:
        store.close()


def test_a_replay_checks_itself_and_a_store_that_catches_up_matches(tmp_path: Path) -> None:
    """Two stores on one file (two processes, in one): each step catches up with the other's
    log first, so the interleaved run equals one memory that saw every step."""
    url = str(tmp_path / "m.db")
    clock = Clock()
    a = make_store(url, "solar", {}, clock).scope(user="u")
    b = make_store(url, "solar", {}, clock).scope(user="u")
    ref = reference("solar", {}, clock, "user=u")
    for i, op in enumerate(stream(60)):
        if op[0] == "tick":
            continue
        memory = a if (i // 3) % 2 else b
        assert apply(memory, op, clock) == apply(ref, op, clock)
    a.check_invariants()
    same(a, ref)  # a catches up on its next look
    same(b, ref)


def test_the_items_table_mirrors_the_memory(db_url: str) -> None:
    clock = Clock()
    store = make_store(db_url, "solar", {}, clock)
    memory = store.scope(user="alice", org="acme")
    for op in stream(50):
        apply(memory, op, clock)
    journal = memory.runner
    assert journal is not None
    with store.backend.transaction(write=False):
        rows = store.backend.item_rows(journal.scope_id)
    by_id = {r[0]: r for r in rows}
    items = memory.items()
    assert sorted(by_id) == sorted(i.id for i in items)
    for item in items:
        _, text, meta, vector, category, created_at, valid_until, step = by_id[item.id]
        assert (text, json.loads(meta), category, created_at, valid_until, step) == (
            item.text,
            item.metadata,
            item.category,
            item.created_at,
            item.valid_until,
            item.created_step,
        )
        assert (
            np.frombuffer(bytes(vector), np.float32).tobytes() == memory.vector(item.id).tobytes()
        )
    store.close()


# -- scopes ---------------------------------------------------------------------------------
def test_scopes_are_isolated(db_url: str) -> None:
    store = MemoryStore(db_url, policy="fifo", capacity=3, embedder="hash", seed=0)
    alice = store.scope(user="alice", org="acme")
    bob = store.scope(user="bob", org="acme")
    alice_only = store.scope(user="alice")
    for i in range(5):  # alice's evictions cannot touch bob
        alice.add(f"alice secret {i}")
    bob.add("bob secret")
    assert [i.text for i in bob.items()] == ["bob secret"]
    assert len(alice_only) == 0 and len(alice) == 3
    assert all(h.text.startswith("bob") for h in bob.retrieve("alice secret", k=5))
    assert [i.id for i in alice.items()] == ["m3", "m4", "m5"] and "m5" not in bob
    with pytest.raises(UnknownItemError):
        bob.remove("m5")
    # reading alice_only stored nothing; her first write stores her scope
    assert store.names() == ["org=acme&user=alice", "org=acme&user=bob"]
    alice_only.add("alice's own note")
    assert store.names() == ["org=acme&user=alice", "org=acme&user=bob", "user=alice"]
    assert store.names(org="acme") == ["org=acme&user=alice", "org=acme&user=bob"]
    assert store.erase(user="alice") == ["org=acme&user=alice", "user=alice"]
    assert store.names() == ["org=acme&user=bob"]
    with pytest.raises(PersistenceError, match="forgotten"):
        alice.add("written back?")
    assert len(store.scope(user="alice", org="acme")) == 0  # a new, empty memory
    assert [i.text for i in store.scope(user="bob", org="acme").items()] == ["bob secret"]
    assert store.forget({"user": "bob", "org": "acme"}) and not store.forget(Scope(user="zed"))
    store.close()


@pytest.mark.parametrize(
    ("parts", "error"),
    [
        ({}, ValueError),
        ({"user": ""}, ValueError),
        ({"user": "   "}, ValueError),
        ({"user": "a\x00b"}, ValueError),
        ({"user": "line\nbreak"}, ValueError),
        ({"user": "\u202eevil"}, ValueError),  # a bidi override: a format character
        ({"user": "x" * 257}, ValueError),
        ({"user": True}, TypeError),
        ({"user": 3.5}, TypeError),
        ({"user": ["a"]}, TypeError),
    ],
)
def test_scope_identifiers_are_validated(parts: dict[str, Any], error: type) -> None:
    with pytest.raises(error, match="scope"):
        Scope(**parts)


def test_hostile_identifiers_are_plain_data(db_url: str) -> None:
    """Quotes, SQL and separators in ids are stored as text, never run, never confused."""
    store = MemoryStore(db_url, policy="fifo", capacity=3, embedder="hash")
    evil = "x'); DROP TABLE solar_items; --"
    store.scope(user=evil).add("one")
    store.scope(user="a&user=b").add("two")  # would collide with a naive key format
    store.scope(user="a", session="b").add("three")
    assert sorted(store.names()) == sorted(
        [
            "user=x%27%29%3B%20DROP%20TABLE%20solar_items%3B%20--",
            "user=a%26user%3Db",
            "user=a&session=b",
        ]
    )
    assert [s.user for s in store.scopes()] == [evil, "a&user=b", "a"]
    assert [i.text for i in store.scope(user=evil).items()] == ["one"]
    store.close()


def test_a_scope_keeps_the_settings_it_was_created_with(db_url: str) -> None:
    MemoryStore(db_url, policy="fifo", capacity=3, embedder="hash").scope(user="a").add("x")
    with pytest.raises(PersistenceError, match="capacity=3"):
        MemoryStore(db_url, policy="fifo", capacity=4, embedder="hash").scope(user="a")
    with pytest.raises(PersistenceError, match="policy='fifo'"):
        MemoryStore(db_url, policy="lru", capacity=3, embedder="hash").scope(user="a")
    other = MemoryStore(db_url, policy="lru", capacity=4, embedder="hash")
    assert len(other.scope(user="b")) == 0  # a new scope takes the new settings
    other.close()


# -- bad input leaves the database and the memory as they were -----------------------------
def test_bad_input_changes_nothing(db_url: str) -> None:
    clock = Clock()
    store = make_store(db_url, "solar", {}, clock)
    memory = store.scope(user="a")
    for op in stream(20):
        apply(memory, op, clock)
    journal = memory.runner
    assert journal is not None
    before = core_state(memory)
    with store.backend.transaction(write=False):
        ops_before = store.backend.op_count(journal.scope_id)
    bad: list[Callable[[], object]] = [
        lambda: memory.add("x", embedding=np.ones(DIM), metadata={"f": object()}),
        lambda: memory.add("x", embedding=np.ones(DIM + 1)),
        lambda: memory.add("", embedding=np.ones(DIM)),
        lambda: memory.retrieve(embedding=[np.nan] * DIM),
        lambda: memory.feedback(like=True, retrieval=10**6),
        lambda: memory.feedback(score=2.0),
        lambda: memory.remove("no such id"),
        lambda: memory.remove(42),  # type: ignore[arg-type]
        lambda: memory.add("x", embedding=np.ones(DIM), category="secret"),
    ]
    for call in bad:
        with pytest.raises((ValueError, TypeError, KeyError)):
            call()
    assert core_state(memory) == before
    with store.backend.transaction(write=False):
        assert store.backend.op_count(journal.scope_id) == ops_before
    store.close()
    reopened = make_store(db_url, "solar", {}, clock).scope(user="a")
    assert core_state(reopened) == before


# -- files that are not ours -----------------------------------------------------------------
def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_file_that_is_not_a_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(b"my notes, not a database\n" * 100)
    before = digest(path)
    with pytest.raises(PersistenceError, match="not a SQLite database"):
        MemoryStore(path, embedder="hash")
    assert digest(path) == before
    assert sorted(os.listdir(tmp_path)) == ["notes.db"]


def test_another_applications_database_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO users (name) VALUES ('ada')")
    conn.close()
    before = digest(path)
    with pytest.raises(PersistenceError, match="another application"):
        MemoryStore(path, embedder="hash")
    assert digest(path) == before


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    MemoryStore(path, embedder="hash").close()
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(PersistenceError, match="schema version 99"):
        MemoryStore(path, embedder="hash")


def test_a_foreign_postgres_schema_is_refused() -> None:
    import psycopg

    from tests.support.postgres import postgres_schema_url

    url = postgres_schema_url("t_foreign_meta")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE solar_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO solar_meta VALUES ('format', 'someone-else')")
    with pytest.raises(PersistenceError, match="another application"):
        MemoryStore(url, embedder="hash")
    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 't_foreign_meta'"
        ).fetchone()
    assert tables == (1,)  # nothing created beside it


def _corrupt_snapshot(url: str, blob: bytes) -> None:
    with sqlite3.connect(url) as conn:
        conn.execute("UPDATE solar_snapshots SET state = ?", (blob,))
    conn.close()


def _framed(header: bytes) -> bytes:
    """``header`` as a container's header (no arrays), under a valid checksum."""
    head = container.MAGIC + struct.pack("<HIQ", container.FORMAT, len(header), 0) + header
    return head + hashlib.blake2b(head, digest_size=32).digest()


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "evil"])
def test_a_damaged_snapshot_is_a_clear_error_and_runs_nothing(tmp_path: Path, damage: str) -> None:
    url = str(tmp_path / "m.db")
    store = MemoryStore(url, policy="solar", capacity=5, embedder="hash", seed=0)
    store.scope(user="a").add("fact")
    store.close()  # writes a snapshot
    with sqlite3.connect(url) as conn:
        (blob,) = conn.execute("SELECT state FROM solar_snapshots").fetchone()
    conn.close()
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self) -> tuple[Any, ...]:
            return (os.system, (f"touch {marker}",))

    if damage == "flip":
        bad = blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:]
    elif damage == "truncate":
        bad = blob[: len(blob) // 2]
    elif damage == "foreign":
        bad = pickle.dumps({"hello": "world"})
    else:  # a valid header and checksum around a payload that calls os.system
        payload = pickle.dumps(Evil())
        bad = _framed(payload)
    _corrupt_snapshot(url, bad)
    with pytest.raises(PersistenceError, match="snapshot"):
        MemoryStore(url, policy="solar", capacity=5, embedder="hash", seed=0).scope(user="a")
    assert not marker.exists()


# -- run-time objects ------------------------------------------------------------------------
def test_an_evaluator_is_never_asked_again_on_replay(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    calls: list[str] = []

    def judge(query: str | None, execution: str, metadata: dict[str, Any]) -> bool:
        calls.append(execution)
        return "good" in execution

    store = MemoryStore(url, policy="fifo", capacity=5, embedder="hash", evaluator=judge)
    memory = store.scope(user="a")
    decisions = [memory.add(f"{'good' if i % 2 else 'bad'} {i}").admitted for i in range(6)]
    assert decisions == [False, True, False, True, False, True] and len(calls) == 6
    # abandoned (no snapshot): the reopen replays six adds without calling the judge
    again = MemoryStore(url, policy="fifo", capacity=5, embedder="hash", evaluator=judge)
    assert [i.text for i in again.scope(user="a").items()] == ["good 1", "good 3", "good 5"]
    assert len(calls) == 6
    again.close()


def test_a_response_cache_watching_a_persistent_memory_hears_other_writers(
    tmp_path: Path,
) -> None:
    url = str(tmp_path / "m.db")
    writer = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    reader = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    watched = reader.scope(user="a")
    cache = ResponseCache(embedder="hash")
    cache.store("what is alice's locker code?", "alice's locker code is 1234")
    cache.watch(watched)
    assert cache.size() == 1
    writer.scope(user="a").add("alice's locker code is 9999")
    watched.retrieve("locker code")  # the reader catches up: the new fact reaches the cache
    assert cache.size() == 0
    writer.close()
    reader.close()


def test_closed_memories_and_stores_refuse_work(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=3, embedder="hash")
    memory = store.scope(user="a")
    memory.add("x")
    store.close()
    with pytest.raises(PersistenceError, match="closed"):
        memory.add("y")
    with pytest.raises(PersistenceError, match="closed"):
        store.scope(user="a")
    store.close()  # twice is fine
    reopened = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=3, embedder="hash")
    assert [i.text for i in reopened.scope(user="a").items()] == ["x"]
    reopened.close()


def test_a_detached_copy_of_a_persistent_memory_is_a_plain_memory(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", policy="solar", capacity=3, embedder="hash")
    memory = store.scope(user="a")
    memory.add("x")
    with pytest.raises(TypeError, match=r"detached\(\)"):
        pickle.dumps(memory)  # its writes would never reach the scope
    copy = memory.detached()
    assert isinstance(copy.runner, LocalRunner) and copy.core.clock is not memory.core.clock
    assert memory.persistent and not copy.persistent
    copy.add("only in the copy")
    assert len(memory) == 1 and len(copy) == 2
    store.close()


def test_store_arguments_are_checked(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="factory"):
        MemoryStore(tmp_path / "a.db", embedder="hash", deletion=HistoryDeletion())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="snapshot_every"):
        MemoryStore(tmp_path / "a.db", embedder="hash", snapshot_every=0)
    with pytest.raises(ValueError, match="durability"):
        MemoryStore(tmp_path / "a.db", embedder="hash", durability="sometimes")
    with pytest.raises(ValueError, match="unsupported database URL"):
        MemoryStore("mysql://host/db", embedder="hash")
    with pytest.raises(PersistenceError, match="directory"):
        MemoryStore(tmp_path, embedder="hash")
    assert not (tmp_path / "a.db").exists()  # refused before anything was created


def test_each_scope_has_its_own_response_cache(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=5, embedder="hash")
    alice = store.response_cache({"user": "alice"})
    assert store.response_cache(Scope(user="alice")) is alice
    assert store.response_cache({"user": "bob"}) is not alice
    alice.store("what is my locker code?", "your locker code is 1234")
    assert store.response_cache({"user": "bob"}).size() == 0
    store.scope(user="bob").add("your locker code is 9999")  # bob's fact: alice's cache stays
    assert alice.size() == 1
    store.scope(user="alice").add("your locker code is 9999")  # alice's: her answer goes
    assert alice.size() == 0
    with pytest.raises(ValueError, match="exists already"):
        store.response_cache({"user": "alice"}, threshold=0.9)
    store.close()


# -- regressions: closed stores, odd inputs, reopened scopes --------------------------------------
@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("solar_bench.pg_server", "subprocess.Popen"),  # a dotted walk out of our modules
        ("solar_core.engine.memory", "np.memmap"),
        ("solar_bench.cli", "attrgetter"),  # imported there, not defined there
        ("solar_core.persistence.sqlite_backend", "SQLiteBackend"),  # ours, but not state
        ("solar_core.engine.memory", "SolarMemory"),
        ("os", "system"),
        ("builtins", "eval"),
    ],
)
def test_a_pickled_snapshot_is_never_loaded(tmp_path: Path, module: str, name: str) -> None:
    marker = tmp_path / "ran"

    # GLOBAL-free protocol-4 pickle: STACK_GLOBAL of (module, name), then call it
    def s(text: str) -> bytes:
        raw = text.encode()
        return b"\x8c" + bytes([len(raw)]) + raw

    payload = b"\x80\x04" + s(module) + s(name) + b"\x93" + s(f"touch {marker}") + b"\x85R."
    # a bare pickle is no snapshot: refused unread (no pickle is ever loaded) ...
    with pytest.raises(PersistenceError, match="not a SOLAR memory snapshot"):
        container.loads(payload, "a crafted snapshot")
    # ... and the same bytes as a container's header, with a valid checksum, are not JSON
    with pytest.raises(PersistenceError, match="not JSON"):
        container.loads(_framed(payload), "a crafted snapshot")
    assert not marker.exists()


def test_a_forgotten_scope_id_is_never_given_to_a_new_scope(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    one = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    two = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    alice = two.scope(user="alice")
    alice.add("alice's PIN is 1234")
    assert one.forget({"user": "alice"})
    one.scope(user="bob").add("bob likes tea")
    with pytest.raises(PersistenceError, match="forgotten"):
        alice.add("alice's password is hunter2")
    assert [i.text for i in one.scope(user="bob").items()] == ["bob likes tea"]
    one.close()
    two.close()


def test_forget_waits_for_a_step_in_flight_and_leaves_no_rows(tmp_path: Path) -> None:
    import threading

    url = str(tmp_path / "m.db")
    store = MemoryStore(url, policy="fifo", capacity=50, embedder="hash")
    for trial in range(30):
        memory = store.scope(user=f"u{trial}")
        memory.add("first")
        go = threading.Event()

        def writer(m: SolarMemory = memory, go: threading.Event = go) -> None:
            go.wait()
            for i in range(5):
                try:
                    m.add(f"secret {i}")
                except PersistenceError:
                    return

        thread = threading.Thread(target=writer)
        thread.start()
        go.set()
        store.forget({"user": f"u{trial}"})
        thread.join()
    with sqlite3.connect(url) as conn:
        counts = [
            conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
            for t in ("solar_scopes", "solar_items", "solar_ops", "solar_snapshots")
        ]
    conn.close()
    assert counts == [0, 0, 0, 0]
    store.close()


def test_custom_policy_classes_are_refused_when_the_store_opens(tmp_path: Path) -> None:
    class MyDeletion(HistoryDeletion):
        pass

    with pytest.raises(TypeError, match="cannot be persisted"):
        MemoryStore(tmp_path / "m.db", embedder="hash", deletion=MyDeletion)
    assert not (tmp_path / "m.db").exists()


def test_subscribers_hear_other_writers_once_and_may_read_the_memory(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    writer = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    reader = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    watched = reader.scope(user="a")
    heard: list[tuple[str, int]] = []
    watched.subscribe(lambda item_id, text, v, meta: heard.append((item_id, len(watched))))
    for i in range(3):
        writer.scope(user="a").add(f"fact {i}")
    assert len(watched) == 3  # the catch-up, then the subscribers, outside its transaction
    assert heard == [("m1", 3), ("m2", 3), ("m3", 3)]
    journal = watched.runner
    assert journal is not None
    journal._stale = True  # a rebuild replays every step: nobody is told twice
    assert len(watched) == 3 and len(heard) == 3
    watched.add("own fact")
    assert [h[0] for h in heard] == ["m1", "m2", "m3", "m4"]
    writer.close()
    reader.close()


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.add("lone \ud800 surrogate"),
        lambda m: m.add("a NUL \x00 inside"),
        lambda m: m.add("fine", item_id="id\x00"),
        lambda m: m.retrieve("q", exclude=[b"m1"]),
    ],
)
def test_text_a_database_cannot_hold_is_refused_before_the_step(
    db_url: str, call: Callable[[SolarMemory], object]
) -> None:
    store = MemoryStore(db_url, policy="fifo", capacity=5, embedder="hash")
    memory = store.scope(user="a")
    memory.add("first")
    before = core_state(memory)
    with pytest.raises((ValueError, TypeError), match="persist"):
        call(memory)
    assert core_state(memory) == before
    assert isinstance(memory.runner, Journal) and not memory.runner._stale
    store.close()


def test_close_snapshots_every_scope_even_if_one_was_forgotten_elsewhere(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    one = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    two = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    one.scope(user="alice").add("x")
    one.scope(user="bob").add("y")
    two.forget({"user": "alice"})
    one.close()  # nothing to snapshot of a scope forgotten elsewhere: no error, no resurrection
    with sqlite3.connect(url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM solar_snapshots").fetchone() == (1,)
        assert conn.execute("SELECT key FROM solar_scopes").fetchall() == [("user=bob",)]
    conn.close()
    two.close()


def test_the_evaluator_and_deletion_settings_are_part_of_a_scope(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    MemoryStore(url, embedder="hash", evaluator=lambda q, e, m: True).scope(user="a").add("x")
    # (the recorded evaluator is its gate's parameters; a store without one asks for None)
    with pytest.raises(
        PersistenceError, match=r"created with evaluator=\{.*asks for evaluator=None"
    ):
        MemoryStore(url, embedder="hash").scope(user="a")
    history = MemoryStore(url, embedder="hash", deletion=lambda: HistoryDeletion(n=3))
    history.scope(user="b").add("y")  # stored by its first write (a read stores nothing)
    with pytest.raises(PersistenceError, match="deletion"):
        MemoryStore(url, embedder="hash", deletion=lambda: HistoryDeletion(n=4)).scope(user="b")


def test_items_another_process_folded_into_a_snapshot_still_reach_subscribers(
    tmp_path: Path,
) -> None:
    url = str(tmp_path / "m.db")
    reader = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    watched = reader.scope(user="a")
    watched.add("I am on the Enterprise plan")
    heard: list[str] = []
    watched.subscribe(lambda item_id, text, v, meta: heard.append(text))
    writer = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    writer.scope(user="a").add("I am on the Team plan now")
    writer.close()  # a snapshot: the reader's catch-up loads it instead of replaying the add
    assert len(watched) == 2
    assert heard == ["I am on the Team plan now"]
    reader.close()


def test_a_removal_or_clear_purges_the_text_from_the_log(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    store = MemoryStore(url, policy="fifo", capacity=5, embedder="hash")
    memory = store.scope(user="a")
    secret = memory.add("my SSN is 078-05-1120").item_id
    memory.add("I like tea")
    assert secret is not None
    memory.remove(secret)
    with sqlite3.connect(url) as conn:
        rows = conn.execute("SELECT COUNT(*) FROM solar_ops WHERE args LIKE '%078-05%'").fetchone()
        (blob,) = conn.execute("SELECT state FROM solar_snapshots").fetchone()
    conn.close()
    assert rows == (0,) and b"078-05" not in bytes(blob)
    memory.clear()
    with sqlite3.connect(url) as conn:
        (blob,) = conn.execute("SELECT state FROM solar_snapshots").fetchone()
        assert conn.execute("SELECT COUNT(*) FROM solar_ops").fetchone() == (0,)
    conn.close()
    assert b"I like tea" not in bytes(blob)
    store.close()


def test_a_writer_a_little_behind_replays_the_log_instead_of_reading_the_snapshot(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from solar_core.persistence.journal import Journal

    def open_store() -> MemoryStore:
        return MemoryStore(db_url, policy="solar", capacity=5, embedder="hash", snapshot_every=10)

    one, two = open_store(), open_store()
    one.scope(user="alice").add("fact 0")
    two.scope(user="alice").retrieve("fact")  # caught up at step 1
    for i in range(1, 14):  # a snapshot at step 10 (or 11): the log keeps the steps after 0
        one.scope(user="alice").add(f"fact {i}")
    loads: list[int] = []
    real = Journal._load_base

    def counted(self: Journal, memory: SolarMemory, snapshot_seq: int) -> None:
        loads.append(snapshot_seq)
        real(self, memory, snapshot_seq)

    monkeypatch.setattr(Journal, "_load_base", counted)
    memory = two.scope(user="alice")
    assert len(memory) == 5
    assert loads == []  # replayed steps 2..14 from the log the snapshot kept
    same(memory, one.scope(user="alice"))
    for i in range(14, 40):  # two more snapshots: the log before the first is gone now
        one.scope(user="alice").add(f"fact {i}")
    assert len(memory) == 5 and loads  # too far behind: read from the snapshot
    same(memory, one.scope(user="alice"))
    # a removal purges the log at once: no step of it is left to replay
    one.scope(user="alice").remove(one.scope(user="alice").items()[0].id)
    journal = one.scope(user="alice").runner
    assert journal is not None and journal.scope_id is not None
    with one.backend.transaction(write=False):
        assert list(one.backend.ops_after(journal.scope_id, 0, 10**9)) == []
    one.close()
    two.close()
