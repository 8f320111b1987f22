"""Facts that stay current, through the adapters: a chat adapter's ``extractor=`` reads each
turn it offers and stores the facts it names with their keys (beside the turn, or instead of
it), a newer fact supersedes the older one and a recall shows the current value; a failed
extraction still stores the turn and says why. A ``"key"`` in the metadata a retriever is given
makes a keyed fact; the LangGraph store keeps LangGraph's meaning of a key (an item's id).
Driven as users drive them: real chains and agents with the frameworks' fake models."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_classic")
pytest.importorskip("langchain")
pytest.importorskip("llama_index.core")

from langchain.agents import create_agent  # noqa: E402
from langchain_classic.chains import ConversationChain  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, SystemMessage  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.base.llms.types import (  # noqa: E402
    CompletionResponse,
)
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.schema import TextNode  # noqa: E402

from langchain_solar import (  # noqa: E402
    SolarConversationMemory,
    SolarMemoryMiddleware,
    SolarRetriever,
    SolarStore,
)
from llamaindex_solar import SolarChatMemory, SolarMemoryBlock  # noqa: E402
from llamaindex_solar import SolarRetriever as IndexRetriever  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from solar_core.persistence import MemoryStore  # noqa: E402
from tests.support.langchain_agents import UserContext, ask, model  # noqa: E402
from tests.support.langchain_fakes import PromptRecorder  # noqa: E402
from tests.support.llamaindex_fakes import (  # noqa: E402
    ScriptedLLM,
    as_text,
    block_memory,
    scripted_llm,
)

# The classic chains warn on construction (deprecated upstream): the adapter serves code that
# still uses them.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

PARIS = ("The user lives in Paris", "user/home")
LYON = ("The user lives in Lyon", "user/home")
TEA = ("The user drinks green tea", "user/drink")
#: a conversation, each turn with what the extractor answers for it
TALK = [
    ("We moved to Paris last month", "Congratulations!", [PARIS]),
    ("what is 2 + 2?", "4", []),
    ("We left Paris for Lyon", "Lovely city.", [LYON]),
]
QUESTION = ("which city does the user live in?", "Lyon.", [])
HOME = "which city does the user live in"


def answer(facts: list[tuple[str, str]]) -> str:
    """An extractor model's answer: the JSON list the extraction prompt asks for."""
    return json.dumps([{"fact": text, "key": key} for text, key in facts])


def answers(turns: list[tuple[str, str, list[tuple[str, str]]]]) -> list[str]:
    return [answer(facts) for _, _, facts in turns]


def chat_extractor(turns: list[tuple[str, str, list[tuple[str, str]]]]) -> FakeListChatModel:
    """A LangChain chat model as the extractor: one fixed answer per turn, in turn."""
    return FakeListChatModel(responses=answers(turns))


class DownLLM(ScriptedLLM):
    """A LlamaIndex LLM whose service is down."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise ConnectionError("the model is down")


def index_extractor(turns: list[tuple[str, str, list[tuple[str, str]]]]) -> ScriptedLLM:
    return ScriptedLLM(answers=answers(turns))


def down(prompt: Any) -> str:
    raise ConnectionError("the model is down")


def current_facts(memory: SolarMemory) -> list[tuple[str, str | None]]:
    """The memory's current facts (keyed items not superseded), oldest first."""
    return [
        (i.text, i.key) for i in memory.items() if i.key is not None and i.superseded_at is None
    ]


def every_fact(memory: SolarMemory) -> list[tuple[str, str | None, bool]]:
    """Every fact the memory holds, superseded too: ``(text, key, superseded)``."""
    every = memory.items(include_superseded=True)
    return [(i.text, i.key, i.superseded_at is not None) for i in every if i.key]


def turns_stored(memory: SolarMemory) -> list[str]:
    return [i.text for i in memory.items() if i.key is None]


def check_facts_stay_current(memory: SolarMemory) -> None:
    """After :data:`TALK`: the Lyon fact superseded the Paris one, which stays readable."""
    assert current_facts(memory) == [LYON]
    assert every_fact(memory) == [(*LYON, False), (*PARIS, True)]
    found = memory.retrieve(HOME, filter={"key": "user/home"}, record=False)
    assert [hit.text for hit in found] == [LYON[0]]
    history = memory.retrieve(HOME, filter={"key": "user/home"}, include_superseded=True)
    assert sorted(hit.text for hit in history) == sorted([PARIS[0], LYON[0]])


# -- LangChain: SolarConversationMemory in a ConversationChain and an LCEL chain ---------------
def chain_talk(memory: SolarConversationMemory, turns: list[tuple[str, str, Any]]) -> None:
    chain = ConversationChain(
        llm=FakeListChatModel(responses=[a for _, a, _ in turns]), memory=memory
    )
    for question, _, _ in turns:
        chain.invoke({"input": question})


def test_a_conversation_chain_keeps_the_current_fact_and_recalls_it() -> None:
    extractor = chat_extractor([*TALK, QUESTION])
    recorder = PromptRecorder()
    extractor.callbacks = [recorder]
    memory = SolarConversationMemory(k=1, top_k=2, embedder="hash", seed=0, extractor=extractor)
    chain_talk(memory, TALK)
    check_facts_stay_current(memory.memory)
    # beside: every turn is stored too, and the extractor read each as the chain stored it
    assert turns_stored(memory.memory) == [f"Human: {q}\nAI: {a}" for q, a, _ in TALK]
    assert "Exchange:\nHuman: We moved to Paris last month\nAI: Congratulations!\nAnswer:" in (
        recorder.text(0)
    )
    decision = memory.last_decision
    assert decision is not None and decision.extraction is not None
    assert decision.extraction.startswith("facts: ")
    # the next question recalls the current fact, shown as its own line (not as its turn)
    history = memory.load_memory_variables({"input": HOME})["history"]
    lines = history.splitlines()
    assert LYON[0] in lines and PARIS[0] not in history
    assert LYON[0] in [hit.text for hit in memory.recalled()]


def test_an_lcel_chain_gets_recalled_facts_as_notes() -> None:
    memory = SolarConversationMemory(
        k=1,
        top_k=2,
        embedder="hash",
        seed=0,
        return_messages=True,
        extractor=chat_extractor([*TALK, QUESTION]),
    )
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are helpful."), MessagesPlaceholder("history"), ("human", "{input}")]
    )
    llm = FakeListChatModel(responses=[a for _, a, _ in [*TALK, QUESTION]])
    chain = prompt | llm | StrOutputParser()
    seen: list[Any] = []
    for question, _, _ in [*TALK, QUESTION]:
        inputs = {"input": question}
        history = memory.load_memory_variables(inputs)["history"]
        seen.append(history)
        reply = chain.invoke({**inputs, "history": history})
        memory.save_context(inputs, {"output": reply})
    notes = [m.text for m in seen[-1] if isinstance(m, SystemMessage)]
    assert notes == [LYON[0]]  # the current fact, as a note; the window's turn as messages
    check_facts_stay_current(memory.memory)


def test_a_failing_extractor_stores_the_turn_and_says_why() -> None:
    broken = RunnableLambda(down)  # a LangChain runnable: asked through invoke
    memory = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0, extractor=broken)
    chain_talk(memory, TALK[:1])
    assert turns_stored(memory.memory) == [
        "Human: We moved to Paris last month\nAI: Congratulations!"
    ]
    decision = memory.last_decision
    assert decision is not None and decision.admitted
    why = "failed: the extractor raised ConnectionError: the model is down; the text was offered"
    assert decision.extraction == why
    assert memory.memory.trace()[-1].extraction == why


def test_a_model_answer_that_is_no_list_of_facts_stores_the_turn() -> None:
    memory = SolarConversationMemory(
        embedder="hash", seed=0, extractor=FakeListChatModel(responses=["I think they moved."])
    )
    chain_talk(memory, TALK[:1])
    assert len(turns_stored(memory.memory)) == 1 and current_facts(memory.memory) == []
    assert "not a JSON list" in (memory.memory.trace()[-1].extraction or "")


def test_instead_keeps_only_the_facts_and_the_window_still_has_the_turns() -> None:
    memory = SolarConversationMemory(
        k=1, top_k=2, embedder="hash", seed=0, extractor=chat_extractor(TALK), extract="instead"
    )
    chain_talk(memory, TALK)
    assert turns_stored(memory.memory) == []  # only facts; small talk stored nothing
    check_facts_stay_current(memory.memory)
    assert len(memory.chat_memory.messages) == 6  # the conversation is the window's, as ever
    assert memory.load_memory_variables({"input": HOME})["history"].splitlines()[0] == LYON[0]


# -- LangChain: SolarMemoryMiddleware in create_agent agents -------------------------------------
def agent_talk(
    mw: SolarMemoryMiddleware, user: str, turns: list[tuple[str, str, Any]], **config: Any
) -> dict[str, Any]:
    agent = create_agent(
        model(*(AIMessage(a) for _, a, _ in turns)),
        middleware=[mw],
        context_schema=UserContext,
        system_prompt="You are helpful.",
    )
    out: dict[str, Any] = {}
    for question, _, _ in turns:
        out = agent.invoke(ask(question), config or None, context=UserContext(user))
    return out


def test_an_agent_keeps_each_users_current_facts() -> None:
    bob_talk = [("I live in Oslo", "Nice.", [("The user lives in Oslo", "user/home")])]
    extractor = chat_extractor([*TALK, *bob_talk, QUESTION])
    mw = SolarMemoryMiddleware(
        scope="user_id", embedder="hash", seed=0, top_k=2, extractor=extractor
    )
    agent_talk(mw, "alice", TALK)
    agent_talk(mw, "bob", bob_talk)
    check_facts_stay_current(mw.memory_for("alice"))
    assert current_facts(mw.memory_for("bob")) == [("The user lives in Oslo", "user/home")]
    recorder = PromptRecorder()
    out = agent_talk(mw, "alice", [QUESTION], callbacks=[recorder])
    assert "- The user lives in Lyon" in out["solar_memories"]
    assert PARIS[0] not in out["solar_memories"] and "Oslo" not in out["solar_memories"]
    agent_prompt = next(p for p in recorder.prompts if p[0].text.startswith("You are helpful."))
    assert "- The user lives in Lyon" in agent_prompt[0].text  # what the model was shown
    decision = mw.last_decision("alice")
    assert decision is not None and decision.extraction == "no facts"


async def test_an_async_agent_keeps_the_current_fact() -> None:
    mw = SolarMemoryMiddleware(
        scope="user_id",
        embedder="hash",
        seed=0,
        top_k=2,
        extractor=chat_extractor([*TALK, QUESTION]),
    )
    agent = create_agent(
        model(*(AIMessage(a) for _, a, _ in [*TALK, QUESTION])),
        middleware=[mw],
        context_schema=UserContext,
    )
    out: dict[str, Any] = {}
    for question, _, _ in [*TALK, QUESTION]:
        out = await agent.ainvoke(ask(question), context=UserContext("alice"))
    assert "- The user lives in Lyon" in out["solar_memories"]
    assert PARIS[0] not in out["solar_memories"]
    check_facts_stay_current(mw.memory_for("alice"))


def test_an_agents_failed_extraction_stores_the_turn_and_says_why() -> None:
    mw = SolarMemoryMiddleware(shared=True, embedder="hash", seed=0, extractor=down)
    agent_talk(mw, "alice", TALK[:1])
    decision = mw.last_decision()
    assert decision is not None and decision.admitted
    assert (decision.extraction or "").startswith("failed: the extractor raised ConnectionError")
    assert mw.memory_for().trace()[-1].extraction == decision.extraction
    assert turns_stored(mw.memory_for()) == [
        "Human: We moved to Paris last month\nAI: Congratulations!"
    ]


def test_an_agent_with_instead_keeps_facts_and_records_no_fact_as_its_turn() -> None:
    mw = SolarMemoryMiddleware(
        scope="user_id", embedder="hash", seed=0, extractor=chat_extractor(TALK), extract="instead"
    )
    out = agent_talk(mw, "alice", TALK)
    memory = mw.memory_for("alice")
    assert turns_stored(memory) == []
    check_facts_stay_current(memory)
    # the facts are recalled in later turns of the thread: none counts as a turn still shown
    assert out["solar_turns"] == []


def test_an_agent_over_a_database_keeps_the_facts_for_the_next_process(tmp_path: Path) -> None:
    path = tmp_path / "agent.db"
    mw = SolarMemoryMiddleware(
        store=path, scope="user_id", embedder="hash", seed=0, extractor=chat_extractor(TALK)
    )
    agent_talk(mw, "alice", TALK)
    mw.close()
    with MemoryStore(path, embedder="hash") as store:  # no extractor: the facts are stored
        check_facts_stay_current(store.scope(user="alice"))


# -- LlamaIndex: SolarChatMemory and Memory + SolarMemoryBlock in FunctionAgent ----------------
def index_agent_talk(
    memory: SolarChatMemory | Memory, turns: list[tuple[str, str, Any]]
) -> list[list[Any]]:
    llm, prompts = scripted_llm([a for _, a, _ in turns])
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are an agent.")

    async def run() -> None:
        for question, _, _ in turns:
            await agent.run(user_msg=question, memory=memory)

    asyncio.run(run())
    return prompts


def test_a_llamaindex_chat_memory_keeps_the_current_fact_and_recalls_it() -> None:
    extractor = index_extractor([*TALK, QUESTION])
    chat = SolarChatMemory.from_defaults(
        token_limit=64, recall_token_ratio=0.5, top_k=2, embedder="hash", seed=0,
        extractor=extractor,
    )  # fmt: skip
    prompts = index_agent_talk(chat, [*TALK, QUESTION])
    assert extractor.prompts[0].endswith(
        "Exchange:\nHuman: We moved to Paris last month\nAI: Congratulations!\nAnswer:"
    )
    check_facts_stay_current(chat.memory)
    shown = as_text(prompts[-1])
    assert "- The user lives in Lyon" in shown and PARIS[0] not in shown
    assert LYON[0] in [hit.text for hit in chat.recalled()]


def test_a_memory_block_keeps_each_sessions_current_facts() -> None:
    extractor = index_extractor([*TALK, QUESTION])
    block = SolarMemoryBlock(embedder="hash", top_k=2, seed=0, extractor=extractor)
    prompts = index_agent_talk(block_memory(block, "alice"), [*TALK, QUESTION])
    check_facts_stay_current(block.memory_for("alice"))
    shown = as_text(prompts[-1])
    assert "<solar_memories>\n- The user lives in Lyon" in shown and PARIS[0] not in shown
    decision = block.last_decision("alice")
    assert decision is not None and decision.extraction == "no facts"


@pytest.mark.parametrize("extract", ["beside", "instead"])
def test_a_llamaindex_llm_that_fails_still_stores_the_turn(extract: str) -> None:
    block = SolarMemoryBlock(
        embedder="hash", seed=0, extractor=DownLLM(answers=[]), extract=extract
    )
    index_agent_talk(block_memory(block, "alice"), TALK[:1])
    memory = block.memory_for("alice")
    assert turns_stored(memory) == ["Human: We moved to Paris last month\nAI: Congratulations!"]
    decision = block.last_decision("alice")
    why = "failed: the extractor raised ConnectionError: the model is down; the text was offered"
    assert decision is not None and decision.admitted and decision.extraction == why
    assert memory.trace()[-1].extraction == why


def test_llamaindex_adapters_with_instead_keep_only_facts() -> None:
    chat = SolarChatMemory.from_defaults(
        token_limit=64, recall_token_ratio=0.5, top_k=2, embedder="hash", seed=0,
        extractor=index_extractor(TALK), extract="instead",
    )  # fmt: skip
    index_agent_talk(chat, TALK)
    block = SolarMemoryBlock(
        embedder="hash", seed=0, extractor=index_extractor(TALK), extract="instead"
    )
    index_agent_talk(block_memory(block, "alice"), TALK)
    for memory in (chat.memory, block.memory_for("alice")):
        assert turns_stored(memory) == []
        check_facts_stay_current(memory)
    decision = block.last_decision("alice")  # the last turn's: its fact's
    assert decision is not None and decision.item_id is not None
    assert block.memory_for("alice").get(decision.item_id).text == LYON[0]
    assert decision.extraction == f"facts: {decision.item_id}"


def test_a_chat_memory_over_a_store_it_opens_gives_it_the_extractor(tmp_path: Path) -> None:
    path = tmp_path / "chat.db"
    chat = SolarChatMemory.from_defaults(
        store=path, session_id="alice", embedder="hash", seed=0, extractor=index_extractor(TALK)
    )
    index_agent_talk(chat, TALK)
    chat.close()
    with MemoryStore(path, embedder="hash") as store:
        check_facts_stay_current(store.scope(session="alice"))


# -- where the extractor goes: a memory or a store of the caller's keeps its own -----------------
CHAT_ADAPTERS: dict[str, Callable[..., Any]] = {
    "SolarConversationMemory": lambda **kw: SolarConversationMemory(
        **({"scope": "s1"} if "store" in kw else {}), **kw
    ),
    "SolarMemoryMiddleware": lambda **kw: SolarMemoryMiddleware(
        **({"scope": "user_id"} if "store" in kw else {}), **kw
    ),
    "SolarChatMemory": lambda **kw: SolarChatMemory.from_defaults(
        **({"session_id": "s1"} if "store" in kw else {}), **kw
    ),
    "SolarMemoryBlock": lambda **kw: SolarMemoryBlock(**kw),
}


def the_memory(adapter: Any) -> SolarMemory:
    """The memory an adapter keeps for the scope ``s1`` (or its one memory)."""
    if isinstance(adapter, SolarMemoryMiddleware):
        return adapter.memory_for("s1") if adapter.scope else adapter.memory_for()
    if isinstance(adapter, SolarMemoryBlock):
        return adapter.memory_for("s1")
    memory: SolarMemory = adapter.memory
    return memory


@pytest.mark.parametrize("name", CHAT_ADAPTERS)
def test_an_extractor_beside_a_ready_memory_is_refused_naming_the_fix(name: str) -> None:
    memory = SolarMemory("fifo", capacity=5, embedder="hash")
    with pytest.raises(ValueError, match=r"memory= is a ready SolarMemory.*SolarMemory\(\.\.\., "):
        CHAT_ADAPTERS[name](memory=memory, extractor=down)
    with pytest.raises(ValueError, match="memory= is a ready SolarMemory"):
        CHAT_ADAPTERS[name](memory=memory, extractor=down, extract="instead")
    assert memory.extraction is None  # the caller's memory is not changed
    # the fix: the memory built with its extractor, given alone
    mine = SolarMemory("fifo", capacity=5, embedder="hash", extractor=down)
    assert the_memory(CHAT_ADAPTERS[name](memory=mine)).extraction is mine.extraction


@pytest.mark.parametrize("name", CHAT_ADAPTERS)
def test_an_extractor_beside_an_open_store_is_refused_naming_the_fix(name: str) -> None:
    with MemoryStore(":memory:", embedder="hash") as store:
        with pytest.raises(ValueError, match=r"MemoryStore\(\.\.\., extractor=\.\.\."):
            CHAT_ADAPTERS[name](store=store, extractor=down)
        assert store.names() == [] and store.scope(session="s1").extraction is None
    # the fix: the store built with the extractor, which every scope it opens gets
    with MemoryStore(":memory:", embedder="hash", extractor=down) as store:
        adapter = CHAT_ADAPTERS[name](store=store)
        extraction = the_memory(adapter).extraction
        assert extraction is not None and extraction.extractor.obj is down  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", CHAT_ADAPTERS)
def test_the_memories_an_adapter_builds_or_opens_get_its_extractor(
    name: str, tmp_path: Path
) -> None:
    built = CHAT_ADAPTERS[name](embedder="hash", extractor=down, extract="instead", **_scoped(name))
    extraction = the_memory(built).extraction
    assert extraction is not None and extraction.mode == "instead"
    opened = CHAT_ADAPTERS[name](store=tmp_path / "m.db", embedder="hash", extractor=down)
    extraction = the_memory(opened).extraction
    assert extraction is not None and extraction.mode == "beside"
    assert opened.store is not None and opened.store.scope(user="x").extraction is extraction
    opened.close()
    plain = CHAT_ADAPTERS[name](embedder="hash", **_scoped(name))
    assert the_memory(plain).extraction is None


def _scoped(name: str) -> dict[str, Any]:
    return {"scope": "user_id"} if name == "SolarMemoryMiddleware" else {}


def test_a_scopes_extraction_set_by_the_caller_is_kept() -> None:
    """The middleware gives each scope's memory its extractor once, when it is made: a caller
    who turns extraction off for one scope keeps it off."""
    mw = SolarMemoryMiddleware(scope="user_id", embedder="hash", seed=0, extractor=down)
    mw.memory_for("alice").extraction = None
    assert mw.memory_for("alice").extraction is None
    assert mw.memory_for("bob").extraction is not None


@pytest.mark.parametrize("name", CHAT_ADAPTERS)
@pytest.mark.parametrize(
    ("extract", "error"),
    [("instead", "pass extractor= too"), ("both", 'extract must be "beside" or "instead"')],
)
def test_extract_alone_or_misspelt_is_refused(name: str, extract: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        CHAT_ADAPTERS[name](embedder="hash", extract=extract, **_scoped(name))


def test_a_bad_extractor_is_refused_before_a_store_is_opened(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="an extractor must be"):
        SolarMemoryMiddleware(store=tmp_path / "m.db", scope="user_id", extractor=42)
    with pytest.raises(TypeError, match="an extractor must be"):
        SolarMemoryBlock(extractor=42)
    with pytest.raises(TypeError, match="an extractor must be"):
        SolarConversationMemory(extractor=42)


def test_a_retriever_takes_no_extractor() -> None:
    """The retrievers store what they are given; an extractor is the chat adapters'."""
    with pytest.raises(ValueError, match="extractor"):
        SolarRetriever(embedder="hash", extractor=down)


# -- a "key" in the metadata: keyed facts in the retrievers, an item's id in the store -----------
def test_a_langchain_documents_key_makes_a_fact_that_stays_current() -> None:
    retriever = SolarRetriever(k=2, embedder="hash", seed=0)
    first, chatter = retriever.add_documents(
        [
            Document(page_content="Ana lives in Rome", metadata={"key": "ana/home"}),
            Document(page_content="Ana likes long walks", metadata={"topic": "hobbies"}),
        ]
    )
    (later,) = retriever.add_documents(
        [Document(page_content="Ana lives in Oslo", metadata={"key": "ana/home", "src": "chat"})]
    )
    assert later.superseded == first.item_id and chatter.superseded is None
    docs = retriever.invoke("where does Ana live?", filter={"key": "ana/home"})
    assert [d.page_content for d in docs] == ["Ana lives in Oslo"]
    assert docs[0].metadata["key"] == "ana/home" and docs[0].metadata["src"] == "chat"
    everything = retriever.memory.retrieve("Ana lives", include_superseded=True, k=5)
    assert {h.text for h in everything} == {
        "Ana lives in Rome",
        "Ana lives in Oslo",
        "Ana likes long walks",
    }


def test_a_bad_key_in_a_batch_adds_nothing() -> None:
    retriever = SolarRetriever(embedder="hash", seed=0)
    with pytest.raises(TypeError, match=r"texts\[1\]: key must be a str"):
        retriever.add_documents(
            [
                Document(page_content="Ana lives in Rome", metadata={"key": "ana/home"}),
                Document(page_content="Ana is 30", metadata={"key": 30}),
            ]
        )
    with pytest.raises(ValueError, match=r"texts\[0\]: key must be a non-blank name"):
        retriever.add_texts(["Ana lives in Rome"], [{"key": "  "}])
    assert len(retriever.memory) == 0  # all or nothing


def test_a_llamaindex_nodes_key_makes_a_fact_that_stays_current() -> None:
    retriever = IndexRetriever(similarity_top_k=2, embedder="hash", seed=0)
    (first,) = retriever.add_nodes(
        [TextNode(text="Ana lives in Rome", metadata={"key": "ana/home"})]
    )
    (later,) = retriever.add_nodes(
        [TextNode(text="Ana lives in Oslo", metadata={"key": "ana/home"})]
    )
    assert later.superseded == first.item_id
    (found,) = retriever.retrieve("where does Ana live?")
    assert found.node.get_content() == "Ana lives in Oslo"
    assert found.node.metadata["key"] == "ana/home"
    assert retriever.memory.get(first.item_id).superseded_at is not None


def test_the_store_keeps_langgraphs_meaning_of_a_key() -> None:
    """A LangGraph key is the item's id in its namespace: a value's ``"key"`` field is data,
    never a fact's key; two keys holding the same value are two items (puts are never
    repeats)."""
    store = SolarStore(embedder="hash", seed=0)
    alice = ("users", "alice")
    store.put(alice, "home", {"text": "Ana lives in Rome", "key": "ana/home"})
    store.put(alice, "home-2", {"text": "Ana lives in Oslo", "key": "ana/home"})
    store.put(alice, "drink", {"text": "Ana drinks green tea"})
    store.put(alice, "drink-again", {"text": "Ana drinks green tea"})
    memory = store.memory_for(alice)
    assert memory is not None
    assert [(i.id, i.key, i.superseded_at) for i in memory.items()] == [
        ("home", None, None),
        ("home-2", None, None),
        ("drink", None, None),
        ("drink-again", None, None),
    ]
    for key in ("home", "home-2", "drink", "drink-again"):
        decision = store.decision(alice, key)
        assert decision is not None and decision.admitted and decision.superseded is None
        assert decision.reason != "repeat"
    assert store.get(alice, "home").value == {"text": "Ana lives in Rome", "key": "ana/home"}
    found = store.search(alice, query="where does Ana live", limit=4)
    assert {item.key for item in found} == {"home", "home-2", "drink", "drink-again"}
    # the filter of a search reads the value, where the field is
    homes = store.search(alice, filter={"key": "ana/home"})
    assert sorted(item.key for item in homes) == ["home", "home-2"]
    store.put(alice, "home", {"text": "Ana lives in Oslo now", "key": "ana/home"})  # an update
    assert store.get(alice, "home").value["text"] == "Ana lives in Oslo now"
    assert len(memory) == 4 and memory.get("home-2").superseded_at is None
    store.close()
