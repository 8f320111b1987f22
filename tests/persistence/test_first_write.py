"""A scope is stored by its first write: what a retrieval and a rating before it do, whoever
stores the scope in between."""

from __future__ import annotations

from pathlib import Path

from solar_core import MemoryStore


def _store(path: Path) -> MemoryStore:
    return MemoryStore(path, policy="fifo", capacity=5, embedder="hash", seed=0)


def test_hits_of_a_read_before_the_first_write_rate_nothing_after_another_process_wrote(
    tmp_path: Path,
) -> None:
    """The rating used to be refused ("a record=False lookup cannot be rated") once another
    process had stored the scope between the retrieval and the rating."""
    mine, theirs = _store(tmp_path / "m.db"), _store(tmp_path / "m.db")
    memory = mine.scope(user="a")
    hits = memory.retrieve("tea")
    assert hits == [] and hits.retrieval_id is None
    theirs.scope(user="a").add("I like tea")  # stores the scope first
    memory.check_rating(hits)  # refuses nothing
    memory.feedback(like=True, retrieval=hits)  # and changes nothing
    stats = memory.stats()
    assert (stats["size"], stats["feedbacks"], stats["retrievals"]) == (1, 0, 0)
    again = memory.retrieve("tea")  # the scope is stored now: recorded and rateable
    memory.feedback(like=True, retrieval=again)
    assert memory.stats()["feedbacks"] == 1
    mine.close()
    theirs.close()


def test_a_read_before_the_first_write_stores_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    memory = store.scope(user="b")
    memory.feedback(like=True, retrieval=memory.retrieve("what do I like?"))
    memory.feedback(score=0.3)  # the latest retrieval: there is none to credit, nothing changes
    assert store.names() == [] and store.existing({"user": "b"}) is None
    assert memory.add("I like jazz").admitted
    assert store.names() == ["user=b"] and memory.stats()["retrievals"] == 0
    store.close()
