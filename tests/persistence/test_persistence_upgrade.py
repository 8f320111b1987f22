"""Upgrading a database: scopes keep the policy (and other settings) they were created with when
the store leaves them out, scopes refuse an embedder that did not make their vectors (and
``reembed`` migrates them), and reading a scope never creates it. SQLite and PostgreSQL: every
test that takes ``db_url`` runs on both."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from solar_core import HashEmbedder, MemoryStore, PersistenceError, SolarMemory, UnknownItemError
from solar_core.embedders.cached_embedder import CachedEmbedder
from solar_core.persistence.fingerprint import fingerprint, same_embedder
from tests.support.persistence import Clock, same, scope_seed

DIM = 384


class ToyEmbedder:
    """A tiny deterministic dense embedder: each word a fixed random direction (not the hashing
    of :class:`HashEmbedder`, so the two put texts in unrelated spaces of the same dimension)."""

    dim = DIM

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), DIM))
        for row, text in enumerate(texts):
            for word in text.lower().replace("?", " ").split():
                out[row] += np.random.default_rng(zlib.crc32(word.encode())).normal(size=DIM)
        unit: npt.NDArray[np.float32] = (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(
            np.float32
        )
        return unit


class NoisyToy(ToyEmbedder):
    """The same model on another machine: float noise in the last digits."""

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = super().embed(texts)
        noise = np.random.default_rng(len(texts)).normal(scale=1e-6, size=rows.shape)
        return (rows + noise).astype(np.float32)


def rows(store: MemoryStore) -> list[tuple[Any, ...]]:
    """Every scope row as stored (key, settings, seq, snapshot seq)."""
    with store.backend.transaction(write=False):
        return [
            tuple(r)
            for r in store.backend.execute(
                "SELECT key, config, seq, snapshot_seq FROM solar_scopes ORDER BY id"
            ).fetchall()
        ]


def item_rows(store: MemoryStore) -> list[tuple[Any, ...]]:
    with store.backend.transaction(write=False):
        return [
            tuple(r)
            for r in store.backend.execute(
                "SELECT scope_id, item_id, text, metadata, category, created_at, valid_until "
                "FROM solar_items ORDER BY scope_id, item_id"
            ).fetchall()
        ]


def as_before_fingerprints(url: str) -> None:
    """Make the database one written before scopes recorded their embedder."""
    store = MemoryStore(url, dim=4)
    with store.backend.transaction(write=True):
        found = store.backend.execute("SELECT id, config FROM solar_scopes").fetchall()
        for scope_id, text in found:
            config = json.loads(text)
            config.pop("embedder", None)
            store.backend.execute(
                "UPDATE solar_scopes SET config = ? WHERE id = ?", (json.dumps(config), scope_id)
            )
    store.close()


def config_of(store: MemoryStore, key: str) -> dict[str, Any]:
    found: dict[str, Any] = next(json.loads(r[1]) for r in rows(store) if r[0] == key)
    return found


# -- 1. a scope keeps the policy it was created with --------------------------------------------
def old_default_database(url: str, clock: Clock, **extra: Any) -> SolarMemory:
    """Alice's scope as the library wrote it when its default policy was "solar"; returns a
    plain memory that took the same steps (the reference), after the store is abandoned."""
    store = MemoryStore(url, policy="solar", capacity=5, embedder="hash", seed=0, clock=clock)
    ref = SolarMemory("solar", 5, embedder="hash", seed=scope_seed(0, "user=alice"), clock=clock)
    for memory in (store.scope(user="alice"), ref):
        memory.add("Q: my locker code?\nA: 1234", metadata={"turn": 1})
        memory.retrieve("locker code")
        memory.feedback(like=True)
        memory.add("Q: favourite tea?\nA: green", category="knowledge")
        memory.retrieve("tea")
    store.backend.close()  # abandoned: a reopen replays the log
    as_before_fingerprints(url)
    return ref


def test_an_omitted_policy_opens_each_scope_with_its_own(db_url: str) -> None:
    """An upgrade of the default policy: a scope created under the old default ("solar")
    reopens with it and resumes exactly (log replay and snapshots alike); a new scope gets the
    new default."""
    clock = Clock()
    ref = old_default_database(db_url, clock)
    store = MemoryStore(db_url, capacity=5, embedder="hash", seed=0, clock=clock)
    assert store.policy == "solar-adaptive"  # what new scopes get
    alice = store.scope(user="alice")
    assert alice.policy == "solar" and alice.stats()["policy"] == "solar"
    same(alice, ref)  # replayed under her own policy
    for memory in (alice, ref):
        memory.retrieve("what was my locker code?")
        memory.feedback(like=False)
        memory.add("Q: my dog?\nA: Rex")
    same(alice, ref)
    bob = store.scope(user="bob")
    bob.add("prefers coffee")
    assert bob.policy == "solar-adaptive"
    store.close()  # snapshots: the next reopen loads them
    again = MemoryStore(db_url, capacity=5, embedder="hash", seed=0, clock=clock)
    same(again.scope(user="alice"), ref)
    assert again.scope(user="bob").policy == "solar-adaptive"
    assert config_of(again, "user=alice")["params"]["policy"] == "solar"
    again.close()


def test_an_explicit_policy_must_be_the_scopes_own(db_url: str) -> None:
    clock = Clock()
    old_default_database(db_url, clock)
    before = rows(MemoryStore(db_url, dim=4))
    store = MemoryStore(db_url, policy="solar-adaptive", capacity=5, embedder="hash", seed=0)
    with pytest.raises(PersistenceError) as caught:
        store.scope(user="alice")
    message = str(caught.value)
    for part in (
        "'user=alice'",
        "policy='solar'",
        "Omit policy= so each scope keeps its own",
        "open it with policy='solar'",
        "forget() the scope to start over",
    ):
        assert part in message, message
    assert rows(store) == before  # refused: nothing written
    explicit = MemoryStore(db_url, policy="solar", capacity=5, embedder="hash", seed=0)
    assert explicit.scope(user="alice").policy == "solar"
    explicit.close()
    store.close()


def test_an_omitted_capacity_and_omitted_params_are_the_scopes_own(db_url: str) -> None:
    created = MemoryStore(db_url, policy="lru", capacity=3, embedder="hash", trace_size=7)
    created.scope(user="alice").add("x")
    created.close()
    store = MemoryStore(db_url, embedder="hash")  # policy, capacity and params left out
    alice = store.scope(user="alice")
    assert (alice.policy, alice.capacity, alice.core._trace.maxlen) == ("lru", 3, 7)
    bob = store.scope(user="bob")
    bob.add("y")
    assert (bob.policy, bob.capacity, bob.core._trace.maxlen) == ("solar-adaptive", 50, 1000)
    before = rows(store)
    # Passed, they must be the scope's: capacity=50 is not "left out". The message names the
    # parameter that differs.
    with pytest.raises(PersistenceError, match=r"capacity=3.*Omit capacity= so each scope"):
        MemoryStore(db_url, policy="lru", capacity=50, embedder="hash").scope(user="alice")
    with pytest.raises(
        PersistenceError,
        match=r"created with trace_size=7; this store asks for trace_size=9.*"
        r"Pass none",
    ):
        MemoryStore(db_url, policy="lru", embedder="hash", trace_size=9).scope(user="alice")
    # (policy left out, the parameters passed are checked as the default policy's: its own
    # policy parameters differ from the scope's too)
    with pytest.raises(PersistenceError, match=r"'user=alice' was created with .*Pass none"):
        MemoryStore(db_url, embedder="hash", trace_size=9).scope(user="alice")
    with pytest.raises(
        PersistenceError, match=r"created with eviction=.*LruEviction.*FifoEviction.*Pass none"
    ):
        MemoryStore(db_url, policy="fifo", embedder="hash", trace_size=7).scope(user="alice")
    # the settings that cannot be left out are still checked as before
    with pytest.raises(
        PersistenceError, match=r"created with evaluator=None; this store asks for evaluator=\{"
    ):
        MemoryStore(db_url, embedder="hash", evaluator=lambda q, e, m: True).scope(user="alice")
    assert rows(store) == before
    store.close()


# -- 2. a scope refuses an embedder that did not make its vectors -------------------------------
def test_another_embedder_of_the_same_dimension_is_refused(db_url: str) -> None:
    """Created with one model, reopened with another of the same dimension."""
    store = MemoryStore(db_url, policy="fifo", embedder=ToyEmbedder(), seed=0)
    store.scope(user="alice").add("my locker code is 1234")
    store.close()
    before = rows(MemoryStore(db_url, dim=4))
    other = MemoryStore(db_url, policy="fifo", embedder=HashEmbedder(dim=DIM), seed=0)
    with pytest.raises(PersistenceError) as caught:
        other.scope(user="alice")
    message = str(caught.value)
    for part in ("'user=alice'", "ToyEmbedder", "HashEmbedder", "store.reembed({'user': 'alice'})"):
        assert part in message, message
    assert rows(other) == before  # nothing written
    other.close()
    # The same model -- another instance, wrapped in a cache, or with float noise -- is accepted.
    for embedder in (ToyEmbedder(), CachedEmbedder(ToyEmbedder()), NoisyToy()):
        again = MemoryStore(db_url, policy="fifo", embedder=embedder, seed=0)
        hits = again.scope(user="alice").retrieve("what is my locker code", k=1)
        assert [h.text for h in hits] == ["my locker code is 1234"]
        again.close()


def test_fingerprints_tell_embedders_apart_and_tolerate_float_noise() -> None:
    toy = fingerprint(ToyEmbedder())
    assert toy["name"] == "ToyEmbedder" and toy["dim"] == DIM
    assert same_embedder(toy, fingerprint(NoisyToy()))
    assert same_embedder(toy, fingerprint(CachedEmbedder(ToyEmbedder())))
    assert not same_embedder(toy, fingerprint(HashEmbedder(dim=DIM)))
    assert not same_embedder(fingerprint(HashEmbedder(dim=64)), fingerprint(HashEmbedder(dim=32)))
    assert not same_embedder(toy, {"dim": DIM, "probe": "not hex"})


def test_a_scope_without_a_fingerprint_takes_the_first_embedder_that_opens_it(
    db_url: str,
) -> None:
    """A scope of a database written before fingerprints is accepted and recorded with the
    embedder that first opens it; a dim= store neither records nor checks one."""
    store = MemoryStore(db_url, policy="fifo", embedder=HashEmbedder(dim=DIM))
    store.scope(user="alice").add("fact")
    store.close()
    as_before_fingerprints(db_url)
    vectors_only = MemoryStore(db_url, policy="fifo", dim=DIM)
    assert len(vectors_only.scope(user="alice")) == 1
    assert "embedder" not in config_of(vectors_only, "user=alice")
    vectors_only.close()
    first = MemoryStore(db_url, policy="fifo", embedder=ToyEmbedder())
    assert len(first.scope(user="alice")) == 1  # accepted (nothing to tell)...
    assert same_embedder(config_of(first, "user=alice")["embedder"], first.fingerprint)
    first.close()
    with pytest.raises(PersistenceError, match="ToyEmbedder"):  # ... and recorded
        MemoryStore(db_url, policy="fifo", embedder=HashEmbedder(dim=DIM)).scope(user="alice")
    vectors_only = MemoryStore(db_url, policy="fifo", dim=DIM)  # still not checked
    assert len(vectors_only.scope(user="alice")) == 1
    vectors_only.close()


def test_reembed_migrates_a_scope_and_keeps_its_items(db_url: str) -> None:
    old = MemoryStore(db_url, policy="solar", capacity=10, embedder=ToyEmbedder(), seed=4)
    alice = old.scope(user="alice")
    alice.add("my locker code is 1234", metadata={"source": "chat"}, category="identity")
    alice.add("green tea every morning", category="knowledge", valid_until=2e9)
    alice.add("the deploy key rotates monthly")
    alice.add("evicted soon", item_id="gone")
    alice.remove("gone")
    alice.retrieve("locker code")
    alice.feedback(like=True)
    alice.lifecycle.decay()
    kept = [(i.id, i.text, dict(i.metadata), i.category, i.importance, i.created_at, i.valid_until)
            for i in alice.items()]  # fmt: skip
    ids, retrievals = alice.core.continuation()[:2]
    holder = MemoryStore(db_url, policy="solar", capacity=10, embedder=ToyEmbedder(), seed=4)
    stale = holder.scope(user="alice")  # another process, on the old embedder
    old.close()

    store = MemoryStore(db_url, capacity=10, embedder=HashEmbedder(dim=DIM), seed=4)
    with pytest.raises(ValueError, match="not stored"):
        store.reembed({"user": "nobody"})
    assert store.reembed({"user": "alice"}) is True
    assert store.reembed({"user": "alice"}) is False  # already this store's: nothing to do
    memory = store.scope(user="alice")
    assert memory.policy == "solar" and memory.capacity == 10  # its settings are kept
    assert [
        (i.id, i.text, dict(i.metadata), i.category, i.importance, i.created_at, i.valid_until)
        for i in memory.items()
    ] == kept
    assert [i.policy["alpha"] for i in memory.items()] == [2.0, 2.0, 2.0]  # statistics restart
    stats = memory.stats()
    assert (stats["steps"], stats["admitted"], stats["retrievals"], memory.trace()) == (3, 3, 0, [])
    assert memory.core.continuation()[1] == retrievals
    assert memory.add("a new fact").item_id == f"m{ids + 1}"  # ids are never reused
    hits = memory.retrieve("what is my locker code", k=1)
    assert [h.text for h in hits] == ["my locker code is 1234"]
    memory.check_invariants()
    assert sorted(r[1] for r in item_rows(store)) == sorted(i.id for i in memory.items())
    # The other process's memory (old embedder) refuses to go on; a reopen resumes exactly.
    with pytest.raises(PersistenceError, match="HashEmbedder"):
        stale.add("written with the old embedder?")
    with pytest.raises(PersistenceError, match="could not be snapshotted"):
        holder.close()  # (as for a scope forgotten elsewhere: nothing written)
    plain = memory.detached()  # a plain copy of the memory as it is now
    store.close()
    again = MemoryStore(db_url, capacity=10, embedder=HashEmbedder(dim=DIM), seed=4)
    same(again.scope(user="alice"), plain)
    again.close()


def test_reembed_refuses_what_it_cannot_do_and_changes_nothing(db_url: str) -> None:
    MemoryStore(db_url, policy="fifo", embedder=ToyEmbedder()).scope(user="a").add("x")
    before = rows(MemoryStore(db_url, dim=4))
    with pytest.raises(ValueError, match="needs a store with an embedder"):
        MemoryStore(db_url, policy="fifo", dim=DIM).reembed({"user": "a"})
    with pytest.raises(PersistenceError, match="policy='fifo'"):  # other settings still count
        MemoryStore(db_url, policy="lru", embedder=HashEmbedder(dim=DIM)).reembed({"user": "a"})
    assert rows(MemoryStore(db_url, dim=4)) == before


# -- 3. reading a scope never creates it ---------------------------------------------------------
def test_reads_never_create_a_scope(db_url: str) -> None:
    """store.scope(user="bob").retrieve("x") -- and even len() -- once created "user=bob"."""
    store = MemoryStore(db_url, policy="fifo", capacity=3, embedder="hash", seed=0)
    store.scope(user="alice").add("alice's fact")
    before = rows(store)
    bob = store.scope(user="bob")
    assert len(bob) == 0 and bob.items() == [] and list(bob) == [] and "m1" not in bob
    assert bob.retrieve("x", record=False) == [] and bob.stats()["size"] == 0
    assert bob.trace() == [] and bob.retrieval_trace() == [] and bob.export()["items"] == []
    with pytest.raises(UnknownItemError):
        bob.get("m1")
    with pytest.raises(UnknownItemError):
        bob.remove("m1")  # bad input on a scope not stored: nothing stored either
    with pytest.raises(ValueError):
        bob.add("")
    store.response_cache({"user": "bob"})
    assert store.existing({"user": "bob"}) is None
    hits = bob.retrieve("x")  # a recorded retrieval of a scope stored nowhere: records nothing
    assert hits == [] and hits.retrieval_id is None
    bob.feedback(like=True, retrieval=hits)  # accepted, and changes nothing
    bob.feedback(like=False)  # (the latest made through this object: the same)
    assert bob.stats()["retrievals"] == 0 and bob.stats()["feedbacks"] == 0
    assert store.existing({"user": "bob"}) is None  # still stored nowhere
    assert (
        rows(store) == before and store.names() == ["user=alice"] and {"user": "bob"} not in store
    )
    assert [s.user for s in store.scopes()] == ["alice"] and store.view("user").names() == ["alice"]
    assert bob.add("bob's fact").admitted  # the first write stores the scope
    assert store.names() == ["user=alice", "user=bob"] and store.existing({"user": "bob"}) is bob
    stats = bob.stats()
    assert (stats["retrievals"], stats["feedbacks"]) == (0, 0)  # nothing before it was kept
    store.backend.close()  # abandoned: the reopen replays the log
    again = MemoryStore(db_url, policy="fifo", capacity=3, embedder="hash", seed=0)
    resumed = again.scope(user="bob")
    assert resumed.stats() == stats
    again.close()


def test_a_scope_is_stored_by_its_first_write_and_resumes_exactly(db_url: str) -> None:
    """Retrievals and ratings before the first write record nothing (the plain reference makes
    them unrecorded and unrated); from the first write on, a reopen matches the plain memory.
    A scope only retrieved from before the process stops is stored nowhere."""
    clock = Clock()

    def open_store() -> MemoryStore:
        return MemoryStore(db_url, policy="solar-adaptive", capacity=4, dim=8, seed=1, clock=clock)

    store = open_store()
    lost = store.scope(user="lost")
    lost.retrieve(embedding=np.ones(8))
    store.close()
    assert open_store().names() == []  # nothing was written for it
    store = open_store()
    memory = store.scope(user="u")
    ref = SolarMemory("solar-adaptive", 4, dim=8, seed=scope_seed(1, "user=u"), clock=clock)
    rng = np.random.default_rng(0)
    assert memory.retrieve(embedding=np.ones(8), k=2) == []
    memory.feedback(score=0.2)  # accepted: changes nothing
    assert memory.retrieve(embedding=np.arange(8.0), k=1).retrieval_id is None
    ref.retrieve(embedding=np.ones(8), k=2, record=False)  # what they were: looks
    ref.retrieve(embedding=np.arange(8.0), k=1, record=False)
    same(memory, ref)
    assert store.names() == []
    vectors = rng.normal(size=(6, 8))
    for i, v in enumerate(vectors):
        assert memory.add(f"t{i}", embedding=v).admitted == ref.add(f"t{i}", embedding=v).admitted
        if i % 2:
            for m in (memory, ref):
                m.retrieve(embedding=v, k=2)
                m.feedback(score=0.7)
    same(memory, ref)
    store.backend.close()
    again = open_store()
    same(again.scope(user="u"), ref)
    again.close()


def test_a_write_that_is_not_an_add_stores_the_scope_too(db_url: str) -> None:
    store = MemoryStore(db_url, policy="fifo", capacity=3, embedder="hash")
    store.scope(user="a").lifecycle.decay()
    store.scope(user="b").clear()
    assert store.names() == ["user=a", "user=b"]
    store.close()


def test_forget_and_erase_of_scopes_not_stored_forget_nothing(db_url: str) -> None:
    """A scope stored nowhere has nothing to forget (its retrievals recorded nothing): forget()
    says so and erase() finds nothing; the memory objects handed out are closed all the same,
    and nothing is written back."""
    store = MemoryStore(db_url, policy="fifo", capacity=3, embedder="hash")
    store.scope(user="z").add("z's fact")
    looked, asked, other = (store.scope(user=u, session="s") for u in ("a", "b", "c"))
    looked.retrieve("nothing kept", record=False)
    asked.retrieve("what is my PIN?")
    other.retrieve("what is my PIN?")
    assert not store.forget({"user": "a", "session": "s"})  # nothing to forget
    assert not store.forget({"user": "b", "session": "s"})
    assert store.erase(user="c") == []
    for memory in (looked, asked, other):
        with pytest.raises(PersistenceError, match="closed or forgotten"):
            memory.add("written back?")
    assert store.names() == ["user=z"] and store.existing({"user": "b", "session": "s"}) is None
    store.close()


def test_an_adapter_with_no_policy_or_capacity_reopens_each_scope_with_its_own(
    tmp_path: Any,
) -> None:
    """An adapter built without ``policy=``/``capacity=`` leaves them out of its store too, so a
    scope made under other settings (the old default ``solar``, 10 slots) reopens with them."""
    pytest.importorskip("langchain")
    from langchain_solar import SolarMemoryMiddleware

    path = tmp_path / "agent.db"
    with MemoryStore(path, policy="solar", capacity=10, embedder="hash", seed=0) as old:
        old.scope(user="alice").add("Human: call me Al. AI: Sure, Al.")
    middleware = SolarMemoryMiddleware(store=path, scope="user_id", embedder="hash", seed=0)
    try:
        alice = middleware.memory_for("alice")
        assert (alice.policy, alice.capacity, len(alice)) == ("solar", 10, 1)
        bob = middleware.memory_for("bob")
        assert (bob.policy, bob.capacity) == ("solar-dialogue", 50)  # the chat policy, new
    finally:
        middleware.close()


# -- the indexes that keep one scope's work independent of the others ------------------------
def index_names(store: MemoryStore) -> set[str]:
    backend = store.backend
    with backend.transaction(write=False):
        if store.backend.url.startswith("postgres"):
            rows = backend.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            ).fetchall()
        else:
            rows = backend.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        return {str(r[0]) for r in rows}


def test_a_database_has_the_indexes_that_keep_scopes_independent(db_url: str) -> None:
    """The indexes (the namespaces under a prefix, the items due to expire) and the database's
    id are made with the tables; a reader reads the database as it is."""
    from solar_core.persistence.reader import MemoryReader

    store = MemoryStore(db_url, policy="fifo", capacity=4, embedder="hash", seed=0)
    store.scope(user="alice").add("green tea", valid_until=2e9)
    assert "solar_items_due" in index_names(store)
    if db_url.startswith("postgres"):
        assert "solar_scopes_key_c" in index_names(store)
    with store.backend.transaction(write=False):
        assert (
            store.backend.execute("SELECT value FROM solar_meta WHERE key = 'schema'").fetchone()[0]
            == "1"
        )
    assert len(store.backend.database_id()) == 32  # the id that tells databases apart
    assert store.due(now=2e9) == ["user=alice"] and store.due(now=2e9 - 1) == []
    assert store.names_from("user=al") == ["user=alice"] and store.names_from("user=b") == []
    store.close()

    reader = MemoryReader(db_url)
    assert [i.text for i in reader.memory({"user": "alice"}, live=False).items()] == ["green tea"]
    reader.close()
