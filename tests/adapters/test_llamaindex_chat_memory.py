"""SolarChatMemory driven by real LlamaIndex agents (mock LLMs) and compared with the
ChatMemoryBuffer it replaces."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent, ReActAgent  # noqa: E402
from llama_index.core.base.llms.types import ChatMessage  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.memory import ChatMemoryBuffer  # noqa: E402
from llama_index.core.storage.chat_store import SimpleChatStore  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from llamaindex_solar import LlamaIndexEmbedder, SolarChatMemory  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from tests.support.llamaindex_fakes import HashEmbedding, as_text, scripted_llm, tool_call  # noqa: E402
from tests.support.memories import full_state  # noqa: E402

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
    # Everything fit in the window, so nothing was recalled: no retrieval event to learn from.
    assert memory.memory.stats()["steps"] == 2 and memory.memory.stats()["retrievals"] == 0


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
    # the paper's policy: its Thompson posteriors show the credit of every recalled turn
    memory = small_memory(top_k=2, policy="solar")
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
        await memory.areset()  # a new conversation: the experiences stay
        assert memory.get_all() == [] and len(memory.memory) == 1
        memory.forget()
        assert len(memory.memory) == 0

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
    recalling = small_memory(top_k=1)
    for question, answer in [("the dog Rex likes walks", "ok"), *FILLER]:
        recalling.put(ChatMessage(role="user", content=question))
        recalling.put(ChatMessage(role="assistant", content=answer))
    recalling.put(ChatMessage(role="user", content="which walks does Rex like?"))
    recalling.get()
    memory = recalling
    before = full_state(memory.memory)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        memory.feedback(score=-0.5)
    assert full_state(memory.memory) == before


def chat_through(memory: SolarChatMemory, turns: list[tuple[str, str]]) -> None:
    for question, answer in turns:
        memory.put(ChatMessage(role="user", content=question))
        memory.put(ChatMessage(role="assistant", content=answer))


def test_only_what_the_prompt_shows_is_credited_and_rated() -> None:
    # three hits would not fit in the 32-token recall share; the paper's policy: its Thompson
    # posteriors show which items were credited
    memory = small_memory(top_k=3, policy="solar")
    chat_through(memory, [("the dog Rex likes beach walks", "noted"), *FILLER])
    memory.put(ChatMessage(role="user", content="which walks does the dog Rex like?"))
    system = memory.get()[0].content or ""
    shown = [hit.id for hit in memory.recalled]
    assert 0 < len(shown) < 3
    assert all(memory.memory.get(i).metadata["human"] in system for i in shown)
    alphas = {i.id: i.policy["alpha"] for i in memory.memory.items()}
    assert {i for i, a in alphas.items() if a == 3.0} == set(shown)  # credited: shown only
    memory.feedback(like=False)
    betas = {i.id: i.policy["beta"] for i in memory.memory.items()}
    assert {i for i, b in betas.items() if b == 2.0} == set(shown)


def test_initial_token_count_is_honoured_like_chat_memory_buffer() -> None:
    ours = small_memory(token_limit=64)
    theirs = ChatMemoryBuffer.from_defaults(token_limit=64)
    for memory in (ours, theirs):
        memory.put(ChatMessage(role="user", content="hi"))
    assert [m.content for m in ours.get(initial_token_count=50)] == ["hi"]
    assert theirs.get(initial_token_count=50) == ours.get(initial_token_count=50)


def test_serialised_form_round_trips_with_the_memory_reattached() -> None:
    memory = small_memory(top_k=2)
    data = memory.to_dict()
    with pytest.raises(ValueError, match="not serialised"):
        SolarChatMemory.from_dict(data)
    again = SolarChatMemory.from_dict(data, memory=memory.memory)
    assert (again.top_k, again.token_limit, again.memory) == (2, 64, memory.memory)
    fresh = SolarChatMemory.from_dict(data, embedder="hash", min_score=None)  # a new memory
    assert fresh.memory is not memory.memory and fresh.memory.min_score is None


def test_a_failed_offer_is_retried_with_the_next_answer() -> None:
    class Flaky:
        dim = 8
        fail = True

        def embed(self, texts: list[str]) -> object:
            if Flaky.fail:
                raise ConnectionError("embedding API down")
            import numpy as np

            return np.ones((len(texts), 8), dtype=np.float32) + np.arange(len(texts))[:, None]

    memory = SolarChatMemory.from_defaults(embedder=Flaky(), token_limit=4000, policy="fifo")
    memory.put(ChatMessage(role="user", content="q1"))
    with pytest.raises(ConnectionError):
        memory.put(ChatMessage(role="assistant", content="a1"))
    Flaky.fail = False
    chat_through(memory, [("q2", "a2")])
    assert [i.metadata["human"] for i in memory.memory.items()] == ["q1", "q2"]


async def test_the_question_is_stored_as_asked_even_when_the_agent_rewrites_it() -> None:
    memory = small_memory(token_limit=4000)
    llm, _ = scripted_llm(["Paris."])
    runner = FunctionAgent(tools=[], llm=llm, initial_state={"user": "bob"})
    await runner.run(user_msg="capital of France?", memory=memory)
    assert [i.text for i in memory.memory.items()] == ["Human: capital of France?\nAI: Paris."]


def test_react_reasoning_and_openai_style_tool_calls_are_not_remembered() -> None:
    memory = small_memory(token_limit=4000)
    memory.put(ChatMessage(role="user", content="what is 6 x 7?"))
    calling = ChatMessage(
        role="assistant", content="let me check", additional_kwargs={"tool_calls": [{"id": "c"}]}
    )
    memory.put(calling)  # an OpenAI-style tool call: not an answer
    assert len(memory.memory) == 0
    memory.put(ChatMessage(role="assistant", content="Thought: I know this.\nAnswer: 42"))
    assert [i.text for i in memory.memory.items()] == ["Human: what is 6 x 7?\nAI: 42"]


def test_rating_an_answer_that_recalled_nothing_does_nothing_but_bad_ratings_fail() -> None:
    memory = small_memory(token_limit=4000)
    chat_through(memory, [("hi", "hello")])
    memory.put(ChatMessage(role="user", content="hi again"))
    memory.get()  # the only turn is in the window: nothing recalled
    before = full_state(memory.memory)
    memory.feedback(like=True)  # a "rate every answer" loop must not crash
    assert full_state(memory.memory) == before
    with pytest.raises(TypeError, match="like must be a bool"):
        memory.feedback(like="yes")  # type: ignore[arg-type]


def test_a_recall_share_too_small_for_any_turn_is_warned_about() -> None:
    with pytest.warns(UserWarning, match="no room for a recalled turn"):
        SolarChatMemory.from_defaults(token_limit=96, recall_token_ratio=0.3, embedder="hash")


def test_the_recall_share_warning_names_the_callers_line() -> None:
    for build in (SolarChatMemory, SolarChatMemory.from_defaults):
        with pytest.warns(UserWarning, match="no room for a recalled turn") as caught:
            build(token_limit=96, recall_token_ratio=0.3, embedder="hash")
        assert [w.filename for w in caught] == [__file__]


def chatted_about_a_dog_and_space() -> SolarChatMemory:
    """A one-turn recall memory after a chat about a dog, space and the filler, in that order."""
    memory = small_memory(top_k=1)
    older = [
        ("the dog Rex likes beach walks", "noted"),
        ("I love documentaries about space", "me too"),
    ]
    for question, answer in [*older, *FILLER]:
        memory.put(ChatMessage(role="user", content=question))
        memory.put(ChatMessage(role="assistant", content=answer))
    return memory


def test_get_recalls_for_the_input_it_is_given_each_time() -> None:
    """``get(input=...)`` asks about its input whenever the latest user message is answered
    (what LlamaIndex's ``CondenseQuestionChatEngine`` does with every new message): two calls
    with two inputs at the same point in the chat recall for each its own."""
    memory = chatted_about_a_dog_and_space()
    dog = as_text(memory.get(input="which walks does the dog Rex like?")[:1])
    space = as_text(memory.get(input="any documentaries about space?")[:1])
    assert "the dog Rex likes beach walks" in dog
    assert "documentaries about space" in space and "Rex" not in space
    # The first prompt for this point of the chat is the one credited and rated.
    assert [hit.text for hit in memory.recalled] == [
        "Human: the dog Rex likes beach walks\nAI: noted"
    ]


def test_an_explicit_input_wins_over_an_unanswered_message() -> None:
    memory = chatted_about_a_dog_and_space()
    memory.put(ChatMessage(role="user", content="any documentaries about space?"))
    asked = as_text(memory.get(input="which walks does the dog Rex like?")[:1])
    assert "the dog Rex likes beach walks" in asked
    assert "documentaries about space" in as_text(memory.get()[:1])  # no input: the message


def test_a_condense_question_chat_engine_recalls_for_each_new_message() -> None:
    from llama_index.core.chat_engine import CondenseQuestionChatEngine
    from llama_index.core.query_engine import CustomQueryEngine

    class Answers(CustomQueryEngine):
        def custom_query(self, query_str: str) -> str:
            return "I have noted that, thank you for telling me."

    memory = small_memory(top_k=1, token_limit=100)  # a window of ~2 turns, recall of 1
    engine = CondenseQuestionChatEngine.from_defaults(
        query_engine=Answers(), memory=memory, llm=MockLLM()
    )
    for message in ["the dog Rex likes beach walks", "I love documentaries about space"]:
        engine.chat(message)
    for question, _ in FILLER:
        engine.chat(question)
    engine.chat("which walks does the dog Rex like?")
    assert [hit.text for hit in memory.recalled] == [
        "Human: the dog Rex likes beach walks\nAI: I have noted that, thank you for telling me."
    ]
