"""Values and turns with nothing to remember never take a real memory's room."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_solar import SolarConversationMemory, SolarStore

NS = ("notes", "alice")


def bounded(**extra: Any) -> SolarStore:
    index = {"dims": 16, "embed": DeterministicFakeEmbedding(size=16), "fields": ["text"]}
    return SolarStore(index=index, capacity=2, policy="fifo", **extra)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [{"text": ""}, {"text": "   "}, {}, {"other": "no text field"}])
def test_a_wordless_value_never_evicts_a_memory(value: dict[str, Any]) -> None:
    """(Before: each was embedded, as the JSON of the value, and evicted a real note; a blank
    text raised.)"""
    store = bounded()
    store.put(NS, "a", {"text": "Alice is allergic to peanuts"})
    store.put(NS, "b", {"text": "Alice lives in Lisbon"})
    store.put(NS, "empty", value)
    assert store.last_decision is not None and not store.last_decision.admitted
    assert "free room" in store.last_decision.reason
    assert store.get(NS, "empty") is None
    assert sorted(i.key for i in store.search(NS)) == ["a", "b"]
    store.close()


def test_a_wordless_value_takes_free_room_and_an_update_keeps_its_key() -> None:
    store = bounded()
    store.put(NS, "flags", {})
    assert store.get(NS, "flags") is not None  # free room: stored, unindexed
    store.put(NS, "a", {"text": "Alice is allergic to peanuts"})
    store.put(NS, "flags", {"text": ""})  # full now, but an update replaces in place
    got = store.get(NS, "flags")
    assert got is not None and got.value == {"text": ""}
    store.close()


def test_an_unindexed_store_judges_the_whole_value() -> None:
    store = SolarStore(capacity=1, policy="fifo", embedder="hash")
    store.put(NS, "a", {"note": "Alice likes jazz"})
    store.put(NS, "b", {"note": "", "tags": []})
    assert store.get(NS, "a") is not None and store.get(NS, "b") is None
    store.put(NS, "c", {"count": 0})  # a number is something to remember
    assert store.get(NS, "c") is not None
    store.close()


def test_a_blank_turn_is_kept_in_the_window_but_never_stored() -> None:
    """(Before: ``save_context({"input": ""}, {"output": ""})`` stored ``'Human: \\nAI: '``.)"""
    memory = SolarConversationMemory(k=2, top_k=1, embedder="hash", seed=0)
    memory.save_context({"input": "I am allergic to peanuts"}, {"output": "Noted."})
    memory.save_context({"input": ""}, {"output": ""})
    memory.save_context({"input": " "}, {"output": "\n"})
    assert len(memory.memory) == 1
    assert len(memory.chat_memory.messages) == 6  # the window still shows what was said
    memory.save_context({"input": "And shellfish"}, {"output": "Noted too."})
    assert len(memory.memory) == 2
