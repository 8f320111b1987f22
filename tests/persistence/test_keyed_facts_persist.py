"""Keys, supersession, ``as_of`` retrievals and repeat counts persist and resume exactly, on
SQLite and PostgreSQL: through another process's replay of the log, and through a snapshot."""

from __future__ import annotations

from solar_core import SolarMemory
from solar_core.persistence import MemoryStore
from tests.support.persistence import deep_diff


class Clock:
    def __init__(self) -> None:
        self.now = 10_000.0

    def __call__(self) -> float:
        return self.now


def store_of(url: str, clock: Clock, snapshot_every: int = 1000) -> MemoryStore:
    return MemoryStore(
        url,
        policy="solar-dialogue",
        capacity=30,
        embedder="hash",
        seed=0,
        clock=clock,
        snapshot_every=snapshot_every,
    )


def feed(memory: SolarMemory, clock: Clock) -> None:
    for i in range(16):
        clock.now += 60.0
        memory.add(f"Ana's {('home', 'job', 'pet')[i % 3]} is now option {i}", key=f"ana/{i % 3}")
        memory.add(f"Ana said line {i} about the garden and the neighbours")
        if i % 4 == 0:
            memory.add(f"Ana said line {i} about the garden and the neighbours!")  # a repeat
        memory.retrieve("what is Ana's job", as_of=clock.now - 90.0)
        memory.retrieve("Ana's pet", include_superseded=True)


def test_keys_supersession_and_repeats_resume_exactly(db_url: str) -> None:
    clock = Clock()
    writer = store_of(db_url, clock)
    ana = writer.scope(user="ana")
    reader = store_of(db_url, clock)  # another process, replaying the log
    feed(ana, clock)
    assert any(i.seen > 1 for i in ana.items()) and any(i.superseded_at for i in ana.items())
    replayed = reader.scope(user="ana")
    assert len(replayed) == len(ana)
    assert deep_diff(ana.core, replayed.core) is None, deep_diff(ana.core, replayed.core)
    twin = replayed.detached()
    writer.close()
    reader.close()
    again = store_of(db_url, clock).scope(user="ana")  # from the snapshot written at close
    assert [(i.id, i.key, i.superseded_at, i.superseded_by, i.seen) for i in again.items()] == [
        (i.id, i.key, i.superseded_at, i.superseded_by, i.seen) for i in twin.items()
    ]
    assert deep_diff(twin.core, again.core) is None, deep_diff(twin.core, again.core)
    query = "Ana's job"
    assert again.retrieve(query, as_of=10_200.0, record=False) == twin.retrieve(
        query, as_of=10_200.0, record=False
    )


def test_snapshots_between_steps_keep_the_same_memory(db_url: str) -> None:
    clock = Clock()
    often = store_of(db_url, clock, snapshot_every=3)  # a snapshot every 3 logged steps
    stored = often.scope(user="ana")
    feed(stored, clock)
    again = store_of(db_url, clock).scope(user="ana")
    assert [(i.text, i.key, i.superseded_at, i.seen) for i in again.items()] == [
        (i.text, i.key, i.superseded_at, i.seen) for i in stored.items()
    ]
    often.close()
