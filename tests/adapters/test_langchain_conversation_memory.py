"""SolarConversationMemory driven through real LangChain chains and compared with the window
memory it replaces."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("langchain_classic")

from langchain_classic.chains import ConversationChain, LLMChain  # noqa: E402
from langchain_classic.memory import ConversationBufferWindowMemory  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.prompts import PromptTemplate  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from langchain_solar import SolarConversationMemory  # noqa: E402
from solar_core import CHAT_POLICY, SolarMemory  # noqa: E402
from tests.support.langchain_fakes import PromptRecorder  # noqa: E402
from tests.support.memories import full_state  # noqa: E402

# The classic chains and the window memory warn on construction (deprecated upstream): the point
# of this adapter is to serve code that still uses them.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TURNS = [
    ("my dog is called Rex and he loves the beach", "What a lovely name!"),
    ("what is the capital of France", "Paris."),
    ("how do I sort a list in python", "Use sorted(xs) or xs.sort()."),
    ("recommend a book about space", "Cosmos by Carl Sagan."),
]


def window_memory(**kwargs: object) -> ConversationBufferWindowMemory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ConversationBufferWindowMemory(**kwargs)


def conversation(memory: object, answers: list[str]) -> ConversationChain:
    return ConversationChain(llm=FakeListChatModel(responses=answers), memory=memory)


@pytest.mark.minilm
def test_conversation_chain_prompt_holds_the_recalled_turn_and_the_window(minilm: object) -> None:
    memory = SolarConversationMemory(k=2, top_k=1, embedder=minilm, seed=0)
    chain = conversation(memory, [a for _, a in TURNS] + ["Rex."])
    recorder = PromptRecorder()
    for question, _ in TURNS:
        chain.invoke({"input": question}, config={"callbacks": [recorder]})
    out = chain.invoke({"input": "what is my dog called?"}, config={"callbacks": [recorder]})

    prompt = recorder.text()
    assert "Human: my dog is called Rex and he loves the beach" in prompt  # recalled, not recent
    assert "Human: how do I sort a list in python" in prompt  # the window (k=2) ...
    assert "Human: recommend a book about space" in prompt
    assert "capital of France" not in prompt  # ... and nothing else
    assert out["response"] == "Rex."
    assert [h.text.splitlines()[0] for h in memory.recalled] == [
        "Human: my dog is called Rex and he loves the beach"
    ]
    # recalled turns come first, then the window, as one conversation
    assert prompt.index("Rex and he loves") < prompt.index("sort a list")


def test_without_recall_it_is_the_window_memory_exactly() -> None:
    for return_messages in (False, True):
        ours = SolarConversationMemory(
            k=2, top_k=0, embedder="hash", return_messages=return_messages
        )
        theirs = window_memory(k=2, return_messages=return_messages)
        for question, answer in TURNS:
            for memory in (ours, theirs):
                memory.save_context({"input": question}, {"response": answer})
            query = {"input": "next question"}
            assert ours.load_memory_variables(query) == theirs.load_memory_variables(query)
            assert ours.buffer == theirs.buffer
        assert ours.memory_variables == theirs.memory_variables == ["history"]


def test_recall_key_keeps_the_window_intact_and_recall_separate() -> None:
    memory = SolarConversationMemory(k=1, top_k=2, embedder="hash", recall_key="relevant", seed=0)
    theirs = window_memory(k=1)
    for question, answer in TURNS:
        memory.save_context({"input": question}, {"output": answer})
        theirs.save_context({"input": question}, {"output": answer})
    got = memory.load_memory_variables({"input": "what is my dog called and the capital?"})
    assert memory.memory_variables == ["history", "relevant"]
    assert got["history"] == theirs.load_memory_variables({})["history"]
    recalled = got["relevant"]
    assert recalled.count("Human: ") == 2
    assert "recommend a book about space" not in recalled  # in the window: never recalled too


def test_llm_chain_with_a_custom_prompt_uses_both_keys() -> None:
    prompt = PromptTemplate.from_template(
        "Earlier, relevant:\n{relevant}\n\nRecent:\n{history}\n\nHuman: {question}\nAI:"
    )
    memory = SolarConversationMemory(k=1, top_k=1, embedder="hash", recall_key="relevant", seed=0)
    llm = FakeListChatModel(responses=["noted", "ok", "Rex"])
    chain = LLMChain(llm=llm, prompt=prompt, memory=memory)
    recorder = PromptRecorder()
    chain.invoke({"question": "remember: the dog Rex likes beach walks"})
    chain.invoke({"question": "unrelated: compile the kernel"})
    chain.invoke(
        {"question": "which walks does the dog Rex like?"}, config={"callbacks": [recorder]}
    )
    text = recorder.text()
    relevant = text.split("Earlier, relevant:\n")[1].split("\n\nRecent:")[0]
    recent = text.split("Recent:\n")[1].split("\n\nHuman: which")[0]
    assert relevant == "Human: remember: the dog Rex likes beach walks\nAI: noted"
    assert recent == "Human: unrelated: compile the kernel\nAI: ok"


def test_return_messages_gives_recalled_turns_then_the_window_as_messages() -> None:
    memory = SolarConversationMemory(k=1, top_k=1, embedder="hash", return_messages=True, seed=0)
    memory.save_context({"input": "the dog Rex likes beach walks"}, {"output": "noted"})
    memory.save_context({"input": "compile the kernel"}, {"output": "ok"})
    history = memory.load_memory_variables({"input": "which walks does the dog Rex like"})[
        "history"
    ]
    assert history == [
        HumanMessage("the dog Rex likes beach walks"),
        AIMessage("noted"),
        HumanMessage("compile the kernel"),
        AIMessage("ok"),
    ]


def test_feedback_moves_the_posteriors_of_the_recalled_turns() -> None:
    # the paper's policy: its Thompson posteriors show the credit of every recalled turn
    memory = SolarConversationMemory(k=0, top_k=2, policy="solar", embedder="hash", seed=0)
    for question, answer in TURNS:
        memory.save_context({"input": question}, {"output": answer})
    memory.load_memory_variables({"input": "my dog Rex and the beach"})
    ids = [h.id for h in memory.recalled]
    before = {i: dict(memory.memory.get(i).policy) for i in ids}
    memory.feedback(like=True)
    for i in ids:
        assert memory.memory.get(i).policy["alpha"] == before[i]["alpha"] + 1
        assert memory.memory.get(i).policy["beta"] == before[i]["beta"]

    memory.load_memory_variables({"input": "my dog Rex and the beach"})
    before = {i: dict(memory.memory.get(i).policy) for i in ids}
    memory.feedback(like=False)
    for i in ids:
        assert memory.memory.get(i).policy["beta"] == before[i]["beta"] + 1
    with pytest.raises(ValueError, match="already has feedback"):
        memory.feedback(score=0.5)


def test_each_chain_call_is_one_solar_step() -> None:
    memory = SolarConversationMemory(k=2, top_k=1, embedder="hash", seed=0)
    chain = conversation(memory, ["a1", "a2", "a3"])
    for i in range(3):
        chain.invoke({"input": f"question number {i}"})
    stats = memory.memory.stats()
    assert (stats["steps"], stats["retrievals"]) == (3, 3)
    assert memory.last_decision is not None and memory.last_decision.step == 3


async def test_async_chain_calls_work_the_same() -> None:
    memory = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
    chain = conversation(memory, ["noted", "ok", "Rex"])
    await chain.ainvoke({"input": "the dog Rex likes beach walks"})
    await chain.ainvoke({"input": "compile the kernel"})
    out = await chain.ainvoke({"input": "which walks does the dog Rex like"})
    assert out["history"].startswith("Human: the dog Rex likes beach walks\nAI: noted\n")
    assert memory.memory.stats()["steps"] == 3


def test_clear_empties_the_window_and_the_memory() -> None:
    memory = SolarConversationMemory(k=2, top_k=1, embedder="hash", seed=0)
    for question, answer in TURNS:
        memory.save_context({"input": question}, {"output": answer})
    memory.load_memory_variables({"input": "dog"})
    memory.clear()
    assert memory.load_memory_variables({"input": "dog"}) == {"history": ""}
    assert len(memory.memory) == 0 and memory.buffer_as_messages == []


def test_a_shared_solar_memory_and_langchain_embeddings_are_accepted() -> None:
    from langchain_core.embeddings import DeterministicFakeEmbedding

    shared = SolarMemory("fifo", capacity=3, embedder="hash")
    a = SolarConversationMemory(memory=shared, k=1)
    b = SolarConversationMemory(memory=shared, k=1)
    a.save_context({"input": "from a"}, {"output": "x"})
    b.save_context({"input": "from b"}, {"output": "y"})
    assert len(shared) == 2 and (a.policy, a.capacity) == ("fifo", 3)

    c = SolarConversationMemory(embedder=DeterministicFakeEmbedding(size=16), policy="lru")
    c.save_context({"input": "hi"}, {"output": "hello"})
    assert c.memory.dim == 16 and len(c.memory) == 1


@pytest.mark.parametrize(
    ("inputs", "outputs", "error", "match"),
    [
        ({"input": "q"}, {"a": "1", "b": "2"}, ValueError, "multiple output keys"),
        ({"input": "q", "other": "x"}, {"output": "a"}, ValueError, "One input key expected"),
        ({"input": "q"}, {"output": 3}, TypeError, r"outputs\['output'\] must be a str"),
        ({"input": ["q"]}, {"output": "a"}, TypeError, r"inputs\['input'\] must be a str"),
    ],
)
def test_bad_turns_are_refused_and_change_nothing(
    inputs: dict[str, object], outputs: dict[str, object], error: type, match: str
) -> None:
    memory = SolarConversationMemory(k=2, embedder="hash", seed=0)
    memory.save_context({"input": "first"}, {"output": "one"})
    before, window = full_state(memory.memory), memory.buffer
    with pytest.raises(error, match=match):
        memory.save_context(inputs, outputs)  # type: ignore[arg-type]
    assert full_state(memory.memory) == before and memory.buffer == window


def test_explicit_keys_are_checked() -> None:
    memory = SolarConversationMemory(embedder="hash", input_key="question", output_key="answer")
    memory.save_context({"question": "q", "context": "ignored"}, {"answer": "a", "x": "y"})
    with pytest.raises(ValueError, match="inputs have no key 'question'"):
        memory.save_context({"input": "q"}, {"answer": "a"})
    assert len(memory.memory) == 1


def test_constructor_errors_are_clear() -> None:
    with pytest.raises(ValidationError, match="capasity"):
        SolarConversationMemory(embedder="hash", capasity=5)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="not both"):
        SolarConversationMemory(memory=SolarMemory(embedder="hash"), policy="lru")
    with pytest.raises(ValidationError, match="greater than or equal to 0"):
        SolarConversationMemory(embedder="hash", k=-1)
    with pytest.raises(ValueError, match="unknown policy"):
        SolarConversationMemory(embedder="hash", policy="mru")
    memory = SolarConversationMemory(embedder="hash")
    with pytest.raises(ValueError, match="nothing to rate"):
        memory.feedback(like=True)
    memory.load_memory_variables({"input": "q"})
    with pytest.raises(ValueError, match=r"score must be in \[0, 1\]"):
        memory.feedback(score=1.5)


def test_a_turn_repeated_word_for_word_is_shown_once() -> None:
    memory = SolarConversationMemory(k=1, top_k=3, policy="fifo", embedder="hash")
    for question, answer in [("the dog is Rex", "ok"), ("the dog is Rex", "ok"), ("tea?", "yes")]:
        memory.save_context({"input": question}, {"output": answer})
    history = memory.load_memory_variables({"input": "what is the dog called"})["history"]
    assert history == "Human: the dog is Rex\nAI: ok\nHuman: tea?\nAI: yes"
    memory.save_context({"input": "the dog is Rex"}, {"output": "ok"})  # now in the window too
    history = memory.load_memory_variables({"input": "what is the dog called"})["history"]
    assert history.count("Rex") == 1 and history.endswith("Human: the dog is Rex\nAI: ok")


def test_keys_must_differ() -> None:
    with pytest.raises(ValidationError, match="must differ"):
        SolarConversationMemory(embedder="hash", recall_key="history")
    with pytest.raises(ValidationError, match="must differ"):
        SolarConversationMemory(embedder="hash", input_key="history")


def test_feedback_never_rates_an_older_turn() -> None:
    memory = SolarConversationMemory(k=0, top_k=1, embedder="hash", seed=0)
    memory.save_context({"input": "the dog is Rex"}, {"output": "ok"})
    memory.load_memory_variables({"input": "the dog?"})
    memory.load_memory_variables({})  # only looks at the window: the target stays
    memory.feedback(like=True)
    memory.load_memory_variables({"input": "   "})  # a turn with nothing to search for
    with pytest.raises(ValueError, match="nothing to rate"):
        memory.feedback(like=False)


def test_configurable_and_copied_adapters_keep_their_memory() -> None:
    memory = SolarConversationMemory(k=1, embedder="hash", policy="lru", capacity=4)
    memory.save_context({"input": "q"}, {"output": "a"})
    copy = memory.model_copy(update={"k": 3})
    assert copy.memory is memory.memory and (copy.policy, copy.capacity) == ("lru", 4)
    assert SolarConversationMemory(memory=None, embedder="hash").policy == CHAT_POLICY
