"""Keys, supersession, ``as_of`` retrievals and repeat counts persist and resume exactly, on
SQLite and PostgreSQL: through another process's replay of the log, and through a snapshot."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from solar_core import SolarMemory
from solar_core.embedders.hash_embedder import HashEmbedder
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
    past = ana.items(include_superseded=True)
    assert any(i.seen > 1 for i in past) and any(i.superseded_at for i in past)
    replayed = reader.scope(user="ana")
    assert len(replayed) == len(ana)
    assert deep_diff(ana.core, replayed.core) is None, deep_diff(ana.core, replayed.core)
    twin = replayed.detached()
    writer.close()
    reader.close()
    again = store_of(db_url, clock).scope(user="ana")  # from the snapshot written at close
    assert [
        (i.id, i.key, i.superseded_at, i.superseded_by, i.seen)
        for i in again.items(include_superseded=True)
    ] == [
        (i.id, i.key, i.superseded_at, i.superseded_by, i.seen)
        for i in twin.items(include_superseded=True)
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
    assert [
        (i.text, i.key, i.superseded_at, i.seen) for i in again.items(include_superseded=True)
    ] == [(i.text, i.key, i.superseded_at, i.seen) for i in stored.items(include_superseded=True)]
    often.close()


def test_a_reembedded_scope_keeps_its_past_values(tmp_path: Path) -> None:
    url = str(tmp_path / "agent.db")
    clock = Clock()
    made = MemoryStore(url, policy="fifo", capacity=3, embedder=HashEmbedder(dim=384), clock=clock)
    ana = made.scope(user="ana")
    berlin = ana.add("Ana lives in Berlin", key="ana/home").item_id
    clock.now += 100.0
    ana.add("Ana lives in Paris now", key="ana/home")
    made.close()
    with sqlite3.connect(url) as db:  # made by another embedder: the store must re-embed it
        for scope_id, text in db.execute("SELECT id, config FROM solar_scopes").fetchall():
            config = json.loads(text)
            config["embedder"] = {**config["embedder"], "name": "MiniLMEmbedder"}
            db.execute(
                "UPDATE solar_scopes SET config = ? WHERE id = ?", (json.dumps(config), scope_id)
            )
    store = MemoryStore(url, clock=clock)
    assert store.reembed({"user": "ana"})
    again = store.scope(user="ana")
    past = again.get(berlin)
    assert (past.text, past.key, past.superseded_at) == (
        "Ana lives in Berlin",
        "ana/home",
        10_100.0,
    )
    assert len(again.vector(berlin)) == store.dim != 384
    hits = again.retrieve("where does Ana live", as_of=10_050.0, min_score=None, record=False)
    assert [h.id for h in hits] == [berlin]
    for i in range(5):  # the current fact is still kept while the memory evicts around it
        again.add(f"note {i} about the weekend and the weather")
    assert "Ana lives in Paris now" in [i.text for i in again.items()]
    store.close()


def test_a_batch_naming_a_past_value_stores_nothing(tmp_path: Path) -> None:
    from solar_core.integrations.batch import offer_batch

    memory = SolarMemory("fifo", capacity=10, embedder="hash")
    old = memory.add("Ana lives in Paris", key="ana/home").item_id
    memory.add("Ana lives in Lyon", key="ana/home")
    with pytest.raises(ValueError, match="superseded value"):
        offer_batch(memory, ["tea at five", "jazz on fridays"], ids=["x1", old])
    assert [i.id for i in memory.items()] == ["m2"] and old in memory and len(memory) == 1
