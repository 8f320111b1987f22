"""SolarMemoryMiddleware inside real create_agent agents driven by a tool-calling fake model."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, SystemMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from langchain_solar import SolarMemoryMiddleware  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from tests.support.langchain_agents import (  # noqa: E402
    UserContext,
    agent_with,
    ask,
    model,
)
from tests.support.langchain_fakes import PromptRecorder, tool_call  # noqa: E402

PAST = "Human: the payments API returned HTTP 429\nAI: retry with exponential backoff"


def check_turn(out: dict[str, Any], recorder: PromptRecorder, n_calls: int) -> None:
    """Every model call saw the memory in its system message; no message in state carries it."""
    assert len(recorder.prompts) == n_calls
    for prompt in recorder.prompts:
        assert isinstance(prompt[0], SystemMessage)
        assert prompt[0].text.startswith("You are helpful.\n\nRelevant past experiences")
        assert "retry with exponential backoff" in prompt[0].text
        assert sum(isinstance(m, SystemMessage) for m in prompt) == 1
    assert all("Relevant past experiences" not in m.text for m in out["messages"])


def test_sync_agent_gets_memories_injected_and_records_the_turn() -> None:
    memory = SolarMemory("solar", capacity=10, embedder="hash", seed=0)
    old = memory.add(PAST).item_id
    mw = SolarMemoryMiddleware(memory, top_k=2)
    agent = agent_with(mw, tool_call("lookup", {"q": "429"}, "c1"), AIMessage("Back off."))
    recorder = PromptRecorder()
    out = agent.invoke(ask("how do I handle HTTP 429 errors?"), {"callbacks": [recorder]})

    check_turn(out, recorder, n_calls=2)  # one retrieval, injected into both model calls
    assert memory.stats()["retrievals"] == 1 and memory.stats()["steps"] == 2
    new = mw.last_decision()
    assert new is not None and new.admitted
    assert memory.get(new.item_id).text == "Human: how do I handle HTTP 429 errors?\nAI: Back off."
    assert memory.get(old).policy["alpha"] == 3.0  # prior 2 + retrieved once


async def test_async_agent_does_the_same() -> None:
    memory = SolarMemory("solar", capacity=10, embedder="hash", seed=0)
    memory.add(PAST)
    mw = SolarMemoryMiddleware(memory)
    agent = agent_with(mw, tool_call("lookup", {"q": "429"}, "c1"), AIMessage("Back off."))
    recorder = PromptRecorder()
    out = await agent.ainvoke(ask("how do I handle HTTP 429 errors?"), {"callbacks": [recorder]})
    check_turn(out, recorder, n_calls=2)
    assert len(memory) == 2 and memory.stats()["retrievals"] == 1


def test_a_turn_that_is_later_recalled_by_the_next_invoke() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", seed=0, shared=True)
    agent = agent_with(mw, AIMessage("Noted: Rex."), AIMessage("Your dog is Rex."))
    agent.invoke(ask("remember that my dog is called Rex"))
    recorder = PromptRecorder()
    agent.invoke(ask("what is my dog called?"), {"callbacks": [recorder]})
    assert "- Human: remember that my dog is called Rex\n  AI: Noted: Rex." in recorder.text()


def test_two_scopes_never_share_memories() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", seed=0, scope="user_id")
    agent = create_agent(
        model(AIMessage("Alice's secret is kept."), AIMessage("ok"), AIMessage("ok")),
        middleware=[mw],
        context_schema=UserContext,
    )
    agent.invoke(ask("my secret code is 1234"), context=UserContext("alice"))
    recorder = PromptRecorder()
    agent.invoke(
        ask("what is my secret code?"), {"callbacks": [recorder]}, context=UserContext("bob")
    )
    assert "1234" not in recorder.text()
    assert sorted(mw.scopes) == ["alice", "bob"]
    assert [i.metadata["human"] for i in mw.memory_for("alice").items()] == [
        "my secret code is 1234"
    ]
    assert [i.metadata["human"] for i in mw.memory_for("bob").items()] == [
        "what is my secret code?"
    ]
    recorder = PromptRecorder()
    agent.invoke(
        ask("what is my secret code?"), {"callbacks": [recorder]}, context=UserContext("alice")
    )
    assert "my secret code is 1234" in recorder.text()


def test_users_share_a_memory_only_when_sharing_is_chosen() -> None:
    """A middleware that does not say whose memory a run uses is refused: Bob's prompt would
    receive Alice's turns. ``shared=True`` is the explicit choice of one memory for all."""
    with pytest.raises(ValueError, match=r'scope="user_id".*shared=True'):
        SolarMemoryMiddleware(embedder="hash", seed=0)
    with pytest.raises(ValueError, match="not both"):
        SolarMemoryMiddleware(embedder="hash", scope="user_id", shared=True)
    with pytest.raises(TypeError, match="True or False"):
        SolarMemoryMiddleware(embedder="hash", shared="yes")  # type: ignore[arg-type]

    def bob_prompt(mw: SolarMemoryMiddleware) -> str:
        agent = create_agent(
            model(AIMessage("Noted."), AIMessage("I don't know.")),
            middleware=[mw],
            context_schema=UserContext,
        )
        agent.invoke(ask("My SSN ends in 1234."), context=UserContext("alice"))
        recorder = PromptRecorder()
        agent.invoke(
            ask("what does my SSN end in?"), {"callbacks": [recorder]}, context=UserContext("bob")
        )
        return recorder.text()

    assert "1234" not in bob_prompt(SolarMemoryMiddleware(embedder="hash", seed=0, scope="user_id"))
    shared = SolarMemoryMiddleware(embedder="hash", seed=0, shared=True)
    assert shared.shared and "My SSN ends in 1234." in bob_prompt(shared)  # chosen: one memory


def test_thread_scope_from_config_and_a_missing_scope_is_refused() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", seed=0, scope="thread_id")
    agent = agent_with(mw, AIMessage("a"), AIMessage("b"), checkpointer=InMemorySaver())
    agent.invoke(ask("hello from thread one"), {"configurable": {"thread_id": "t1"}})
    assert mw.scopes == ["t1"] and len(mw.memory_for("t1")) == 1
    with pytest.raises(ValueError, match="no 'thread_id' in its context"):
        create_agent(model(AIMessage("x")), middleware=[mw]).invoke(ask("who am I?"))
    assert mw.scopes == ["t1"]
    with pytest.raises(ValueError, match="must be a non-empty str"):
        mw.memory_for("")


def test_feedback_method_moves_the_posteriors() -> None:
    memory = SolarMemory("solar", capacity=10, embedder="hash", seed=0)
    old = memory.add(PAST).item_id
    mw = SolarMemoryMiddleware(memory, top_k=1)
    agent = agent_with(mw, AIMessage("Back off."), AIMessage("Back off again."))
    agent.invoke(ask("HTTP 429 from the payments API"))
    mw.feedback(like=True)
    assert memory.get(old).policy == {"alpha": 4.0, "beta": 1.0, "mean": 0.8}
    agent.invoke(ask("HTTP 429 from the payments API"))
    (hit,) = mw.recalled()
    before = memory.get(hit.id).policy
    mw.feedback(like=False)
    assert memory.get(hit.id).policy["beta"] == before["beta"] + 1
    with pytest.raises(ValueError, match="already has feedback"):
        mw.feedback(like=False)


def test_the_rating_tool_credits_memories_and_sets_the_step_cost() -> None:
    memory = SolarMemory("solar", capacity=10, embedder="hash", seed=0)
    old = memory.add(PAST).item_id
    mw = SolarMemoryMiddleware(memory, top_k=1, feedback_tool=True)
    assert [t.name for t in mw.tools] == ["rate_memories"]
    agent = agent_with(
        mw, tool_call("rate_memories", {"helpful": False}, "r1"), AIMessage("Sorry, no idea.")
    )
    out = agent.invoke(ask("HTTP 429 from the payments API"))
    assert out["messages"][2].content == "Thanks, recorded."
    assert memory.get(old).policy["beta"] == 2.0  # disliked during the turn
    decision = mw.last_decision()
    assert decision is not None and decision.cost == 1.0  # the gate saw the rating: 1 - 0


def test_an_empty_recall_can_still_be_rated_by_the_tool() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", seed=0, feedback_tool=True, scope="user_id")
    agent = create_agent(
        model(tool_call("rate_memories", {"helpful": True}, "r1"), AIMessage("ok")),
        middleware=[mw],
        context_schema=UserContext,
    )
    out = agent.invoke(ask("first question ever"), context=UserContext("u"))
    assert out["messages"][2].content == "Thanks, recorded."  # the first retrieval is rateable
    assert mw.memory_for("u").stats()["feedbacks"] == 1


def test_a_run_with_no_answer_text_records_nothing() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", seed=0, shared=True)
    agent = create_agent(model(AIMessage("")), middleware=[mw])
    agent.invoke(ask("say nothing"))
    assert len(mw.memory_for()) == 0 and mw.last_decision() is None


def test_a_structured_response_is_recorded_as_the_answer() -> None:
    from langchain.agents.structured_output import ToolStrategy
    from pydantic import BaseModel

    class Weather(BaseModel):
        city: str
        celsius: int

    mw = SolarMemoryMiddleware(embedder="hash", seed=0, shared=True)
    agent = create_agent(
        model(tool_call("Weather", {"city": "Lisbon", "celsius": 24}, "w1")),
        middleware=[mw],
        response_format=ToolStrategy(Weather),
    )
    out = agent.invoke(ask("weather in Lisbon?"))
    assert out["structured_response"] == Weather(city="Lisbon", celsius=24)
    (item,) = mw.memory_for().items()
    assert item.text == 'Human: weather in Lisbon?\nAI: {"city":"Lisbon","celsius":24}'


def test_turns_still_in_a_checkpointed_thread_are_not_recalled_again() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", seed=0, top_k=3, shared=True)  # two threads
    agent = agent_with(
        mw,
        AIMessage("Noted, Rex."),
        AIMessage("Rex."),
        AIMessage("Rex."),
        checkpointer=InMemorySaver(),
    )
    t1, t2 = ({"configurable": {"thread_id": t}} for t in ("t1", "t2"))
    agent.invoke(ask("my dog is called Rex"), t1)
    same_thread = agent.invoke(ask("what is my dog called?"), t1)
    assert same_thread["solar_memories"] == ""  # the Rex turn is in t1's messages already
    assert len(same_thread["solar_turns"]) == 2
    other_thread = agent.invoke(ask("what is my dog called?"), t2)
    assert "- Human: my dog is called Rex" in other_thread["solar_memories"]


def test_feedback_can_target_one_invoke() -> None:
    memory = SolarMemory("solar", capacity=10, embedder="hash", seed=0)
    old = memory.add(PAST).item_id
    mw = SolarMemoryMiddleware(memory, top_k=1)
    agent = agent_with(mw, AIMessage("Back off."), AIMessage("Noted."))
    first = agent.invoke(ask("HTTP 429 from the payments API"))
    agent.invoke(ask("unrelated: the office wifi password"))
    mw.feedback(like=True, retrieval=first["solar_retrieval"])
    assert memory.get(old).policy["alpha"] == 4.0  # 2 + retrieved + liked


def test_forget_drops_a_scope_and_seeds_do_not_depend_on_arrival_order() -> None:
    a = SolarMemoryMiddleware(embedder="hash", seed=7, scope="user_id")
    b = SolarMemoryMiddleware(embedder="hash", seed=7, scope="user_id")
    a.memory_for("alice"), a.memory_for("bob")
    b.memory_for("bob"), b.memory_for("alice")
    for user in ("alice", "bob"):
        draws = [m.memory_for(user).core.rng.random() for m in (a, b)]  # noqa: SLF001
        assert draws[0] == draws[1]
    a.memory_for("alice").add("secret")
    a.forget("alice")
    assert a.scopes == ["bob"] and len(a.memory_for("alice")) == 0


def test_constructor_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="cannot be split by scope"):
        SolarMemoryMiddleware(SolarMemory(embedder="hash"), scope="user_id")
    with pytest.raises(ValueError, match=r"\(capacity, policy\), not both"):
        SolarMemoryMiddleware(SolarMemory(embedder="hash"), policy="lru", capacity=9)
    with pytest.raises(ValueError, match="top_k"):
        SolarMemoryMiddleware(embedder="hash", top_k=0)
    with pytest.raises(ValueError, match="unknown policy"):
        SolarMemoryMiddleware(embedder="hash", policy="mru", shared=True)
    with pytest.raises(TypeError, match="SolarMemory"):
        SolarMemoryMiddleware("memory")  # type: ignore[arg-type]
    mw = SolarMemoryMiddleware(embedder="hash", shared=True)
    with pytest.raises(ValueError, match="nothing to rate"):
        mw.feedback(like=True)
    with pytest.raises(ValueError, match="no scope= key"):
        mw.memory_for("alice")


def test_scopes_share_one_embedder() -> None:
    mw = SolarMemoryMiddleware(embedder="hash", scope="user_id", seed=1)
    assert mw.memory_for("a").embedder is mw.memory_for("b").embedder


async def test_a_hundred_users_gathered_never_see_each_other() -> None:
    """Two turns for each of 100 users, all in flight at once on one event loop."""
    import asyncio
    import re

    mw = SolarMemoryMiddleware(embedder="hash", seed=0, scope="user_id", top_k=3)
    agent = create_agent(
        model(*[AIMessage("ok") for _ in range(200)]),
        middleware=[mw],
        context_schema=UserContext,
    )

    async def user(i: int) -> str:
        me = UserContext(f"u{i}")
        await agent.ainvoke(ask(f"my secret code is {i:03d}"), context=me)
        recorder = PromptRecorder()
        await agent.ainvoke(ask("what is my secret code?"), {"callbacks": [recorder]}, context=me)
        return recorder.text()

    prompts = await asyncio.gather(*(user(i) for i in range(100)))
    for i, text in enumerate(prompts):
        assert re.findall(r"secret code is (\d{3})", text) == [f"{i:03d}"], (i, text)
        held = [item.metadata["human"] for item in mw.memory_for(f"u{i}").items()]
        assert held[0] == f"my secret code is {i:03d}" and len(held) == 2
