"""A rating handle names the memory that made it: a retrieval of one memory (or scope) is never
rated by another, whose retrieval of the same number it would otherwise hit."""

from __future__ import annotations

import copy
import pickle
from pathlib import Path
from typing import Any

import pytest

from solar_core import Hits, SolarMemory
from solar_core.persistence import MemoryStore
from tests.support.memories import full_state


def seeded(seed: int | None = 0) -> SolarMemory:
    memory = SolarMemory("solar", capacity=5, embedder="hash", seed=seed)
    memory.add("the payments API returned HTTP 429: back off")
    memory.add("the office wifi password is on the fridge")
    return memory


def test_another_memorys_hits_are_refused() -> None:
    alice, bob = seeded(), seeded()  # same seed, same history: still two memories
    alice_hits = alice.retrieve("HTTP 429")
    bob.retrieve("wifi")
    assert alice_hits.retrieval_id == 1
    before = full_state(bob)
    with pytest.raises(ValueError, match="another memory"):
        bob.feedback(like=False, retrieval=alice_hits)
    assert full_state(bob) == before
    alice.feedback(like=False, retrieval=alice_hits)  # its own memory takes it


def test_own_hits_ids_and_the_latest_still_work() -> None:
    memory = seeded()
    first = memory.retrieve("HTTP 429")
    second = memory.retrieve("wifi")
    memory.feedback(like=True, retrieval=first)
    memory.feedback(like=True, retrieval=second.retrieval_id)
    memory.retrieve("again")
    memory.feedback(score=0.5)
    memory.retrieve("and again")
    memory.feedback(like=True, retrieval=Hits([], memory.stats()["retrievals"]))  # made by hand
    assert memory.stats()["feedbacks"] == 4


def test_a_copy_is_the_same_memory_and_clear_keeps_it() -> None:
    memory = seeded()
    hits = memory.retrieve("HTTP 429")
    twin = pickle.loads(pickle.dumps(memory))
    twin.feedback(like=True, retrieval=hits)
    copy.deepcopy(memory).feedback(like=True, retrieval=hits)
    memory.clear()
    with pytest.raises(ValueError, match="unknown or expired"):
        memory.feedback(like=True, retrieval=hits)


def test_scopes_of_a_store_refuse_each_others_hits(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "m.db", policy="solar", embedder="hash") as store:
        alice, bob = store.scope(user="alice"), store.scope(user="bob")
        for memory in (alice, bob):
            memory.add("the payments API returned HTTP 429: back off")
        alice_hits = alice.retrieve("HTTP 429")
        bob.retrieve("HTTP 429")
        with pytest.raises(ValueError, match="another memory"):
            bob.feedback(like=False, retrieval=alice_hits)
        assert bob.stats()["feedbacks"] == 0


def test_a_scope_reopened_in_this_or_another_process_takes_its_own_hits(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    store = MemoryStore(path, policy="solar", embedder="hash")
    alice = store.scope(user="alice")
    alice.add("the payments API returned HTTP 429: back off")
    first = alice.retrieve("HTTP 429")
    second = alice.retrieve("payments")
    store.close()  # the memory object is gone; the user still holds the hits
    with MemoryStore(path, policy="solar", embedder="hash") as again:
        again.scope(user="alice").feedback(like=True, retrieval=first)
        other = MemoryStore(path, policy="solar", embedder="hash")  # another process
        other.scope(user="alice").feedback(like=True, retrieval=second)
        other.close()
        assert again.scope(user="alice").stats()["feedbacks"] == 2


def test_a_forgotten_and_recreated_scope_refuses_the_old_hits(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "m.db", policy="solar", embedder="hash") as store:
        alice = store.scope(user="alice")
        alice.add("fact one")
        old = alice.retrieve("fact")
        store.forget({"user": "alice"})
        fresh = store.scope(user="alice")
        fresh.add("fact two")
        fresh.retrieve("fact")  # retrieval 1 again
        with pytest.raises(ValueError, match="another memory"):
            fresh.feedback(like=False, retrieval=old)


def test_every_process_names_a_scope_stored_without_a_snapshot_alike(tmp_path: Path) -> None:
    # A scope whose first step was an add has no snapshot: a second process rebuilds it from
    # the log; when the first then writes a snapshot (and prunes the log), the second reloads
    # it, and a retrieval it made before must still be its own.
    one = MemoryStore(tmp_path / "m.db", policy="solar", embedder="hash", seed=0)
    two = MemoryStore(tmp_path / "m.db", policy="solar", embedder="hash", seed=0)
    one.scope(user="alice").add("the locker code is 4512")
    hits = two.scope(user="alice").retrieve("locker code")
    one.scope(user="alice").add("the wifi password is hunter2")
    one.close()  # snapshots the scope and prunes the log: the second process must reload it
    two.scope(user="alice").feedback(like=True, retrieval=hits)
    assert two.scope(user="alice").stats()["feedbacks"] == 1
    two.close()


# -- adapters -----------------------------------------------------------------------------------


def test_langchain_retriever_refuses_another_retrievers_documents() -> None:
    pytest.importorskip("langchain_core")
    from langchain_solar import SolarRetriever

    a, b = SolarRetriever(memory=seeded(), k=1), SolarRetriever(memory=seeded(), k=1)
    docs = a.invoke("HTTP 429")
    b.invoke("HTTP 429")
    with pytest.raises(ValueError, match="another memory"):
        b.feedback(like=False, documents=docs)
    a.feedback(like=False, documents=docs)
    assert b.memory.stats()["feedbacks"] == 0 and a.memory.stats()["feedbacks"] == 1


def test_llamaindex_retriever_refuses_another_retrievers_nodes() -> None:
    pytest.importorskip("llama_index.core")
    from llamaindex_solar import SolarRetriever

    a, b = (
        SolarRetriever(seeded(), similarity_top_k=1),
        SolarRetriever(seeded(), similarity_top_k=1),
    )
    nodes = a.retrieve("HTTP 429")
    b.retrieve("HTTP 429")
    with pytest.raises(ValueError, match="another memory"):
        b.feedback(like=False, nodes=nodes)
    a.feedback(like=False, nodes=nodes)
    assert b.memory.stats()["feedbacks"] == 0 and a.memory.stats()["feedbacks"] == 1


def test_middleware_refuses_one_scopes_retrieval_for_another_scope() -> None:
    pytest.importorskip("langchain")
    from langchain_core.messages import AIMessage

    from langchain_solar import SolarMemoryMiddleware
    from tests.support.langchain_agents import UserContext, agent_with, ask

    mw = SolarMemoryMiddleware(embedder="hash", seed=0, scope="user_id")
    for user in ("alice", "bob"):
        mw.memory_for(user).add("the payments API returned HTTP 429: back off")
    agent = agent_with(mw, AIMessage("Back off."), AIMessage("Back off."))
    alice_out: dict[str, Any] = agent.invoke(ask("HTTP 429?"), context=UserContext("alice"))
    agent.invoke(ask("HTTP 429?"), context=UserContext("bob"))
    assert alice_out["solar_retrieval"] == 1  # still the retrieval's number
    with pytest.raises(ValueError, match="another memory"):
        mw.feedback(like=False, scope="bob", retrieval=alice_out["solar_retrieval"])
    assert mw.memory_for("bob").stats()["feedbacks"] == 0
    mw.feedback(like=True, scope="alice", retrieval=alice_out["solar_retrieval"])
    assert mw.memory_for("alice").stats()["feedbacks"] == 1
