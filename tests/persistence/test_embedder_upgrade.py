"""Scopes made by MiniLM (the default embedder of earlier versions) in a store whose default is
now the built-in static embedder: they reopen with MiniLM, or say how to; nothing is re-embedded
unless asked. Scopes stored before the salience prior was recorded keep the prior they had."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from solar_core.hash_embedder import HashEmbedder
from solar_core.persistence import MemoryStore, PersistenceError
from solar_core.persistence.reader import MemoryReader
from solar_core.static_embedder import StaticEmbedder

FACTS = [
    "Ann: my locker code is 1234",
    "Ann: I prefer green tea in the morning",
    "Ann: the staging database password rotates every month",
]


def rewrite_config(url: str, change: Any) -> None:
    """Edit every scope's stored settings as an earlier version would have written them."""
    with sqlite3.connect(url) as db:
        for scope_id, text in db.execute("SELECT id, config FROM solar_scopes").fetchall():
            config = json.loads(text)
            change(config)
            db.execute(
                "UPDATE solar_scopes SET config = ? WHERE id = ?", (json.dumps(config), scope_id)
            )


def as_if_minilm_made_it(config: dict[str, Any]) -> None:
    config["embedder"] = {**config["embedder"], "name": "MiniLMEmbedder"}


def made_by_minilm(url: str, policy: str, facts: list[str]) -> None:
    """Alice's scope holding ``facts``, stored as if MiniLM had made it: by a 384-d embedder
    whose recorded name is then MiniLM's (no torch needed)."""
    made = MemoryStore(url, policy=policy, capacity=10, embedder=HashEmbedder(dim=384), seed=0)
    for fact in facts:
        made.scope(user="alice").add(fact)
    made.close()
    rewrite_config(url, as_if_minilm_made_it)


@pytest.mark.minilm
def test_a_scope_minilm_made_reopens_with_minilm_in_a_default_store(tmp_path: Path) -> None:
    url = str(tmp_path / "agent.db")
    old = MemoryStore(url, policy="solar-dialogue", capacity=10, embedder="minilm", seed=0)
    for fact in FACTS:
        old.scope(user="alice").add(fact)
    old.close()
    store = MemoryStore(url, seed=0)  # today's default: the static embedder
    alice = store.scope(user="alice")
    assert type(alice.embedder).__name__ == "MiniLMEmbedder" and alice.dim == 384
    assert alice.core.eviction.prior.name == "dialogue-static"  # type: ignore[attr-defined]
    hits = alice.retrieve("which tea do I like?", k=1)
    assert [h.text for h in hits] == [FACTS[1]]
    bob = store.scope(user="bob")  # a new scope gets the default
    assert isinstance(bob.embedder, StaticEmbedder) and bob.dim == 256
    store.close()


def test_without_the_minilm_extra_a_minilm_scope_says_how_to_open_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = str(tmp_path / "agent.db")
    made_by_minilm(url, "fifo", FACTS)
    monkeypatch.setattr("solar_core.minilm.minilm_installed", lambda: False)
    store = MemoryStore(url, seed=0)
    with pytest.raises(PersistenceError) as refused:
        store.scope(user="alice")
    message = str(refused.value)
    assert "pip install 'solar-memory[minilm]'" in message
    assert "store.reembed({'user': 'alice'})" in message
    # nothing was re-embedded: the scope is as it was, until asked
    with sqlite3.connect(url) as db:
        (config,) = db.execute("SELECT config FROM solar_scopes").fetchone()
    assert json.loads(config)["embedder"]["name"] == "MiniLMEmbedder"
    assert store.reembed({"user": "alice"})
    alice = store.scope(user="alice")
    assert isinstance(alice.embedder, StaticEmbedder)
    assert [i.text for i in alice.items()] == FACTS
    assert [h.text for h in alice.retrieve("what is my locker code?", k=1)] == [FACTS[0]]
    store.close()


def test_a_store_given_an_embedder_never_swaps_it(tmp_path: Path) -> None:
    """Only the default store reopens a MiniLM scope with MiniLM: one given an embedder
    refuses a scope of another, as before."""
    url = str(tmp_path / "agent.db")
    made_by_minilm(url, "fifo", FACTS[:1])
    with pytest.raises(PersistenceError, match="reembed"):
        MemoryStore(url, embedder=HashEmbedder(dim=256), seed=0).scope(user="alice")


def test_a_scope_stored_before_priors_were_recorded_keeps_its_prior(tmp_path: Path) -> None:
    """Before the static prior, a chat memory with any embedder but MiniLM read the text prior.
    A scope stored then records no prior: it keeps the text prior (its log replays the same),
    while a new scope records the one it picked."""
    url = str(tmp_path / "agent.db")
    store = MemoryStore(url, policy="solar-dialogue", capacity=2, embedder="hash", seed=0)
    for fact in [*FACTS, "Bo: haha, nice", "Ann: see you!"]:
        store.scope(user="alice").add(fact)
    with sqlite3.connect(url) as db:
        (config,) = db.execute("SELECT config FROM solar_scopes").fetchone()
    assert json.loads(config)["prior"] == "dialogue-static"  # recorded now

    def as_before(config: dict[str, Any]) -> None:
        del config["prior"]

    # The writer is still open: its steps are only in the log, which the others replay.
    rewrite_config(url, as_before)
    again = MemoryStore(url, policy="solar-dialogue", capacity=2, embedder="hash", seed=0)
    alice = again.scope(user="alice")
    assert alice.core.eviction.prior.name == "dialogue-text"  # type: ignore[attr-defined]
    read = MemoryReader(url).memory({"user": "alice"})
    assert read.core.eviction.prior.name == "dialogue-text"  # type: ignore[attr-defined]
    again.close()
    store.close()


def test_a_forged_prior_in_a_scopes_settings_is_refused(tmp_path: Path) -> None:
    url = str(tmp_path / "agent.db")
    store = MemoryStore(url, policy="solar-dialogue", capacity=2, embedder="hash", seed=0)
    store.scope(user="alice").add(FACTS[0])
    store.close()

    def forged(config: dict[str, Any]) -> None:
        config["prior"] = "/etc/passwd"

    rewrite_config(url, forged)
    with pytest.raises(PersistenceError, match="edited by hand"):
        MemoryStore(url, embedder="hash", seed=0).scope(user="alice")


def as_if_minilm_were_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stand-in for MiniLM that needs no torch: the 384-d hash embedder the scope was made
    with (so its fingerprint matches), under MiniLM's name."""

    class StandIn(HashEmbedder):
        def __init__(self) -> None:
            super().__init__(dim=384)

    monkeypatch.setattr("solar_core.minilm.minilm_installed", lambda: True)
    monkeypatch.setattr("solar_core.minilm.MiniLMEmbedder", StandIn)


def test_a_minilm_scope_re_embedded_while_open_works_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The handle a caller holds follows the scope to the new embedder, and its response
    cache is the scope's: it used to keep MiniLM against a 256-d memory."""
    url = str(tmp_path / "agent.db")
    made_by_minilm(url, "solar-dialogue", FACTS)
    as_if_minilm_were_installed(monkeypatch)
    store = MemoryStore(url, seed=0)
    alice = store.scope(user="alice")
    assert alice.dim == 384 and store.response_cache({"user": "alice"}) is not None
    assert store.reembed({"user": "alice"})
    assert store.scope(user="alice") is alice  # the same handle, brought up to date
    assert isinstance(alice.embedder, StaticEmbedder) and alice.dim == 256
    assert [h.text for h in alice.retrieve("what is my locker code?", k=1)] == [FACTS[0]]
    assert alice.add("Ann: I moved to Porto").admitted
    # re-embedded, its statistics start over with today's default prior
    assert alice.core.eviction.prior.name == "dialogue-static"  # type: ignore[attr-defined]
    with sqlite3.connect(url) as db:
        (config,) = db.execute("SELECT config FROM solar_scopes").fetchone()
    assert json.loads(config)["prior"] == "dialogue-static"
    store.close()


def test_the_response_cache_of_a_minilm_scope_uses_its_embedder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = str(tmp_path / "agent.db")
    made_by_minilm(url, "fifo", FACTS[:1])
    as_if_minilm_were_installed(monkeypatch)
    store = MemoryStore(url, seed=0)
    cache = store.response_cache({"user": "alice"})
    assert cache.lookup("what is my locker code?", scope={"user": "alice"}) is None  # a miss
    store.close()
