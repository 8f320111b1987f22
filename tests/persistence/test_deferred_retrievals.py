"""Deferred retrievals: applied at once, logged with the memory's next write in its transaction,
held again when that transaction rolls back, dropped (and unratable) when another process wrote
the scope in between -- and in every case the memory is what a reopen rebuilds, bit for bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar_core import SolarMemory
from solar_core.persistence import MemoryStore, container, deferred_retrievals
from solar_core.persistence.journal import snapshot_params

FACTS = ["my dog is a beagle named Max", "my sister lives in Lisbon", "I run 10k races"]


def _state(memory: SolarMemory) -> bytes:
    return container.dumps(snapshot_params(memory), memory.state())


def _open(path: Path) -> MemoryStore:
    return MemoryStore(path, embedder="hash", seed=0, min_score=None)


def _stored_seq(path: Path) -> int:
    """The scope's last logged step, as another process sees it."""
    with _open(path) as other:
        journal = other.scope("u").runner
        return journal.seq  # type: ignore[attr-defined,no-any-return]


def _reopens_as_it_is(path: Path, store: MemoryStore, memory: SolarMemory) -> None:
    """Closing ``store`` and opening it again rebuilds ``memory`` bit for bit."""
    live = _state(memory)
    store.close()
    with _open(path) as again:
        assert _state(again.scope("u")) == live


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Path, MemoryStore, SolarMemory]:
    path = tmp_path / "m.db"
    store = _open(path)
    memory = store.scope("u")
    for fact in FACTS:
        memory.add(fact)
    return path, store, memory


def test_a_deferred_retrieval_is_logged_with_the_next_write(
    filled: tuple[Path, MemoryStore, SolarMemory],
) -> None:
    path, store, memory = filled
    before = _stored_seq(path)
    with deferred_retrievals():
        hits = memory.retrieve("beagle")
    assert hits and hits[0].text == FACTS[0]
    assert _stored_seq(path) == before  # not durable yet
    memory.add("I like ramen")
    assert _stored_seq(path) == before + 2  # the retrieval, then the add
    _reopens_as_it_is(path, store, memory)


def test_closing_logs_a_deferred_retrieval(
    filled: tuple[Path, MemoryStore, SolarMemory],
) -> None:
    path, store, memory = filled
    with deferred_retrievals():
        memory.retrieve("Lisbon")
    _reopens_as_it_is(path, store, memory)


def test_rating_a_deferred_retrieval_logs_it_first_and_credits_it(
    filled: tuple[Path, MemoryStore, SolarMemory],
) -> None:
    path, store, memory = filled
    with deferred_retrievals():
        hits = memory.retrieve("beagle")
    unrated = _state(memory)
    memory.feedback(like=True, retrieval=hits)
    assert _state(memory) != unrated  # credited
    _reopens_as_it_is(path, store, memory)


def test_a_write_that_rolls_back_holds_the_retrieval_again(
    filled: tuple[Path, MemoryStore, SolarMemory],
) -> None:
    path, store, memory = filled
    before = _stored_seq(path)
    with deferred_retrievals():
        memory.retrieve("beagle")
    with pytest.raises(LookupError):
        memory.remove("no-such-item")  # refused inside the write transaction
    assert _stored_seq(path) == before
    memory.add("I like ramen")
    assert _stored_seq(path) == before + 2
    _reopens_as_it_is(path, store, memory)


def test_another_process_writing_in_between_drops_the_retrieval(
    filled: tuple[Path, MemoryStore, SolarMemory],
) -> None:
    path, store, memory = filled
    with deferred_retrievals():
        hits = memory.retrieve("beagle")
    with _open(path) as other:
        other.scope("u").add("my cat is called Tom")  # another process's step
    memory.add("I like ramen")  # the retrieval ran before that step: dropped
    unrated = _state(memory)
    memory.feedback(like=True, retrieval=hits)  # its hits are not a retrieval of the scope
    assert _state(memory) == unrated
    assert [r.text for _, r in memory.core.records()][-2:] == [
        "my cat is called Tom",
        "I like ramen",
    ]
    _reopens_as_it_is(path, store, memory)


def test_a_read_that_finds_the_scope_changed_drops_it_and_sees_the_change(
    filled: tuple[Path, MemoryStore, SolarMemory],
) -> None:
    path, store, memory = filled
    with deferred_retrievals():
        memory.retrieve("beagle")
    with _open(path) as other:
        other.scope("u").add("my cat is called Tom")
    assert "my cat is called Tom" in [item.text for item in memory.items()]
    _reopens_as_it_is(path, store, memory)


def test_a_second_deferred_retrieval_logs_the_first(
    filled: tuple[Path, MemoryStore, SolarMemory],
) -> None:
    path, store, memory = filled
    before = _stored_seq(path)
    with deferred_retrievals():
        memory.retrieve("beagle")
        memory.retrieve("Lisbon")
    assert _stored_seq(path) == before + 1
    _reopens_as_it_is(path, store, memory)


def test_an_in_process_memory_ignores_the_block() -> None:
    memory = SolarMemory(embedder="hash", seed=0, min_score=None)
    memory.add(FACTS[0])
    with deferred_retrievals():
        hits = memory.retrieve("beagle")
    memory.feedback(like=True, retrieval=hits)
    assert memory.stats()["feedbacks"] == 1
