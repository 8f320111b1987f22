"""The reads an adapter needs, public and caught up with other processes: ``records()``,
``now()`` and ``check_rating()`` (LangGraph's store used to reach into the memory's runner,
core and lock for them)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from solar_core import MemoryStore
from tests.support.persistence import Clock


def _logged(path: str) -> int:
    with sqlite3.connect(path) as con:
        count: int = con.execute("SELECT COUNT(*) FROM solar_ops").fetchone()[0]
    con.close()
    return count


def test_records_are_caught_up_with_another_writer(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    mine = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    theirs = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    memory = mine.scope(user="a")
    memory.add("mine first")
    theirs.scope(user="a").add("theirs next", metadata={"who": "them"})
    assert [(i, r.text, r.metadata) for i, r in memory.records()] == [
        ("m1", "mine first", {}),
        ("m2", "theirs next", {"who": "them"}),
    ]
    theirs.close()
    mine.close()


def test_now_reads_the_clock_outside_any_step(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    clock = Clock()
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash", clock=clock)
    memory = store.scope(user="a")
    memory.add("a fact")
    logged = _logged(path)
    clock.now += 60.0
    assert memory.now() == clock.now
    assert _logged(path) == logged  # nothing logged, and the next step replays the same
    store.close()


def test_check_rating_refuses_as_feedback_would_and_changes_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    memory = store.scope(user="a")
    memory.add("tea at five")
    hits = memory.retrieve("tea")
    memory.check_rating(hits)  # ratable
    state, logged = memory.export(), _logged(path)
    with pytest.raises(ValueError, match="retrieval"):
        memory.check_rating(10**6)
    assert memory.export() == state and _logged(path) == logged
    memory.feedback(like=True, retrieval=hits)
    store.close()


def test_check_rating_takes_a_retrieval_id_a_merge_renumbered(tmp_path: Path) -> None:
    """A retrieval made before another process stored the scope is renumbered when this
    process's next write merges it: ``feedback`` translates its old id, so must the check."""
    url = str(tmp_path / "m.db")
    mine = MemoryStore(url, policy="fifo", capacity=10, dim=4, seed=1)
    theirs = MemoryStore(url, policy="fifo", capacity=10, dim=4, seed=1)
    memory = mine.get("s")
    kept = memory.retrieve(embedding=[1, 0, 0, 0])  # kept in this process: nothing stored yet
    old_id = kept.retrieval_id
    other = theirs.get("s")
    other.add("their item", embedding=[0, 1, 0, 0])
    other.retrieve(embedding=[0, 1, 0, 0])
    other.retrieve(embedding=[0, 0, 1, 0])
    memory.add("my item", embedding=[0, 0, 0, 1])  # merges what this process kept
    assert kept.retrieval_id != old_id
    other.feedback(like=True, retrieval=old_id)  # their own retrieval of that number
    assert isinstance(old_id, int)
    memory.check_rating(old_id)  # still ratable here: it names this process's retrieval
    memory.feedback(like=True, retrieval=old_id)
    theirs.close()
    mine.close()
