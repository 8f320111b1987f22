"""What a read returns cannot change the memory: hits, items, records, what a predicate or a
subscriber is shown and what a caller passed to ``add`` are copies, nested lists and dicts too,
so a memory never differs from its log, its other handles or a reopen."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from solar_core import SolarMemory
from solar_core.basics.records import METADATA_DEPTH
from solar_core.persistence import MemoryStore
from tests.support.memories import full_state, onehot


def nested() -> dict[str, Any]:
    return {"user": {"tier": "gold", "tags": ["a", "b"]}, "n": 1}


def memory_with_nested() -> SolarMemory:
    memory = SolarMemory("solar", capacity=4, dim=8, seed=0)
    memory.add("nested", embedding=onehot(0), metadata=nested(), item_id="x")
    return memory


def scribble(metadata: Any) -> None:
    """Change every list and dict reachable from ``metadata`` that lets itself be changed."""
    if isinstance(metadata, dict):
        for value in list(metadata.values()):
            scribble(value)
        metadata["scribbled"] = True
    elif isinstance(metadata, list):
        for value in metadata:
            scribble(value)
        metadata.append("scribbled")


def test_changing_a_hits_metadata_changes_nothing_stored() -> None:
    memory = memory_with_nested()
    before = full_state(memory)
    for hit in memory.retrieve(embedding=onehot(0), record=False):
        scribble(hit.metadata)
    assert full_state(memory) == before
    hits = memory.retrieve(embedding=onehot(0))
    after_retrieval = full_state(memory)
    for hit in hits:
        scribble(hit.metadata)
        hit.text = "changed"
    assert full_state(memory) == after_retrieval  # nor the retrieval the trace keeps
    assert memory.get("x").metadata == nested()


def test_changing_an_items_or_records_metadata_changes_nothing_stored() -> None:
    memory = memory_with_nested()
    before = full_state(memory)
    for item in memory.items():
        scribble(item.metadata)
    scribble(memory.get("x").metadata)
    for _, record in memory.records():
        scribble(record.metadata)
        record.text = "changed"
    scribble(memory.export()["items"][0]["metadata"])
    assert full_state(memory) == before
    assert memory.get("x").metadata == nested()


def test_a_predicate_cannot_change_nested_stored_metadata() -> None:
    memory = memory_with_nested()
    before = full_state(memory)

    def meddling(metadata: Mapping[str, Any]) -> bool:
        with pytest.raises(TypeError):
            metadata["n"] = 2  # type: ignore[index]  # a read-only view
        scribble(metadata["user"])
        return True

    assert [h.id for h in memory.retrieve(embedding=onehot(0), filter=meddling, record=False)] == [
        "x"
    ]
    assert full_state(memory) == before


def test_changing_what_was_added_or_what_a_subscriber_is_told_changes_nothing_stored() -> None:
    memory = SolarMemory("fifo", capacity=4, dim=8, seed=0)
    memory.subscribe(lambda item_id, text, vector, metadata: scribble(metadata))
    mine = {"user": {"tags": ["a"]}}
    memory.add("nested", embedding=onehot(0), metadata=mine, item_id="x")
    scribble(mine)
    assert memory.get("x").metadata == {"user": {"tags": ["a"]}}


def test_an_admission_judge_cannot_change_what_is_stored() -> None:
    def judge(query: str | None, execution: str, metadata: Mapping[str, Any]) -> bool:
        scribble(metadata["user"])
        return True

    memory = SolarMemory("fifo", capacity=4, dim=8, seed=0, evaluator=judge)
    memory.add("nested", embedding=onehot(0), metadata=nested(), item_id="x")
    assert memory.get("x").metadata == nested()


def test_a_persisted_memory_changed_through_its_reads_still_equals_a_reopen(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.db"
    store = MemoryStore(path, policy="fifo", capacity=4, embedder="hash", seed=0)
    live = store.scope(user="alice")
    live.add("a nested item", metadata=nested())
    for hit in live.retrieve("nested", min_score=None):
        scribble(hit.metadata)
    for item in live.items():
        scribble(item.metadata)
    other = MemoryStore(path, policy="fifo", capacity=4, embedder="hash", seed=0)
    assert live.export() == other.scope(user="alice").export()
    other.close()
    store.close()


def test_metadata_inside_itself_or_too_deep_is_refused_when_added() -> None:
    memory = SolarMemory("fifo", capacity=4, dim=8, seed=0)
    before = full_state(memory)
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(ValueError, match="metadata holds itself"):
        memory.add("a", embedding=onehot(0), metadata={"x": looped})
    deep: Any = 1
    for _ in range(METADATA_DEPTH + 1):
        deep = [deep]
    with pytest.raises(ValueError, match=f"deeper than {METADATA_DEPTH} levels"):
        memory.add("a", embedding=onehot(0), metadata={"x": deep})
    assert full_state(memory) == before


def test_metadata_sharing_a_list_is_copied_once() -> None:
    shared: Any = 1
    for _ in range(15):  # 2**15 leaves spelled out (within the values metadata may hold):
        # copied as the 16 lists it is
        shared = [shared, shared]
    memory = SolarMemory("fifo", capacity=4, dim=8, seed=0)
    memory.add("a", embedding=onehot(0), metadata={"x": shared}, item_id="a")
    got = memory.get("a").metadata["x"]
    assert got is not shared and got[0] is got[1]
