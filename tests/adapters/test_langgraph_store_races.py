"""A write to a key that another writer removed or put meanwhile does what ``InMemoryStore``
would: a delete of a vanished key is a no-op, a put stores the value (before: internal
``UnknownItemError`` and "already stored, with a different text" errors)."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_solar import SolarStore
from solar_core import SolarMemory

NS = ("u",)


@pytest.fixture
def two(tmp_path: Path) -> tuple[SolarStore, SolarStore]:
    path = tmp_path / "s.db"
    return (
        SolarStore(path, capacity=10, embedder="hash", seed=0),
        SolarStore(path, capacity=10, embedder="hash", seed=0),
    )


def stale(monkeypatch: pytest.MonkeyPatch, answer: bool) -> None:
    """Every "is the key stored?" answers ``answer``: what a check reads just before another
    process changes the key."""
    monkeypatch.setattr(SolarMemory, "__contains__", lambda self, key: answer)


def test_deleting_a_key_another_writer_just_removed(
    two: tuple[SolarStore, SolarStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = two
    a.put(NS, "k", {"text": "one"})
    b.delete(NS, "k")
    stale(monkeypatch, True)
    a.delete(NS, "k")  # no error: already gone
    monkeypatch.undo()
    assert a.get(NS, "k") is None and b.get(NS, "k") is None


def test_updating_a_key_another_writer_just_removed(
    two: tuple[SolarStore, SolarStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = two
    a.put(NS, "k", {"text": "one"})
    b.delete(NS, "k")
    stale(monkeypatch, True)
    a.put(NS, "k", {"text": "two"})
    monkeypatch.undo()
    got = b.get(NS, "k")
    assert got is not None and got.value == {"text": "two"}


def test_putting_a_key_another_writer_just_put(
    two: tuple[SolarStore, SolarStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = two
    a.put(NS, "other", {"text": "x"})
    b.put(NS, "k", {"text": "from b"})
    stale(monkeypatch, False)
    a.put(NS, "k", {"text": "from a"})  # the last put wins, as in InMemoryStore
    monkeypatch.undo()
    got = b.get(NS, "k")
    assert got is not None and got.value == {"text": "from a"}
    b.memory(NS).check_invariants()  # type: ignore[union-attr]
