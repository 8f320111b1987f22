"""Copies of memories and adapters: either independent (and saying so) or refused; and no
snapshot is ever written that a reopen would refuse.

A plain memory copies (``copy.copy``, ``copy.deepcopy``, pickle) as an independent memory. A
stored memory refuses all three with a ``TypeError`` naming ``detached()`` (an independent
in-memory copy, which says it is not persistent) and ``store.scope(...)`` (another handle of
the scope). An adapter copies its memory by the same rule: a shallow copy (``copy.copy``,
``model_copy()``) is a second handle on the same memory; a deep copy, a pickle or
``model_copy(deep=True)`` of one holding a stored memory is refused, and the adapters serving
memories by session or namespace refuse them whatever they hold.

The property: after any copy of any of these objects, writes through the original and the copy
and a reopen of the database, every acknowledged write is where its handle says it went (a
stored memory's in the reopened scope, an independent copy's in that copy only), no scope is
unreadable, and every memory passes its invariant checks.
"""

from __future__ import annotations

import copy
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.outputs import Generation
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.schema import TextNode

from langchain_solar import (
    SolarConversationMemory,
    SolarMemoryMiddleware,
    SolarSemanticCache,
    SolarStore,
)
from langchain_solar import SolarRetriever as LangChainRetriever
from llamaindex_solar import SolarChatMemory, SolarMemoryBlock
from llamaindex_solar import SolarRetriever as LlamaIndexRetriever
from solar_core import SolarMemory
from solar_core.engine.response_cache import ResponseCache
from solar_core.persistence import MemoryStore, PersistenceError, Scope, container
from solar_core.persistence.journal import Journal, snapshot_params
from solar_core.persistence.scope import namespace_scope
from tests.support.profiles import examples

SETTINGS: dict[str, Any] = {"policy": "fifo", "capacity": 100, "embedder": "hash"}


def _store(path: Path) -> MemoryStore:
    return MemoryStore(path, **SETTINGS)


def _pickled(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj))


#: how an object is copied
COPIES: dict[str, Callable[[Any], Any]] = {
    "copy.copy": copy.copy,
    "copy.deepcopy": copy.deepcopy,
    "pickle": _pickled,
    "model_copy()": lambda obj: obj.model_copy(),
    "model_copy(deep=True)": lambda obj: obj.model_copy(deep=True),
    "detached()": lambda obj: obj.detached(),
}


@dataclass(frozen=True)
class Subject:
    """A kind of object holding a memory: how to make one (over a store's scope, or plain),
    write a fact through it (its own write path) and find the memory its writes reach."""

    name: str
    make: Callable[[MemoryStore | None], Any]
    write: Callable[[Any, str], None]
    memory: Callable[[Any], SolarMemory]
    copies: tuple[str, ...] = ("copy.copy", "copy.deepcopy", "pickle")


def _alice(store: MemoryStore | None) -> SolarMemory:
    return store.scope(user="alice") if store is not None else SolarMemory(**SETTINGS)


def _conversation_write(obj: SolarConversationMemory, text: str) -> None:
    obj.save_context({"input": text}, {"output": "noted"})


def _chat_write(obj: SolarChatMemory, text: str) -> None:
    obj.put(ChatMessage(role="user", content=text))
    obj.put(ChatMessage(role="assistant", content="noted"))


def _namespace_store(store: MemoryStore | None) -> SolarStore:
    return SolarStore(
        store if store is not None else None, embedder="hash" if store is None else None
    )


PYDANTIC = ("copy.copy", "copy.deepcopy", "pickle", "model_copy()", "model_copy(deep=True)")
SUBJECTS = [
    Subject(
        "SolarMemory",
        _alice,
        lambda obj, text: obj.add(text) and None,
        lambda obj: obj,
        ("copy.copy", "copy.deepcopy", "pickle", "detached()"),
    ),
    Subject(
        "SolarConversationMemory",
        lambda store: SolarConversationMemory(memory=_alice(store), k=1),
        _conversation_write,
        lambda obj: obj.memory,
        PYDANTIC,
    ),
    Subject(
        "langchain SolarRetriever",
        lambda store: LangChainRetriever(memory=_alice(store)),
        lambda obj, text: obj.add_texts([text]) and None,
        lambda obj: obj.memory,
        PYDANTIC,
    ),
    Subject(
        "llamaindex SolarRetriever",
        lambda store: LlamaIndexRetriever(memory=_alice(store)),
        lambda obj, text: obj.add_nodes([TextNode(text=text)]) and None,
        lambda obj: obj.memory,
    ),
    Subject(
        "SolarChatMemory",
        lambda store: SolarChatMemory.from_defaults(memory=_alice(store)),
        _chat_write,
        lambda obj: obj.memory,
        PYDANTIC,
    ),
    Subject(
        "SolarMemoryBlock",
        lambda store: SolarMemoryBlock(memory=_alice(store)),
        lambda obj, text: obj.memory_for().add(text) and None,
        lambda obj: obj.memory_for(),
        PYDANTIC,
    ),
    Subject(
        "SolarMemoryMiddleware",
        lambda store: SolarMemoryMiddleware(memory=_alice(store)),
        lambda obj, text: obj.memory_for().add(text) and None,
        lambda obj: obj.memory_for(),
    ),
    Subject(
        "SolarStore",
        _namespace_store,
        lambda obj, text: obj.put(("alice",), text, {"text": text}),
        lambda obj: obj.store.get(namespace_scope(("alice",))),  # (stored or not yet)
    ),
]
#: the adapters that serve memories by session or namespace: deep copies, pickles refused
SERVING = ("SolarMemoryBlock", "SolarMemoryMiddleware", "SolarStore")


def _texts(memory: SolarMemory) -> set[str]:
    return {record.text for _, record in memory.records()}


def _holds(texts: set[str], fact: str) -> bool:
    """Whether a fact was stored (an adapter's item text holds it: a turn, a JSON value)."""
    return any(fact in text for text in texts)


def _scope_of(subject: Subject) -> Scope:
    return namespace_scope(("alice",)) if subject.name == "SolarStore" else Scope(user="alice")


def run_program(
    subject: Subject, kind: str, stored: bool, before: int, writes: list[bool], tmp: Path
) -> None:
    """Make ``subject`` (over a database's scope if ``stored``), write ``before`` facts, copy
    it by ``kind``, write ``writes`` (``True``: through the copy), reopen, and check where
    every fact went."""
    path = tmp / "m.db"
    store = _store(path) if stored else None
    original = subject.make(store)
    facts = [f"fact {i} from the original" for i in range(before)]
    for fact in facts:
        subject.write(original, fact)
    try:
        twin = COPIES[kind](original)
    except TypeError as err:
        # refused: loudly, naming what to do instead, and nothing changed
        assert "refused" in str(err) and (stored or subject.name in SERVING), err
        twin = None
    else:
        assert not (subject.name in SERVING and kind in ("copy.deepcopy", "pickle"))
        if stored and kind != "detached()":  # never a silently detached copy
            assert subject.memory(twin).persistent, f"{kind} of {subject.name} was detached"
    through: dict[int, list[str]] = {id(subject.memory(original)): list(facts)}
    if twin is not None:
        through.setdefault(id(subject.memory(twin)), list(facts))
    for i, by_copy in enumerate(writes):
        handle = twin if by_copy and twin is not None else original
        fact = f"fact {i} from the {'copy' if handle is twin else 'original'}"
        subject.write(handle, fact)
        through[id(subject.memory(handle))].append(fact)
    handles = [original] if twin is None else [original, twin]
    persisted: set[str] = set()
    for handle in handles:
        memory = subject.memory(handle)
        memory.check_invariants()
        texts, wanted = _texts(memory), through[id(memory)]
        assert all(_holds(texts, fact) for fact in wanted), (sorted(texts), wanted)
        others = {f for key, facts in through.items() if key != id(memory) for f in facts}
        assert not any(_holds(texts, f) for f in others - set(wanted)), "a write leaked across"
        if memory.persistent:
            persisted.update(wanted)
    if store is None:
        return
    store.close()  # snapshots every scope: a snapshot the reopen would refuse is never written
    again = _store(path)
    try:
        reopened = again.get(_scope_of(subject))
        reopened.check_invariants()
        texts = _texts(reopened)
        assert all(_holds(texts, fact) for fact in persisted), (sorted(texts), persisted)
        copy_only = {f for facts in through.values() for f in facts} - persisted
        assert not any(_holds(texts, fact) for fact in copy_only)
    finally:
        again.close()


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    subject=st.sampled_from(SUBJECTS),
    data=st.data(),
    stored=st.booleans(),
    before=st.integers(0, 2),
    writes=st.lists(st.booleans(), max_size=6),
)
def test_every_copy_is_independent_or_refused_and_no_write_is_lost(
    subject: Subject, data: st.DataObject, stored: bool, before: int, writes: list[bool]
) -> None:
    kind = data.draw(st.sampled_from(subject.copies), label="copy")
    stored = stored or subject.name == "SolarStore"  # (always a database's namespaces)
    with tempfile.TemporaryDirectory() as tmp:
        run_program(subject, kind, stored, before, writes, Path(tmp))


@pytest.mark.parametrize("subject", SUBJECTS, ids=lambda s: s.name)
def test_each_copy_of_each_object_with_writes_through_both(
    subject: Subject, tmp_path: Path
) -> None:
    for i, kind in enumerate(subject.copies):
        for stored in (True, False) if subject.name != "SolarStore" else (True,):
            where = tmp_path / f"{i}-{stored}"
            where.mkdir()
            run_program(subject, kind, stored, 2, [True, False, True], where)


# -- the findings, one by one ------------------------------------------------------------------
def test_a_shallow_copy_of_a_stored_memory_is_refused_and_its_scope_stays_readable(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path / "m.db")
    alice = store.scope(user="alice")
    for text in ("tea at five", "the cat is Tom", "lives in Leeds"):
        alice.add(text)
    with pytest.raises(TypeError, match=r"store\.scope\(\.\.\.\).*detached\(\)"):
        copy.copy(alice)
    alice.add("likes rain")
    alice.check_invariants()
    store.close()
    again = _store(tmp_path / "m.db")
    reopened = again.scope(user="alice")
    assert _texts(reopened) == {"tea at five", "the cat is Tom", "lives in Leeds", "likes rain"}
    reopened.check_invariants()
    again.close()


def test_a_shallow_copy_of_a_plain_memory_is_independent() -> None:
    memory = SolarMemory("solar", capacity=3, embedder="hash", seed=0, clock=lambda: 1.0)
    for text in ("a", "b"):
        memory.add(text)
    memory.retrieve("a")
    twin = copy.copy(memory)
    assert twin.core.store is not memory.core.store and twin.embedder is memory.embedder
    twin.add("only in the copy")
    memory.add("only in the original")
    memory.check_invariants()
    twin.check_invariants()
    assert _texts(memory) == {"a", "b", "only in the original"}
    assert _texts(twin) == {"a", "b", "only in the copy"}
    # the same memory as a deep copy: same decisions, same statistics
    deep = copy.deepcopy(memory)
    shallow = copy.copy(memory)
    for each in (deep, shallow):
        each.retrieve("b")
        each.feedback(like=True)
        each.add("c")
    assert deep.export() == shallow.export()


@pytest.mark.parametrize("kind", ["copy.deepcopy", "pickle"])
def test_a_stored_memory_refuses_deep_copies_and_pickles(kind: str, tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    alice = store.scope(user="alice")
    alice.add("tea at five")
    with pytest.raises(TypeError, match="refused.*detached"):
        COPIES[kind](alice)
    store.close()


def test_a_detached_copy_says_so_and_writes_only_to_itself(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    alice = store.scope(user="alice")
    alice.add("tea at five")
    twin = alice.detached()
    assert alice.persistent and not twin.persistent
    twin.add("only in the copy")
    assert _texts(twin) == {"tea at five", "only in the copy"} and len(alice) == 1
    assert pickle.loads(pickle.dumps(twin)).export() == twin.export()  # a plain memory: copies
    store.close()
    again = _store(tmp_path / "m.db")
    assert _texts(again.scope(user="alice")) == {"tea at five"}
    again.close()


@pytest.mark.parametrize("kind", ["copy.deepcopy", "pickle", "model_copy(deep=True)"])
def test_an_adapter_never_holds_a_silently_detached_copy(kind: str, tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    chat = SolarChatMemory.from_defaults(memory=store.scope(user="alice"))
    with pytest.raises(TypeError, match="refused"):
        COPIES[kind](chat)  # (pickling it used to leave the memory out, with a log line)
    store.close()


# -- check before writing ----------------------------------------------------------------------
def _corrupt(memory: SolarMemory) -> None:
    """Make the counters disagree with the store, as a state shared by two objects did."""
    memory.core._admitted += 1  # noqa: SLF001 (a state no public call can make)


def test_a_snapshot_its_reader_would_refuse_is_never_written(tmp_path: Path) -> None:
    store = _store(tmp_path / "m.db")
    alice = store.scope(user="alice")
    for text in ("tea at five", "the cat is Tom"):
        alice.add(text)
    _corrupt(alice)
    with pytest.raises(PersistenceError, match="counters say 3 items.*not written"):
        store.close()
    again = _store(tmp_path / "m.db")
    reopened = again.scope(user="alice")  # from the log: every fact is there
    assert _texts(reopened) == {"tea at five", "the cat is Tom"}
    reopened.check_invariants()
    again.close()


def test_a_step_whose_snapshot_would_be_refused_is_refused_and_the_memory_rebuilt(
    tmp_path: Path,
) -> None:
    store = MemoryStore(tmp_path / "m.db", snapshot_every=3, **SETTINGS)
    alice = store.scope(user="alice")
    for text in ("tea at five", "the cat is Tom"):
        alice.add(text)
    _corrupt(alice)
    with pytest.raises(PersistenceError, match="not written"):
        alice.add("likes rain")  # its step would be followed by a snapshot: refused with it
    assert _texts(alice) == {"tea at five", "the cat is Tom"}  # rebuilt from the database
    alice.check_invariants()
    alice.add("likes rain")
    store.close()
    again = _store(tmp_path / "m.db")
    assert _texts(again.scope(user="alice")) == {"tea at five", "the cat is Tom", "likes rain"}
    again.close()


def test_reembed_brings_back_a_scope_whose_snapshot_its_reader_refuses(tmp_path: Path) -> None:
    """A snapshot written unchecked (as earlier versions did, of a memory copied while stored)
    that its reader refuses: the scope is rebuilt from its item rows."""
    store = _store(tmp_path / "m.db")
    alice = store.scope(user="alice")
    for text in ("tea at five", "the cat is Tom"):
        alice.add(text)
    _corrupt(alice)
    journal = alice.runner
    assert isinstance(journal, Journal) and journal.scope_id is not None
    with store.backend.transaction(write=True):  # what an unchecked writer wrote
        blob = container.dumps(snapshot_params(alice), alice.state())
        store.backend.write_snapshot(journal.scope_id, journal.seq, blob, 0.0, True)
    journal.forgotten()  # (this process's memory: never written again)
    store.close()
    again = _store(tmp_path / "m.db")
    with pytest.raises(PersistenceError, match=r"counters say 3.*store\.reembed\("):
        again.scope(user="alice")
    assert again.reembed({"user": "alice"})
    reopened = again.scope(user="alice")
    assert _texts(reopened) == {"tea at five", "the cat is Tom"}
    reopened.check_invariants()
    assert not again.reembed({"user": "alice"})  # readable now: nothing to do
    again.close()


@pytest.mark.parametrize("kind", ["copy.copy", "copy.deepcopy", "pickle"])
def test_a_response_cache_refuses_copies_and_a_semantic_cache_shares_it(kind: str) -> None:
    """A shallow copy of a response cache numbered its new entries on its own: the next store
    of the original collided with the copy's ("an item with id 'c2' is already stored")."""
    responses = ResponseCache("hash")
    alice = {"user": "alice"}
    responses.store("what is my plan", "Team", scope=alice)
    with pytest.raises(TypeError, match="ResponseCache is refused.*watch"):
        COPIES[kind](responses)
    cache = SolarSemanticCache(responses, scope=alice)
    if kind != "copy.copy":
        with pytest.raises(TypeError, match="refused"):
            COPIES[kind](cache)
        return
    twin = copy.copy(cache)  # a second handle on the same cache
    twin.update("where do I live", "llm", [Generation(text="Leeds")])
    cache.update("what colour", "llm", [Generation(text="green")])
    assert [g.text for g in cache.lookup("where do I live", "llm") or []] == ["Leeds"]
    assert [g.text for g in twin.lookup("what colour", "llm") or []] == ["green"]


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy, pickle.dumps])
def test_a_store_refuses_copies_and_names_what_to_do(tmp_path: Path, how: Any) -> None:
    # a shallow copy shared the connection: closing it closed the original's database
    store = MemoryStore(tmp_path / "a.db", embedder="hash", seed=0)
    store.scope(user="alice").add("tea at five")
    with pytest.raises(TypeError, match=r"MemoryStore is refused.*MemoryStore\(path_or_url\)"):
        how(store)
    assert [item.text for item in store.scope(user="alice").items()] == ["tea at five"]
    store.close()
