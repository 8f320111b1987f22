"""What ``SolarStore``'s errors say: a namespace is named by its labels (never by the scope key
that encodes it), and each fix is a call ``SolarStore`` has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")

from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings  # noqa: E402

from langchain_solar.store import SolarStore  # noqa: E402
from solar_core import PersistenceError  # noqa: E402

NS = ("users", "alice")


class Shifted(Embeddings):
    """Another model of the same dimension: the fake's vectors, reversed."""

    def __init__(self) -> None:
        self.fake = DeterministicFakeEmbedding(size=16)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [v[::-1] for v in self.fake.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.fake.embed_query(text)[::-1]


def make(path: Path, embed: Embeddings | None = None, **kw: Any) -> SolarStore:
    index: Any = {"dims": 16, "embed": embed or DeterministicFakeEmbedding(size=16)}
    return SolarStore(str(path), index=index, seed=0, **kw)


def says_namespace(message: str) -> None:
    assert "namespace ('users', 'alice')" in message, message
    for internal in ("langgraph-store", "%5B", "project="):
        assert internal not in message, message


def test_another_embedder_names_the_namespace_and_the_store_s_reembed(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    first = make(path)
    first.put(NS, "tea", {"text": "green tea every morning"})
    first.close()
    store = make(path, Shifted())
    with pytest.raises(PersistenceError) as caught:
        store.search(NS, query="tea")
    message = str(caught.value)
    says_namespace(message)
    assert "store.reembed(('users', 'alice'))" in message, message
    assert store.reembed(NS) is True  # the call the message names works as written
    assert store.reembed(NS) is False
    assert [i.key for i in store.search(NS, query="tea")] == ["tea"]
    store.close()


def test_other_settings_name_the_namespace_and_the_store_s_forget(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    first = make(path, capacity=5)
    first.put(NS, "tea", {"text": "green tea every morning"})
    first.close()
    store = make(path, capacity=10)
    with pytest.raises(PersistenceError) as caught:
        store.get(NS, "tea")
    message = str(caught.value)
    says_namespace(message)
    assert "store.forget(('users', 'alice'))" in message, message
    assert store.forget(NS) is True
    assert store.get(NS, "tea") is None
    store.put(NS, "tea", {"text": "now with capacity 10"})
    memory = store.memory(NS)
    assert memory is not None and memory.capacity == 10
    store.close()


def test_forget_and_reembed_check_the_namespace(tmp_path: Path) -> None:
    store = make(tmp_path / "store.db")
    for call in (store.forget, store.reembed):
        with pytest.raises(ValueError, match="[Nn]amespace"):
            call(("users", "a.b"))
    with pytest.raises(ValueError, match="not stored"):
        store.reembed(NS)
    store.close()
