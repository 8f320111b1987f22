"""``SolarStore`` on a database another process wrote: SQLite and PostgreSQL (``db_url``). The
writer is a separate Python process; this one opens a new store on the same URL and must see
exactly what the writer left: namespaces, keys, values, the pinned item kept through an
eviction, the TTL deadlines, and a working semantic search."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")

from langchain_solar.store import SolarStore  # noqa: E402
from solar_core import HashEmbedder  # noqa: E402
from tests.support.clock import Clock  # noqa: E402

ROOT = Path(__file__).parents[2]
DIM = 64
ALICE, BOB = ("users", "alice"), ("users", "bob")
T0 = 1_000_000.0


def embed(texts: list[str]) -> list[list[float]]:
    """The library's hashing embedder as an embedding function for LangGraph's ``index``: no
    model to load, the same vectors in every process."""
    vectors: list[list[float]] = HashEmbedder(dim=DIM).embed(texts).tolist()
    return vectors


def open_store(url: str, clock: Any) -> SolarStore:
    return SolarStore(
        url,
        index={"dims": DIM, "embed": embed, "fields": ["text"]},
        capacity=2,  # small: the writer's third item in one namespace evicts one
        policy="fifo",
        seed=0,
        clock=clock,
    )


WRITER = textwrap.dedent(
    """
    import json, sys
    from tests.adapters.test_langgraph_store_db import ALICE, BOB, T0, open_store

    store = open_store(sys.argv[1], lambda: T0)
    store.put(ALICE, "name", {"text": "Alice Liddell", "n": 1}, pinned=True)
    store.put(ALICE, "food", {"text": "likes pizza", "n": 2})
    store.put(ALICE, "drink", {"text": "drinks green tea", "n": 3})  # full: evicts food
    evicted = store.last_decision.evicted
    store.put(BOB, "food", {"text": "likes sushi", "tags": ["fish"]}, ttl=30)
    store.put(BOB, "note", {"text": "left early"}, ttl=1)
    store.close()
    print(json.dumps({"evicted": evicted}))
    """
)


def test_a_store_written_by_another_process_reads_back_exactly(db_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WRITER, db_url],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"evicted": "food"}
    clock = Clock(T0 + 2 * 60)  # bob's note (1 minute) has expired, his food (30) has not
    store = open_store(db_url, clock)
    assert store.list_namespaces() == [ALICE, BOB]
    listed = store.search(("users",), limit=10, refresh_ttl=False)  # a look: no TTL moves
    everything = {(i.namespace, i.key): i.value for i in listed}
    assert everything == {
        (ALICE, "name"): {"text": "Alice Liddell", "n": 1},
        (ALICE, "drink"): {"text": "drinks green tea", "n": 3},
        (BOB, "food"): {"text": "likes sushi", "tags": ["fish"]},
    }
    assert store.get(ALICE, "food") is None  # evicted by the writer's capacity
    assert store.get(BOB, "note") is None  # expired (still stored until a sweep)
    alice = store.memory(ALICE)
    assert alice is not None
    assert alice.get("name").category == "identity"  # pinned: never evicted
    assert alice.stats()["evicted"] == 1 and [d.evicted for d in alice.trace()][-1] == "food"
    bob = store.memory(BOB)
    assert bob is not None and bob.get("food").valid_until == T0 + 30 * 60
    hits = store.search(("users",), query="green tea", limit=1)
    assert [(h.namespace, h.key) for h in hits] == [(ALICE, "drink")]
    assert hits[0].score is not None and hits[0].score > 0
    hits = store.search(("users",), query="sushi", filter={"tags": ["fish"]})
    assert [(h.namespace, h.key) for h in hits] == [(BOB, "food")]
    assert bob.get("food").valid_until == clock.now + 30 * 60  # the search refreshed it
    assert store.sweep_ttl() == 1 and "note" not in bob
    store.put(ALICE, "walk", {"text": "walks at dawn"})  # this process writes on: fifo again
    assert store.last_decision is not None and store.last_decision.evicted == "drink"
    store.close()
    again = open_store(db_url, clock)
    bob = again.memory(BOB)
    assert bob is not None and bob.get("food").valid_until == clock.now + 30 * 60  # logged
    assert sorted(i.key for i in again.search(ALICE)) == ["name", "walk"]
    assert sorted(i.key for i in again.search(BOB)) == ["food"]
    again.close()
