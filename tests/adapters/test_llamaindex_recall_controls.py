"""The LlamaIndex chat memory and memory block: the window without re-tokenising the history,
rating a named earlier recall, looking without learning, and the budget of recalled text."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.memory import ChatMemoryBuffer, Memory  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from llama_index.core.utils import get_tokenizer  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from llamaindex_solar import SolarChatMemory, SolarMemoryBlock  # noqa: E402
from solar_core import Hits  # noqa: E402
from tests.support.llamaindex_fakes import scripted_llm, tool_call  # noqa: E402

WORDS = "dog beagle walk beach sister Lisbon race run python sort book space the a and my".split()
FILLER = [
    ("what is the capital of France?", "Paris."),
    ("how do I sort a list in Python?", "sorted(xs), or xs.sort() in place."),
    ("recommend a book about space", "Cosmos, by Carl Sagan."),
]
REX = ("the dog Rex likes beach walks", "noted")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def agent(llm: object) -> FunctionAgent:
    return FunctionAgent(tools=[FunctionTool.from_defaults(add)], llm=llm, system_prompt="Agent.")


async def converse(memory: Any, turns: list[tuple[str, str]]) -> list[list[ChatMessage]]:
    llm, prompts = scripted_llm([answer for _, answer in turns])
    runner = agent(llm)
    for question, _ in turns:
        await runner.run(user_msg=question, memory=memory)
    return prompts


def small_memory(**kwargs: Any) -> SolarChatMemory:
    params = {"token_limit": 64, "recall_token_ratio": 0.5, "top_k": 2, "embedder": "hash"}
    return SolarChatMemory.from_defaults(**{**params, **kwargs})


class Trimmed(SolarChatMemory):
    """The chat memory with its window trimmed by ``ChatMemoryBuffer.get`` itself."""

    def _window(self, history: list[ChatMessage], initial_token_count: int) -> list[ChatMessage]:
        assert history == self.get_all()
        return ChatMemoryBuffer.get(self, initial_token_count=initial_token_count)


def words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


# -- 1. the window, without re-tokenising the history ----------------------------------------------
async def test_the_prompts_equal_those_of_chat_memory_buffers_trimming_through_an_agent() -> None:
    rng = random.Random(7)
    turns = [(words(rng, 3, 40), words(rng, 1, 40)) for _ in range(40)]
    replies: list[ChatMessage | str] = []
    for i, (_, answer) in enumerate(turns):
        if i % 5 == 0:  # a tool call inside the turn: tool messages the window must not start with
            replies.append(tool_call("add", f"c{i}", a=i, b=1))
        replies.append(answer)
    seen = []
    for kind in (SolarChatMemory, Trimmed):
        memory = kind.from_defaults(
            token_limit=160, recall_token_ratio=0.4, top_k=3, embedder="hash", seed=0
        )
        llm, prompts = scripted_llm(list(replies))
        runner = agent(llm)
        recalled = []
        for question, _ in turns:
            await runner.run(user_msg=question, memory=memory)
            recalled.append([hit.id for hit in memory.recalled])
        seen.append(([[(m.role, m.content) for m in p] for p in prompts], recalled))
    assert seen[0] == seen[1]
    assert any(seen[0][1])  # turns were recalled


def test_the_window_is_chat_memory_buffers_for_any_budget_and_history() -> None:
    rng = random.Random(1)
    roles = ["user", "assistant", "tool", "assistant", "user", "user", "system"]
    for _ in range(60):
        history = [
            ChatMessage(role=rng.choice(roles), content=words(rng, 0, 30))
            for _ in range(rng.randint(0, 40))
        ]
        limit = rng.randint(5, 300)
        ours = SolarChatMemory.from_defaults(token_limit=limit, embedder="hash", top_k=0)
        ours.set(history)
        for initial in (0, rng.randint(0, limit)):
            expected = ChatMemoryBuffer.get(ours, initial_token_count=initial)
            assert ours._window(ours.get_all(), initial) == expected  # noqa: SLF001
            assert ours.get(initial_token_count=initial) == expected
    with pytest.raises(ValueError, match="exceeds token limit"):
        ours.get(initial_token_count=limit + 1)


def test_a_turn_tokenises_about_the_window_not_every_tail_of_the_history() -> None:
    tokenize = get_tokenizer()
    calls: list[int] = []

    def counting(text: str) -> list[Any]:
        calls.append(len(text))
        return list(tokenize(text))

    rng = random.Random(3)
    memory = SolarChatMemory.from_defaults(
        token_limit=400, embedder="hash", tokenizer_fn=counting, seed=0
    )
    for _ in range(300):
        memory.put(ChatMessage(role="user", content=words(rng, 30, 40)))
        memory.put(ChatMessage(role="assistant", content=words(rng, 30, 40)))
    history = sum(len(m.content or "") for m in memory.get_all())
    calls.clear()
    memory.put(ChatMessage(role="user", content="which walks does the dog like?"))
    memory.get(input="which walks does the dog like?")
    # ChatMemoryBuffer.get tokenises ~600 tails here, 100 times the history's text in all
    assert len(calls) < 60 and sum(calls) < history


# -- 2. rating a named earlier recall --------------------------------------------------------------
async def test_chat_memory_feedback_rates_a_named_earlier_recall() -> None:
    memory = small_memory(policy="solar", seed=0)
    await converse(memory, [REX, *FILLER, ("which walks does Rex like?", "beach")])
    first = memory.recalled()
    assert first and first.retrieval_id is not None
    await converse(memory, [("the dog Rex and the beach again", "yes")])
    assert memory.recalled().retrieval_id != first.retrieval_id
    before = {hit.id: memory.memory.get(hit.id).policy for hit in first}
    memory.feedback(like=False, recall=first)
    for hit in first:
        assert memory.memory.get(hit.id).policy["beta"] == before[hit.id]["beta"] + 1
    memory.feedback(like=True)  # the latest is still unrated
    stats = memory.memory.stats()
    for refused in (first, first.handle, memory.look("Rex")):
        with pytest.raises(ValueError):
            memory.feedback(like=True, recall=refused)
    other = small_memory()
    await converse(other, [REX, *FILLER, ("which walks does Rex like?", "beach")])
    with pytest.raises(ValueError, match="another memory"):
        memory.feedback(like=True, recall=other.recalled())
    with pytest.raises(TypeError):
        memory.feedback(like=True, recall="1")  # type: ignore[arg-type]
    assert memory.memory.stats() == stats  # nothing changes on a refusal
    memory.feedback(like=True, recall=Hits([], None))  # a prompt that showed none: nothing


async def test_memory_block_feedback_rates_a_named_earlier_recall() -> None:
    block = SolarMemoryBlock(embedder="hash", top_k=2, seed=0, policy="solar")
    memory = Memory.from_defaults(
        session_id="s1", token_limit=60, chat_history_token_ratio=0.5, token_flush_size=20,
        memory_blocks=[block],
    )  # fmt: skip
    await converse(memory, [REX, *FILLER, ("which walks does Rex like?", "beach")])
    first = block.recalled("s1")
    assert first and first.retrieval_id is not None
    await converse(memory, [("the dog Rex and the beach again", "yes")])
    solar = block.memory_for("s1")
    before = {hit.id: solar.get(hit.id).policy for hit in first}
    block.feedback(like=False, session_id="s1", recall=first.retrieval_id)
    for hit in first:
        assert solar.get(hit.id).policy["beta"] == before[hit.id]["beta"] + 1
    stats = solar.stats()
    with pytest.raises(ValueError, match="already has feedback"):
        block.feedback(like=True, session_id="s1", recall=first)
    with pytest.raises(ValueError, match="record=False"):
        block.feedback(like=True, session_id="s1", recall=block.look("Rex", "s1"))
    assert solar.stats() == stats
    block.feedback(like=True, session_id="s1")  # the latest, as before


async def test_a_block_used_alone_names_its_recall_before_the_next_turn() -> None:
    block = SolarMemoryBlock(embedder="hash", top_k=1, seed=0)
    said, answer = REX
    await block.aget(
        [ChatMessage(role="user", content=said), ChatMessage(role="assistant", content=answer)]
    )
    await block.aget([ChatMessage(role="user", content="does Rex like the beach?")])
    named = block.recalled()
    assert named and named.retrieval_id is not None
    block.feedback(like=True, recall=named.handle)


# -- 3. looking without learning -------------------------------------------------------------------
async def test_chat_memory_look_learns_nothing_and_shows_the_next_recall() -> None:
    memory = small_memory(policy="solar", seed=0)
    await converse(memory, [REX, *FILLER])
    question = "which walks does the dog Rex like?"
    stats = memory.memory.stats()
    posteriors = {item.id: item.policy for item in memory.memory.items()}
    looked = memory.look(question)
    assert [hit.text for hit in looked] == ["Human: the dog Rex likes beach walks\nAI: noted"]
    assert looked.retrieval_id is None
    assert memory.memory.stats() == stats
    assert {item.id: item.policy for item in memory.memory.items()} == posteriors
    await converse(memory, [(question, "beach walks")])  # the agent puts it, then reads
    assert [hit.id for hit in memory.recalled()] == [hit.id for hit in looked]
    # with the user's message already put: that message's prompt
    memory.put(ChatMessage(role="user", content="what does the dog Rex like?"))
    again = memory.look("what does the dog Rex like?")
    memory.get()
    assert [hit.id for hit in memory.recalled()] == [hit.id for hit in again]


async def test_memory_block_look_learns_nothing_and_shows_the_next_recall() -> None:
    block = SolarMemoryBlock(embedder="hash", top_k=2, seed=0, policy="solar")
    memory = Memory.from_defaults(
        session_id="s1", token_limit=60, chat_history_token_ratio=0.5, token_flush_size=20,
        memory_blocks=[block],
    )  # fmt: skip
    await converse(memory, [REX, *FILLER])
    solar = block.memory_for("s1")
    stats, posteriors = solar.stats(), {item.id: item.policy for item in solar.items()}
    question = "which walks does the dog Rex like?"
    looked = block.look(question, session_id="s1")
    assert looked and looked.retrieval_id is None
    assert solar.stats() == stats
    assert {item.id: item.policy for item in solar.items()} == posteriors
    await converse(memory, [(question, "beach walks")])
    assert [hit.id for hit in block.recalled("s1")] == [hit.id for hit in looked]
    assert block.look(question, session_id="nobody") == []
    assert "nobody" not in block.sessions  # a look creates no memory
    with pytest.raises(ValueError, match="session_id="):
        block.look(question)


# -- 4. the budget of recalled text ----------------------------------------------------------------
HUGE = "Human: " + "the dog Rex likes beach walks " * 175_000  # ~5 MB


def test_a_huge_old_turn_never_goes_whole_into_the_chat_memorys_prompt() -> None:
    tokenize = get_tokenizer()
    longest: list[int] = [0]

    def counting(text: str) -> list[Any]:
        longest[0] = max(longest[0], len(text))
        return list(tokenize(text))

    for limit in (None, 4000):
        memory = SolarChatMemory.from_defaults(
            token_limit=200, top_k=3, embedder="hash", tokenizer_fn=counting, max_recall_chars=limit
        )
        memory.memory.add(HUGE, item_id="huge")
        memory.put(ChatMessage(role="user", content="does the dog Rex like beach walks?"))
        assert [hit.id for hit in memory.look("does the dog Rex like beach walks?")] == []
        prompt = memory.get()
        assert sum(len(m.content or "") for m in prompt) < 2000  # the token share bounds it
        if limit is not None:  # and the character budget spares tokenising it
            assert longest[0] < 10_000
        longest[0] = 0


async def test_the_memory_block_holds_at_most_max_recall_chars_best_first() -> None:
    block = SolarMemoryBlock(embedder="hash", top_k=3, seed=0)
    solar = block.memory_for("s1")
    solar.add("Human: does the dog Rex like beach walks?\nAI: yes", item_id="rex")
    solar.add(HUGE, item_id="huge")
    ask = [ChatMessage(role="user", content="does the dog Rex like beach walks?")]
    content = await block.aget(ask, session_id="s1")
    assert content == "- Human: does the dog Rex like beach walks?\n  AI: yes"
    assert [hit.id for hit in block.recalled("s1")] == ["rex"]
    unlimited = SolarMemoryBlock(embedder="hash", top_k=3, seed=0, max_recall_chars=None)
    unlimited.memory_for("s1").add(HUGE, item_id="huge")
    assert len(await unlimited.aget(ask, session_id="s1")) > 5_000_000  # None: no limit


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "4000"])
def test_max_recall_chars_is_a_positive_int_or_none(bad: object) -> None:
    with pytest.raises(ValidationError, match="max_recall_chars"):
        SolarChatMemory.from_defaults(embedder="hash", max_recall_chars=bad)
    with pytest.raises(ValidationError, match="max_recall_chars"):
        SolarMemoryBlock(embedder="hash", max_recall_chars=bad)


def test_the_block_accepts_max_recall_chars_none_and_asyncio_runs() -> None:
    block = SolarMemoryBlock(embedder="hash", max_recall_chars=None)
    assert block.max_recall_chars is None
    assert asyncio.run(block.aget([], session_id="s")) == ""
