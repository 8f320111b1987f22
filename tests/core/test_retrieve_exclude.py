"""retrieve(exclude=...) and embedders with a separate query encoder."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from solar_core import HashEmbedder, SolarMemory
from tests.support.memories import full_state, onehot

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels


def memory_with(n: int, policy: str = "solar-e") -> SolarMemory:
    memory = SolarMemory(policy, capacity=10, dim=8, seed=0)
    for i in range(n):
        memory.add(f"item {i}", embedding=onehot(i) + 0.5 * onehot(7), item_id=f"i{i}")
    return memory


def test_excluded_items_are_skipped_and_not_credited() -> None:
    memory = memory_with(4)
    query = onehot(0) + 0.9 * onehot(1) + 0.8 * onehot(2)
    hits = memory.retrieve(embedding=query, k=2, exclude=["i0", "gone"])
    assert [h.id for h in hits] == ["i1", "i2"]
    assert [h.rank for h in hits] == [0, 1]
    assert memory.get("i0").policy["alpha"] == 2.0  # not returned: no credit
    assert memory.get("i1").policy["alpha"] == 3.0


def test_excluding_everything_returns_nothing_but_is_still_a_retrieval() -> None:
    memory = memory_with(2)
    hits = memory.retrieve(embedding=onehot(0), k=3, exclude={"i0", "i1"})
    assert hits == [] and hits.retrieval_id is not None


def test_a_lone_string_is_refused_and_changes_nothing() -> None:
    memory = memory_with(3)
    before = full_state(memory)
    with pytest.raises(TypeError, match="not a string"):
        memory.retrieve(embedding=onehot(0), exclude="i0")
    assert full_state(memory) == before


class QueryPrefixEmbedder:
    """Embeds queries as if they were the document ``"q: " + text`` (asymmetric models do)."""

    def __init__(self) -> None:
        self.inner = HashEmbedder(dim=32)
        self.query_calls = 0

    @property
    def dim(self) -> int:
        return 32

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.query_calls += 1
        return self.inner.embed([f"q: {t}" for t in texts])


def test_queries_use_embed_queries_when_the_embedder_has_it() -> None:
    embedder = QueryPrefixEmbedder()
    memory = SolarMemory("fifo", capacity=5, embedder=embedder, retrieval="vector")
    memory.add("retry with backoff")
    assert embedder.query_calls == 0  # documents go through embed()
    hit = memory.retrieve("retry with backoff")[0]
    assert embedder.query_calls == 1
    expected = float(
        embedder.embed(["retry with backoff"])[0]
        @ embedder.embed_queries(["retry with backoff"])[0]
    )
    assert hit.score == pytest.approx(expected, abs=1e-5)


def test_embed_query_is_what_retrieve_uses_and_checks_its_input() -> None:
    embedder = QueryPrefixEmbedder()
    memory = SolarMemory("fifo", capacity=5, embedder=embedder, retrieval="vector")
    memory.add("retry with backoff")
    vector = memory.embed_query("retry with backoff")
    assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-6)
    by_text = memory.retrieve("retry with backoff", record=False)[0].score
    by_vector = memory.retrieve(embedding=vector, record=False)[0].score
    assert by_text == pytest.approx(by_vector, abs=1e-6)
    before = full_state(memory)
    with pytest.raises(ValueError, match="query must not be empty"):
        memory.embed_query("  ")
    assert full_state(memory) == before


def test_record_shown_credits_exactly_the_shown_hits() -> None:
    from solar_core.integrations.shown import record_shown

    memory = memory_with(4)
    vector = (onehot(0) + 0.9 * onehot(1) + 0.8 * onehot(2)).astype(np.float32)
    vector /= np.linalg.norm(vector)
    preview = memory.retrieve(embedding=vector, k=3, record=False)
    assert [h.id for h in preview] == ["i0", "i1", "i2"]
    hits = record_shown(memory, vector, preview, shown={"i0", "i2"})
    assert [h.id for h in hits] == ["i0", "i2"] and hits.retrieval_id is not None
    assert [memory.get(f"i{i}").policy["alpha"] for i in range(4)] == [3.0, 2.0, 3.0, 2.0]
    assert record_shown(memory, vector, preview, shown=set()).retrieval_id is None
