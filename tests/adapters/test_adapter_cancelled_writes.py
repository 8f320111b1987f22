"""A cancelled async write of an adapter runs to its end, as the memory's own ``aadd`` does: a
write that timed out may have happened, never half, and whether it did is no race."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_solar import SolarConversationMemory, SolarStore


async def _cancelled_while_queued(call: Awaitable[object]) -> None:
    """Cancel ``call`` while it waits for the only worker thread, then free the worker."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(1))
    free = threading.Event()
    busy = loop.run_in_executor(None, free.wait)
    task = asyncio.ensure_future(call)
    await asyncio.sleep(0)  # the call has started: it waits for the worker
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    free.set()
    await busy


def test_a_cancelled_store_put_still_stores() -> None:
    store = SolarStore(index={"dims": 16, "embed": DeterministicFakeEmbedding(size=16)})
    asyncio.run(_cancelled_while_queued(store.aput(("users", "alice"), "a", {"text": "tea"})))
    item = store.get(("users", "alice"), "a")
    assert item is not None and item.value == {"text": "tea"}
    store.close()


def test_a_cancelled_save_context_still_saves() -> None:
    chat = SolarConversationMemory(capacity=10, embedder="hash", seed=0)
    turn = ({"input": "My dog is called Max."}, {"output": "Noted."})
    asyncio.run(_cancelled_while_queued(chat.asave_context(*turn)))
    assert [item.text for item in chat.memory.items()] == [
        "Human: My dog is called Max.\nAI: Noted."
    ]
