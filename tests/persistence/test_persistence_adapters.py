"""The framework adapters over a persistent ``MemoryStore``: real agents and chains driven by the
frameworks' fake models, stopped, and resumed by new adapters on the same database file."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402

from langchain_solar import SolarMemoryMiddleware  # noqa: E402
from langchain_solar.middleware import DEFAULT_SCOPE  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from solar_core.persistence import MemoryStore, PersistenceError, Scope  # noqa: E402
from tests.support.langchain_fakes import PromptRecorder, ToolCallingFakeModel  # noqa: E402


@dataclass
class UserContext:
    user_id: str


def agent_for(mw: SolarMemoryMiddleware, *answers: str, **kwargs: Any) -> Any:
    model = ToolCallingFakeModel(messages=iter([AIMessage(a) for a in answers]))
    return create_agent(model, system_prompt="You are helpful.", middleware=[mw], **kwargs)


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def contents(memory: SolarMemory) -> dict[str, tuple[str, Mapping[str, float]]]:
    """Every item: its text and posterior (what a reopened memory must give back exactly)."""
    return {item.id: (item.text, item.policy) for item in memory.items()}


def user_middleware(path: str | Path, **kwargs: Any) -> SolarMemoryMiddleware:
    params: dict[str, Any] = {"scope": "user_id", "embedder": "hash", "seed": 0, "top_k": 3}
    return SolarMemoryMiddleware(store=path, **{**params, **kwargs})


# -- LangChain: SolarMemoryMiddleware(store=...) ---------------------------------------------------
def test_middleware_store_keeps_users_apart_and_a_new_middleware_resumes_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agent.db"
    mw = user_middleware(path)
    agent = agent_for(
        mw, "Noted.", "I don't know.", "Your code is 1234.", context_schema=UserContext
    )
    agent.invoke(ask("my secret code is 1234"), context=UserContext("alice"))
    recorder = PromptRecorder()
    agent.invoke(
        ask("what is my secret code?"), {"callbacks": [recorder]}, context=UserContext("bob")
    )
    assert "1234" not in recorder.text()  # bob never sees alice's memory
    agent.invoke(ask("what is my secret code?"), context=UserContext("alice"))
    mw.feedback(like=True, scope="alice")  # alice's recalled turn gains credit
    assert mw.store is not None and mw.store.names() == ["user=alice", "user=bob"]
    assert mw.scopes == ["alice", "bob"]
    before = {user: contents(mw.memory_for(user)) for user in ("alice", "bob")}
    stats = {user: mw.memory_for(user).stats() for user in ("alice", "bob")}
    secret = next(i for i, (text, _) in before["alice"].items() if "is 1234" in text)
    assert stats["alice"]["feedbacks"] == 1  # alice's like is recorded (and must persist)
    assert all("1234" not in text for text, _ in before["bob"].values())
    mw.close()
    with pytest.raises(PersistenceError, match="closed"):
        mw.memory_for("alice")

    again = user_middleware(path)  # a new middleware on the same file: the memories come back
    assert again.scopes == ["alice", "bob"]
    for user in ("alice", "bob"):
        assert contents(again.memory_for(user)) == before[user]
        for item_id, (text, posterior) in before[user].items():
            item = again.memory_for(user).get(item_id)
            assert (item.text, item.policy) == (text, posterior)
        assert again.memory_for(user).stats() == stats[user]
    recorder = PromptRecorder()
    agent = agent_for(again, "1234.", "No idea.", context_schema=UserContext)
    agent.invoke(
        ask("remind me of my code"), {"callbacks": [recorder]}, context=UserContext("alice")
    )
    assert "- Human: my secret code is 1234" in recorder.text()
    assert secret in {hit.id for hit in again.recalled("alice")}
    recorder = PromptRecorder()
    agent.invoke(ask("remind me of my code"), {"callbacks": [recorder]}, context=UserContext("bob"))
    assert "is 1234" not in recorder.text()
    again.close()


async def test_async_agent_over_a_store_records_and_recalls(tmp_path: Path) -> None:
    mw = user_middleware(tmp_path / "agent.db")
    agent = agent_for(mw, "Noted: Rex.", "Rex.", context_schema=UserContext)
    await agent.ainvoke(ask("my dog is called Rex"), context=UserContext("alice"))
    out = await agent.ainvoke(ask("what is my dog called?"), context=UserContext("alice"))
    assert "- Human: my dog is called Rex" in out["solar_memories"]
    assert mw.memory_for("alice").stats()["steps"] == 2
    mw.close()
    again = user_middleware(tmp_path / "agent.db")
    assert [i.metadata["human"] for i in again.memory_for("alice").items()] == [
        "my dog is called Rex",
        "what is my dog called?",
    ]
    again.close()


def test_an_invoke_before_a_restart_can_be_rated_after_it(tmp_path: Path) -> None:
    """A thumbs-up clicked after the server restarted still rates that very invoke."""
    path = tmp_path / "agent.db"
    # the paper's policy: its Thompson posteriors show the credit of the rated invoke's turn
    mw = user_middleware(path, feedback_tool=True, policy="solar")
    agent = agent_for(mw, "Noted: Rex.", "Rex.", context_schema=UserContext)
    agent.invoke(ask("my dog is called Rex"), context=UserContext("alice"))
    out = agent.invoke(ask("what is my dog called?"), context=UserContext("alice"))
    (hit,) = [h for h in mw.recalled("alice") if "is called Rex" in h.text]
    before = mw.memory_for("alice").get(hit.id).policy
    mw.close()

    again = user_middleware(path, policy="solar")
    with pytest.raises(ValueError, match="nothing to rate"):
        again.feedback(like=False, scope="alice")  # this process has recalled nothing yet
    again.feedback(like=False, scope="alice", retrieval=out["solar_retrieval"])
    after = again.memory_for("alice").get(hit.id).policy
    assert (after["alpha"], after["beta"]) == (before["alpha"], before["beta"] + 1)
    again.close()
    third = user_middleware(path, policy="solar")
    with pytest.raises(ValueError, match="already has feedback"):
        third.feedback(like=True, scope="alice", retrieval=out["solar_retrieval"])
    assert third.memory_for("alice").get(hit.id).policy == after
    third.close()


@pytest.mark.parametrize(
    ("key", "part"),
    [
        ("user_id", "user"),
        ("user", "user"),
        ("org_id", "org"),
        ("org", "org"),
        ("project_id", "project"),
        ("project", "project"),
        ("session_id", "session"),
        ("conversation", "session"),
    ],
)
def test_scope_keys_name_the_store_part(tmp_path: Path, key: str, part: str) -> None:
    mw = user_middleware(tmp_path / "agent.db", scope=key)
    agent = agent_for(mw, "ok")
    agent.invoke(ask("hello"), context={key: "v1"})
    assert mw.store is not None and mw.store.names() == [f"{part}=v1"]
    assert mw.scopes == ["v1"] and len(mw.memory_for("v1")) == 1
    mw.close()


def test_thread_id_from_the_config_is_a_session(tmp_path: Path) -> None:
    mw = user_middleware(tmp_path / "agent.db", scope="thread_id")
    agent = agent_for(mw, "a", "b", checkpointer=InMemorySaver())
    agent.invoke(ask("hello from thread one"), {"configurable": {"thread_id": "t1"}})
    agent.invoke(ask("hello from thread two"), {"configurable": {"thread_id": "t2"}})
    assert mw.store is not None and mw.store.names() == ["session=t1", "session=t2"]
    with pytest.raises(ValueError, match="no 'thread_id' in its context"):
        agent_for(mw, "x").invoke(ask("who am I?"))
    mw.forget("t1")  # a thread ended: its rows go
    assert mw.store.names() == ["session=t2"] and mw.scopes == ["t2"]
    mw.close()


def test_a_shared_middleware_uses_the_default_scope(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    mw = SolarMemoryMiddleware(store=path, shared=True, embedder="hash", seed=0)
    agent_for(mw, "Noted: Rex.").invoke(ask("my dog is called Rex"))
    assert mw.store is not None and mw.store.names() == [DEFAULT_SCOPE.key]
    assert mw.scopes == [] and len(mw.memory_for()) == 1
    mw.close()
    again = SolarMemoryMiddleware(store=path, shared=True, embedder="hash", seed=0)
    out = agent_for(again, "Rex.").invoke(ask("what is my dog called?"))
    assert "- Human: my dog is called Rex" in out["solar_memories"]
    again.forget()
    assert again.store is not None and again.store.names() == []
    again.close()


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("al\x00ice", ValueError, r"scope user 'al\\x00ice' contains the control character"),
        ("bob\n", ValueError, "control character"),
        ("\u202eevil", ValueError, "control character"),
        ("x" * 257, ValueError, "at most 256"),
        ("  ", ValueError, "non-empty str"),
        (3.5, TypeError, "scope user must be a str"),
    ],
)
def test_bad_scope_values_fail_the_run_clearly_and_store_nothing(
    tmp_path: Path, value: object, error: type[Exception], message: str
) -> None:
    mw = user_middleware(tmp_path / "agent.db")
    agent = agent_for(mw, "never", context_schema=UserContext)
    with pytest.raises(error, match=message):
        agent.invoke(ask("hello"), context=UserContext(value))  # type: ignore[arg-type]
    with pytest.raises(error, match=message):
        mw.memory_for(value)  # type: ignore[arg-type]
    assert mw.store is not None and mw.store.names() == [] and mw.scopes == []
    mw.close()


def test_store_argument_errors_and_ownership(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    with pytest.raises(ValueError, match="memory= or store=, not both"):
        SolarMemoryMiddleware(SolarMemory(embedder="hash"), store=path)
    with pytest.raises(TypeError, match="store must be a MemoryStore, a file path"):
        SolarMemoryMiddleware(store=42, shared=True, embedder="hash")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown policy"):
        SolarMemoryMiddleware(store=path, shared=True, policy="mru", embedder="hash")
    assert not path.exists()  # settings are checked before the file is created
    store = MemoryStore(path, capacity=5, embedder="hash", seed=0)
    with pytest.raises(ValueError, match=r"own settings: .* \(capacity, policy\), not both"):
        SolarMemoryMiddleware(store=store, scope="user_id", policy="lru", capacity=9)
    mw = SolarMemoryMiddleware(store=store, scope="user_id")
    assert mw.memory_for("alice") is store.scope(user="alice")
    assert mw.memory_for("alice").capacity == 5  # the store's settings
    mw.close()  # not its store: left open for its owner
    mw.memory_for("alice").add("still open")
    store.close()


def test_a_file_reopened_with_other_settings_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    mw = user_middleware(path, capacity=10)
    mw.memory_for("alice").add("hello")
    mw.close()
    other = user_middleware(path, capacity=20)
    with pytest.raises(PersistenceError, match="capacity=10"):
        other.memory_for("alice")
    assert len(other.memory_for("bob")) == 0  # a new scope takes the new settings
    other.close()


# -- LangChain: ready memories from a store --------------------------------------------------------
def test_retriever_and_conversation_memory_over_persistent_memories(tmp_path: Path) -> None:
    pytest.importorskip("langchain_classic")
    from langchain_classic.chains import ConversationChain
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from langchain_solar import SolarConversationMemory, SolarRetriever

    path = tmp_path / "agent.db"
    store = MemoryStore(path, capacity=10, embedder="hash", seed=0)
    retriever = SolarRetriever(memory=store.scope(user="alice"), k=1)
    retriever.add_texts(["retry HTTP 429 with backoff", "pin the numpy seed in flaky tests"])
    (doc,) = retriever.invoke("what to do on HTTP 429")
    retriever.feedback(like=True)
    turns = [("my dog is called Rex", "Lovely."), ("what is the capital of France", "Paris.")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # classic chains are deprecated
        chat = SolarConversationMemory(memory=store.scope(session="c1"), k=1, top_k=1)
        chain = ConversationChain(
            llm=FakeListChatModel(responses=[a for _, a in turns]), memory=chat
        )
        for question, _ in turns:
            chain.invoke({"input": question})
    kept = contents(store.scope(user="alice")), contents(store.scope(session="c1"))
    store.close()

    store = MemoryStore(path, capacity=10, embedder="hash", seed=0)
    assert (contents(store.scope(user="alice")), contents(store.scope(session="c1"))) == kept
    again = SolarRetriever(memory=store.scope(user="alice"), k=1)
    (same,) = again.invoke("what to do on HTTP 429")
    assert doc.id is not None and (same.id, same.page_content) == (doc.id, doc.page_content)
    stats = again.memory.stats()  # retrieved, liked, retrieved after the restart
    assert (stats["retrievals"], stats["feedbacks"]) == (2, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        fresh = SolarConversationMemory(memory=store.scope(session="c1"), k=1, top_k=1)
        recorder = PromptRecorder()
        chain = ConversationChain(llm=FakeListChatModel(responses=["Rex."]), memory=fresh)
        chain.invoke({"input": "what is my dog called?"}, config={"callbacks": [recorder]})
    assert "Human: my dog is called Rex\nAI: Lovely." in recorder.text()  # recalled after restart
    store.close()


# -- LlamaIndex ------------------------------------------------------------------------------------
FILLER = [
    ("what is the capital of France?", "Paris."),
    ("how do I sort a list in Python?", "sorted(xs), or xs.sort() in place."),
    ("recommend a book about space", "Cosmos, by Carl Sagan."),
]


async def converse(memory: Any, turns: list[tuple[str, str]]) -> list[list[Any]]:
    from llama_index.core.agent.workflow import FunctionAgent

    from tests.support.llamaindex_fakes import scripted_llm

    llm, prompts = scripted_llm([answer for _, answer in turns])
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are an agent.")
    for question, _ in turns:
        await agent.run(user_msg=question, memory=memory)
    return prompts


def chat_memory(path: Path | MemoryStore, key: str, **kwargs: Any) -> Any:
    from llamaindex_solar import SolarChatMemory

    params: dict[str, Any] = {"token_limit": 64, "recall_token_ratio": 0.5, "top_k": 1}
    if not isinstance(path, MemoryStore):
        params.update(embedder="hash", seed=0)
    return SolarChatMemory.from_defaults(store=path, chat_store_key=key, **{**params, **kwargs})


async def test_chat_memory_store_keeps_sessions_apart_across_instances(tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core")
    from tests.support.llamaindex_fakes import as_text

    path = tmp_path / "agent.db"
    alice = chat_memory(path, "alice")
    bob = chat_memory(path, "bob")  # a second store on the same file, in the same process
    await converse(alice, [("my secret code is 1234", "Noted."), *FILLER])
    prompts = await converse(bob, [("what is my secret code?", "I don't know.")])
    assert "1234" not in as_text(prompts[-1])
    kept = contents(alice.memory)
    assert len(kept) == 4 and alice.store.names() == ["session=alice", "session=bob"]
    alice.close()
    bob.close()
    with pytest.raises(PersistenceError):
        alice.memory.items()

    later = chat_memory(path, "alice")  # a new conversation window, the same SOLAR memory
    assert contents(later.memory) == kept
    prompts = await converse(later, [("what was my secret code?", "1234.")])
    assert "- Human: my secret code is 1234\n  AI: Noted." in as_text(prompts[-1])
    later.feedback(like=True)
    (hit,) = later.recalled
    assert hit.id in kept and later.memory.stats()["feedbacks"] == 1
    again_bob = chat_memory(path, "bob")
    assert all("1234" not in text for text, _ in contents(again_bob.memory).values())
    later.close()
    again_bob.close()


def test_chat_memory_store_errors_and_a_shared_store(tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.llms.types import ChatMessage

    from llamaindex_solar import SolarChatMemory

    path = tmp_path / "agent.db"
    with pytest.raises(ValueError, match="control character"):
        chat_memory(path, "bad\x00key")
    with pytest.raises(ValueError, match="memory= or store=, not both"):
        SolarChatMemory.from_defaults(store=path, memory=SolarMemory(embedder="hash"))
    store = MemoryStore(path, capacity=5, embedder="hash", seed=0)
    assert store.names() == []  # the refused key created nothing
    with pytest.raises(ValueError, match="own settings"):
        chat_memory(store, "alice", capacity=9)
    one = chat_memory(store, "alice")
    # to_dict before any message: llama-index's ChatMessage serialiser fails on messages
    # (ChatMemoryBuffer itself too, with this pydantic)
    two = SolarChatMemory.from_dict(one.to_dict(), store=store)
    assert one.memory is two.memory is store.scope(session="alice")
    assert two.chat_store_key == "alice" and two.store is store
    one.put(ChatMessage(role="user", content="hi"))
    one.put(ChatMessage(role="assistant", content="hello"))
    one.close()  # the store is its owner's: still open
    assert [i.text for i in two.memory.items()] == ["Human: hi\nAI: hello"]
    store.close()


async def test_memory_block_store_across_instances_and_sessions(tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.memory import Memory

    from llamaindex_solar import SolarMemoryBlock
    from tests.support.llamaindex_fakes import as_text

    def session(block: SolarMemoryBlock, name: str) -> Memory:
        return Memory.from_defaults(
            session_id=name,
            token_limit=60,
            chat_history_token_ratio=0.5,
            token_flush_size=20,
            memory_blocks=[block],
        )

    path = tmp_path / "agent.db"
    block = SolarMemoryBlock(store=path, embedder="hash", top_k=1, seed=0)
    await converse(session(block, "s1"), [("remember: my dog is called Rex", "Noted: Rex.")])
    await converse(session(block, "s2"), [("my cat is called Tom", "Noted: Tom."), *FILLER])
    kept = {s: contents(block.memory_for(s)) for s in ("s1", "s2")}
    assert block.sessions == ["s1", "s2"] and len(kept["s1"]) == 1
    block.close()

    again = SolarMemoryBlock(store=path, embedder="hash", top_k=1, seed=0)
    assert again.sessions == ["s1", "s2"]
    assert {s: contents(again.memory_for(s)) for s in ("s1", "s2")} == kept
    prompts = await converse(session(again, "s1"), [("what is my dog called?", "Rex.")])
    last = as_text(prompts[-1])
    assert "<solar_memories>\n- Human: remember: my dog is called Rex\n  AI: Noted: Rex." in last
    assert "Tom" not in last
    again.feedback(like=True, session_id="s1")
    (hit,) = again.recalled("s1")
    assert hit.id in kept["s1"] and again.memory_for("s1").stats()["feedbacks"] == 1
    with pytest.raises(ValueError, match="control character"):
        again.memory_for("s\x00")
    with pytest.raises(ValueError, match="control character"):
        await again.aget([], session_id="s\x1b[31m")
    again.forget("s2")
    assert again.sessions == ["s1"] and again.store is not None
    again.close()
    with pytest.raises(ValueError, match="memory= or store=, not both"):
        SolarMemoryBlock(SolarMemory(embedder="hash"), store=path)


def test_memory_block_sessions_share_one_store_with_a_middleware(tmp_path: Path) -> None:
    """One file for both frameworks: LangChain's user scopes, LlamaIndex's sessions."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.llms.types import ChatMessage

    from llamaindex_solar import SolarMemoryBlock

    store = MemoryStore(tmp_path / "agent.db", capacity=10, embedder="hash", seed=0)
    mw = SolarMemoryMiddleware(store=store, scope="user_id")
    block = SolarMemoryBlock(store=store, top_k=1)
    agent_for(mw, "Noted.").invoke(ask("I like tea"), context={"user_id": "alice"})
    chat = [
        ChatMessage(role="user", content="I like coffee"),
        ChatMessage(role="assistant", content="Noted."),
    ]
    asyncio.run(block.aget(chat, session_id="alice"))
    assert store.names() == ["user=alice", "session=alice"]
    assert [i.metadata["human"] for i in mw.memory_for("alice").items()] == ["I like tea"]
    assert [i.metadata["human"] for i in block.memory_for("alice").items()] == ["I like coffee"]
    store.close()


def test_adapters_resume_over_each_backend(db_url: str) -> None:
    """``store=`` takes a database URL as well as a path: SQLite and PostgreSQL alike."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.llms.types import ChatMessage

    from llamaindex_solar import SolarMemoryBlock

    mw = user_middleware(db_url)
    agent = agent_for(mw, "Noted: Rex.", "Noted.", context_schema=UserContext)
    agent.invoke(ask("my dog is called Rex"), context=UserContext("alice"))
    agent.invoke(ask("my cat is called Tom"), context=UserContext("bob"))
    block = SolarMemoryBlock(store=db_url, embedder="hash", top_k=1, seed=0)
    chat = [
        ChatMessage(role="user", content="I like tea"),
        ChatMessage(role="assistant", content="ok"),
    ]
    asyncio.run(block.aget(chat, session_id="s1"))
    kept = (
        {u: contents(mw.memory_for(u)) for u in ("alice", "bob")},
        contents(block.memory_for("s1")),
    )
    mw.close()
    block.close()

    again = user_middleware(db_url)
    block = SolarMemoryBlock(store=db_url, embedder="hash", top_k=1, seed=0)
    assert again.store is not None
    assert again.store.names() == ["user=alice", "user=bob", "session=s1"]
    assert (
        {u: contents(again.memory_for(u)) for u in ("alice", "bob")},
        contents(block.memory_for("s1")),
    ) == kept
    out = agent_for(again, "Rex.", context_schema=UserContext).invoke(
        ask("what is my dog called?"), context=UserContext("alice")
    )
    assert (
        "- Human: my dog is called Rex" in out["solar_memories"]
        and "Tom" not in out["solar_memories"]
    )
    again.close()
    block.close()


# -- regressions: restarts, forgets, reserved scopes, copies ---------------------------------------
TOPICS = [
    ("our API returns HTTP 429", "Back off and retry."),
    ("my dog is called Rex", "Noted: Rex."),
    ("what is the capital of France?", "Paris."),
    ("how do I sort a list in Python?", "sorted(xs)."),
    ("recommend a book about space", "Cosmos, by Carl Sagan."),
    ("the staging database is on port 5433", "Noted: 5433."),
    ("HTTP 429 again from the API", "Retry with exponential backoff."),
    ("what is my dog called?", "Rex."),
    ("which port does staging use?", "5433."),
]


def trail(memory: SolarMemory) -> tuple[Any, ...]:
    """Everything a step changes: counters and gate state, items with posteriors, decisions."""
    decisions = [(d.step, d.admitted, d.item_id, d.evicted, d.reason) for d in memory.trace()]
    return memory.stats(), contents(memory), decisions


def chat_turns(memory: Any, turns: list[tuple[str, str]], start: int) -> None:
    from llama_index.core.base.llms.types import ChatMessage

    for i, (question, answer) in enumerate(turns, start):
        memory.put(ChatMessage(role="user", content=question))
        memory.get()  # what an agent reads before calling its LLM: a recorded retrieval
        memory.put(ChatMessage(role="assistant", content=answer))
        if i % 2 and memory.recalled:
            memory.feedback(like=i % 4 == 1)


@pytest.mark.parametrize("policy", ["fifo", "solar"])
def test_chat_memory_restarted_makes_the_same_steps_as_one_that_never_stopped(
    tmp_path: Path, policy: str
) -> None:
    """A restarted SolarChatMemory over a persistent chat store (the window survives) offers
    only the turns that finish after the restart: never the old ones again (re-storing evicted
    turns, moving the gate)."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.storage.chat_store import SimpleChatStore

    def build(path: Path, chat_store: SimpleChatStore) -> Any:
        return chat_memory(path, "alice", chat_store=chat_store, capacity=3, policy=policy)

    kept = SimpleChatStore()
    steady = build(tmp_path / "steady.db", kept)
    chat_turns(steady, TOPICS, 0)
    expected = trail(steady.memory)
    assert expected[0]["steps"] == len(TOPICS) and expected[0]["evicted"] > 0
    assert expected[0]["retrievals"] > 0 and expected[0]["feedbacks"] > 0
    steady.close()

    window = SimpleChatStore()  # stands in for a persistent (Redis, SQL...) chat store
    first = build(tmp_path / "restart.db", window)
    chat_turns(first, TOPICS[:5], 0)
    first.close()
    again = build(tmp_path / "restart.db", window)  # a new process: same file, same window
    chat_turns(again, TOPICS[5:], 5)
    assert trail(again.memory) == expected
    again.close()


async def block_turns(block: Any, history: list[Any], turns: list[tuple[str, str]]) -> None:
    """What ``Memory`` does with a block: a read when each turn starts, one after its answer."""
    from llama_index.core.base.llms.types import ChatMessage

    for i, (question, answer) in enumerate(turns):
        history.append(ChatMessage(role="user", content=question))
        await block.aget(history[-5:], session_id="s")  # the short-term FIFO: two turns
        history.append(ChatMessage(role="assistant", content=answer))
        await block.aget(history[-6:], session_id="s")
        if i % 2 and block.recalled("s"):
            block.feedback(like=i % 4 == 1, session_id="s")


@pytest.mark.parametrize("policy", ["fifo", "solar"])
async def test_memory_block_restarted_makes_the_same_steps_as_one_that_never_stopped(
    tmp_path: Path, policy: str
) -> None:
    """A restarted block given the session's history (``Memory`` keeps it in its SQL store), and
    the FIFO flushing old turns to it, offers only the turns that finish after the restart."""
    pytest.importorskip("llama_index.core")
    from llamaindex_solar import SolarMemoryBlock

    def build(path: Path) -> SolarMemoryBlock:
        return SolarMemoryBlock(
            store=path,
            embedder="hash",
            top_k=1,
            seed=0,
            capacity=3,
            policy=policy,
            min_score=None,  # the hash embedder's topics are below the default floor
        )

    steady, history = build(tmp_path / "steady.db"), []  # type: ignore[var-annotated]
    await block_turns(steady, history, TOPICS[:5])
    await steady.aput(history[:4], session_id="s")  # the FIFO flushes the two oldest turns
    await block_turns(steady, history, TOPICS[5:])
    expected = trail(steady.memory_for("s"))
    assert expected[0]["steps"] == len(TOPICS) and expected[0]["evicted"] > 0
    assert expected[0]["retrievals"] > 0 and expected[0]["feedbacks"] > 0
    steady.close()

    first, history = build(tmp_path / "restart.db"), []
    await block_turns(first, history, TOPICS[:5])
    first.close()
    again = build(tmp_path / "restart.db")  # a new process; Memory kept the history
    await again.aput(history[:4], session_id="s")
    await block_turns(again, history, TOPICS[5:])
    assert trail(again.memory_for("s")) == expected
    again.close()


@pytest.mark.parametrize("where", ["here", "another process"])
def test_middleware_forgets_what_it_kept_of_an_erased_user(tmp_path: Path, where: str) -> None:
    """After ``store.erase(user=...)`` (here, or by another process on the same database) the
    middleware neither shows the erased user's recall nor rates a new memory with it."""
    path = tmp_path / "agent.db"
    store = MemoryStore(path, embedder="hash", seed=0)
    mw = SolarMemoryMiddleware(store=store, scope="user_id")
    agent = agent_for(mw, "Noted.", "1234.", context_schema=UserContext)
    agent.invoke(ask("my secret code is 1234"), context=UserContext("alice"))
    agent.invoke(ask("what is my secret code?"), context=UserContext("alice"))
    assert [h.text for h in mw.recalled("alice")] == ["Human: my secret code is 1234\nAI: Noted."]
    assert mw.last_decision("alice") is not None
    other = MemoryStore(path, embedder="hash", seed=0) if where != "here" else store
    assert other.erase(user="alice") == ["user=alice"]

    assert list(mw.recalled("alice")) == [] and mw.last_decision("alice") is None
    with pytest.raises(ValueError, match="'alice' has no memory"):
        mw.feedback(like=False, scope="alice")
    with pytest.raises(ValueError, match="'alice' has no memory"):
        mw.feedback(like=False, scope="alice", retrieval=2)
    assert store.names() == []  # rating a forgotten user does not bring her scope back

    fresh = other.scope(user="alice")  # a new account of the same name, with one retrieval
    fresh.add("Human: I like tea\nAI: ok")
    fresh.retrieve("tea")
    before = contents(fresh)
    assert list(mw.recalled("alice")) == [] and mw.last_decision("alice") is None
    with pytest.raises(ValueError, match="recalled nothing"):
        mw.feedback(like=False, scope="alice")  # the erased user's rating is not hers
    assert contents(fresh) == before
    if other is not store:
        other.close()
    store.close()


async def test_memory_block_forgets_what_it_kept_of_a_forgotten_session(tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.llms.types import ChatMessage

    from llamaindex_solar import SolarMemoryBlock

    store = MemoryStore(tmp_path / "agent.db", embedder="hash", seed=0)
    block = SolarMemoryBlock(store=store, top_k=1)
    history = [
        ChatMessage(role="user", content="my secret code is 1234"),
        ChatMessage(role="assistant", content="Noted."),
    ]
    assert await block.aget(history, session_id="s") == ""  # offers the finished turn
    history.append(ChatMessage(role="user", content="what is my secret code?"))
    assert "1234" in await block.aget(history[2:], session_id="s")  # the FIFO dropped turn 1
    block.feedback(like=True, session_id="s")
    assert [h.text for h in block.recalled("s")] == ["Human: my secret code is 1234\nAI: Noted."]
    assert block.last_decision("s") is not None
    store.forget("s")

    assert list(block.recalled("s")) == [] and block.last_decision("s") is None
    with pytest.raises(ValueError, match="has no memory here"):
        block.feedback(like=True, session_id="s")
    assert store.names() == []  # not recreated by rating it
    # the conversation goes on: its history's turns are not stored again in the new memory
    history += [ChatMessage(role="assistant", content="1234.")]
    await block.aget(history, session_id="s")
    assert [i.metadata["human"] for i in block.memory_for("s").items()] == [
        "what is my secret code?"
    ]
    store.close()


def test_reserved_scopes_never_meet_a_user_named_default(tmp_path: Path) -> None:
    """The unscoped middleware and a block without ``session_id`` each have a scope of their
    own: not a thread, a session or each other called "default"."""
    pytest.importorskip("llama_index.core")
    from llama_index.core.base.llms.types import ChatMessage

    from llamaindex_solar import SolarMemoryBlock
    from llamaindex_solar.memory_block import DEFAULT_SCOPE as BLOCK_DEFAULT

    store = MemoryStore(tmp_path / "agent.db", embedder="hash", seed=0)
    unscoped = SolarMemoryMiddleware(store=store, shared=True)
    threads = SolarMemoryMiddleware(store=store, scope="thread_id")
    block = SolarMemoryBlock(store=store, top_k=1)
    agent_for(unscoped, "Noted.").invoke(ask("unscoped secret 1"))
    agent_for(threads, "Noted.").invoke(ask("thread secret 2"), context={"thread_id": "default"})
    for session, text in [(None, "block secret 3"), ("default", "session secret 4")]:
        chat = [
            ChatMessage(role="user", content=text),
            ChatMessage(role="assistant", content="Noted."),
        ]
        asyncio.run(block.aget(chat, session_id=session))
    held = {
        key: [i.metadata["human"] for i in store.get(Scope.from_key(key)).items()]
        for key in store.names()
    }
    assert held == {
        DEFAULT_SCOPE.key: ["unscoped secret 1"],
        "session=default": ["thread secret 2", "session secret 4"],  # one session, by design
        BLOCK_DEFAULT.key: ["block secret 3"],
    }
    assert DEFAULT_SCOPE.key != BLOCK_DEFAULT.key and threads.scopes == ["default"]
    assert block.sessions == ["default"]
    store.close()


def test_chat_memory_with_a_store_needs_a_chat_store_key_of_its_own(tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llamaindex_solar import SolarChatMemory

    path = tmp_path / "agent.db"
    with pytest.raises(ValueError, match="pass chat_store_key= naming this conversation"):
        SolarChatMemory.from_defaults(store=path, embedder="hash", seed=0)
    with pytest.raises(ValueError, match="pass chat_store_key= naming this conversation"):
        SolarChatMemory.from_defaults(
            store=path, chat_store_key="chat_history", embedder="hash", seed=0
        )
    assert not path.exists()  # refused before the file was created


def test_a_copy_never_owns_the_store(tmp_path: Path) -> None:
    """Closing a copy (``model_copy``, ``copy.copy``) leaves the original's store open."""
    pytest.importorskip("llama_index.core")
    import copy

    from llama_index.core.base.llms.types import ChatMessage

    from llamaindex_solar import SolarMemoryBlock

    chat = chat_memory(tmp_path / "chat.db", "alice")
    block = SolarMemoryBlock(store=tmp_path / "block.db", embedder="hash", seed=0)
    mw = user_middleware(tmp_path / "mw.db")
    for original, twin in [
        (chat, chat.model_copy()),
        (chat, copy.copy(chat)),
        (block, block.model_copy()),
        (mw, copy.copy(mw)),
    ]:
        assert twin.store is original.store
        twin.close()
    chat.put(ChatMessage(role="user", content="hi"))
    chat.put(ChatMessage(role="assistant", content="hello"))
    assert len(chat.memory) == 1 and len(block.memory_for("s")) == 0
    assert len(mw.memory_for("alice")) == 0
    for original in (chat, block, mw):
        original.close()  # the original owns its store: closing it closes the store
    with pytest.raises(PersistenceError, match="closed"):
        chat.memory.items()
    with pytest.raises(PersistenceError, match="closed"):
        block.memory_for("s")


# -- scope parts of your own, through both frameworks ---------------------------------------------
def test_middleware_keys_a_part_of_your_own(tmp_path: Path) -> None:
    """``scope="team_id", store_part="team"``: one memory per team, ``store.scope(team=...)``,
    recalled by a real agent run and found again by a new middleware."""
    path = tmp_path / "agent.db"
    mw = user_middleware(path, scope="team_id", store_part="team")
    agent = agent_for(mw, "Noted.", "Refunds take five days.")
    agent.invoke(ask("remember: refunds take five days"), context={"team_id": "billing"})
    assert mw.store is not None and mw.store.names() == ["team=billing"]
    mw.close()
    again = user_middleware(path, scope="team_id", store_part="team")
    recorder = PromptRecorder()
    agent = agent_for(again, "Five days.")
    agent.invoke(
        ask("how long do refunds take?"), {"callbacks": [recorder]}, context={"team_id": "billing"}
    )
    assert "refunds take five days" in recorder.text()
    store = MemoryStore(path, embedder="hash")
    assert [i.text for i in store.scope(team="billing").items()] == [
        i.text for i in again.memory_for("billing").items()
    ]
    store.close()
    again.close()
    with pytest.raises(ValueError, match="lowercase letters"):
        user_middleware(path, scope="team_id", store_part="Team")
    with pytest.raises(ValueError, match="with store= and scope="):
        SolarMemoryMiddleware(scope="team_id", store_part="team", embedder="hash")


async def test_memory_block_keys_a_part_of_your_own(tmp_path: Path) -> None:
    pytest.importorskip("llama_index.core")
    from llama_index.core.memory import Memory

    from llamaindex_solar import SolarChatMemory, SolarMemoryBlock

    path = tmp_path / "agent.db"
    block = SolarMemoryBlock(store=path, embedder="hash", top_k=1, seed=0, store_part="team")
    memory = Memory.from_defaults(
        session_id="billing",
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[block],
    )
    await converse(memory, [("refunds take five days", "Noted."), *FILLER])
    assert block.store is not None and block.store.names() == ["team=billing"]
    block.close()
    # a chat memory over a memory of one team and user, opened by hand
    store = MemoryStore(path, embedder="hash")
    chat = SolarChatMemory.from_defaults(memory=store.scope(team="billing", user="ann"))
    await converse(chat, [("I am Ann from billing", "Hello Ann.")])
    assert sorted(store.names(team="billing")) == ["team=billing", "user=ann&team=billing"]
    store.close()
