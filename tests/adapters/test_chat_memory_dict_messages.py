"""SolarChatMemory takes a message as a mapping of its fields (``{"role": "user", "content":
...}``), as chat APIs write them, wherever it takes messages: the same history and the same SOLAR
steps as with ``ChatMessage`` objects. Anything else is refused before the history changes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from llamaindex_solar import SolarChatMemory  # noqa: E402

TURNS = [
    ("our API returns HTTP 429", "Back off and retry."),
    ("what is the capital of France?", "Paris."),
    ("how do I sort a list in Python?", "sorted(xs)."),
    ("recommend a book about space", "Cosmos, by Carl Sagan."),
]


def small() -> SolarChatMemory:
    return SolarChatMemory.from_defaults(
        token_limit=64, recall_token_ratio=0.5, top_k=1, embedder="hash", seed=0
    )


def as_dicts(turns: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [
        m
        for q, a in turns
        for m in ({"role": "user", "content": q}, {"role": "assistant", "content": a})
    ]


def as_messages(turns: list[tuple[str, str]]) -> list[ChatMessage]:
    return [ChatMessage(role=m["role"], content=m["content"]) for m in as_dicts(turns)]


def state(memory: SolarChatMemory) -> tuple[Any, ...]:
    stats = memory.memory.stats()
    return memory.get_all(), memory.get(), [i.text for i in memory.memory.items()], stats["steps"]


def test_put_with_mappings_is_put_with_chat_messages() -> None:
    ours, theirs = small(), small()
    for mine, message in zip(as_dicts(TURNS), as_messages(TURNS), strict=True):
        ours.put(mine)
        theirs.put(message)
    ours.put({"role": "user", "content": "HTTP 429 again"})
    theirs.put(ChatMessage(role="user", content="HTTP 429 again"))
    assert state(ours) == state(theirs)
    assert all(isinstance(m, ChatMessage) for m in ours.get_all())  # the store holds messages
    assert "- Human: our API returns HTTP 429" in (ours.get()[0].content or "")  # recalled
    assert ours.memory.stats()["steps"] == len(TURNS)  # each turn offered when answered


def test_every_way_in_takes_mappings() -> None:
    expected = small()
    expected.put_messages(as_messages(TURNS))
    puts = small()
    puts.put_messages(as_dicts(TURNS))
    aputs = small()
    for message in as_dicts(TURNS):
        asyncio.run(aputs.aput(message))
    batched = small()
    asyncio.run(batched.aput_messages(as_dicts(TURNS)))
    for memory in (puts, aputs, batched):
        assert state(memory) == state(expected)

    seeded = SolarChatMemory.from_defaults(chat_history=as_dicts(TURNS), embedder="hash")
    replaced, areplaced = small(), small()
    replaced.set(as_dicts(TURNS))
    asyncio.run(areplaced.aset(as_dicts(TURNS)))
    for memory in (seeded, replaced, areplaced):
        assert memory.get_all() == as_messages(TURNS)
        assert memory.memory.stats()["steps"] == 0  # a set history counts as offered


def test_anything_else_is_refused_and_changes_nothing() -> None:
    memory = small()
    memory.put({"role": "user", "content": "hi"})
    before = state(memory)
    with pytest.raises(TypeError, match=r"ChatMessage\(role=\.\.\., content=\.\.\.\)"):
        memory.put("hello")  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="role"):
        memory.put({"role": "boss", "content": "hello"})
    with pytest.raises(TypeError, match="got int"):
        memory.put_messages([{"role": "assistant", "content": "hello"}, 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="a list of chat messages"):
        memory.set({"role": "user", "content": "hello"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="got str"):
        asyncio.run(memory.aput("hello"))  # type: ignore[arg-type]
    assert state(memory) == before
