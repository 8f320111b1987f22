"""Batch adds are all or nothing: every element is checked -- its text, metadata, id and
embedding -- before the first one changes the memory, plain or persisted."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import SolarMemory
from solar_core.embedders.hash_embedder import HashEmbedder
from solar_core.engine.steps import LocalRunner
from solar_core.integrations.batch import offer_batch
from solar_core.persistence import MemoryStore

pytest.importorskip("langchain_core")
pytest.importorskip("llama_index.core")

from langchain_core.documents import Document  # noqa: E402
from llama_index.core.schema import TextNode  # noqa: E402

from langchain_solar import SolarRetriever as LangChainRetriever  # noqa: E402
from llamaindex_solar import SolarRetriever as LlamaIndexRetriever  # noqa: E402


class Broken(HashEmbedder):
    """The hash embedder, except for texts containing ``BAD``: their vector is ``bad``."""

    def __init__(self, bad: float) -> None:
        super().__init__()
        self.bad = bad

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = np.array(super().embed(texts), dtype=np.float32)
        for i, text in enumerate(texts):
            if "BAD" in text:
                rows[i] = self.bad
        return rows


def snapshot(memory: SolarMemory) -> Any:
    return (
        [(i.id, i.text, dict(i.metadata)) for i in memory.items()],
        memory.stats(),
        len(memory.trace()),
    )


@pytest.fixture(params=["plain", "persisted"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., SolarMemory]]:
    """``make(embedder)``: a memory holding one item, plain or in a ``MemoryStore``."""
    stores: list[MemoryStore] = []

    def build(embedder: object = "hash") -> SolarMemory:
        if request.param == "plain":
            memory = SolarMemory("fifo", capacity=10, embedder=embedder, seed=0)
        else:
            store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=10, embedder=embedder)
            stores.append(store)
            memory = store.scope(user="alice")
        memory.add("already here")
        return memory

    yield build
    for store in stores:
        store.close()


def reopened(tmp_path: Path, embedder: object) -> list[str]:
    with MemoryStore(tmp_path / "m.db", policy="fifo", embedder=embedder) as store:
        return [item.text for item in store.scope(user="alice").items()]


class Weird:
    pass


# (texts, metadatas, embedder, what the error says, persisted only)
CASES: dict[str, tuple[list[str], list[Any] | None, object, str, bool]] = {
    "nul": (["first good text", "second has a NUL \x00 here"], None, "hash", "NUL", True),
    "surrogate": (["first good text", "lone \ud800 here"], None, "hash", "Unicode", False),
    "blank": (["first good text", "  "], None, "hash", "blank", False),
    "not-json": (["first good text", "second"], [{"ok": 1}, {"x": Weird()}], "hash", "JSON", True),
    "zero-vector": (["first good text", "second BAD"], None, Broken(0.0), "zero", False),
    "nan-vector": (["first good text", "second BAD"], None, Broken(float("nan")), "NaN", False),
    "inf-vector": (
        ["first good text", "second BAD"],
        None,
        Broken(float("inf")),
        "NaN or inf",
        False,
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_bad_second_element_leaves_the_memory_as_it_was(
    make: Callable[..., SolarMemory], tmp_path: Path, case: tuple[Any, ...]
) -> None:
    texts, metadatas, embedder, message, persisted_only = case
    memory = make(embedder)
    persisted = not isinstance(memory.runner, LocalRunner)
    before = snapshot(memory)
    if persisted_only and not persisted:
        offer_batch(memory, texts, metadatas)  # a plain memory can hold it
        return
    with pytest.raises((ValueError, TypeError), match=message) as info:
        offer_batch(memory, texts, metadatas)
    assert "texts[1]" in str(info.value)  # the element is named
    assert snapshot(memory) == before
    memory.check_invariants()
    if persisted:
        assert reopened(tmp_path, embedder) == ["already here"]


def test_an_embedder_returning_too_few_rows_is_refused_before_anything(
    make: Callable[..., SolarMemory],
) -> None:
    class Short(HashEmbedder):
        def embed(self, texts: list[str]) -> np.ndarray:
            return np.asarray(super().embed(texts))[:1]

    memory = make(Short())
    before = snapshot(memory)
    with pytest.raises(ValueError, match="1 vectors for 2 texts"):
        offer_batch(memory, ["one", "two"])
    assert snapshot(memory) == before


def test_the_error_says_how_to_fix_the_element() -> None:
    memory = SolarMemory("fifo", capacity=5, embedder=Broken(0.0))
    with pytest.raises(ValueError, match=r"texts\[2\].*zero vector.*nothing was added"):
        offer_batch(memory, ["a", "b", "c BAD"])
    assert len(memory) == 0


ADAPTER_CALLS: dict[str, Callable[[Any, list[str]], object]] = {
    "langchain-add_texts": lambda m, t: LangChainRetriever(memory=m).add_texts(t),
    "langchain-add_documents": lambda m, t: LangChainRetriever(memory=m).add_documents(
        [Document(page_content=x) for x in t]
    ),
    "llamaindex-add_texts": lambda m, t: LlamaIndexRetriever(m).add_texts(t),
    "llamaindex-add_nodes": lambda m, t: LlamaIndexRetriever(m).add_nodes(
        [TextNode(text=x) for x in t]
    ),
}


@pytest.mark.parametrize("call", ADAPTER_CALLS.values(), ids=ADAPTER_CALLS.keys())
def test_adapter_batch_adds_are_atomic_with_a_database(
    tmp_path: Path, call: Callable[[Any, list[str]], object]
) -> None:
    with MemoryStore(tmp_path / "m.db", policy="fifo", embedder="hash") as store:
        memory = store.scope(user="alice")
        memory.add("already here")
        before = snapshot(memory)
        with pytest.raises(ValueError, match=r"texts\[1\].*NUL"):
            call(memory, ["first good text", "second has a NUL \x00 here"])
        assert snapshot(memory) == before
    assert reopened(tmp_path, "hash") == ["already here"]


@pytest.mark.parametrize("call", ADAPTER_CALLS.values(), ids=ADAPTER_CALLS.keys())
def test_adapter_batch_adds_are_atomic_with_a_zero_vector(
    call: Callable[[Any, list[str]], object],
) -> None:
    memory = SolarMemory("fifo", capacity=5, embedder=Broken(0.0))
    memory.add("already here")
    before = snapshot(memory)
    with pytest.raises(ValueError, match=r"texts\[1\].*zero vector"):
        call(memory, ["first good text", "second BAD"])
    assert snapshot(memory) == before


def test_a_good_batch_is_stored_whole(make: Callable[..., SolarMemory]) -> None:
    memory = make()
    decisions = offer_batch(
        memory, ["one", "two"], [{"n": 1}, None], ids=["a", None], reserved=frozenset()
    )
    assert [d.admitted for d in decisions] == [True, True]
    assert [i.text for i in memory.items()] == ["already here", "one", "two"]
    assert memory.get("a").metadata == {"n": 1}
