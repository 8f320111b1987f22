"""Embedders: the deterministic hash embedder, the cache wrapper, resolution, and real MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from solar_core import HashEmbedder, MiniLMEmbedder, SolarMemory
from solar_core.embedders.cached_embedder import CachedEmbedder
from solar_core.embedders.embedder import resolve_embedder
from solar_core.embedders.static_embedder import StaticEmbedder


def test_hash_embedder_is_deterministic_unit_and_word_sensitive() -> None:
    a = HashEmbedder(dim=64).embed(
        ["retry on HTTP 429", "bake sourdough bread", "retry on HTTP 429"]
    )
    b = HashEmbedder(dim=64).embed(["retry on HTTP 429"])
    assert a.dtype == np.float32 and a.shape == (3, 64)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(a[0], a[2])
    np.testing.assert_array_equal(a[0], b[0])  # a fresh instance: no per-process salt
    assert a[0] @ a[2] > a[0] @ a[1]


def test_hash_embedder_handles_text_without_words() -> None:
    v = HashEmbedder(dim=16).embed(["!!!"])
    assert np.isfinite(v).all() and abs(float(np.linalg.norm(v)) - 1.0) < 1e-6


@pytest.mark.parametrize("dim", [0, 7, -1, True, 8.0])
def test_hash_embedder_rejects_bad_dim(dim: object) -> None:
    with pytest.raises(ValueError, match="dim"):
        HashEmbedder(dim=dim)  # type: ignore[arg-type]


def test_cached_embedder_embeds_each_text_once() -> None:
    calls: list[list[str]] = []

    class Counting(HashEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            calls.append(list(texts))
            return super().embed(texts)

    cached = CachedEmbedder(Counting(dim=16))
    cached.prime(["a", "b", "a"])
    out = cached.embed(["b", "c", "a"])
    assert calls == [["a", "b"], ["c"]]
    np.testing.assert_array_equal(out, HashEmbedder(dim=16).embed(["b", "c", "a"]))


def test_resolve_embedder() -> None:
    assert isinstance(resolve_embedder(None), StaticEmbedder)  # lazy: nothing loaded yet
    assert isinstance(resolve_embedder("static"), StaticEmbedder)
    assert isinstance(resolve_embedder("minilm"), MiniLMEmbedder)  # nor here
    assert isinstance(resolve_embedder("hash"), HashEmbedder)
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        resolve_embedder("bert")
    with pytest.raises(TypeError, match="embedder must be"):
        resolve_embedder(42)


def test_memory_with_dim_only_has_no_embedder() -> None:
    memory = SolarMemory("fifo", capacity=3, dim=4)
    memory.add("x", embedding=[1, 0, 0, 0])
    with pytest.raises(ValueError, match="no embedder"):
        memory.retrieve("text query")
    with pytest.raises(ValueError, match="disagrees"):
        SolarMemory("fifo", capacity=3, dim=5, embedder=HashEmbedder(dim=256))
    # the named hash embedder is built at the requested size
    sized = SolarMemory("fifo", capacity=3, dim=128, embedder="hash")
    assert sized.dim == 128 and len(sized.retrieve("no items yet")) == 0


def test_default_dimension_mismatch_explains_dim() -> None:
    memory = SolarMemory("fifo", capacity=3, embedder="hash")
    with pytest.raises(ValueError, match="pass dim="):
        memory.add("x", embedding=np.ones(128))


@pytest.mark.minilm
def test_minilm_ranks_a_paraphrase_above_an_unrelated_sentence() -> None:
    embedder = MiniLMEmbedder()
    vectors = embedder.embed(
        ["The cat sits on the mat.", "A feline rests on a rug.", "Quarterly revenue rose 5%."]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    paraphrase, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert paraphrase > 0.4 > 0.1 > unrelated

    # Through a memory: the paraphrase is the top hit.
    memory = SolarMemory("fifo", capacity=10, embedder=embedder)
    for text in ["Quarterly revenue rose 5%.", "A feline rests on a rug.", "Paris is in France."]:
        memory.add(text)
    hits = memory.retrieve("The cat sits on the mat.", k=3)
    assert [h.text for h in hits][0] == "A feline rests on a rug."
    assert "Quarterly revenue rose 5%." not in [h.text for h in hits]  # below the floor
    assert all(hits[0].score > hit.score for hit in hits[1:])


def test_missing_minilm_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import now fails
    memory = SolarMemory("fifo", capacity=3, embedder="minilm")  # never loads the model
    with pytest.raises(ImportError, match=r"minilm.*pip install torch==2\.13\.0"):
        memory.retrieve("anything")
    assert len(memory) == 0 and memory.stats()["retrievals"] == 0


def test_a_minilm_memory_loads_nothing_until_first_text() -> None:
    memory = SolarMemory("solar", capacity=3, embedder="minilm")
    embedder = memory.embedder
    assert isinstance(embedder, MiniLMEmbedder) and embedder._model is None
    memory.add("x", embedding=np.ones(384))  # precomputed vectors never need the model
    assert embedder._model is None


def test_default_memory_loads_nothing_until_first_text() -> None:
    memory = SolarMemory("solar", capacity=3)
    embedder = memory.embedder
    assert isinstance(embedder, StaticEmbedder) and embedder._table is None
    memory.add("x", embedding=np.ones(256))  # precomputed vectors never need the tables
    assert embedder._table is None


def test_a_framework_embedding_model_is_accepted_as_it_is() -> None:
    """A LangChain ``Embeddings`` (or LlamaIndex ``BaseEmbedding``) passed straight to the core
    just works: stored texts use the batch method, queries the query method."""
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from llama_index.core.embeddings import MockEmbedding

    langchain = SolarMemory(embedder=DeterministicFakeEmbedding(size=8), seed=0)
    assert langchain.dim == 8
    langchain.add("retry on HTTP 429")
    assert [h.text for h in langchain.retrieve("retry on HTTP 429", k=1)] == ["retry on HTTP 429"]
    llamaindex = SolarMemory(embedder=MockEmbedding(embed_dim=6), seed=0)
    assert llamaindex.dim == 6 and llamaindex.add("hello").admitted

    class QueryAware:  # an asymmetric model: queries are embedded differently from documents
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 0.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [0.0, 1.0]

    embedder = resolve_embedder(QueryAware())
    assert embedder.embed(["x"]).tolist() == [[1.0, 0.0]]
    assert embedder.embed_queries(["x"]).tolist() == [[0.0, 1.0]]  # type: ignore[attr-defined]


def test_an_unusable_embedder_names_what_is_accepted() -> None:
    with pytest.raises(TypeError, match="LangChain Embeddings or a LlamaIndex BaseEmbedding"):
        SolarMemory(embedder=object())


LONG_TURN = (
    " ".join(
        ["the team discussed the roadmap for next quarter including hiring, budget, the marketing"]
        + ["launch, customer feedback, design reviews, sprint planning, vendor contracts"] * 40
    )
    + ". By the way, the wifi password for the office is BLUEBIRD42."
)
DISTRACTORS = [
    "I love hiking in the mountains on weekends.",
    "The quarterly report is due on Friday.",
    "The printer on the second floor is broken again.",
    "Our new intern starts on Monday.",
    "My favourite food is sushi.",
]


@pytest.mark.minilm
def test_minilm_reads_the_end_of_a_text_longer_than_its_window(minilm: MiniLMEmbedder) -> None:
    """MiniLM reads 256 word pieces: the fact at the end of a ~600-word turn must still count."""
    model = minilm._load()
    windows = MiniLMEmbedder._windows(model, LONG_TURN)
    pieces = [model.tokenizer(w, add_special_tokens=False)["input_ids"] for w in windows]
    assert len(windows) >= 2 and all(len(p) <= model.max_seq_length - 2 for p in pieces)
    whole = model.tokenizer(LONG_TURN, add_special_tokens=False)["input_ids"]
    assert [i for p in pieces for i in p] == whole  # every word piece is read, once
    assert MiniLMEmbedder._windows(model, "a short text") == ["a short text"]

    memory = SolarMemory("fifo", capacity=10, embedder=minilm)
    for text in [LONG_TURN, *DISTRACTORS]:
        memory.add(text)
    hits = memory.retrieve("what is the office wifi password?", k=1, record=False)
    assert hits[0].text == LONG_TURN


@pytest.mark.minilm
def test_minilm_windows_count_word_pieces_not_characters(minilm: MiniLMEmbedder) -> None:
    """A Hangul syllable is one character but two or three word pieces: a 150-character Korean
    text overflows the window, and its end must still count (it used to be cut silently)."""
    head = "한국어를 공부하는 학생입니다 " * 8
    a = head + "제 사물함 비밀번호는 일이삼사입니다"
    b = head + "저는 부산에서 태어났고 고양이를 좋아해요"
    model = minilm._load()
    windows = MiniLMEmbedder._windows(model, a)
    assert len(a) < 256 and len(windows) == 2
    tokenize = model.tokenizer
    pieces = [tokenize(w, add_special_tokens=False)["input_ids"] for w in windows]
    assert [i for p in pieces for i in p] == tokenize(a, add_special_tokens=False)["input_ids"]
    va, vb = minilm.embed([a, b])
    assert float(va @ vb) < 0.99
