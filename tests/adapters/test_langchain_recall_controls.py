"""Rating a named earlier recall, looking without learning, and the budget of recalled text:
SolarConversationMemory through real ConversationChains, SolarMemoryMiddleware through real
create_agent agents."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

pytest.importorskip("langchain_classic")
pytest.importorskip("langchain")

from langchain_classic.chains import ConversationChain  # noqa: E402
from langchain_classic.memory import ConversationBufferWindowMemory  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from langchain_solar import SolarConversationMemory, SolarMemoryMiddleware  # noqa: E402
from solar_core import Hits, SolarMemory  # noqa: E402
from tests.support.langchain_agents import agent_with, ask  # noqa: E402
from tests.support.langchain_fakes import PromptRecorder  # noqa: E402
from tests.support.memories import full_state  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TURNS = [
    ("my dog is called Rex and he loves the beach", "What a lovely name!"),
    ("what is the capital of France", "Paris."),
    ("how do I sort a list in python", "Use sorted(xs) or xs.sort()."),
    ("recommend a book about space", "Cosmos by Carl Sagan."),
]
HUGE = "woof " * 1_000_000  # 5 MB


def chat_memory(**kwargs: Any) -> SolarConversationMemory:
    settings: dict[str, Any] = dict(
        k=1, top_k=1, policy="solar", capacity=20, embedder="hash", seed=0, min_score=None
    )
    return SolarConversationMemory(**{**settings, **kwargs})


def chain_over(memory: object, turns: list[tuple[str, str]], extra: int = 10) -> ConversationChain:
    """A ConversationChain that has had ``turns``; ``extra`` more answers to give."""
    llm = FakeListChatModel(responses=[a for _, a in turns] + ["OK."] * extra)
    chain = ConversationChain(llm=llm, memory=memory)
    for question, _ in turns:
        chain.invoke({"input": question})
    return chain


def alphas(memory: SolarMemory) -> dict[str, float]:
    return {item.id: item.policy["alpha"] for item in memory.items()}


# -- 1. rating a named earlier recall ---------------------------------------------------------
@pytest.mark.parametrize("name", ["hits", "retrieval_id", "handle"])
def test_conversation_feedback_rates_a_named_earlier_recall(name: str) -> None:
    memory = chat_memory()
    chain = chain_over(memory, TURNS)
    chain.invoke({"input": "what is my dog Rex called?"})
    first = memory.recalled
    chain.invoke({"input": "the capital of France again?"})
    second = memory.recalled
    assert [h.metadata["human"] for h in first] == [TURNS[0][0]]
    assert [h.metadata["human"] for h in second] == [TURNS[1][0]]
    before = alphas(memory.memory)

    named = {"hits": first, "retrieval_id": first.retrieval_id, "handle": first.handle}[name]
    memory.feedback(like=True, recall=named)  # the thumbs-up came after the next question

    after = alphas(memory.memory)
    assert after[first[0].id] == before[first[0].id] + 1  # the Rex turn, not the France one
    assert after[second[0].id] == before[second[0].id]
    memory.feedback(like=False)  # the latest is still rateable, by default
    assert alphas(memory.memory)[second[0].id] == before[second[0].id]  # a dislike: beta


def test_conversation_feedback_refusals_come_from_the_memory_and_change_nothing() -> None:
    memory = chat_memory()
    chain = chain_over(memory, TURNS)
    chain.invoke({"input": "what is my dog Rex called?"})
    first = memory.recalled
    memory.feedback(like=True, recall=first)
    other = chat_memory()
    chain_over(other, TURNS).invoke({"input": "what is my dog Rex called?"})
    state = full_state(memory.memory)
    for recall, error in [
        (first, "already has feedback"),
        (other.recalled, "another memory"),
        (12_345, "unknown or expired"),
        (memory.look("Rex"), "record=False lookup cannot be rated"),
    ]:
        with pytest.raises(ValueError, match=error):
            memory.feedback(like=True, recall=recall)
        assert full_state(memory.memory) == state


def test_middleware_feedback_rates_a_named_earlier_invoke() -> None:
    memory = SolarMemory("solar", capacity=10, embedder="hash", seed=0)
    rex = memory.add("Human: my dog is called Rex\nAI: Lovely name!").item_id
    paris = memory.add("Human: what is the capital of France\nAI: Paris.").item_id
    mw = SolarMemoryMiddleware(memory, top_k=1)
    agent = agent_with(mw, AIMessage("Rex."), AIMessage("Paris."))
    agent.invoke(ask("what is my dog called, Rex?"))
    first = mw.recalled()
    agent.invoke(ask("the capital of France?"))
    assert [h.id for h in first] == [rex] and [h.id for h in mw.recalled()] == [paris]
    before = alphas(memory)
    mw.feedback(like=True, recall=first)
    assert alphas(memory)[rex] == before[rex] + 1 and alphas(memory)[paris] == before[paris]
    state = full_state(memory)
    with pytest.raises(ValueError, match="already has feedback"):
        mw.feedback(like=True, recall=first.retrieval_id)
    with pytest.raises(ValueError, match="not both"):
        mw.feedback(like=True, recall=first, retrieval=first.retrieval_id)
    assert full_state(memory) == state
    mw.feedback(like=True)  # the latest, by default
    assert alphas(memory)[paris] == before[paris] + 1


def test_middleware_feedback_refuses_another_scopes_recall() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", seed=0, scope="user_id", min_score=None)
    for user in ("alice", "bob"):
        mw.memory_for(user).add("Human: my dog is called Rex\nAI: Lovely name!")
    agent = agent_with(mw, AIMessage("Rex."), AIMessage("Rex."))
    agent.invoke(ask("my dog?"), context={"user_id": "alice"})
    alices = mw.recalled("alice")
    agent.invoke(ask("my dog?"), context={"user_id": "bob"})
    state = full_state(mw.memory_for("bob"))
    with pytest.raises(ValueError, match="another memory"):
        mw.feedback(like=True, scope="bob", recall=alices)
    assert full_state(mw.memory_for("bob")) == state
    mw.feedback(like=True, scope="alice", recall=alices)


# -- 2. looking without learning --------------------------------------------------------------
def test_conversation_look_records_nothing_and_is_the_next_recall() -> None:
    memory = chat_memory(k=1, top_k=2)
    chain = chain_over(memory, TURNS)
    state, stats = full_state(memory.memory), memory.memory.stats()
    posteriors = [item.policy for item in memory.memory.items()]

    looked = memory.look("what is my dog Rex called?")
    window = memory.look("recommend a book about space")  # the question of the window's turn

    assert full_state(memory.memory) == state
    assert memory.memory.stats()["retrievals"] == stats["retrievals"]
    assert [item.policy for item in memory.memory.items()] == posteriors
    assert looked.retrieval_id is None and looked[0].metadata["human"] == TURNS[0][0]
    assert TURNS[3][0] not in [h.metadata["human"] for h in window]  # the window's turn: no
    chain.invoke({"input": "what is my dog Rex called?"})
    assert [h.id for h in memory.recalled] == [h.id for h in looked]
    assert memory.memory.stats()["retrievals"] == stats["retrievals"] + 1
    # the window now holds the Rex question's turn: the look excludes it as the recall does
    looked = memory.look("recommend a book about space")
    chain.invoke({"input": "recommend a book about space"})
    assert [h.id for h in memory.recalled] == [h.id for h in looked]
    assert memory.look("   ") == [] and chat_memory(top_k=0).look("Rex") == []


def test_middleware_look_records_nothing_and_is_the_next_recall() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", seed=0, scope="user_id", policy="solar", top_k=2)
    memory = mw.memory_for("alice")
    for human, ai in TURNS:
        memory.add(f"Human: {human}\nAI: {ai}")
    state = full_state(memory)
    retrievals = memory.stats()["retrievals"]
    looked = mw.look("what is my dog Rex called?", scope="alice")
    assert full_state(memory) == state and memory.stats()["retrievals"] == retrievals
    assert looked.retrieval_id is None and "Rex" in looked[0].text
    assert mw.look("my dog?", scope="carol") == [] and mw.scopes == ["alice"]  # none created
    with pytest.raises(ValueError, match="pass scope="):
        mw.look("my dog?")
    agent = agent_with(mw, AIMessage("Rex."))
    agent.invoke(ask("what is my dog Rex called?"), context={"user_id": "alice"})
    assert [h.id for h in mw.recalled("alice")] == [h.id for h in looked]
    assert memory.stats()["retrievals"] == retrievals + 1


# -- 3. the budget of recalled text -----------------------------------------------------------
def test_conversation_a_huge_old_turn_is_cut_to_the_budget() -> None:
    memory = chat_memory(max_recall_chars=1_000)
    turns = [(f"my dog Rex barks {HUGE}", "Loud!"), *TURNS[1:]]
    chain = chain_over(memory, turns)
    recorder = PromptRecorder()
    chain.invoke({"input": "my dog Rex barks"}, config={"callbacks": [recorder]})
    prompt = recorder.text()
    assert len(prompt) < 2_000 and "Human: my dog Rex barks woof" in prompt
    recalled = memory.load_memory_variables({})["history"]  # the window only: no recall
    assert "woof" not in recalled
    cut = memory.model_copy(update={"recall_key": "recalled"})
    text = cut.load_memory_variables({"input": "my dog Rex barks"})["recalled"]
    assert len(text) == 1_000 and text.endswith("woof …\nAI: Loud!")  # the long side is cut


def test_conversation_a_turn_that_does_not_fit_is_left_out() -> None:
    memory = chat_memory(k=0, top_k=3, max_recall_chars=200, recall_key="recalled")
    for human, ai in [("my dog Rex likes the beach", "Nice."), (f"my dog Rex {HUGE}", "Loud!")]:
        memory.save_context({"input": human}, {"output": ai})
    text = memory.load_memory_variables({"input": "my dog Rex likes the beach"})["recalled"]
    assert text == "Human: my dog Rex likes the beach\nAI: Nice."
    assert [h.metadata["ai"] for h in memory.recalled] == ["Nice."]
    assert [h.metadata["ai"] for h in memory.look("my dog Rex likes the beach")] == ["Nice."]
    unlimited = memory.model_copy(update={"max_recall_chars": None})
    text = unlimited.load_memory_variables({"input": "my dog Rex likes the beach"})["recalled"]
    assert len(text) > 5_000_000


def test_conversation_messages_are_cut_to_the_budget_too() -> None:
    memory = chat_memory(return_messages=True, recall_key="recalled", max_recall_chars=300)
    memory.save_context({"input": f"my dog Rex {HUGE}"}, {"output": f"Loud! {HUGE}"})
    memory.save_context({"input": "what is 2 + 2"}, {"output": "4"})
    human, ai = memory.load_memory_variables({"input": "my dog Rex"})["recalled"]
    assert human.type == "human" and ai.type == "ai"
    assert len(human.text) + len(ai.text) <= 300 and ai.text.startswith("Loud!")


@pytest.mark.parametrize("bad", [0, -5, True, 2.5, "4000"])
def test_the_budget_is_checked(bad: object) -> None:
    fix = r"max_recall_chars must be a positive int .*or None for no limit"
    with pytest.raises(ValidationError, match=fix):
        SolarConversationMemory(embedder="hash", max_recall_chars=bad)
    with pytest.raises(ValueError, match=fix):
        SolarMemoryMiddleware(embedder="hash", shared=True, max_recall_chars=bad)  # type: ignore[arg-type]
    assert SolarConversationMemory(embedder="hash").max_recall_chars == 4_000
    assert SolarMemoryMiddleware(embedder="hash", shared=True).max_recall_chars == 4_000


def test_middleware_system_message_keeps_to_the_budget() -> None:
    memory = SolarMemory("solar", capacity=10, embedder="hash", seed=0, min_score=None)
    huge = memory.add(f"Human: my dog Rex barks {HUGE}\nAI: Loud!").item_id
    small = memory.add("Human: my dog Rex likes the beach\nAI: Nice.").item_id
    mw = SolarMemoryMiddleware(memory, top_k=2, max_recall_chars=500)
    agent = agent_with(mw, AIMessage("Rex."), AIMessage("Rex."))
    recorder = PromptRecorder()
    agent.invoke(ask("my dog Rex barks woof woof"), {"callbacks": [recorder]})
    system = recorder.prompts[-1][0].text
    assert len(system) < 700 and "woof" in system and "…" in system  # the best, cut
    assert len(mw.recalled()) == 1  # the beach turn did not fit after it
    recorder = PromptRecorder()
    agent.invoke(ask("my dog Rex likes the beach"), {"callbacks": [recorder]})
    system = recorder.prompts[-1][0].text
    assert "likes the beach" in system and "woof woof woof" not in system and len(system) < 700
    recalled = [h.id for h in mw.recalled()]
    assert recalled[0] == small and huge not in recalled  # the huge one left out


# -- 4. the prompt of the drop-in ------------------------------------------------------------
def window_memory(**kwargs: Any) -> ConversationBufferWindowMemory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ConversationBufferWindowMemory(**kwargs)


def prompts(memory: object, turns: list[tuple[str, str]]) -> list[str]:
    recorder = PromptRecorder()
    chain = ConversationChain(llm=FakeListChatModel(responses=["OK."]), memory=memory)
    for question, _ in turns:
        chain.invoke({"input": question}, config={"callbacks": [recorder]})
    return [recorder.text(i) for i in range(len(turns))]


def test_top_k_0_keeps_the_window_memorys_prompt_exactly() -> None:
    turns = TURNS + [(q + "?", a) for q, a in TURNS]
    for return_messages in (False, True):
        ours = SolarConversationMemory(
            k=2, top_k=0, embedder="hash", return_messages=return_messages
        )
        theirs = window_memory(k=2, return_messages=return_messages)
        assert prompts(ours, turns) == prompts(theirs, turns)
        assert ours.look("my dog Rex") == Hits([], None)


def test_k_2_with_the_default_top_k_shows_up_to_5_exchanges() -> None:
    memory = SolarConversationMemory(k=2, embedder="hash", seed=0, min_score=None)
    assert memory.top_k == 3
    more = [("my favourite food is ramen", "OK."), ("my sister moved to Lisbon", "OK.")]
    turns = TURNS + more + [("my dog Rex, Paris, python, space and ramen?", "OK.")]
    last = prompts(memory, turns)[-1]
    assert last.count("Human: ") == 5 + 1  # 3 recalled + the 2 of the window, and the question
