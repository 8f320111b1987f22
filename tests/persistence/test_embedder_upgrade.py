"""Scopes made by another embedder (MiniLM, the default of earlier versions) in a store whose
embedder is another one: they are refused, saying how to re-embed them; nothing is re-embedded
unless asked, and ``store.reembed`` brings them to the store's embedder, with today's default
salience prior. (Earlier versions reopened a MiniLM scope with MiniLM in a default store, and
kept the prior of a scope stored before priors were recorded: both are gone.)"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from solar_core.embedders.hash_embedder import HashEmbedder
from solar_core.embedders.static_embedder import StaticEmbedder
from solar_core.persistence import MemoryStore, PersistenceError
from solar_core.persistence.reader import MemoryReader

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


def test_a_minilm_scope_in_a_default_store_says_how_to_reembed_it(tmp_path: Path) -> None:
    url = str(tmp_path / "agent.db")
    made_by_minilm(url, "fifo", FACTS)
    store = MemoryStore(url, seed=0)
    with pytest.raises(PersistenceError) as refused:
        store.scope(user="alice")
    message = str(refused.value)
    assert "MiniLMEmbedder" in message
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
    """A store given an embedder refuses a scope of another, as before."""
    url = str(tmp_path / "agent.db")
    made_by_minilm(url, "fifo", FACTS[:1])
    with pytest.raises(PersistenceError, match="reembed"):
        MemoryStore(url, embedder=HashEmbedder(dim=256), seed=0).scope(user="alice")


def test_a_forged_prior_in_a_scopes_settings_is_refused(tmp_path: Path) -> None:
    url = str(tmp_path / "agent.db")
    store = MemoryStore(url, policy="solar-dialogue", capacity=2, embedder="hash", seed=0)
    store.scope(user="alice").add(FACTS[0])
    store.close()

    def forged(config: dict[str, Any]) -> None:
        config["params"]["eviction"]["params"]["prior"] = "/etc/passwd"

    rewrite_config(url, forged)
    with pytest.raises(PersistenceError, match="edited by hand"):
        MemoryStore(url, embedder="hash", seed=0).scope(user="alice")


def test_a_reembedded_chat_scope_starts_over_with_todays_default_prior(tmp_path: Path) -> None:
    url = str(tmp_path / "agent.db")
    made_by_minilm(url, "solar-dialogue", FACTS)
    store = MemoryStore(url, seed=0)
    assert store.reembed({"user": "alice"})
    alice = store.scope(user="alice")
    assert isinstance(alice.embedder, StaticEmbedder) and alice.dim == 256
    assert [h.text for h in alice.retrieve("what is my locker code?", k=1)] == [FACTS[0]]
    assert alice.add("Ann: I moved to Porto").admitted
    # re-embedded, its statistics start over with today's default prior
    assert alice.core.eviction.prior.name == "dialogue-static"  # type: ignore[attr-defined]
    with sqlite3.connect(url) as db:
        (config,) = db.execute("SELECT config FROM solar_scopes").fetchone()
    assert json.loads(config)["params"]["eviction"]["params"]["prior"] == "dialogue-static"
    store.close()
    read = MemoryReader(url).memory({"user": "alice"})
    assert read.core.eviction.prior.name == "dialogue-static"  # type: ignore[attr-defined]
