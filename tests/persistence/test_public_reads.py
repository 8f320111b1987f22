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


def test_check_rating_of_a_scope_not_stored_refuses_nothing_and_changes_nothing(
    tmp_path: Path,
) -> None:
    """Before its first write a scope is stored nowhere: its retrieval found nothing and
    recorded nothing, and a rating of it is accepted and changes nothing -- so the check that
    says what ``feedback`` would refuse refuses nothing either."""
    path = str(tmp_path / "m.db")
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    memory = store.scope(user="a")
    hits = memory.retrieve("tea")
    assert list(hits) == [] and hits.retrieval_id is None
    memory.check_rating(hits)
    memory.check_rating(10**6)  # whatever it names: there is nothing to rate
    assert store.existing({"user": "a"}) is None  # nothing stored, nothing logged
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT COUNT(*) FROM solar_scopes").fetchone()[0] == 0
    con.close()
    assert _logged(path) == 0
    stats = memory.stats()
    memory.feedback(like=True, retrieval=hits)
    memory.feedback(like=False)  # the latest retrieval made through this object: that one
    assert memory.stats() == stats and stats["retrievals"] == 0 and stats["feedbacks"] == 0
    assert store.existing({"user": "a"}) is None and _logged(path) == 0
    store.close()
