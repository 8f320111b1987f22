"""A logged step is replayed only if the call it records would have been taken: a database
writer who forges a row (and recomputes its checksum) cannot feed a memory what the API refuses,
nor leave the scope unopenable."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import MemoryStore, PersistenceError
from solar_core.persistence.backend import OpRow, _op_checksum

Edit = Callable[[dict[str, Any], np.ndarray[Any, Any]], np.ndarray[Any, Any] | None]


def _text(value: object) -> Edit:
    def edit(args: dict[str, Any], vector: np.ndarray[Any, Any]) -> None:
        args["query" if "query" in args else "text"] = value

    return edit


def _arg(name: str, value: object) -> Edit:
    def edit(args: dict[str, Any], vector: np.ndarray[Any, Any]) -> None:
        args[name] = value

    return edit


def _scaled(factor: float) -> Edit:
    return lambda args, vector: vector * np.float32(factor)


FORGED_ADDS = {
    "expiry NaN": _arg("valid_until", float("nan")),
    "expiry inf": _arg("valid_until", float("inf")),
    "empty text": _text(""),
    "blank text": _text("   "),
    "text with NUL": _text("tea\x00"),
    "lone surrogate": _text("tea \ud800"),
    "empty id": _arg("id", ""),
    "unknown category": _arg("category", "bogus"),
    "verdict not a bool": _arg("verdict", "yes"),
    "zero vector": _scaled(0.0),
    "vector of norm 3": _scaled(3.0),
    "a field under its old name too": _arg("t", "tea"),
}
FORGED_RETRIEVALS = {
    "empty query": _text(""),
    "zero vector": _scaled(0.0),
    "vector of norm 3": _scaled(3.0),
}


def _forge(path: str, kind: str, edit: Edit) -> None:
    """Rewrite the scope's last logged ``kind`` step with ``edit``, checksum and all."""
    con = sqlite3.connect(path)
    with con:
        scope_id, seq, args, vector, clocks, digest = con.execute(
            "SELECT scope_id, seq, args, vector, clocks, digest FROM solar_ops WHERE kind = ? "
            "ORDER BY seq DESC LIMIT 1",
            (kind,),
        ).fetchone()
        values = json.loads(args)
        row = np.frombuffer(vector, np.float32).copy()
        changed = edit(values, row)
        row = row if changed is None else changed
        op = OpRow(seq, kind, json.dumps(values), row.astype(np.float32).tobytes(), clocks, digest)
        con.execute(
            "UPDATE solar_ops SET args = ?, vector = ?, checksum = ? "
            "WHERE scope_id = ? AND seq = ?",
            (op.args, op.vector, _op_checksum(scope_id, op), scope_id, seq),
        )
    con.close()


def _logged(path: str) -> MemoryStore:
    """A store left open (no closing snapshot) after a few steps: its log holds them."""
    store = MemoryStore(path, policy="fifo", capacity=50, embedder="hash")
    memory = store.scope(user="alice")
    memory.add("alpha fact about tea", item_id="a")
    memory.retrieve("tea")
    memory.add("beta fact about coffee", item_id="b", valid_until=2e9)
    return store


@pytest.mark.parametrize(
    ("kind", "edit"),
    [
        *[("add", edit) for edit in FORGED_ADDS.values()],
        *[("retrieve", edit) for edit in FORGED_RETRIEVALS.values()],
    ],
    ids=[*(f"add: {n}" for n in FORGED_ADDS), *(f"retrieve: {n}" for n in FORGED_RETRIEVALS)],
)
def test_a_forged_step_the_api_would_refuse_is_not_replayed(
    tmp_path: Path, kind: str, edit: Edit
) -> None:
    path = str(tmp_path / "m.db")
    writer = _logged(path)
    _forge(path, kind, edit)
    reader = MemoryStore(path, policy="fifo", capacity=50, embedder="hash")
    with pytest.raises(
        PersistenceError, match=f"cannot be replayed: its inputs are not an? {kind}"
    ):
        reader.scope(user="alice")
    reader.close()
    writer.backend.close()


def test_an_unforged_log_replays(tmp_path: Path) -> None:
    """(The forging itself changes nothing a replay checks.)"""
    path = str(tmp_path / "m.db")
    writer = _logged(path)
    _forge(path, "add", lambda args, vector: None)
    reader = MemoryStore(path, policy="fifo", capacity=50, embedder="hash")
    assert [item.id for item in reader.scope(user="alice").items()] == ["a", "b"]
    reader.close()
    writer.backend.close()


def test_a_retrieval_of_any_k_the_api_takes_replays(tmp_path: Path) -> None:
    """``k`` above a million was taken by the call and refused by another process's replay."""
    path = str(tmp_path / "m.db")
    writer = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    memory = writer.scope(user="alice")
    memory.add("tea at five")
    assert [h.id for h in memory.retrieve("tea", k=2_000_000)] == ["m1"]
    reader = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    assert len(reader.scope(user="alice")) == 1
    reader.close()
    writer.close()
