"""A cancelled async write of an adapter runs to its end, as the memory's own ``aadd`` does: a
write that timed out may have happened, never half, and whether it did is no race."""

from __future__ import annotations

import asyncio

from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_solar import SolarConversationMemory, SolarStore
from tests.support.cancels import cancelled_while_queued


def test_a_cancelled_store_put_still_stores() -> None:
    store = SolarStore(index={"dims": 16, "embed": DeterministicFakeEmbedding(size=16)})
    asyncio.run(cancelled_while_queued(store.aput(("users", "alice"), "a", {"text": "tea"})))
    item = store.get(("users", "alice"), "a")
    assert item is not None and item.value == {"text": "tea"}
    store.close()


def test_a_cancelled_save_context_still_saves() -> None:
    chat = SolarConversationMemory(capacity=10, embedder="hash", seed=0)
    turn = ({"input": "My dog is called Max."}, {"output": "Noted."})
    asyncio.run(cancelled_while_queued(chat.asave_context(*turn)))
    assert [item.text for item in chat.memory.items()] == [
        "Human: My dog is called Max.\nAI: Noted."
    ]
