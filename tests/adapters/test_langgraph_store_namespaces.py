"""Namespaces ``InMemoryStore`` accepts are accepted: a label in any script counts its
characters (before: a 42-character Japanese label was refused, each character counting as its
six-character ``\\u`` escape, with an error about a "scope user" the caller never set). A
namespace too long to store is refused with an error that names the namespace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from langchain_solar import SolarStore
from solar_core.persistence.scope import MAX_LENGTH, namespace_scope

JAPANESE = "日本語のラベルです" * 4 + "日本語のラベ"  # 42 characters
assert len(JAPANESE) == 42


def index() -> Any:
    return {"dims": 8, "embed": DeterministicFakeEmbedding(size=8)}


def test_a_long_japanese_label_is_stored_as_in_memory_store(tmp_path: Path) -> None:
    ns = ("users", JAPANESE)
    ours, theirs = SolarStore(tmp_path / "s.db", index=index(), capacity=None), InMemoryStore()
    for store in (ours, theirs):
        store.put(ns, "food", {"text": "I like ramen"})
        store.put(ns, "鍵" * 300, {"text": "a long key"})
    for store in (ours, theirs):
        item = store.get(ns, "food")
        assert item is not None and item.value == {"text": "I like ramen"}
        assert item.namespace == ns
        assert sorted(i.key for i in store.search(("users",))) == ["food", "鍵" * 300]
        assert store.list_namespaces(prefix=("users",)) == [ns]
    ours.close()
    again = SolarStore(tmp_path / "s.db", index=index(), capacity=None)  # another process
    assert again.list_namespaces() == [ns]
    item = again.get(ns, "food")
    assert item is not None and item.value == {"text": "I like ramen"}
    again.delete(ns, "food")
    assert again.get(ns, "food") is None
    assert again.forget(ns) and again.list_namespaces() == []
    again.close()


def test_a_namespace_that_fits_escaped_keeps_the_scope_it_always_had() -> None:
    """Databases written before hold it under that scope: it must still be found there."""
    assert namespace_scope(("users", "日本")).user == '["users","\\u65e5\\u672c"]'
    assert namespace_scope(("users", JAPANESE)).user == f'["users","{JAPANESE}"]'


def test_a_prefix_lists_both_forms_oldest_first_as_in_memory_store() -> None:
    short, long = ("users", "日本", "a"), ("users", "日本", "z" * 230)  # long: 257 escaped
    assert len(namespace_scope(long).user) < MAX_LENGTH < 257
    ours, theirs = SolarStore(index=index(), capacity=None), InMemoryStore()
    for store in (ours, theirs):
        for n, ns in enumerate([long, short, ("users", "other")]):
            store.put(ns, f"k{n}", {"text": f"note {n}"})
    for prefix in [("users",), ("users", "日本"), ("users", "日本", "z" * 230)]:
        assert [i.key for i in ours.search(prefix)] == [i.key for i in theirs.search(prefix)]
        assert ours.list_namespaces(prefix=prefix) == theirs.list_namespaces(prefix=prefix)
    ours.close()


def test_control_and_format_characters_in_a_long_label_round_trip() -> None:
    label = "\u200b\x7f\n" + "語" * 100  # too long escaped: written as is, these escaped
    store = SolarStore(index=index(), capacity=None)
    store.put(("users", label), "k", {"text": "x"})
    assert store.list_namespaces() == [("users", label)]
    store.close()


def test_a_namespace_too_long_is_refused_by_name_and_nothing_is_stored() -> None:
    store = SolarStore(index=index(), capacity=None)
    long = ("users", "a" * 300)
    message = r"namespace \('users', 'a{40}\.\.\.'\) is too long to store: .* at most 256"
    with pytest.raises(ValueError, match=message) as refused:
        store.put(long, "k", {"text": "x"})
    assert "scope user" not in str(refused.value)
    with pytest.raises(ValueError, match=message):  # a batch: its other put is not applied
        store.batch([PutOp(("users", "ok"), "k", {"text": "x"}), PutOp(long, "k", {"text": "x"})])
    with pytest.raises(ValueError, match=message):
        store.get(long, "k")
    assert store.store.names() == [] and store.list_namespaces() == []
    assert store.search(long) == []  # a prefix nothing can be under
    store.close()


def test_the_stores_names_show_namespaces_by_their_labels(tmp_path: Path) -> None:
    store = SolarStore(tmp_path / "s.db", index=index(), capacity=None)
    store.put(("users", "alice"), "food", {"text": "I like ramen"})
    store.store.scope(user="bob").add("bob likes tea")
    keys = store.store.names()
    assert keys == [namespace_scope(("users", "alice")).key, "user=bob"]  # keys, as before
    assert store.store.shown_names() == ["namespace=users.alice", "user=bob"]
    assert store.store.shown_names(user="bob") == ["user=bob"]
    store.close()
