"""Scope parts of your own (``team``, ``tenant``, ``agent_id``...) beside org, project, user and
session: each combination is its own memory, stored, listed, erased and reopened like the
four."""

from __future__ import annotations

from pathlib import Path

import pytest

from solar_core import MemoryStore
from solar_core.persistence.scope import Scope


def make(path: Path) -> MemoryStore:
    return MemoryStore(str(path), policy="fifo", capacity=5, embedder="hash", seed=0)


def test_a_part_of_your_own_is_a_memory_of_its_own(tmp_path: Path) -> None:
    store = make(tmp_path / "m.db")
    store.scope(user="alice", team="billing").add("refunds take five days")
    store.scope(user="alice", team="support").add("the hotline opens at nine")
    store.scope(user="alice").add("alice likes tea")
    assert [i.text for i in store.scope(user="alice", team="billing").items()] == [
        "refunds take five days"
    ]
    assert store.names(team="billing") == ["user=alice&team=billing"]
    assert store.names(user="alice", team="support") == ["user=alice&team=support"]
    assert len(store.names(user="alice")) == 3
    store.close()

    again = make(tmp_path / "m.db")  # reopened from the database, keyed alike
    assert [i.text for i in again.scope(team="billing", user="alice").items()] == [
        "refunds take five days"
    ]
    assert again.get(Scope.from_key("user=alice&team=billing")) is again.scope(
        user="alice", team="billing"
    )
    assert {"user": "alice", "team": "support"} in again
    assert again.erase(team="support") == ["user=alice&team=support"]
    assert sorted(again.names()) == ["user=alice", "user=alice&team=billing"]
    again.close()


def test_a_view_by_a_part_of_your_own(tmp_path: Path) -> None:
    """What adapters use to key a memory per value of one part."""
    store = make(tmp_path / "m.db")
    teams = store.view("team")
    teams.get("billing").add("refunds take five days")
    teams.get("sales").add("the quarter ends in March")
    store.scope(team="billing", user="bob").add("not a team-only scope")
    assert sorted(teams.names()) == ["billing", "sales"]
    assert "sales" in teams and len(teams) == 2
    teams.forget("sales")
    assert teams.names() == ["billing"]
    store.close()


def test_keys_are_canonical_and_round_trip() -> None:
    scope = Scope(user="a&b", tenant="t=1", team="x y")
    assert scope.key == "user=a%26b&team=x%20y&tenant=t%3D1"  # yours after the four, by name
    assert Scope.from_key(scope.key) == scope
    assert Scope.of({"tenant": "t=1", "team": "x y", "user": "a&b"}) == scope
    assert scope.parts() == {"user": "a&b", "team": "x y", "tenant": "t=1"}
    assert Scope(team="x") != Scope(session="x")


@pytest.mark.parametrize("name", ["Team", "team-id", "1team", "", "t" * 33, "a b", "é"])
def test_a_bad_part_name_is_refused_with_the_rule(tmp_path: Path, name: str) -> None:
    store = make(tmp_path / "m.db")
    with pytest.raises(ValueError, match="lowercase letters, digits and _"):
        store.get({name: "x"})
    with pytest.raises(ValueError, match="lowercase letters, digits and _"):
        store.names(**{name: "x"})
    assert store.names() == []
    store.close()


def test_a_bad_value_of_your_own_part_is_refused_as_the_four_are(tmp_path: Path) -> None:
    store = make(tmp_path / "m.db")
    for value in ("", " ", "a\x1bb", "x" * 257):
        with pytest.raises(ValueError, match="scope team"):
            store.scope(team=value)
    with pytest.raises(TypeError, match="scope team must be a str"):
        store.scope(team=3.5)  # type: ignore[arg-type]
    store.close()
