"""``MemoryStore.resize``: a stored scope's capacity changes in one transaction, on SQLite and
PostgreSQL. Growing keeps every item, shrinking evicts by the policy with the evictions in the
trace; what a plain copy resized the same way holds is what the store holds, after a reopen
and in another process's open handle; refused input changes nothing."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from solar_core import SolarMemory
from solar_core.cli import main
from solar_core.persistence import MemoryStore, PersistenceError
from tests.support.persistence import deep_diff


def _clock() -> float:
    return 5_000.0  # one time: traces of two memories compare equal


def store_of(url: str, policy: str = "solar", capacity: int | None = 12) -> MemoryStore:
    """A store of ``policy`` given ``capacity`` (``None``: none given, each scope its own)."""
    given = {} if capacity is None else {"capacity": capacity}
    return MemoryStore(url, policy=policy, embedder="hash", seed=0, clock=_clock, **given)


def fill(memory: SolarMemory, n: int = 30) -> None:
    for i in range(n):
        memory.add(f"alice said fact {i} about topic {i % 5}")
        if i % 3 == 0 and memory.retrieve(f"topic {i % 5}"):
            memory.feedback(like=i % 2 == 0)


@pytest.mark.parametrize("policy", ["solar", "solar-dialogue", "arc"])
def test_a_resized_scope_is_what_a_plain_copy_resized_alike_holds(db_url: str, policy: str) -> None:
    store = store_of(db_url, policy=policy)
    alice = store.scope(user="alice")
    fill(alice)
    twin, held = alice.detached(), len(alice)
    decisions = store.resize({"user": "alice"}, 4)
    assert decisions == twin.resize(4) and len(decisions) == held - 4 > 0
    assert alice.capacity == 4 and len(alice) == 4  # the open handle takes it at once
    assert deep_diff(twin.core, alice.core) is None, deep_diff(twin.core, alice.core)
    store.close()
    reopened = store_of(db_url, policy=policy, capacity=None)  # another process's store
    again = reopened.scope(user="alice")
    assert deep_diff(twin.core, again.core) is None, deep_diff(twin.core, again.core)
    for i in range(20):  # and both go on alike (learned state, random draws, traces)
        text = f"a later fact {i} on topic {i % 3}"
        assert again.add(text) == twin.add(text)
    assert store_of(db_url).resize({"user": "alice"}, 30) == twin.resize(30) == []
    assert again.capacity == 30  # (read: it catches up)
    assert deep_diff(twin.core, again.core) is None
    reopened.close()


def test_another_process_with_the_scope_open_takes_the_new_capacity(db_url: str) -> None:
    mine, theirs = store_of(db_url, capacity=None), store_of(db_url, capacity=None)
    fill(mine.scope(user="alice"))
    their_alice = theirs.scope(user="alice")
    held = len(their_alice)
    evicted = {d.evicted for d in mine.resize({"user": "alice"}, 5)}
    assert their_alice.capacity == 5 and len(their_alice) == 5
    assert evicted.isdisjoint(item.id for item in their_alice.items())
    their_alice.add("written by the other process after the resize")
    assert held > 5 and len(mine.scope(user="alice")) <= 5  # the capacity holds for every writer
    mine.close()
    theirs.close()


def test_a_store_given_a_capacity_keeps_the_scope_it_resized(db_url: str) -> None:
    store = store_of(db_url)  # capacity=12 given
    fill(store.scope(user="alice"))
    store.resize({"user": "alice"}, 6)
    store.close()
    again = store_of(db_url)
    with pytest.raises(PersistenceError, match="capacity=6.*capacity=12"):
        again.scope(user="alice")  # another store asking for 12: the scope says 6
    again.resize({"user": "alice"}, 12)
    assert again.scope(user="alice").capacity == 12  # the store that resized it opens it
    again.close()


def test_resizing_a_scope_that_is_not_stored_creates_nothing(tmp_path: Path) -> None:
    store = store_of(str(tmp_path / "m.db"))
    with pytest.raises(ValueError, match="not stored"):
        store.resize({"user": "nobody"}, 5)
    assert store.names() == []
    store.close()


@pytest.mark.parametrize(
    ("capacity", "error"),
    [(0, ValueError), (-1, ValueError), ("5", TypeError), (None, TypeError), (2.5, TypeError)],
)
def test_a_refused_resize_leaves_the_database_as_it_was(
    tmp_path: Path, capacity: object, error: type[Exception]
) -> None:
    url = str(tmp_path / "m.db")
    store = store_of(url, policy="fifo", capacity=6)
    for i in range(3):
        store.scope(user="alice").add(f"my name part {i}", category="identity")
    store.scope(user="alice").add("some context")
    store.close()
    before = Path(url).read_bytes()
    store = store_of(url, policy="fifo", capacity=6)
    with pytest.raises(error, match="capacity"):
        store.resize({"user": "alice"}, capacity)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="3 items are protected"):
        store.resize({"user": "alice"}, 2)
    store.close()
    assert Path(url).read_bytes() == before


def test_a_stored_memory_is_resized_by_its_store(tmp_path: Path) -> None:
    store = store_of(str(tmp_path / "m.db"))
    alice = store.scope(user="alice")
    fill(alice)
    held = len(alice)
    with pytest.raises(TypeError, match=r"store.resize\(scope, capacity\)"):
        alice.resize(3)
    assert alice.capacity == 12 and len(alice) == held > 3
    store.close()


def test_the_trace_command_shows_the_evictions_of_a_resize(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    store = store_of(url, policy="fifo")
    fill(store.scope(user="alice"))
    evicted = [d.evicted for d in store.resize({"user": "alice"}, 9)]
    store.close()
    out = io.StringIO()
    assert main(["trace", url, "--user", "alice", "--last", "3"], out=out) == 0
    rows = [line for line in out.getvalue().splitlines() if "resized to 9" in line]
    assert len(rows) == 3 and all(" resized " in row for row in rows)
    assert [row for row in rows if evicted[0] in row]
