"""SolarMemoryBlock inside LlamaIndex's Memory, driven by FunctionAgent with a mock LLM."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402

from llamaindex_solar import SolarMemoryBlock  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from tests.support.llamaindex_fakes import as_text, scripted_llm, tool_call  # noqa: E402


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


FILLER = [
    ("what is the capital of France?", "Paris."),
    ("how do I sort a list in Python?", "sorted(xs), or xs.sort() in place."),
    ("recommend a book about space", "Cosmos, by Carl Sagan."),
]


def memory_with(block: SolarMemoryBlock, session: str, token_limit: int = 60) -> Memory:
    return Memory.from_defaults(
        session_id=session,
        token_limit=token_limit,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[block],
    )


async def converse(memory: Memory, turns: list[tuple[str, str]]) -> list[list[ChatMessage]]:
    llm, prompts = scripted_llm([answer for _, answer in turns])
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are an agent.")
    for question, _ in turns:
        await agent.run(user_msg=question, memory=memory)
    return prompts


async def test_the_agent_sees_the_recalled_turn_inside_the_memory_block() -> None:
    block = SolarMemoryBlock(embedder="hash", top_k=1, seed=0)
    memory = memory_with(block, "s1")
    turns = [("remember: my dog is called Rex", "Noted: Rex."), *FILLER]
    prompts = await converse(memory, [*turns, ("what is my dog called?", "Rex.")])
    last = as_text(prompts[-1])
    assert "<solar_memories>\n- Human: remember: my dog is called Rex\n  AI: Noted: Rex." in last
    assert "user: remember: my dog" not in last  # flushed out of the chat history: recalled


async def test_it_learns_from_every_turn_even_with_a_large_token_budget() -> None:
    # 30,000 tokens: Memory never flushes, so blocks never get aput(); the block records itself.
    block = SolarMemoryBlock(embedder="hash", top_k=1, seed=0)
    memory = memory_with(block, "s1", token_limit=30_000)
    await converse(memory, FILLER)
    solar = block.memory_for("s1")
    assert [i.text for i in solar.items()] == [f"Human: {q}\nAI: {a}" for q, a in FILLER]
    # All of it fits in the chat history: nothing recalled, so no retrieval to learn from.
    assert (solar.stats()["steps"], solar.stats()["retrievals"]) == (3, 0)


async def test_sessions_never_see_each_others_memories() -> None:
    block = SolarMemoryBlock(embedder="hash", top_k=2, seed=0)
    await converse(memory_with(block, "alice"), [("my secret code is 1234", "Noted."), *FILLER])
    prompts = await converse(memory_with(block, "bob"), [("what is my secret code?", "No idea.")])
    assert "1234" not in as_text(prompts[-1])
    assert block.memory_for("alice") is not block.memory_for("bob")
    assert all("1234" not in i.text for i in block.memory_for("bob").items())


async def test_feedback_moves_the_posteriors_of_the_recalled_turns() -> None:
    # the paper's policy: its Thompson posteriors show the credit of the recalled turn
    block = SolarMemoryBlock(embedder="hash", top_k=1, seed=0, policy="solar")
    memory = memory_with(block, "s1")
    turns = [("remember: my dog is called Rex", "Noted."), *FILLER]
    await converse(memory, [*turns, ("what is my dog called?", "Rex.")])
    (hit,) = block.recalled("s1")
    before = block.memory_for("s1").get(hit.id).policy
    block.feedback(like=False, session_id="s1")
    after = block.memory_for("s1").get(hit.id).policy
    assert (after["alpha"], after["beta"]) == (before["alpha"], before["beta"] + 1)
    with pytest.raises(ValueError, match="already has feedback"):
        block.feedback(like=True, session_id="s1")


async def test_flushed_messages_are_offered_once() -> None:
    block = SolarMemoryBlock(embedder="hash")
    chat = [ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="hello")]
    await block.aput(chat, from_short_term_memory=True, session_id="s9")
    await block.aput(chat, from_short_term_memory=True, session_id="s9")
    await block.aget([*chat, ChatMessage(role="user", content="hi again")], session_id="s9")
    assert block.memory_for("s9").stats()["steps"] == 1


def test_atruncate_drops_the_least_similar_and_only_the_shown_are_credited() -> None:
    # the paper's policy: its Thompson posteriors show which items were credited
    # no floor: the hash embedder puts the cat's turn below the default one
    block = SolarMemoryBlock(embedder="hash", top_k=2, policy="solar", min_score=None)
    solar = block.memory_for("s")
    best = solar.add("Human: the dog Rex likes beach walks\nAI: noted").item_id
    other = solar.add("Human: my cat sleeps all day long\nAI: cats do").item_id
    ask = [ChatMessage(role="user", content="which walks does the dog Rex like")]
    content = asyncio.run(block.aget(ask, session_id="s"))
    assert content.count("- Human:") == 2
    shorter = asyncio.run(block.atruncate(content, tokens_to_truncate=3))
    assert shorter == "- Human: the dog Rex likes beach walks\n  AI: noted"
    assert [hit.id for hit in block.recalled("s")] == [best]
    block.feedback(like=True, session_id="s")  # records the retrieval of what was shown
    assert solar.get(best).policy["alpha"] == 4.0  # prior 2 + retrieved + liked
    assert solar.get(other).policy["alpha"] == 2.0  # truncated away: no credit
    assert asyncio.run(block.atruncate("not ours", 1)) is None


async def test_one_retrieval_per_user_message_and_a_repeated_message_recalls_afresh() -> None:
    block = SolarMemoryBlock(embedder="hash", top_k=1, seed=0)
    memory = memory_with(block, "s1")
    await converse(memory, [("remember: my dog is called Rex", "Noted."), *FILLER])
    solar = block.memory_for("s1")
    llm, _ = scripted_llm([tool_call("add", "c1", a=1, b=2), "Rex, and 1 + 2 = 3."])
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(add)], llm=llm)
    before = solar.stats()["retrievals"]
    await agent.run(user_msg="what is my dog called? and 1 + 2?", memory=memory)
    assert solar.stats()["retrievals"] == before + 1  # two LLM calls, one retrieval
    for turn in (2, 3):  # the same words twice: each turn gets its own recall
        await converse(memory, [("what is my dog called?", "Rex.")])
        assert solar.stats()["retrievals"] == before + turn


def test_one_shared_memory_and_bad_input() -> None:
    shared = SolarMemory("fifo", capacity=4, embedder="hash")
    block = SolarMemoryBlock(shared)
    assert block.memory_for("a") is block.memory_for("b") is shared
    with pytest.raises(ValueError, match="not both"):
        SolarMemoryBlock(shared, capacity=9)
    with pytest.raises(ValueError, match="unknown policy"):
        SolarMemoryBlock(embedder="hash", policy="mru")
    with pytest.raises(ValueError, match="nothing to rate"):
        SolarMemoryBlock(embedder="hash").feedback(like=True)
    with pytest.raises(ValueError, match="non-empty str"):
        SolarMemoryBlock(embedder="hash").memory_for(3.5)  # type: ignore[arg-type]


def test_rating_a_turn_that_recalled_nothing_does_nothing() -> None:
    block = SolarMemoryBlock(embedder="hash")
    ask = [ChatMessage(role="user", content="first question")]
    assert asyncio.run(block.aget(ask, session_id="s")) == ""  # empty memory: nothing shown
    block.feedback(like=False, session_id="s")
    assert block.memory_for("s").stats()["feedbacks"] == 0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        block.feedback(score=3.0, session_id="s")


async def test_a_blank_turn_is_never_stored() -> None:
    block = SolarMemoryBlock(embedder="hash")
    blank = [ChatMessage(role="user", content=" "), ChatMessage(role="assistant", content="")]
    real = [ChatMessage(role="user", content="hi"), ChatMessage(role="assistant", content="hello")]
    await block.aput([*blank, *real], from_short_term_memory=True, session_id="s9")
    assert [i.text for i in block.memory_for("s9").items()] == ["Human: hi\nAI: hello"]


async def test_a_hundred_sessions_gathered_never_see_each_other() -> None:
    import re

    block = SolarMemoryBlock(embedder="hash", top_k=2, seed=0)

    async def user(i: int) -> str:
        said = [
            ChatMessage(role="user", content=f"my secret code is {i:03d}"),
            ChatMessage(role="assistant", content="Noted."),
        ]
        await block.aput(said, from_short_term_memory=True, session_id=f"s{i}")
        asked = [ChatMessage(role="user", content="what is my secret code?")]
        return str(await block.aget(asked, session_id=f"s{i}"))

    shown = await asyncio.gather(*(user(i) for i in range(100)))
    for i, text in enumerate(shown):
        assert re.findall(r"secret code is (\d{3})", text) == [f"{i:03d}"], (i, text)
