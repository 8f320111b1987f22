"""An empty memory (or store) passed to an adapter is used, not replaced: an empty
``SolarMemory`` has ``len() == 0`` and is falsy, so ``memory or default`` dropped it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.storage.chat_store import SimpleChatStore  # noqa: E402

from llamaindex_solar import SolarChatMemory  # noqa: E402
from llamaindex_solar import SolarRetriever as LlamaIndexRetriever  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from solar_core.persistence import MemoryStore  # noqa: E402


def test_llamaindex_retriever_uses_an_empty_memory_it_is_given() -> None:
    memory = SolarMemory("fifo", capacity=5, embedder="hash")
    retriever = LlamaIndexRetriever(memory)
    assert retriever.memory is memory


def test_texts_added_through_a_retriever_over_an_empty_persistent_scope_survive_a_restart(
    tmp_path: Path,
) -> None:
    with MemoryStore(tmp_path / "m.db", policy="fifo", embedder="hash") as store:
        scope = store.scope(user="alice")
        assert len(scope) == 0
        retriever = LlamaIndexRetriever(scope)
        assert retriever.memory is scope
        retriever.add_texts(["alice keeps her bike in the shed", "alice's locker is 42"])
    with MemoryStore(tmp_path / "m.db", policy="fifo", embedder="hash") as again:
        texts = sorted(item.text for item in again.scope(user="alice").items())
    assert texts == ["alice keeps her bike in the shed", "alice's locker is 42"]


class CountingChatStore(SimpleChatStore):
    """A chat store that reports how many conversations it holds (falsy when empty)."""

    def __len__(self) -> int:
        return len(self.store)


def test_chat_memory_from_defaults_keeps_an_empty_chat_store_it_is_given() -> None:
    chat_store = CountingChatStore()
    assert not chat_store
    memory = SolarChatMemory.from_defaults(
        chat_store=chat_store, chat_store_key="alice", embedder="hash", token_limit=500
    )
    assert memory.chat_store is chat_store
    memory.put_messages(_turn("my cat is called Tom", "Nice name."))
    assert len(chat_store.get_messages("alice")) == 2


def _turn(human: str, ai: str) -> list[Any]:
    from llama_index.core.base.llms.types import ChatMessage

    return [ChatMessage(role="user", content=human), ChatMessage(role="assistant", content=ai)]
