"""The chat adapters and the store share one shape: ``recalled(...)`` is a call on every chat
adapter, one scope's memory is ``memory_for(...)``, every adapter has ``forget`` and ``close``,
the single-conversation ones take ``store=`` plus their scope as the others do, and the building
parameters (``policy``, ``capacity``, ``embedder``, ``seed``, ...) are in every constructor's
signature, for IDEs and type checkers. Driven as users drive them: real chains and agents with
the frameworks' fake models."""

from __future__ import annotations

import asyncio
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_classic")
pytest.importorskip("langchain")
pytest.importorskip("llama_index.core")

from langchain.agents import create_agent  # noqa: E402
from langchain_classic.chains import ConversationChain  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402

from langchain_solar import (  # noqa: E402
    SolarConversationMemory,
    SolarMemoryMiddleware,
    SolarRetriever,
    SolarStore,
)
from llamaindex_solar import SolarChatMemory, SolarMemoryBlock  # noqa: E402
from llamaindex_solar import SolarRetriever as IndexRetriever  # noqa: E402
from solar_core import CHAT_POLICY, Hits  # noqa: E402
from solar_core.integrations.params import BUILD_DEFAULTS, EXTRACT_DEFAULTS  # noqa: E402
from solar_core.persistence import MemoryStore, PersistenceError, Scope  # noqa: E402
from solar_core.persistence.scope import namespace_scope  # noqa: E402
from tests.support.langchain_agents import UserContext, ask, model  # noqa: E402
from tests.support.llamaindex_fakes import block_memory, scripted_llm  # noqa: E402

# The classic chains warn on construction (deprecated upstream): the adapter serves code that
# still uses them.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ROOT = Path(__file__).resolve().parents[2]
REX = ("my dog is called Rex", "Noted: Rex.")
FILLER = [
    ("what is the capital of France?", "Paris."),
    ("how do I sort a list in Python?", "sorted(xs), or xs.sort() in place."),
    ("recommend a book about space", "Cosmos, by Carl Sagan."),
]
QUESTION = ("what is my dog called?", "Rex.")
TURNS = [REX, *FILLER, QUESTION]


# -- driving each chat adapter through its framework ------------------------------------------
def chain_talk(memory: SolarConversationMemory, turns: list[tuple[str, str]]) -> None:
    chain = ConversationChain(llm=FakeListChatModel(responses=[a for _, a in turns]), memory=memory)
    for question, _ in turns:
        chain.invoke({"input": question})


def agent_talk(mw: SolarMemoryMiddleware, user: str, turns: list[tuple[str, str]]) -> None:
    agent = create_agent(
        model(*(AIMessage(a) for _, a in turns)), middleware=[mw], context_schema=UserContext
    )
    for question, _ in turns:
        agent.invoke(ask(question), context=UserContext(user))


def index_agent_talk(memory: SolarChatMemory | Memory, turns: list[tuple[str, str]]) -> None:
    llm, _ = scripted_llm([a for _, a in turns])
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are an agent.")

    async def run() -> None:
        for question, _ in turns:
            await agent.run(user_msg=question, memory=memory)

    asyncio.run(run())


def chat_memory(**kwargs: Any) -> SolarChatMemory:
    """A window too small for the whole conversation: the first turn must be recalled."""
    params: dict[str, Any] = {"token_limit": 64, "recall_token_ratio": 0.5, "top_k": 1}
    if not isinstance(kwargs.get("store"), MemoryStore):  # a store's settings are its own
        params["embedder"] = "hash"
    return SolarChatMemory.from_defaults(**{**params, **kwargs})


def humans(found: Iterable[Any]) -> list[str]:
    """The human side of recalled hits or stored items (turns)."""
    return [each.metadata["human"] for each in found]


# -- recalled(...) is a call on every chat adapter ---------------------------------------------
def test_recalled_is_a_call_on_every_chat_adapter() -> None:
    """The same spelling everywhere: ``recalled()`` on the single-conversation adapters,
    ``recalled(scope)`` / ``recalled(session_id)`` on the ones serving many."""
    conversation = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
    chain_talk(conversation, TURNS)
    middleware = SolarMemoryMiddleware(embedder="hash", seed=0, scope="user_id", top_k=1)
    agent_talk(middleware, "alice", TURNS)
    chat = chat_memory(seed=0)
    index_agent_talk(chat, TURNS)
    block = SolarMemoryBlock(embedder="hash", top_k=1, seed=0)
    index_agent_talk(block_memory(block, "alice"), TURNS)

    recalls = {
        "SolarConversationMemory": conversation.recalled(),
        "SolarMemoryMiddleware": middleware.recalled("alice"),
        "SolarChatMemory": chat.recalled(),
        "SolarMemoryBlock": block.recalled("alice"),
    }
    for name, hits in recalls.items():
        assert isinstance(hits, Hits), name
        assert humans(hits) == [REX[0]], name
        assert hits.retrieval_id is not None, name
    # the call's hits rate that recall, as every adapter's feedback(recall=...) takes them
    conversation.feedback(like=True, recall=conversation.recalled())
    chat.feedback(like=True, recall=chat.recalled())
    middleware.feedback(like=True, scope="alice", recall=middleware.recalled("alice"))
    block.feedback(like=True, session_id="alice", recall=block.recalled("alice"))


def test_recalled_read_without_the_call_still_gives_the_hits() -> None:
    """The property's earlier spelling keeps working on the single-conversation adapters."""
    conversation = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
    chain_talk(conversation, TURNS)
    read = conversation.recalled
    assert humans(read) == [REX[0]] and read.retrieval_id == conversation.recalled().retrieval_id
    assert read() is read  # kept from a turn, it is still what recalled() was then
    chat = chat_memory(seed=0)
    index_agent_talk(chat, TURNS)
    assert humans(chat.recalled) == humans(chat.recalled()) == [REX[0]]
    # before any turn: nothing, either way
    fresh = SolarConversationMemory(embedder="hash")
    assert fresh.recalled == fresh.recalled() == [] and fresh.recalled().retrieval_id is None


# -- memory_for(...) on the store too --------------------------------------------------------
def test_the_store_names_one_namespace_memory_memory_for() -> None:
    store = SolarStore(index={"dims": 16, "embed": DeterministicFakeEmbedding(size=16)})
    store.put(("users", "alice"), "tea", {"text": "green tea"})
    alice = store.memory_for(("users", "alice"))
    assert alice is not None and [item.id for item in alice.items()] == ["tea"]
    assert store.memory_for(["users", "alice"]) is alice  # any sequence of labels
    assert store.memory(("users", "alice")) is alice  # the earlier name
    assert store.memory_for(("users", "bob")) is None  # a read never creates a namespace
    assert store.list_namespaces() == [("users", "alice")]
    with pytest.raises(ValueError, match="a namespace is a tuple of str labels"):
        store.memory_for("alice")  # type: ignore[arg-type]
    store.close()


# -- forget and close on every adapter ---------------------------------------------------------
def stored_items(path: Path, scope: Scope) -> int | None:
    """How many items ``scope`` holds in the database at ``path`` (``None``: no such scope)."""
    with MemoryStore(path, embedder="hash") as store:
        memory = store.existing(scope)
        return None if memory is None else len(memory)


ALICE_USER = Scope(user="alice")
ALICE_SESSION = Scope(session="alice")


def conversation_case(path: Path) -> tuple[Any, Callable[[], None], Scope]:
    memory = SolarConversationMemory(store=path, scope={"user": "alice"}, k=1, embedder="hash")
    chain_talk(memory, TURNS)
    return memory, memory.forget, ALICE_USER


def middleware_case(path: Path) -> tuple[Any, Callable[[], None], Scope]:
    mw = SolarMemoryMiddleware(store=path, scope="user_id", embedder="hash", top_k=1)
    agent_talk(mw, "alice", TURNS)
    return mw, lambda: mw.forget("alice"), ALICE_USER


def chat_case(path: Path) -> tuple[Any, Callable[[], None], Scope]:
    memory = chat_memory(store=path, session_id="alice")
    index_agent_talk(memory, TURNS)
    return memory, memory.forget, ALICE_SESSION


def block_case(path: Path) -> tuple[Any, Callable[[], None], Scope]:
    block = SolarMemoryBlock(store=path, embedder="hash", top_k=1)
    index_agent_talk(block_memory(block, "alice"), TURNS)
    return block, lambda: block.forget("alice"), ALICE_SESSION


def store_case(path: Path) -> tuple[Any, Callable[[], None], Scope]:
    store = SolarStore(path, embedder="hash")
    agent = create_agent(model(AIMessage("Noted.")), store=store)
    agent.invoke(ask("hello"))
    for key, text in [("dog", "my dog is called Rex"), ("city", "I live in Paris")]:
        store.put(("users", "alice"), key, {"text": text})
    return store, lambda: store.forget(("users", "alice")), namespace_scope(("users", "alice"))


CASES = {
    "SolarConversationMemory": conversation_case,
    "SolarMemoryMiddleware": middleware_case,
    "SolarChatMemory": chat_case,
    "SolarMemoryBlock": block_case,
    "SolarStore": store_case,
}


@pytest.mark.parametrize("name", CASES)
def test_forget_deletes_the_scopes_memories_and_close_releases_the_store(
    name: str, tmp_path: Path
) -> None:
    """``forget`` deletes what the adapter's scope (the named one on the multi-scope adapters)
    holds, in the database too; ``close`` closes the store the adapter opened from a path, and
    a second ``close`` does nothing."""
    path = tmp_path / "memory.db"
    adapter, forget, scope = CASES[name](path)
    store = adapter.store
    assert isinstance(store, MemoryStore) and len(store.get(scope)) > 0
    forget()
    assert not store.get(scope).items()  # the adapter's memory of the scope is empty ...
    adapter.close()
    with pytest.raises(PersistenceError, match="closed"):
        store.scope(user="bob")
    adapter.close()  # safe to call twice
    assert stored_items(path, scope) in (None, 0)  # ... and so is the database


@pytest.mark.parametrize(
    "build",
    [
        lambda store: SolarConversationMemory(store=store, scope="s1"),
        lambda store: SolarMemoryMiddleware(store=store, scope="user_id"),
        lambda store: SolarChatMemory.from_defaults(store=store, session_id="s1"),
        lambda store: SolarMemoryBlock(store=store),
        lambda store: SolarStore(store),
    ],
    ids=list(CASES),
)
def test_close_leaves_a_store_it_was_given_open(build: Callable[[MemoryStore], Any]) -> None:
    with MemoryStore(":memory:", embedder="hash") as store:
        adapter = build(store)
        adapter.close()
        adapter.close()
        assert len(store.scope(user="bob")) == 0  # still open: its owner closes it


def test_close_is_a_no_op_where_nothing_was_opened() -> None:
    conversation = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
    chain_talk(conversation, [REX])
    conversation.close()
    conversation.close()
    chain_talk(conversation, [QUESTION])  # still works: there was nothing to release
    assert len(conversation.memory) == 2
    chat = chat_memory(seed=0)
    chat.close()
    index_agent_talk(chat, [REX])
    assert len(chat.memory) == 1


def test_forget_keeps_the_conversation_and_clear_reset_keep_the_frameworks_meaning() -> None:
    """``forget()`` empties the SOLAR memory only; LangChain's ``clear()`` also empties the
    conversation, LlamaIndex's ``reset()`` only the conversation."""
    conversation = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
    chain_talk(conversation, [REX, *FILLER])
    conversation.forget()
    assert len(conversation.memory) == 0 and conversation.recalled() == []
    assert len(conversation.chat_memory.messages) == 8  # the conversation stays
    chain_talk(conversation, [QUESTION])  # earlier turns are not offered again
    assert humans(conversation.memory.items()) == [QUESTION[0]]
    conversation.clear()
    assert len(conversation.memory) == 0 and conversation.chat_memory.messages == []

    chat = chat_memory(seed=0)
    index_agent_talk(chat, [REX, *FILLER])
    chat.reset()
    assert chat.get_all() == [] and len(chat.memory) == 4  # a new conversation, same memory
    chat.forget()
    assert len(chat.memory) == 0


# -- store= plus the scope, on the single-conversation adapters --------------------------------
def test_conversation_memory_takes_a_store_and_a_scope(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    first = SolarConversationMemory(
        store=path, scope={"user": "alice"}, k=1, top_k=1, embedder="hash"
    )
    assert first.policy == CHAT_POLICY and first.store is not None
    chain_talk(first, [REX, *FILLER])
    first.close()
    # the memory the middleware keeps for the same user of the same database
    mw = SolarMemoryMiddleware(store=path, scope="user_id", embedder="hash")
    assert humans(mw.memory_for("alice").items())[0] == REX[0]
    mw.close()
    later = SolarConversationMemory(
        store=path, scope={"user": "alice"}, k=1, top_k=1, embedder="hash"
    )
    chain_talk(later, [QUESTION])  # a new process, say: the old turn is recalled
    assert humans(later.recalled()) == [REX[0]]
    later.close()
    # a str is a session id, as in every call of a store
    with MemoryStore(path, embedder="hash") as store:
        thread = SolarConversationMemory(store=store, scope="thread-1", k=1)
        chain_talk(thread, [REX])
        assert thread.memory is store.scope(session="thread-1")
        assert sorted(store.names()) == ["session=thread-1", "user=alice"]
        same = SolarConversationMemory(memory=store.scope(session="thread-1"), k=1)
        assert same.memory is thread.memory  # memory= still works


def test_chat_memory_takes_a_store_and_a_session_id() -> None:
    with MemoryStore(":memory:", embedder="hash") as store:
        chat = chat_memory(store=store, session_id="alice")
        index_agent_talk(chat, [REX, *FILLER])
        # the memory the block keeps for the same session of the same store
        block = SolarMemoryBlock(store=store)
        assert block.memory_for("alice") is chat.memory
        assert humans(chat.memory.items())[0] == REX[0]
        per_user = chat_memory(store=store, session_id="alice", store_part="user")
        assert per_user.memory is store.scope(user="alice")
        keyed = chat_memory(store=store, chat_store_key="alice")  # the earlier form
        assert keyed.memory is chat.memory


@pytest.mark.parametrize(
    ("build", "scope"),
    [
        (lambda **kw: SolarConversationMemory(**kw), "scope"),
        (lambda **kw: SolarChatMemory.from_defaults(**kw), "session_id"),
        (lambda **kw: SolarChatMemory(token_limit=100, **kw), "session_id"),
    ],
    ids=["SolarConversationMemory", "SolarChatMemory.from_defaults", "SolarChatMemory"],
)
def test_memory_and_store_together_are_refused_naming_the_fix(
    build: Callable[..., Any], scope: str
) -> None:
    with MemoryStore(":memory:", embedder="hash") as store:
        memory = store.scope(user="alice")
        assert build(memory=memory).memory is memory  # each alone is fine
        with pytest.raises(
            ValueError,
            match=rf"memory= or store=, not both: memory= a ready .*, or store= with {scope}=",
        ):
            build(memory=memory, store=store, **{scope: "alice"})
        with pytest.raises(ValueError, match=rf"with store=, pass {scope}= naming"):
            build(store=store)
        with pytest.raises(ValueError, match=rf"{scope}= .*pass store= too"):
            build(**{scope: "alice"})
        assert store.names() == []  # nothing was stored by a refused call


# -- the building parameters are in every constructor's signature -------------------------------
BUILDERS: dict[str, Callable[..., Any]] = {
    "langchain_solar.SolarConversationMemory": SolarConversationMemory,
    "langchain_solar.SolarRetriever": SolarRetriever,
    "langchain_solar.SolarMemoryMiddleware": SolarMemoryMiddleware,
    "langchain_solar.SolarStore": SolarStore,
    "llamaindex_solar.SolarChatMemory": SolarChatMemory,
    "llamaindex_solar.SolarChatMemory.from_defaults": SolarChatMemory.from_defaults,
    "llamaindex_solar.SolarRetriever": IndexRetriever,
    "llamaindex_solar.SolarMemoryBlock": SolarMemoryBlock,
}
TYPES = {"policy": "str | None", "capacity": "int | None", "seed": "int | None"}


@pytest.mark.parametrize("name", BUILDERS)
def test_the_building_parameters_are_in_the_signature(name: str) -> None:
    parameters = inspect.signature(BUILDERS[name]).parameters
    for param, annotation in TYPES.items():
        assert param in parameters, f"{name} has no {param} in its signature"
        assert parameters[param].kind == inspect.Parameter.KEYWORD_ONLY, (name, param)
        assert str(parameters[param].annotation) == annotation, (name, param)
    assert "embedder" in parameters
    if name != "langchain_solar.SolarStore":  # a listing: its own retrieval and floor defaults
        for param, default in BUILD_DEFAULTS.items():
            assert parameters[param].default == default, (name, param)
    # the chat adapters read turns: an extractor turns them into facts (the others store
    # what they are given)
    extracts = name not in ("langchain_solar.SolarRetriever", "llamaindex_solar.SolarRetriever")
    extracts = extracts and name != "langchain_solar.SolarStore"
    for param, default in EXTRACT_DEFAULTS.items():
        assert (param in parameters) == extracts, (name, param)
        if extracts:
            assert parameters[param].kind == inspect.Parameter.KEYWORD_ONLY, (name, param)
            assert parameters[param].default == default, (name, param)
    if extracts:
        assert str(parameters["extract"].annotation) == "str", name


SNIPPET = """
from langchain_solar import (
    SolarConversationMemory, SolarMemoryMiddleware, SolarRetriever, SolarStore,
)
from llamaindex_solar import SolarChatMemory, SolarMemoryBlock
from llamaindex_solar import SolarRetriever as IndexRetriever
from solar_core import Hits, SolarMemory


def correct(memory: SolarMemory) -> None:
    SolarConversationMemory(k=2, top_k=1, capacity=100, policy="fifo", embedder="hash", seed=0)
    SolarConversationMemory(memory=memory, k=2)
    SolarConversationMemory(store="chat.db", scope={"user": "alice"}, capacity=None)
    SolarRetriever(k=1, capacity=100, policy="fifo", embedder="hash", seed=0)
    SolarChatMemory(token_limit=100, capacity=100, policy="fifo", embedder="hash", seed=0)
    SolarChatMemory.from_defaults(token_limit=100, capacity=100, seed=0, session_id="a")
    IndexRetriever(similarity_top_k=1, capacity=100, policy="fifo", embedder="hash", seed=0)
    SolarMemoryMiddleware(scope="user_id", capacity=100, policy="fifo", seed=0)
    SolarMemoryBlock(top_k=1, capacity=100, policy="fifo", embedder="hash", seed=0)
    SolarConversationMemory(extractor=lambda text: [], extract="instead")
    SolarMemoryMiddleware(scope="user_id", extractor=lambda text: [], extract="beside")
    SolarChatMemory(token_limit=100, extractor=lambda text: [], extract="instead")
    SolarChatMemory.from_defaults(extractor=lambda text: [], extract="instead")
    SolarMemoryBlock(extractor=lambda text: [], extract="instead")
    store = SolarStore(capacity=100, policy="fifo", embedder="hash", seed=0)
    found: SolarMemory | None = store.memory_for(("users", "alice"))
    hits: Hits = SolarConversationMemory().recalled()
    more: Hits = SolarChatMemory.from_defaults().recalled()


def wrong() -> None:
    SolarConversationMemory(capacity="x")  # wrong
    SolarConversationMemory(seed="0")  # wrong
    SolarConversationMemory(scope=1)  # wrong
    SolarRetriever(capacity="x")  # wrong
    SolarChatMemory(token_limit=100, capacity="x")  # wrong
    SolarChatMemory.from_defaults(capacity="x")  # wrong
    SolarChatMemory.from_defaults(session_id=1)  # wrong
    IndexRetriever(capacity="x")  # wrong
    SolarMemoryMiddleware(capacity="x")  # wrong
    SolarMemoryBlock(capacity="x")  # wrong
    SolarStore(capacity="x")  # wrong
    SolarConversationMemory(extract=1)  # wrong
    SolarMemoryMiddleware(scope="user_id", extract=None)  # wrong
    SolarChatMemory(token_limit=100, extract=1)  # wrong
    SolarChatMemory.from_defaults(extract=1)  # wrong
    SolarMemoryBlock(extract=True)  # wrong
    IndexRetriever(extractor=lambda text: [])  # wrong
"""


def test_type_checkers_see_the_building_parameters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One mypy run over every adapter's constructor, with the project's configuration: a
    building parameter of the wrong type is an error, correct calls are none. (It reuses the
    project's mypy cache, which ``make lint`` fills: a second of checking then.)"""
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "adapter_constructors.py"
    snippet.write_text(textwrap.dedent(SNIPPET), encoding="utf-8")
    monkeypatch.chdir(ROOT)  # this checkout's packages, not an installed copy
    out, err, _ = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "--no-error-summary",
            "--hide-error-context",
            str(snippet),
        ]
    )
    lines = snippet.read_text(encoding="utf-8").splitlines()
    wanted = {i for i, line in enumerate(lines, 1) if line.endswith("# wrong")}
    reported = {int(n) for n in re.findall(rf"{snippet.name}:(\d+): error:", out)}
    assert not err, err
    assert reported == wanted, out
