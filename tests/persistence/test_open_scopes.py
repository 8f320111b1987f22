"""A store keeps a bounded set of open scopes (an LRU): memory stays flat in the number of users
ever served, an evicted scope reopens exactly, a memory object a caller still holds keeps
working, and closing or evicting a scope another process erased succeeds."""

from __future__ import annotations

import gc
import sqlite3
import threading
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import MemoryStore, PersistenceError, SolarMemory
from solar_core.persistence.memory_store import EVICTED_LOG

T0 = 1_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def core_state(memory: SolarMemory) -> dict[str, Any]:
    """What makes a memory's next decisions: items, policy state, counters, the generator."""
    return {
        "state": memory.export(),
        "items": [(i.id, i.text, i.metadata, i.category) for i in memory.items()],
        "rng": memory.core.rng.bit_generator.state,
        "recent": [(k, r.slots.tolist(), r.step, r.rated) for k, r in memory.core._recent.items()],
        "matrix": memory.core.store.matrix[: memory.core.store.high_water].tobytes(),
    }


def store(url: str, clock: Clock, **kw: Any) -> MemoryStore:
    return MemoryStore(url, policy="solar", capacity=6, embedder="hash", seed=3, clock=clock, **kw)


def step(memory: SolarMemory, rng: np.random.Generator, i: int) -> None:
    """One user turn: a retrieval, sometimes rated, an add, sometimes a removal."""
    memory.retrieve(f"question {rng.integers(20)}", k=2)
    if i % 3 == 0:
        memory.feedback(score=float(rng.random()))
    memory.add(f"fact {i} about topic {rng.integers(20)}", metadata={"i": i})
    if i % 7 == 6:
        memory.remove(memory.items()[0].id)


def snapshot_and_seq(url: str, key: str) -> tuple[int, int]:
    with sqlite3.connect(url) as conn:
        row = conn.execute("SELECT seq, snapshot_seq FROM solar_scopes WHERE key = ?", (key,))
        found = row.fetchone()
    conn.close()
    return int(found[0]), int(found[1])


def test_open_scopes_are_bounded(db_url: str) -> None:
    """However many scopes are used, at most ``max_open_scopes`` stay open, and so do their
    response caches; the store's repr shows them."""
    s = store(db_url, Clock(), max_open_scopes=3)
    for i in range(12):
        memory = s.scope(user=f"u{i}")
        memory.add(f"u{i} likes tea")
        s.response_cache({"user": f"u{i}"})
        assert len(s._memories) <= 3 and len(s._caches) <= 3
    assert s.open_scopes == ["user=u9", "user=u10", "user=u11"]
    assert "open_scopes=3/3" in repr(s)
    del memory
    gc.collect()
    assert not s._evicted  # nothing held: the evicted memories are gone
    assert len(s.names()) == 12
    s.close()
    assert "open_scopes=0/3" in repr(s)


def test_evicted_memories_nobody_holds_are_freed(tmp_path: Path) -> None:
    """Memory stays flat in the number of users served: an evicted memory nobody holds is
    freed (the store collects the reference cycles a memory is made of; automatic collection
    is off here, as it is in effect in a process holding many objects), at most about twice
    ``max_open_scopes`` memories live at any time."""
    url = str(tmp_path / "m.db")
    s = MemoryStore(url, policy="fifo", capacity=5, embedder="hash", max_open_scopes=4)
    refs = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for i in range(60):
            memory = s.scope(user=f"u{i}")
            memory.add(f"fact {i}")
            refs.append(weakref.ref(memory))
            del memory
            assert sum(r() is not None for r in refs) <= 2 * 4 + 1
    finally:
        if enabled:
            gc.enable()
    s.close()


def test_an_evicted_scope_reopens_exactly(db_url: str, tmp_path: Path) -> None:
    """Users served by a store that keeps one scope open end exactly where those of a store
    that keeps them all do: same items, posteriors, counters and next random draws. An
    eviction snapshots a scope whose log since its snapshot is long, and leaves a short one to
    be replayed on reopening (cheaper than writing the whole state)."""
    small = store(db_url, Clock(), max_open_scopes=1)
    big = store(str(tmp_path / "big.db"), Clock(), max_open_scopes=100)
    rng_small, rng_big = np.random.default_rng(0), np.random.default_rng(0)
    for i in range(40):
        user = f"u{i % 5}"
        step(small.scope(user=user), rng_small, i)
        step(big.scope(user=user), rng_big, i)
        assert len(small._memories) == 1
    for u in range(5):
        a, b = small.scope(user=f"u{u}"), big.scope(user=f"u{u}")
        assert core_state(a) == core_state(b)
        a.check_invariants()
        # the next random draws too: one more identical step on each
        step(a, rng_small, 100 + u)
        step(b, rng_big, 100 + u)
        assert core_state(a) == core_state(b)
    if not db_url.startswith("postgres"):
        small.scope(user="u4").add("one more fact")  # a step after u4's last snapshot
        small.scope(user="u1")  # evicts u4
        seq, snapshot_seq = snapshot_and_seq(db_url, "user=u4")
        assert 0 < seq - snapshot_seq < EVICTED_LOG  # a short log: replayed on reopening
        u4 = small.scope(user="u4")
        for i in range(EVICTED_LOG):
            u4.add(f"fact {i}")
        small.scope(user="u1")  # evicts u4, now with a long log
        seq, snapshot_seq = snapshot_and_seq(db_url, "user=u4")
        assert seq == snapshot_seq  # snapshotted on eviction: a reopen replays nothing
    small.close()
    big.close()


def test_an_evicted_scope_with_a_short_log_is_not_snapshotted(tmp_path: Path) -> None:
    """A scope used once and evicted costs a log row, not a whole snapshot: many users each
    served once leave the database small and each eviction cheap. Reopened, it is the same."""
    url = str(tmp_path / "m.db")
    s = store(url, Clock(), max_open_scopes=1)
    s.scope(user="a").add("a fact about tea")
    s.scope(user="b").add("a fact about coffee")  # evicts a
    seq, snapshot_seq = snapshot_and_seq(url, "user=a")
    assert (seq, snapshot_seq) == (1, 0)
    with sqlite3.connect(url) as conn:
        assert conn.execute("SELECT COUNT(*) FROM solar_snapshots").fetchone()[0] == 0
    conn.close()
    again = s.scope(user="a")
    assert [i.text for i in again.items()] == ["a fact about tea"]
    again.check_invariants()
    s.close()


def test_a_held_evicted_memory_keeps_working(db_url: str) -> None:
    """An adapter holding a memory the store evicted keeps using it: its steps are logged, the
    store hands the same object out again (one live memory per scope and store), and a reopen
    finds every step written through either reference."""
    s = store(db_url, Clock(), max_open_scopes=2)
    held = s.scope(user="alice")
    held.add("alice fact 0")
    cache = s.response_cache({"user": "alice"})
    for i in range(4):  # alice is evicted
        s.scope(user=f"other{i}").add("x")
    assert "user=alice" not in s.open_scopes
    held.add("alice fact 1")  # through the evicted object
    hits = held.retrieve("alice fact")
    held.feedback(like=True, retrieval=hits)
    again = s.scope(user="alice")  # back in the open scopes
    assert again is held
    assert s.response_cache({"user": "alice"}) is not cache  # dropped with the eviction
    again.add("alice fact 2")
    held.add("alice fact 3")
    for i in range(4):  # and evicted again
        s.scope(user=f"more{i}").add("y")
    held.add("alice fact 4")
    expected = core_state(held)
    held.check_invariants()
    s.close()
    with pytest.raises(PersistenceError, match="closed"):
        held.add("after close")  # closed with the store, evicted or not
    reopened = store(db_url, Clock())
    alice = reopened.scope(user="alice")
    assert [i.text for i in alice.items()] == [f"alice fact {n}" for n in range(5)]
    assert core_state(alice) == expected
    alice.check_invariants()
    reopened.close()


def test_an_evicted_memory_of_a_scope_not_stored_yet_keeps_working(db_url: str) -> None:
    """A scope not stored yet is evicted without being stored (there is nothing to store: its
    retrievals recorded nothing). The memory object a caller holds keeps working: its first
    write stores the scope, and the store hands that object out again."""
    s = store(db_url, Clock(), max_open_scopes=1)
    held = s.scope(user="alice")
    hits = held.retrieve("what plan am I on?")
    assert list(hits) == [] and hits.retrieval_id is None  # nothing stored: nothing recorded
    s.scope(user="bob")  # evicts alice: stores nothing
    assert s.names() == [] and s.open_scopes == ["user=bob"]
    assert s.existing({"user": "alice"}) is None
    held.feedback(like=True, retrieval=hits)  # accepted: changes nothing
    decision = held.add("alice is on the Team plan")  # the first write stores the scope
    assert decision.admitted
    assert s.names() == ["user=alice"]
    assert s.existing({"user": "alice"}) is held and s.scope(user="alice") is held
    assert [h.text for h in held.retrieve("what plan am I on?")] == ["alice is on the Team plan"]
    held.check_invariants()
    expected = core_state(held)
    other = store(db_url, Clock())
    stored = other.scope(user="alice")  # as stored
    assert [i.text for i in stored.items()] == ["alice is on the Team plan"]
    assert (stored.stats()["retrievals"], stored.stats()["feedbacks"]) == (1, 0)
    assert core_state(stored) == expected
    other.close()

    carol = s.scope(user="carol")
    carol.retrieve("anything?")
    del carol
    s.scope(user="dave")  # evicts carol; nobody holds her memory
    gc.collect()
    assert s.existing({"user": "carol"}) is None
    assert "user=carol" not in s.names()
    s.close()


def test_close_succeeds_after_another_process_erased_a_scope(db_url: str) -> None:
    """A scope another process erased has nothing to snapshot: closing succeeds, snapshots
    the others, and does not bring the erased scope back."""
    a = store(db_url, Clock())
    a.scope(user="alice").add("alice's secret")
    a.scope(user="bob").add("bob's fact")
    store(db_url, Clock()).erase(user="alice")
    a.close()
    b = store(db_url, Clock())
    assert b.names() == ["user=bob"]
    b.close()


def test_evicting_a_scope_another_process_erased_succeeds(db_url: str) -> None:
    a = store(db_url, Clock(), max_open_scopes=1)
    a.scope(user="alice").add("alice's secret")
    other = store(db_url, Clock())
    other.erase(user="alice")
    a.scope(user="bob").add("bob's fact")  # evicts alice
    assert other.names() == ["user=bob"]
    a.close()
    other.close()


def test_close_and_eviction_still_raise_for_real_failures(tmp_path: Path) -> None:
    url = str(tmp_path / "m.db")
    a = store(url, Clock(), max_open_scopes=1)
    a.scope(user="alice").add("x")
    for _ in range(EVICTED_LOG):  # a log long enough to be snapshotted on eviction
        a.scope(user="alice").retrieve("x")
    real = a.backend.write_snapshot

    def broken(scope_id: int, seq: int, state: bytes, at: float, purge: bool = True) -> None:
        raise PersistenceError("disk full")

    a.backend.write_snapshot = broken  # type: ignore[method-assign]
    with pytest.raises(PersistenceError, match="disk full"):
        a.scope(user="bob")  # evicts alice, whose snapshot fails
    a.scope(user="bob").add("y")
    with pytest.raises(PersistenceError, match="could not be snapshotted.*disk full"):
        a.close()
    a.backend.write_snapshot = real  # type: ignore[method-assign]
    b = store(url, Clock())  # nothing was lost: every step is in the log
    assert [i.text for i in b.scope(user="alice").items()] == ["x"]
    assert [i.text for i in b.scope(user="bob").items()] == ["y"]
    b.close()


@pytest.mark.parametrize(
    ("value", "error"),
    [(0, ValueError), (-1, ValueError), (True, TypeError), (2.5, TypeError), ("9", TypeError)],
)
def test_max_open_scopes_is_checked(tmp_path: Path, value: object, error: type) -> None:
    with pytest.raises(error, match="max_open_scopes"):
        MemoryStore(str(tmp_path / "m.db"), embedder="hash", max_open_scopes=value)  # type: ignore[arg-type]


def test_threads_sharing_a_small_lru_lose_no_step(tmp_path: Path) -> None:
    """Threads stepping their users through a store that keeps only two scopes open (each
    step may evict a memory another thread is using): every step is stored."""
    url = str(tmp_path / "m.db")
    s = MemoryStore(url, policy="fifo", capacity=100, embedder="hash", seed=0, max_open_scopes=2)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(15):
                memory = s.scope(user=f"u{(t + i) % 5}")
                memory.retrieve("anything")
                memory.add(f"t{t} step {i}")
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    s.close()
    reopened = MemoryStore(url, embedder="hash")
    texts = sorted(i.text for u in range(5) for i in reopened.scope(user=f"u{u}").items())
    assert texts == sorted(f"t{t} step {i}" for t in range(4) for i in range(15))
    for u in range(5):
        reopened.scope(user=f"u{u}").check_invariants()
    reopened.close()
