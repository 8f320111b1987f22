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
from lc_fakes import PromptRecorder, ToolCallingFakeModel  # noqa: E402

from langchain_solar import SolarMemoryMiddleware  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from solar_core.persistence import MemoryStore, PersistenceError  # noqa: E402


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
    assert before["alice"][secret][1]["alpha"] == 4.0  # prior 2 + retrieved + liked
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
    mw = user_middleware(path, feedback_tool=True)
    agent = agent_for(mw, "Noted: Rex.", "Rex.", context_schema=UserContext)
    agent.invoke(ask("my dog is called Rex"), context=UserContext("alice"))
    out = agent.invoke(ask("what is my dog called?"), context=UserContext("alice"))
    (hit,) = [h for h in mw.recalled("alice") if "is called Rex" in h.text]
    before = mw.memory_for("alice").get(hit.id).policy
    mw.close()

    again = user_middleware(path)
    with pytest.raises(ValueError, match="nothing to rate"):
        again.feedback(like=False, scope="alice")  # this process has recalled nothing yet
    again.feedback(like=False, scope="alice", retrieval=out["solar_retrieval"])
    after = again.memory_for("alice").get(hit.id).policy
    assert (after["alpha"], after["beta"]) == (before["alpha"], before["beta"] + 1)
    again.close()
    third = user_middleware(path)
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


def test_unscoped_middleware_uses_the_default_session(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    mw = SolarMemoryMiddleware(store=path, embedder="hash", seed=0)
    agent_for(mw, "Noted: Rex.").invoke(ask("my dog is called Rex"))
    assert mw.store is not None and mw.store.names() == ["session=default"]
    assert mw.scopes == [] and len(mw.memory_for()) == 1
    mw.close()
    again = SolarMemoryMiddleware(store=path, embedder="hash", seed=0)
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
        SolarMemoryMiddleware(store=42, embedder="hash")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown policy"):
        SolarMemoryMiddleware(store=path, policy="mru", embedder="hash")
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
    assert again.memory.get(doc.id).policy["alpha"] == 5.0  # 2 + retrieved + liked + retrieved
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
    from li_fakes import scripted_llm
    from llama_index.core.agent.workflow import FunctionAgent

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
    from li_fakes import as_text

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
    assert later.memory.get(hit.id).policy["alpha"] == kept[hit.id][1]["alpha"] + 2
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
    from li_fakes import as_text
    from llama_index.core.memory import Memory

    from llamaindex_solar import SolarMemoryBlock

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
    assert again.memory_for("s1").get(hit.id).policy["alpha"] == 4.0  # 2 + retrieved + liked
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
