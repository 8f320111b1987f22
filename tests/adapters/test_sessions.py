"""``Sessions``: the per-session memories both framework adapters serve."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar_core import MemoryStore, Scope, SolarMemory
from solar_core.integrations.sessions import Sessions

DEFAULT = Scope(project="an_adapter", session="default")


def in_process() -> Sessions:
    return Sessions.in_process("fifo", 5, embedder="hash", seed=0)


def test_the_unnamed_session_is_not_a_session_named_default(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=5, embedder="hash")
    for sessions in (in_process(), Sessions.stored(store, "session", DEFAULT, owns_store=False)):
        sessions.get("").add("unnamed fact")
        assert len(sessions.get("default")) == 0
        assert [i.text for i in sessions.get("").items()] == ["unnamed fact"]
        assert "" not in sessions.names()
    store.close()


def test_existing_never_creates_and_forget_drops(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=5, embedder="hash")
    for sessions in (in_process(), Sessions.stored(store, "user", DEFAULT, owns_store=False)):
        assert sessions.existing("alice") is None and sessions.existing("") is None
        assert sessions.names() == []
        memory = sessions.get("alice")
        memory.add("a fact")  # a stored scope exists from its first write
        assert sessions.existing("alice") is memory
        sessions.forget("alice")
        assert sessions.existing("alice") is None and sessions.names() == []
        assert sessions.existing("") is None
        sessions.get("").add("x")
        sessions.forget("")
        assert sessions.existing("") is None
    assert Scope(user="alice") not in store
    store.close()


def test_a_shared_memory_serves_every_session_and_forget_empties_it() -> None:
    memory = SolarMemory("fifo", capacity=5, embedder="hash")
    sessions = Sessions.shared(memory)
    assert sessions.get("alice") is sessions.get("") is sessions.existing("bob") is memory
    memory.add("x")
    sessions.forget("alice")
    assert len(memory) == 0 and sessions.names() == []


def test_only_the_owner_closes_the_store(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=5, embedder="hash")
    owner = Sessions.stored(store, "session", DEFAULT, owns_store=True)
    owner.unowned().close()
    owner.get("alice").add("still open")
    owner.close()
    with pytest.raises(Exception, match="closed"):
        owner.get("alice")


def test_a_bad_key_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        in_process().check("")
