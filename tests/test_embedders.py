"""Embedders: the deterministic hash embedder, the cache wrapper, resolution, and real MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from solar_core import HashEmbedder, MiniLMEmbedder, SolarMemory
from solar_core.cached_embedder import CachedEmbedder
from solar_core.embedder import resolve_embedder


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
    assert isinstance(resolve_embedder(None), MiniLMEmbedder)  # lazy: nothing loaded yet
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

    # Through the default memory: the paraphrase is the top hit.
    memory = SolarMemory("fifo", capacity=10)
    for text in ["Quarterly revenue rose 5%.", "A feline rests on a rug.", "Paris is in France."]:
        memory.add(text)
    hits = memory.retrieve("The cat sits on the mat.", k=3)
    assert [h.text for h in hits][0] == "A feline rests on a rug."
    assert hits[0].score > hits[1].score


def test_missing_minilm_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import now fails
    memory = SolarMemory("fifo", capacity=3)  # constructing never loads the model
    with pytest.raises(ImportError, match=r"minilm.*pip install torch==2\.13\.0"):
        memory.retrieve("anything")
    assert len(memory) == 0 and memory.stats()["retrievals"] == 0


def test_default_memory_loads_nothing_until_first_text() -> None:
    memory = SolarMemory("solar", capacity=3)
    embedder = memory._embedder
    assert isinstance(embedder, MiniLMEmbedder) and embedder._model is None
    memory.add("x", embedding=np.ones(384))  # precomputed vectors never need the model
    assert embedder._model is None
