"""SolarConversationMemory's ``chat_memory``: the conversation, exactly as in
``ConversationBufferWindowMemory``, and every finished turn in it offered to SOLAR once, in order
-- turns saved by the chain, added to ``chat_memory`` directly, or seeded -- also across a
restart over a persistent memory."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_classic")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from langchain_classic.chains import ConversationChain  # noqa: E402
from langchain_classic.memory import ConversationBufferWindowMemory  # noqa: E402
from langchain_core.chat_history import InMemoryChatMessageHistory  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage  # noqa: E402

from langchain_solar import SolarConversationMemory  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from solar_core.persistence import MemoryStore  # noqa: E402
from tests.support.langchain_fakes import PromptRecorder  # noqa: E402
from tests.support.profiles import examples

# The classic chains, the window memory and InMemoryChatMessageHistory are deprecated upstream.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

TURNS = [
    ("my dog is called Rex", "Lovely name!"),
    ("what is the capital of France", "Paris."),
    ("how do I sort a list in python", "Use sorted(xs)."),
    ("recommend a book about space", "Cosmos by Carl Sagan."),
    ("the staging database listens on port 5433", "Noted: 5433."),
    ("which tea goes with breakfast", "Assam."),
]


def messages(turns: list[tuple[str, str]]) -> list[BaseMessage]:
    return [m for q, a in turns for m in (HumanMessage(q), AIMessage(a))]


def history(turns: list[tuple[str, str]]) -> InMemoryChatMessageHistory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return InMemoryChatMessageHistory(messages=messages(turns))


def window_memory(**kwargs: Any) -> ConversationBufferWindowMemory:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ConversationBufferWindowMemory(**kwargs)


def offered(memory: SolarConversationMemory) -> list[str]:
    """The human side of every turn SOLAR was offered, in order (its decision trace)."""
    items = {item.id: item.metadata["human"] for item in memory.memory.items()}
    return [items.get(d.item_id or "", "?") for d in memory.memory.trace()]


def test_a_seeded_history_is_the_window_and_its_older_turns_are_recalled() -> None:
    memory = SolarConversationMemory(
        chat_memory=history(TURNS), k=1, top_k=1, embedder="hash", seed=0
    )
    assert memory.buffer == "Human: which tea goes with breakfast\nAI: Assam."
    chain = ConversationChain(llm=FakeListChatModel(responses=["Rex."]), memory=memory)
    recorder = PromptRecorder()
    chain.invoke({"input": "what is my dog called?"}, config={"callbacks": [recorder]})

    assert "Human: my dog is called Rex\nAI: Lovely name!" in recorder.text()  # recalled
    assert [hit.metadata["human"] for hit in memory.recalled] == ["my dog is called Rex"]
    # each seeded turn reached SOLAR once, in order, before the chain's own turn
    assert offered(memory) == [q for q, _ in TURNS] + ["what is my dog called?"]
    assert memory.memory.stats()["retrievals"] == 1
    assert memory.chat_memory.messages == messages([*TURNS, ("what is my dog called?", "Rex.")])


def test_turns_added_to_chat_memory_show_in_the_window_and_reach_solar_once() -> None:
    ours = SolarConversationMemory(k=2, top_k=1, embedder="hash", seed=0)
    theirs = window_memory(k=2)
    for memory in (ours, theirs):
        memory.chat_memory.add_user_message("my dog is called Rex")
        memory.chat_memory.add_ai_message("Lovely name!")
    assert ours.load_memory_variables({}) == theirs.load_memory_variables({})
    assert ours.memory.stats()["steps"] == 0  # a look at the window offers nothing

    ours.load_memory_variables({"input": "hello"})  # an input: the added turn is offered first
    ours.load_memory_variables({"input": "hello again"})
    ours.save_context({"input": "tea?"}, {"output": "Assam."})
    assert offered(ours) == ["my dog is called Rex", "tea?"]  # never twice

    ours.chat_memory.add_user_message("and my cat?")  # its answer is still to come
    ours.load_memory_variables({"input": "anything"})
    assert ours.memory.stats()["steps"] == 2
    ours.chat_memory.add_ai_message("Tom.")
    ours.save_context({"input": "bye"}, {"output": "Bye!"})
    assert offered(ours) == ["my dog is called Rex", "tea?", "and my cat?", "bye"]
    assert ours.last_decision is not None and ours.last_decision.step == 4


def test_a_history_trimmed_from_the_front_or_cleared_and_refilled_is_followed() -> None:
    memory = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
    for question, answer in TURNS[:3]:
        memory.save_context({"input": question}, {"output": answer})
    kept = memory.chat_memory.messages[4:]  # a bounded store drops the two oldest turns
    memory.chat_memory.clear()
    memory.chat_memory.add_messages([*kept, *messages(TURNS[3:4])])
    memory.load_memory_variables({"input": "anything"})
    assert offered(memory) == [q for q, _ in TURNS[:4]]  # only the new turn

    memory.chat_memory.clear()  # emptied by its owner, then refilled as long as it was
    memory.chat_memory.add_messages(messages(TURNS[4:]))
    memory.load_memory_variables({"input": "anything"})
    assert offered(memory) == [q for q, _ in TURNS]


def test_a_failed_offer_keeps_the_turn_and_offers_it_with_the_next_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = SolarConversationMemory(k=2, top_k=1, embedder="hash", seed=0)
    solar = memory.memory

    def service_down(*args: object, **kwargs: object) -> None:
        raise ConnectionError("the embedding service is down")

    monkeypatch.setattr(solar, "add", service_down)
    with pytest.raises(ConnectionError):
        memory.save_context({"input": "my dog is called Rex"}, {"output": "Noted."})
    assert memory.buffer == "Human: my dog is called Rex\nAI: Noted."  # the conversation has it
    monkeypatch.undo()
    memory.load_memory_variables({"input": "what is my dog called?"})
    assert offered(memory) == ["my dog is called Rex"]


async def test_async_chain_calls_offer_and_aclear_forgets_both() -> None:
    memory = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
    chain = ConversationChain(llm=FakeListChatModel(responses=["noted", "ok"]), memory=memory)
    await chain.ainvoke({"input": "the dog Rex likes beach walks"})
    await chain.ainvoke({"input": "compile the kernel"})
    assert offered(memory) == ["the dog Rex likes beach walks", "compile the kernel"]
    assert len(memory.chat_memory.messages) == 4
    await memory.aclear()
    assert memory.chat_memory.messages == [] and len(memory.memory) == 0


def test_it_still_deep_copies_and_pickles_with_what_it_offered() -> None:
    memory = SolarConversationMemory(chat_memory=history(TURNS[:1]), embedder="hash", seed=0)
    memory.load_memory_variables({"input": "hello"})
    for twin in (copy.deepcopy(memory), pickle.loads(pickle.dumps(memory))):
        twin.save_context({"input": "tea?"}, {"output": "Assam."})
        assert offered(twin) == [TURNS[0][0], "tea?"]  # the seeded turn: not offered again
    assert offered(memory) == [TURNS[0][0]] and len(memory.chat_memory.messages) == 2


def trail(memory: SolarMemory) -> tuple[Any, ...]:
    """Everything a step changes: counters, items with their policy state, decisions."""
    decisions = [(d.step, d.admitted, d.item_id, d.evicted, d.reason) for d in memory.trace()]
    items = {item.id: (item.text, item.policy) for item in memory.items()}
    return memory.stats(), items, decisions


@pytest.mark.parametrize("policy", [None, "fifo", "solar"])
def test_a_restart_over_a_persistent_memory_and_history_offers_nothing_twice(
    tmp_path: Path, policy: str | None
) -> None:
    """A new process builds the memory again over the same store scope and the same (persisted)
    chat history: the turns already in it were offered by the first process, so it makes exactly
    the steps of a process that never stopped."""
    seeded, later = TURNS[:2], TURNS[2:]

    def process(path: Path, chat: InMemoryChatMessageHistory, turns: list[tuple[str, str]]) -> Any:
        store = MemoryStore(path, policy=policy, capacity=3, embedder="hash", seed=0)
        memory = SolarConversationMemory(
            memory=store.scope(session="c1"), chat_memory=chat, k=1, top_k=1
        )
        chain = ConversationChain(
            llm=FakeListChatModel(responses=[a for _, a in turns]), memory=memory
        )
        for question, _ in turns:
            chain.invoke({"input": question})
        result = trail(memory.memory)
        store.close()
        return result

    expected = process(tmp_path / "steady.db", history(seeded), later)
    assert expected[0]["steps"] == len(TURNS) and expected[0]["evicted"] > 0

    chat = history(seeded)
    process(tmp_path / "restart.db", chat, later[:2])
    persisted = history([])
    persisted.messages = list(chat.messages)  # e.g. a file or database history, reloaded
    assert process(tmp_path / "restart.db", persisted, later[2:]) == expected


WORDS = st.sampled_from(["dog", "Rex", "beach", "tea", "python", "sort", "Paris", "the", "is"])
TEXT = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("save"), TEXT, TEXT),
        st.tuples(st.just("user"), TEXT, st.just("")),
        st.tuples(st.just("ai"), TEXT, st.just("")),
        st.tuples(st.just("load"), TEXT, st.just("")),
        st.tuples(st.just("look"), st.just(""), st.just("")),
        st.tuples(st.just("clear"), st.just(""), st.just("")),
    ),
    max_size=20,
)


@settings(max_examples=examples(60), deadline=None)
@given(
    seed_turns=st.lists(st.tuples(TEXT, TEXT), max_size=4),
    ops=OPS,
    k=st.integers(0, 3),
    policy=st.sampled_from([None, "solar", "fifo"]),
    return_messages=st.booleans(),
)
def test_chat_memory_is_the_window_memorys_and_each_turn_is_offered_once(
    seed_turns: list[tuple[str, str]],
    ops: list[tuple[str, str, str]],
    k: int,
    policy: str | None,
    return_messages: bool,
) -> None:
    ours = SolarConversationMemory(
        chat_memory=history(seed_turns),
        k=k,
        top_k=2,
        policy=policy,
        capacity=4,
        embedder="hash",
        seed=0,
        recall_key="recalled",
        return_messages=return_messages,
    )
    theirs = window_memory(chat_memory=history(seed_turns), k=k, return_messages=return_messages)
    for op, a, b in ops:
        for memory in (ours, theirs):
            if op == "save":
                memory.save_context({"input": a}, {"output": b})
            elif op == "user":
                memory.chat_memory.add_user_message(a)
            elif op == "ai":
                memory.chat_memory.add_ai_message(a)
            elif op == "clear":
                memory.clear()
        if op in ("load", "look"):
            inputs = {"input": a} if op == "load" else {}
            got = ours.load_memory_variables(inputs)
            assert got["history"] == theirs.load_memory_variables(inputs)["history"]
        assert ours.chat_memory.messages == theirs.chat_memory.messages
        assert ours.buffer == theirs.buffer
        ours.memory.check_invariants()
    # Once an input has offered what is pending: exactly one step per finished turn since clear.
    ours.load_memory_variables({"input": "the end"})
    history_now = ours.chat_memory.messages
    finished = [
        i  # a turn: a human message directly followed by an AI message
        for i in range(len(history_now) - 1)
        if (history_now[i].type, history_now[i + 1].type) == ("human", "ai")
    ]
    assert ours.memory.stats()["steps"] == len(finished)


def test_a_turn_the_memory_refuses_never_blocks_the_turns_after_it(tmp_path: Path) -> None:
    """A NUL in a turn cannot be persisted: it used to stay first in line and make every later
    load and save raise, so no later turn ever reached the memory. Now it is skipped (with a
    warning) and stays in the window; a lone surrogate is refused before anything changes."""
    with MemoryStore(tmp_path / "m.db", policy="fifo", embedder="hash") as store:
        memory = SolarConversationMemory(k=2, memory=store.scope(user="alice"))
        memory.save_context({"input": "hello"}, {"output": "hi"})
        with pytest.warns(UserWarning, match="cannot store was skipped"):
            memory.save_context({"input": "a\x00b"}, {"output": "?"})
        memory.save_context({"input": "my cat is Tom"}, {"output": "Nice."})
        memory.load_memory_variables({"input": "what is my cat called?"})
        texts = [item.text for item in memory.memory.items()]
        assert texts == ["Human: hello\nAI: hi", "Human: my cat is Tom\nAI: Nice."]
        assert "a\x00b" in memory.buffer_as_str  # still in the conversation window
        before = list(memory.chat_memory.messages)
        with pytest.raises(ValueError, match="not valid Unicode"):
            memory.save_context({"input": "caf\udce9"}, {"output": "?"})
        assert memory.chat_memory.messages == before


class _LastSix(InMemoryChatMessageHistory):
    """A history that keeps only its last 6 messages (a capped list, as some stores do)."""

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.messages = (list(self.messages) + list(messages))[-6:]


def test_a_history_trimmed_from_the_front_with_repeated_replies_loses_no_turn() -> None:
    """With the same reply ("OK.") after every turn, a one-message anchor matched at its old
    place once the front was trimmed, and the turns in between were never offered."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        history = _LastSix()
    memory = SolarConversationMemory(
        chat_memory=history, k=2, top_k=1, policy="fifo", embedder="hash", seed=0
    )
    turns = [
        ("my dog is Rex", "OK."),
        ("I live in Lisbon", "OK."),
        ("my car is blue", "OK."),
        ("my cat is Tom", "OK."),
        ("I like tea", "Noted!"),
        ("I work at ACME", "OK."),
    ]
    for human, ai in turns:
        memory.load_memory_variables({"input": human})
        memory.save_context({"input": human}, {"output": ai})
    assert [item.metadata["human"] for item in memory.memory.items()] == [h for h, _ in turns]
