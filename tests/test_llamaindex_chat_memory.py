"""SolarChatMemory driven by real LlamaIndex agents (mock LLMs) and compared with the
ChatMemoryBuffer it replaces."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from conftest import full_state  # noqa: E402
from li_fakes import HashEmbedding, as_text, scripted_llm, tool_call  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.memory import ChatMemoryBuffer  # noqa: E402
from llama_index.core.storage.chat_store import SimpleChatStore  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from llamaindex_solar import LlamaIndexEmbedder, SolarChatMemory  # noqa: E402
from solar_core import SolarMemory  # noqa: E402

FILLER = [
    ("what is the capital of France?", "Paris."),
    ("how do I sort a list in Python?", "sorted(xs), or xs.sort() in place."),
    ("recommend a book about space", "Cosmos, by Carl Sagan."),
]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def agent(llm: object) -> FunctionAgent:
    return FunctionAgent(
        tools=[FunctionTool.from_defaults(add)], llm=llm, system_prompt="You are an agent."
    )


def small_memory(**kwargs: object) -> SolarChatMemory:
    """A window too small for the whole conversation, so older turns must be recalled."""
    params = {"token_limit": 64, "recall_token_ratio": 0.5, "top_k": 1, "embedder": "hash"}
    return SolarChatMemory.from_defaults(**{**params, **kwargs})


async def converse(
    memory: SolarChatMemory, turns: list[tuple[str, str]]
) -> list[list[ChatMessage]]:
    llm, prompts = scripted_llm([answer for _, answer in turns])
    runner = agent(llm)
    for question, _ in turns:
        await runner.run(user_msg=question, memory=memory)
    return prompts


@pytest.mark.minilm
async def test_function_agent_gets_the_relevant_old_turn_recalled(minilm: object) -> None:
    memory = SolarChatMemory.from_defaults(
        token_limit=80, recall_token_ratio=0.5, top_k=1, embedder=minilm, seed=0
    )
    turns = [("my dog is called Rex and he loves the beach", "What a lovely name!"), *FILLER]
    prompts = await converse(memory, [*turns, ("what is my dog called?", "Rex.")])
    last = as_text(prompts[-1])
    assert "- Human: my dog is called Rex and he loves the beach\n  AI: What a lovely name!" in last
    assert "user: my dog is called Rex" not in last  # out of the window: only recalled
    assert prompts[-1][0].content == "You are an agent."  # the agent's own system prompt first
    assert memory.memory.stats()["steps"] == 5  # every finished turn was offered


async def test_each_turn_is_offered_once_without_its_tool_calls() -> None:
    memory = small_memory(token_limit=4000)
    llm, _ = scripted_llm([tool_call("add", "c1", a=2, b=2), "2 + 2 = 4.", "Paris."])
    runner = agent(llm)
    await runner.run(user_msg="what is 2 + 2?", memory=memory)
    await runner.run(user_msg="capital of France?", memory=memory)
    texts = [item.text for item in memory.memory.items()]
    assert texts == [
        "Human: what is 2 + 2?\nAI: 2 + 2 = 4.",
        "Human: capital of France?\nAI: Paris.",
    ]
    stats = memory.memory.stats()
    assert (stats["steps"], stats["retrievals"]) == (2, 2)  # one retrieval per user message


async def test_recall_skips_turns_in_the_window_and_respects_its_token_share() -> None:
    memory = small_memory(top_k=3)
    prompts = await converse(
        memory,
        [
            ("the dog Rex likes beach walks", "noted"),
            *FILLER,
            ("which walks does the dog Rex like?", "beach walks"),
        ],
    )
    last = prompts[-1]
    system = [m.content or "" for m in last if m.role.value == "system"][1]
    window = [m.content for m in last if m.role.value != "system"]
    assert "the dog Rex likes beach walks" in system
    for question in window:  # nothing the window shows is recalled too
        assert f"Human: {question}\n" not in system
    recall_tokens = memory._token_count_for_messages([last[1]])  # noqa: SLF001
    assert recall_tokens <= 64 * 0.5


async def test_sessions_never_see_each_others_memories() -> None:
    store = SimpleChatStore()
    alice = small_memory(chat_store=store, chat_store_key="alice")
    bob = small_memory(chat_store=store, chat_store_key="bob")
    await converse(alice, [("my secret code is 1234", "Noted."), *FILLER])
    prompts = await converse(bob, [("what is my secret code?", "I don't know.")])
    assert "1234" not in as_text(prompts[-1])
    assert len(bob.memory) == 1 and all("1234" not in i.text for i in bob.memory.items())
    assert [m.content for m in store.get_messages("bob")][0] == "what is my secret code?"


async def test_feedback_moves_the_posteriors_of_the_recalled_turns() -> None:
    memory = small_memory(top_k=2)
    await converse(
        memory,
        [
            ("the dog Rex likes beach walks", "noted"),
            *FILLER,
            ("which walks does Rex like?", "beach"),
        ],
    )
    recalled = [hit.id for hit in memory.recalled]
    assert recalled
    before = {i: memory.memory.get(i).policy for i in recalled}
    memory.feedback(like=False)
    for i in recalled:
        assert memory.memory.get(i).policy["beta"] == before[i]["beta"] + 1
    with pytest.raises(ValueError, match="already has feedback"):
        memory.feedback(like=True)


def test_without_recall_the_window_is_chat_memory_buffer_exactly() -> None:
    ours = SolarChatMemory.from_defaults(token_limit=30, top_k=0, embedder="hash")
    theirs = ChatMemoryBuffer.from_defaults(token_limit=30)
    for question, answer in FILLER * 2:
        for memory in (ours, theirs):
            memory.put(ChatMessage(role="user", content=question))
            memory.put(ChatMessage(role="assistant", content=answer))
        assert ours.get() == theirs.get() and ours.get_all() == theirs.get_all()


def test_reset_set_and_async_methods() -> None:
    memory = small_memory(token_limit=4000)

    async def steps() -> None:
        await memory.aput(ChatMessage(role="user", content="hi"))
        await memory.aput(ChatMessage(role="assistant", content="hello"))
        assert len(memory.memory) == 1 and len(await memory.aget_all()) == 2
        await memory.aset(
            [ChatMessage(role="user", content="a"), ChatMessage(role="assistant", content="b")]
        )
        assert len(memory.memory) == 1  # a set history's turns are not offered
        assert [m.content for m in await memory.aget()][-2:] == ["a", "b"]
        await memory.areset()
        assert memory.get_all() == [] and len(memory.memory) == 0

    asyncio.run(steps())


def test_a_react_agent_with_mock_llm_runs_with_it() -> None:
    memory = small_memory(token_limit=4000)
    react = ReActAgent(tools=[], llm=MockLLM(max_tokens=8))

    async def run() -> str:
        return str(await react.run(user_msg="hello there", memory=memory))

    assert asyncio.run(run())
    assert memory.get_all()[0].content == "hello there"


def test_llamaindex_embeddings_and_a_shared_memory_are_accepted() -> None:
    memory = SolarChatMemory.from_defaults(embedder=HashEmbedding(), policy="lru", capacity=4)
    assert isinstance(memory.memory.embedder, LlamaIndexEmbedder) and memory.memory.dim == 64
    assert (memory.policy, memory.capacity) == ("lru", 4)
    shared = SolarMemory("fifo", capacity=3, embedder="hash")
    a = SolarChatMemory.from_defaults(memory=shared)
    b = SolarChatMemory.from_defaults(memory=shared)
    for m, text in ((a, "from a"), (b, "from b")):
        m.put(ChatMessage(role="user", content=text))
        m.put(ChatMessage(role="assistant", content="ok"))
    assert len(shared) == 2


def test_bad_input_is_refused_and_changes_nothing() -> None:
    with pytest.raises(ValidationError, match="capasity"):
        SolarChatMemory.from_defaults(embedder="hash", capasity=5)
    with pytest.raises(ValueError, match="not both"):
        SolarChatMemory.from_defaults(memory=SolarMemory(embedder="hash"), policy="lru")
    with pytest.raises(ValueError, match="unknown policy"):
        SolarChatMemory.from_defaults(embedder="hash", policy="mru")
    with pytest.raises(ValidationError, match="recall_token_ratio"):
        SolarChatMemory.from_defaults(embedder="hash", recall_token_ratio=1.5)
    memory = small_memory()
    with pytest.raises(ValueError, match="nothing to rate"):
        memory.feedback(like=True)
    memory.put(ChatMessage(role="user", content="hi"))
    memory.get()
    before = full_state(memory.memory)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        memory.feedback(score=-0.5)
    assert full_state(memory.memory) == before
