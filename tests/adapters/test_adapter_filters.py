"""Metadata filters through the adapters, driven as their frameworks drive them: LangChain's
retriever (``filter=``, ``search_kwargs``, ``configurable_fields``), conversation memory and
agent middleware; LlamaIndex's retriever (``MetadataFilters``, held to a ``VectorStoreIndex``
as an oracle), chat memory and memory block."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("llama_index.core")

from langchain.agents import create_agent  # noqa: E402
from langchain_classic.chains import ConversationChain  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.runnables import ConfigurableField  # noqa: E402
from llama_index.core import VectorStoreIndex  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.memory import Memory  # noqa: E402
from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402
from llama_index.core.schema import TextNode  # noqa: E402
from llama_index.core.vector_stores.types import (  # noqa: E402
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from pydantic import ValidationError  # noqa: E402

from langchain_solar import SolarConversationMemory, SolarMemoryMiddleware  # noqa: E402
from langchain_solar import SolarRetriever as LangChainRetriever  # noqa: E402
from llamaindex_solar import SolarChatMemory, SolarMemoryBlock  # noqa: E402
from llamaindex_solar import SolarRetriever as LlamaIndexRetriever  # noqa: E402
from solar_core import Hits, SolarMemory  # noqa: E402
from tests.support.langchain_agents import ask  # noqa: E402
from tests.support.langchain_fakes import PromptRecorder, ToolCallingFakeModel  # noqa: E402
from tests.support.llamaindex_fakes import HashEmbedding, as_text, scripted_llm  # noqa: E402
from tests.support.memories import full_state  # noqa: E402

BILLING = "Human: the March invoice was charged twice\nAI: We refunded the second charge."
SHIPPING = "Human: the March invoice parcel never arrived\nAI: We shipped the parcel again."
QUESTION = "what happened with the March invoice?"
ONLY_BILLING = {"topic": "billing"}


def shared_memory(policy: str = "solar") -> SolarMemory:
    """A memory holding two experiences on two topics, both about the question (no floor: the
    hash embedder's scores are low), as other components would have stored them."""
    memory = SolarMemory(policy, capacity=10, embedder="hash", seed=0, min_score=None)
    memory.add(BILLING, metadata={"topic": "billing", "year": 2024}, item_id="billing")
    memory.add(SHIPPING, metadata={"topic": "shipping", "year": 2025}, item_id="shipping")
    return memory


# -- LangChain ----------------------------------------------------------------------------------
def test_langchain_retriever_takes_a_filter_as_a_field_an_argument_and_search_kwargs() -> None:
    memory = shared_memory()
    assert [d.id for d in LangChainRetriever(memory=memory, k=2).invoke(QUESTION)] == [
        "shipping",
        "billing",
    ]  # unfiltered, the shipping experience ranks first
    field = LangChainRetriever(memory=memory, k=2, filter=ONLY_BILLING)
    assert [d.id for d in field.invoke(QUESTION)] == ["billing"]
    assert [d.id for d in field.invoke(QUESTION, filter={"topic": "shipping"})] == ["shipping"]
    over = LangChainRetriever(memory=memory, filter=ONLY_BILLING, search_kwargs={"filter": {}})
    assert len(over.invoke(QUESTION)) == 2  # search_kwargs over the fields, as documented
    like_a_vector_store = LangChainRetriever(
        memory=memory, search_kwargs={"k": 2, "filter": {"year": {"$gte": 2025}}}
    )
    assert [d.id for d in like_a_vector_store.invoke(QUESTION)] == ["shipping"]
    docs = asyncio.run(field.ainvoke(QUESTION, filter={"topic": {"$ne": "shipping"}}))
    assert [d.id for d in docs] == ["billing"]
    assert [[d.id for d in b] for b in field.batch([QUESTION, QUESTION])] == [["billing"]] * 2


def test_langchain_retriever_filter_is_configurable_as_a_vector_store_retrievers() -> None:
    memory = shared_memory()
    retriever = LangChainRetriever(memory=memory, k=2).configurable_fields(
        search_kwargs=ConfigurableField(id="search_kwargs")
    )
    config: Any = {"configurable": {"search_kwargs": {"filter": ONLY_BILLING}}}
    assert [d.id for d in retriever.invoke(QUESTION, config=config)] == ["billing"]
    assert len(retriever.invoke(QUESTION)) == 2


def test_langchain_retriever_feedback_credits_only_the_filtered_hits() -> None:
    memory = shared_memory()
    retriever = LangChainRetriever(memory=memory, k=2, filter=ONLY_BILLING)
    before = memory.get("shipping").policy
    docs = retriever.invoke(QUESTION)
    retriever.feedback(like=True, documents=docs)
    assert memory.get("billing").policy["alpha"] == 4.0  # prior 2 + retrieved + liked
    assert memory.get("shipping").policy == before


def test_langchain_retriever_refuses_a_bad_filter_and_changes_nothing() -> None:
    memory = shared_memory()
    before = full_state(memory)
    with pytest.raises(ValidationError, match=r"unsupported filter operator '\$in'"):
        LangChainRetriever(memory=memory, filter={"topic": {"$in": ["billing"]}})
    with pytest.raises(ValidationError, match="search_kwargs takes k and filter, got fetch_k"):
        LangChainRetriever(memory=memory, search_kwargs={"fetch_k": 20})
    with pytest.raises(ValidationError, match=r"search_kwargs\['k'\] must be >= 1"):
        LangChainRetriever(memory=memory, search_kwargs={"k": 0})
    retriever = LangChainRetriever(memory=memory)
    with pytest.raises(ValueError, match="compares numbers"):
        retriever.invoke(QUESTION, filter={"year": {"$gt": None}})
    assert full_state(memory) == before


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_langchain_conversation_memory_recalls_only_what_its_filter_keeps() -> None:
    def run(**kwargs: Any) -> tuple[str, SolarConversationMemory]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            memory = SolarConversationMemory(memory=shared_memory(), k=1, top_k=2, **kwargs)
            chain = ConversationChain(llm=FakeListChatModel(responses=["ok"]), memory=memory)
        recorder = PromptRecorder()
        chain.invoke({"input": QUESTION}, config={"callbacks": [recorder]})
        return recorder.text(), memory

    unfiltered, _ = run()
    assert "parcel never arrived" in unfiltered and "charged twice" in unfiltered
    prompt, memory = run(filter=ONLY_BILLING)
    assert "Human: the March invoice was charged twice" in prompt
    assert "parcel never arrived" not in prompt
    assert [hit.id for hit in memory.recalled] == ["billing"]
    with pytest.raises(ValidationError, match="mixes operators and metadata keys"):
        SolarConversationMemory(embedder="hash", filter={"topic": {"$eq": 1, "x": 2}})


def test_langchain_middleware_recalls_only_what_its_filter_keeps() -> None:
    def run(**kwargs: Any) -> tuple[str, SolarMemoryMiddleware]:
        mw = SolarMemoryMiddleware(shared_memory(), top_k=2, **kwargs)
        agent = create_agent(
            ToolCallingFakeModel(messages=iter([AIMessage("Refunded.")])),
            system_prompt="You are helpful.",
            middleware=[mw],
        )
        recorder = PromptRecorder()
        agent.invoke(ask(QUESTION), {"callbacks": [recorder]})
        return recorder.text(), mw

    unfiltered, _ = run()
    assert "parcel never arrived" in unfiltered and "charged twice" in unfiltered
    prompt, mw = run(filter=ONLY_BILLING)
    assert "- Human: the March invoice was charged twice" in prompt
    assert "parcel never arrived" not in prompt
    assert [hit.id for hit in mw.recalled()] == ["billing"]
    prompt, _ = run(filter=lambda metadata: metadata.get("year", 0) > 2024)
    assert "parcel never arrived" in prompt and "charged twice" not in prompt
    with pytest.raises(ValueError, match=r"unsupported filter operator '\$in'"):
        SolarMemoryMiddleware(embedder="hash", shared=True, filter={"topic": {"$in": ["a"]}})


# -- LlamaIndex ---------------------------------------------------------------------------------
NODES = [
    ("n0", "an invoice for the March order", {"topic": "billing", "year": 2023, "amount": 10.5}),
    ("n1", "an invoice for the April order", {"topic": "shipping", "year": 2024, "amount": 99.0}),
    ("n2", "an invoice paid by card", {"topic": "billing", "year": 2025, "tags": ["card", "eu"]}),
    ("n3", "an invoice without a topic", {"year": 2024, "note": "call the customer back"}),
    ("n4", "an invoice for a refund", {"topic": "refunds", "amount": 5.0, "tags": ["eu"]}),
    ("n5", "an invoice from last year", {"topic": "billing", "year": 2024, "note": ""}),
]


def f(key: str, value: Any, operator: str = "==") -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=FilterOperator(operator))


def all_of(*filters: MetadataFilter | MetadataFilters, condition: str = "and") -> MetadataFilters:
    return MetadataFilters(filters=list(filters), condition=FilterCondition(condition))


ORACLE_FILTERS = [
    all_of(f("topic", "billing")),
    all_of(f("topic", "billing", "!=")),
    all_of(f("year", 2024, ">")),
    all_of(f("year", 2024, ">=")),
    all_of(f("year", 2024, "<")),
    all_of(f("amount", 10.5, "<=")),
    all_of(f("topic", ["billing", "refunds"], "in")),
    all_of(f("topic", ["billing"], "nin")),
    all_of(f("tags", "eu", "contains")),
    all_of(f("tags", ["card", "eu"], "all")),
    all_of(f("tags", ["card", "us"], "any")),
    all_of(f("note", "customer", "text_match")),
    all_of(f("note", "CUSTOMER", "text_match_insensitive")),
    all_of(f("note", None, "is_empty")),
    all_of(f("topic", "billing"), f("year", 2024, ">=")),
    all_of(f("topic", "refunds"), f("year", 2025), condition="or"),
    all_of(f("topic", "billing"), f("year", 2024), condition="not"),
    all_of(),
]


# (building a VectorStoreIndex imports LlamaIndex's LangChain bridge, which warns)
@pytest.mark.filterwarnings("ignore:`langchain-community` is being sunset:DeprecationWarning")
@pytest.mark.parametrize("filters", ORACLE_FILTERS, ids=lambda fs: repr(fs.filters)[:60])
def test_llamaindex_retriever_filters_as_a_vector_store_index_does(
    filters: MetadataFilters,
) -> None:
    nodes = [TextNode(id_=i, text=text, metadata=meta) for i, text, meta in NODES]
    index = VectorStoreIndex(nodes, embed_model=HashEmbedding())
    expected = {r.node.id_ for r in index.as_retriever(similarity_top_k=10, filters=filters)
                .retrieve("invoice")}  # fmt: skip
    ours = LlamaIndexRetriever(
        similarity_top_k=10, filters=filters, embedder=HashEmbedding(), min_score=None
    )
    ours.add_nodes(nodes)
    got = {r.node.id_ for r in ours.retrieve("invoice")}
    assert got == expected


def test_llamaindex_retriever_nested_filters_and_values_that_cannot_compare() -> None:
    nodes = [TextNode(id_=i, text=text, metadata=meta) for i, text, meta in NODES]
    ours = LlamaIndexRetriever(similarity_top_k=10, embedder=HashEmbedding(), min_score=None)
    ours.add_nodes(nodes)
    # (billing and 2025) or refunds: nested, which the in-memory vector store does not take
    ours.filters = all_of(
        all_of(f("topic", "billing"), f("year", 2025)), f("topic", "refunds"), condition="or"
    )
    assert sorted(r.node.id_ for r in ours.retrieve("invoice")) == ["n2", "n4"]
    ours.filters = all_of(f("topic", 3, ">"))  # a str against a number: no match, no error
    assert ours.retrieve("invoice") == []
    ours.filters = {"year": {"$lt": 2024}}  # a solar_core filter also works
    assert [r.node.id_ for r in ours.retrieve("invoice")] == ["n0"]


def test_llamaindex_retriever_refuses_a_bad_filter_and_keeps_the_old_one() -> None:
    ours = LlamaIndexRetriever(embedder=HashEmbedding(), filters=all_of(f("topic", "billing")))
    old = ours.filters
    with pytest.raises(ValueError, match=r"filter 'topic' in: pass a list of values"):
        ours.filters = all_of(f("topic", "billing", "in"))
    assert ours.filters is old
    with pytest.raises(ValueError, match=r"unsupported filter operator '\$in'"):
        LlamaIndexRetriever(embedder=HashEmbedding(), filters={"topic": {"$in": ["billing"]}})


def test_llamaindex_query_engine_answers_from_the_filtered_nodes_only() -> None:
    memory = shared_memory()
    retriever = LlamaIndexRetriever(
        memory, similarity_top_k=2, filters=all_of(f("topic", "billing"))
    )
    engine = RetrieverQueryEngine.from_args(retriever, llm=MockLLM())
    response = engine.query(QUESTION)
    assert [n.node.id_ for n in response.source_nodes] == ["billing"]
    retriever.feedback(like=True, nodes=response.source_nodes)
    assert memory.get("billing").policy["alpha"] == 4.0
    assert memory.get("shipping").policy["alpha"] == 2.0


def agent_prompts(memory: object, question: str = QUESTION) -> list[str]:
    llm, prompts = scripted_llm(["Refunded."])
    agent = FunctionAgent(tools=[], llm=llm, system_prompt="You are an agent.")

    async def run() -> None:
        await agent.run(user_msg=question, memory=memory)

    asyncio.run(run())
    return [as_text(prompt) for prompt in prompts]


def test_llamaindex_chat_memory_recalls_only_what_its_filters_keep() -> None:
    def chat(**kwargs: Any) -> tuple[str, SolarChatMemory]:
        memory = SolarChatMemory.from_defaults(memory=shared_memory(), top_k=2, **kwargs)
        return agent_prompts(memory)[-1], memory

    unfiltered, _ = chat()
    assert "parcel never arrived" in unfiltered and "charged twice" in unfiltered
    prompt, memory = chat(filters=all_of(f("topic", "billing")))
    assert "- Human: the March invoice was charged twice" in prompt
    assert "parcel never arrived" not in prompt
    assert [hit.id for hit in memory.recalled()] == ["billing"]
    prompt, _ = chat(filters={"year": {"$gt": 2024}})
    assert "parcel never arrived" in prompt and "charged twice" not in prompt
    with pytest.raises(ValueError, match="pass a list of values"):
        SolarChatMemory.from_defaults(embedder="hash", filters=all_of(f("topic", "x", "nin")))


def test_llamaindex_memory_block_recalls_only_what_its_filters_keep() -> None:
    def chat(**kwargs: Any) -> tuple[str, SolarMemoryBlock]:
        block = SolarMemoryBlock(memory=shared_memory(), top_k=2, **kwargs)
        memory = Memory.from_defaults(session_id="s1", token_limit=4000, memory_blocks=[block])
        return agent_prompts(memory)[-1], block

    unfiltered, _ = chat()
    assert "parcel never arrived" in unfiltered and "charged twice" in unfiltered
    prompt, block = chat(filters=all_of(f("year", 2024, "<=")))
    assert "- Human: the March invoice was charged twice" in prompt
    assert "parcel never arrived" not in prompt
    assert [hit.id for hit in block.recalled("s1")] == ["billing"]
    block.feedback(like=True, session_id="s1")  # records and rates what the prompt showed
    solar = block.memory_for("s1")
    assert solar.get("billing").policy["alpha"] == 4.0
    assert solar.get("shipping").policy["alpha"] == 2.0  # never shown: never credited
    with pytest.raises(ValueError, match="compares numbers"):
        SolarMemoryBlock(embedder="hash", filters={"year": {"$lt": ["soon"]}})


# -- SolarChatMemory.recalled: a method, as the other adapters' ---------------------------------
def test_llamaindex_chat_memory_recalled_is_a_method_and_still_reads_as_the_hits() -> None:
    memory = SolarChatMemory.from_defaults(memory=shared_memory(), top_k=2)
    assert memory.recalled() == []  # nothing read yet
    agent_prompts(memory)
    hits = memory.recalled()
    assert isinstance(hits, Hits) and [h.id for h in hits] == ["shipping", "billing"]
    assert hits.retrieval_id is not None
    memory.feedback(like=True)
    # as the memory block's and the middleware's: called, it takes the same arguments they
    # take without a session (none: one chat memory is one conversation)
    block_style = SolarMemoryBlock(embedder="hash").recalled()
    assert type(block_style) is Hits and type(memory.recalled()) is not list
    # older callers read it as the hits themselves
    assert [h.id for h in memory.recalled] == ["shipping", "billing"]
    assert memory.recalled.retrieval_id == hits.retrieval_id and len(memory.recalled) == 2
