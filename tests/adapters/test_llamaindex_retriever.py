"""The LlamaIndex SolarRetriever: nodes, scores, feedback, offering experiences, query engines."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.query_engine import RetrieverQueryEngine  # noqa: E402
from llama_index.core.schema import MetadataMode, QueryBundle, TextNode  # noqa: E402

from llamaindex_solar import LlamaIndexEmbedder, SolarRetriever  # noqa: E402
from solar_core import SolarMemory  # noqa: E402
from tests.support.llamaindex_fakes import HashEmbedding  # noqa: E402
from tests.support.memories import full_state  # noqa: E402

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels

TEXTS = [
    "retry HTTP 429 from the payments API with exponential backoff",
    "pin the numpy random seed to stop flaky tests",
    "encode sentences in batches of 64",
    "logs are shipped to the ELK stack",
]


def retriever(**kwargs: object) -> SolarRetriever:
    r = SolarRetriever(embedder="hash", seed=0, **kwargs)  # type: ignore[arg-type]
    r.add_texts(TEXTS, [{"topic": i} for i in range(len(TEXTS))], ids=["a", "b", "c", "d"])
    return r


def test_nodes_carry_id_score_and_metadata_hidden_from_the_llm() -> None:
    r = retriever(similarity_top_k=2)
    results = r.retrieve("the payments API says HTTP 429")
    assert len(results) == 2 and results[0].score > results[1].score
    top = results[0].node
    assert top.id_ == "a" and top.metadata["topic"] == 0
    assert isinstance(top.metadata["retrieval_id"], int)
    assert "retrieval_id" not in top.get_content(metadata_mode=MetadataMode.LLM)
    assert r.memory.stats()["retrievals"] == 1  # a retrieval event


def test_feedback_rates_the_latest_or_the_given_retrieval() -> None:
    # the paper's policy: its Thompson posteriors show which retrieval's items were credited
    r = retriever(similarity_top_k=1, policy="solar")
    first = r.retrieve("HTTP 429")
    r.retrieve("flaky tests and the numpy seed")
    r.feedback(like=False)
    assert r.memory.get("b").policy["beta"] == 2.0
    r.feedback(like=True, nodes=first)
    assert r.memory.get("a").policy["alpha"] == 4.0
    with pytest.raises(ValueError, match="one recorded retrieval"):
        r.feedback(like=True, nodes=[TextNode(text="made up")])


def test_async_retrieve_and_precomputed_query_vectors() -> None:
    r = retriever(similarity_top_k=1)
    (result,) = asyncio.run(r.aretrieve("HTTP 429"))
    assert result.node.id_ == "a"
    vector = r.memory.vector("b")
    (by_vector,) = r.retrieve(QueryBundle(query_str="", embedding=list(map(float, vector))))
    assert by_vector.node.id_ == "b"


def test_record_false_only_looks() -> None:
    r = retriever(similarity_top_k=1, record=False)
    r.retrieve("HTTP 429")
    assert r.memory.stats()["retrievals"] == 0
    with pytest.raises(ValueError, match="nothing to rate"):
        r.feedback(like=True)


def test_offering_nodes_again_is_idempotent_and_batches_are_atomic() -> None:
    r = retriever()
    nodes = [
        TextNode(id_=k, text=t, metadata={"topic": i})
        for i, (k, t) in enumerate(zip("abcd", TEXTS, strict=True))
    ]
    assert [d.reason for d in r.add_nodes(nodes)] == ["already stored"] * 4
    before = full_state(r.memory)
    with pytest.raises(ValueError, match="'retrieval_id' is reserved"):
        r.add_texts(["fine", "bad"], [{}, {"retrieval_id": 3}])
    with pytest.raises(ValueError, match="another text"):
        r.add_texts(["new text"], ids=["a"])
    assert full_state(r.memory) == before


def test_it_serves_a_query_engine() -> None:
    r = retriever(similarity_top_k=1)
    engine = RetrieverQueryEngine.from_args(r, llm=MockLLM())
    response = engine.query("payments API: HTTP 429?")
    assert response.source_nodes[0].node.id_ == "a"
    r.feedback(like=True)
    assert r.memory.stats()["feedbacks"] == 1


def test_llamaindex_embeddings_and_constructor_errors() -> None:
    r = SolarRetriever(embedder=HashEmbedding(), policy="fifo", capacity=3)
    assert isinstance(r.memory.embedder, LlamaIndexEmbedder) and r.memory.dim == 64
    r.add_texts(["alpha", "beta"])
    assert r.retrieve("alpha")[0].node.get_content() == "alpha"
    with pytest.raises(ValueError, match="not both"):
        SolarRetriever(SolarMemory(embedder="hash"), policy="lru")
    with pytest.raises(ValueError, match="similarity_top_k"):
        SolarRetriever(embedder="hash", similarity_top_k=0)
    with pytest.raises(TypeError, match="SolarMemory"):
        SolarRetriever("memory")  # type: ignore[arg-type]
