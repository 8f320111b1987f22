"""SolarRetriever beyond the standard suite: k, metadata, feedback, offering experiences, LCEL."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.prompts import ChatPromptTemplate  # noqa: E402
from langchain_core.runnables import RunnablePassthrough  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from langchain_solar import LangChainEmbedder, SolarRetriever  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from tests.support.langchain_fakes import PromptRecorder  # noqa: E402
from tests.support.memories import full_state  # noqa: E402

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels

TEXTS = [
    "retry HTTP 429 from the payments API with exponential backoff",
    "pin the numpy random seed to stop flaky tests",
    "encode sentences in batches of 64",
    "logs are shipped to the ELK stack",
]


def retriever(**kwargs: object) -> SolarRetriever:
    r = SolarRetriever(embedder="hash", seed=0, **kwargs)
    r.add_texts(TEXTS, [{"topic": i} for i in range(len(TEXTS))], ids=["a", "b", "c", "d"])
    return r


def test_documents_carry_id_score_and_the_item_metadata() -> None:
    r = retriever(k=2)
    docs = r.invoke("the payments API says HTTP 429")
    assert len(docs) == 2
    top = docs[0]
    assert top.page_content == TEXTS[0] and top.id == "a"
    assert top.metadata["topic"] == 0 and top.metadata["id"] == "a"
    assert top.metadata["score"] > docs[1].metadata["score"]
    assert isinstance(top.metadata["retrieval_id"], int)
    assert [d.id for d in r.invoke("HTTP 429", k=1)] == ["a"]


def test_every_call_is_a_retrieval_event_unless_record_is_off() -> None:
    r = retriever(k=1)
    r.invoke("HTTP 429")
    assert r.memory.stats()["retrievals"] == 1
    looker = SolarRetriever(memory=r.memory, k=1, record=False)
    docs = looker.invoke("HTTP 429")
    assert r.memory.stats()["retrievals"] == 1 and "retrieval_id" not in docs[0].metadata
    with pytest.raises(ValueError, match="nothing to rate"):
        looker.feedback(like=True)


def test_feedback_rates_the_latest_or_the_given_retrieval() -> None:
    # the paper's policy: its Thompson posteriors show which retrieval's items were credited
    r = retriever(k=1, policy="solar")
    first = r.invoke("HTTP 429")
    r.invoke("flaky tests and the numpy seed")
    r.feedback(like=False)  # the latest: the seed item
    assert r.memory.get("b").policy["beta"] == 2.0
    r.feedback(like=True, documents=first)
    assert r.memory.get("a").policy["alpha"] == 4.0
    with pytest.raises(ValueError, match="already has feedback"):
        r.feedback(like=True, documents=first)
    with pytest.raises(ValueError, match="one recorded retrieval"):
        r.feedback(like=True, documents=[Document("made up")])


def test_a_like_and_a_score_that_disagree_are_refused_by_the_retriever() -> None:
    r = retriever(k=1, policy="solar")
    r.invoke("HTTP 429")
    before = full_state(r.memory)
    with pytest.raises(ValueError, match="like=False and score=0.9 disagree"):
        r.feedback(like=False, score=0.9)
    assert full_state(r.memory) == before
    r.feedback(like=False, score=0.1)  # agreeing: rated
    assert r.memory.get("a").policy["beta"] == 2.0


async def test_async_invoke_and_batch() -> None:
    r = retriever(k=1)
    docs = await r.ainvoke("HTTP 429", k=2)
    assert [d.id for d in docs][0] == "a" and len(docs) == 2
    many = await r.abatch(["HTTP 429", "numpy seed"])
    assert [d[0].id for d in many] == ["a", "b"]
    assert r.memory.stats()["retrievals"] == 3


def test_offering_the_same_documents_again_is_idempotent() -> None:
    r = retriever()
    state = [(i.id, i.text) for i in r.memory.items()]
    decisions = r.add_documents(
        [
            Document(t, metadata={"topic": i}, id=k)
            for i, (k, t) in enumerate(zip("abcd", TEXTS, strict=True))
        ]
    )
    assert [d.reason for d in decisions] == ["already stored"] * 4
    assert [(i.id, i.text) for i in r.memory.items()] == state


def test_add_texts_returns_the_policy_decisions() -> None:
    r = SolarRetriever(policy="fifo", capacity=2, embedder="hash")
    decisions = r.add_texts(TEXTS[:3])
    assert [d.admitted for d in decisions] == [True, True, True]
    assert decisions[2].evicted == decisions[0].item_id
    assert len(r.memory) == 2


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda r: r.add_texts("one string"), TypeError, "not a single string"),
        (lambda r: r.add_texts(["ok", "  "]), ValueError, "text"),
        (lambda r: r.add_texts(["x", "y"], [{}]), ValueError, "2 texts but 1 metadatas"),
        (lambda r: r.add_texts(["x"], [{1: "no"}]), TypeError, "metadata keys must be str"),
        (lambda r: r.add_texts(["x", "y"], ids=["n", "n"]), ValueError, "appears twice"),
        (lambda r: r.add_texts(["other text"], ids=["a"]), ValueError, "another text"),
        (lambda r: r.invoke(""), ValueError, "query"),
        (lambda r: r.invoke("q", k=0), ValueError, "k must be"),
        (lambda r: r.invoke("q", top=1), TypeError, "top"),
        (lambda r: r.feedback(score=2.0), ValueError, r"\[0, 1\]"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(call: object, error: type, match: str) -> None:
    r = retriever()
    r.invoke("HTTP 429")
    before = full_state(r.memory)
    with pytest.raises(error, match=match):
        call(r)  # type: ignore[operator]
    assert full_state(r.memory) == before


def test_constructor_refuses_typos_and_conflicts() -> None:
    with pytest.raises(ValidationError, match="kk"):
        SolarRetriever(embedder="hash", kk=3)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="not both"):
        SolarRetriever(memory=SolarMemory(embedder="hash"), capacity=3)
    with pytest.raises(ValidationError, match="SolarMemory"):
        SolarRetriever(memory="not a memory")


def test_langchain_embeddings_embed_queries_and_documents_separately() -> None:
    queries: list[str] = []

    class Asymmetric(DeterministicFakeEmbedding):
        def embed_query(self, text: str) -> list[float]:
            queries.append(text)
            return super().embed_query("query: " + text)

    emb = Asymmetric(size=32)
    r = SolarRetriever.from_texts(["alpha", "beta"], embedder=emb, k=1, policy="fifo")
    assert isinstance(r.memory.embedder, LangChainEmbedder) and r.memory.dim == 32
    assert queries == ["dimension probe"]  # documents went through embed_documents
    r.invoke("alpha")
    assert queries == ["dimension probe", "alpha"]


def test_it_serves_an_lcel_rag_chain() -> None:
    r = retriever(k=1)
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Past experiences:\n{context}"), ("human", "{question}")]
    )
    chain = (
        {
            "context": r | (lambda docs: "\n".join(d.page_content for d in docs)),
            "question": RunnablePassthrough(),
        }
        | prompt
        | FakeListChatModel(responses=["Back off and retry."])
        | StrOutputParser()
    )
    recorder = PromptRecorder()
    answer = chain.invoke("payments API: HTTP 429?", config={"callbacks": [recorder]})
    assert answer == "Back off and retry."
    assert TEXTS[0] in recorder.text()
    r.feedback(like=True)
    assert r.memory.stats()["feedbacks"] == 1


def test_threads_share_a_retriever_safely() -> None:
    r = retriever(k=2)

    async def many() -> list[list[Document]]:
        return await asyncio.gather(*(r.ainvoke(f"HTTP 429 #{i}") for i in range(20)))

    results = asyncio.run(many())
    assert all(len(docs) == 2 for docs in results)
    r.memory.check_invariants()


def test_configurable_k_rebuilds_around_the_same_memory() -> None:
    from langchain_core.runnables import ConfigurableField

    r = retriever(k=3)
    configurable = r.configurable_fields(k=ConfigurableField(id="k"))
    assert len(configurable.invoke("HTTP 429", config={"configurable": {"k": 1}})) == 1
    assert len(configurable.invoke("HTTP 429")) == 3
    assert r.memory.stats()["retrievals"] == 2  # both went to r's memory


def test_a_batch_naming_some_items_never_collides_with_automatic_ids() -> None:
    r = SolarRetriever(policy="fifo", embedder="hash")
    decisions = r.add_texts(["first", "second"], ids=[None, "m1"])
    assert [d.admitted for d in decisions] == [True, True]
    assert decisions[1].item_id == "m1" and decisions[0].item_id != "m1"
    assert sorted(i.text for i in r.memory.items()) == ["first", "second"]


def test_reserved_metadata_keys_are_refused_before_anything_is_stored() -> None:
    r = retriever()
    before = full_state(r.memory)
    with pytest.raises(ValueError, match="'score' is reserved"):
        r.add_texts(["fine", "runbook"], [{}, {"score": "high"}])
    assert full_state(r.memory) == before
