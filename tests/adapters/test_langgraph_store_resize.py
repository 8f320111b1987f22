"""``SolarStore.resize``: a namespace's capacity changes in place, persisted: growing keeps every
item, shrinking evicts by the policy; a reopened store holds exactly the same."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_solar import SolarStore

INDEX = {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}


def test_a_namespace_is_resized_and_reopened_as_it_was_left(tmp_path: Path) -> None:
    path = str(tmp_path / "graph.db")
    store = SolarStore(path, index=INDEX, policy="lru", capacity=6)  # type: ignore[arg-type]
    for i in range(6):
        store.put(("users", "alice"), f"k{i}", {"text": f"fact {i}"})
    store.get(("users", "alice"), "k0")  # a read: k0 is the most recently used now
    store.search(("users", "alice"), query="fact 0", limit=1)
    assert store.resize(("users", "alice"), 10) == []  # growing: nothing goes
    for i in range(6, 9):
        store.put(("users", "alice"), f"k{i}", {"text": f"fact {i}"})
    assert len(store.search(("users", "alice"), limit=20)) == 9
    evicted = [d.evicted for d in store.resize(("users", "alice"), 4)]
    assert len(evicted) == 5 and "k0" not in evicted  # by the policy: recently used stays
    kept = sorted(item.key for item in store.search(("users", "alice"), limit=20))
    store.close()
    again = SolarStore(path, index=INDEX, policy="lru", capacity=4)  # type: ignore[arg-type]
    assert sorted(item.key for item in again.search(("users", "alice"), limit=20)) == kept
    memory = again.memory_for(("users", "alice"))
    assert memory is not None and memory.capacity == 4
    again.close()


def test_resizing_a_namespace_never_written_is_refused() -> None:
    store = SolarStore(index=INDEX)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not stored"):
        store.resize(("users", "nobody"), 5)
    with pytest.raises(ValueError, match="capacity"):
        store.resize(("users", "nobody"), 0)
    assert store.list_namespaces() == []
    store.close()
