"""A persisted lookup logs its ranking and floor: a replay ranks as the live step did."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from solar_core import PersistenceError, SolarMemory
from solar_core.persistence import MemoryStore
from solar_core.persistence.backend import OpRow, _op_checksum
from solar_core.persistence.logged_steps import read

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels

TEXTS = [
    "my dog is called Max",
    "green tea with lemon",
    "the invoice 4471 was paid",
    "the door squeaks at night",
    "Max loves the beach",
    "tea at five",
]


def policy_state(memory: SolarMemory) -> list[tuple[str, dict[str, float]]]:
    return [(item.id, dict(item.policy)) for item in memory.items()]


def test_a_replay_ranks_as_logged_whatever_the_reopening_store_says(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    writer = MemoryStore(
        path, policy="solar", capacity=4, embedder="hash", seed=0, min_score=0.2, snapshot_every=50
    )
    live = writer.scope(user="alice")
    for i, text in enumerate(TEXTS):
        live.add(text)
        hits = live.retrieve(["what is my dog called?", "tea", "invoice 4471"][i % 3], k=2)
        if hits:
            live.feedback(like=i % 2 == 0, retrieval=hits)
    expected = policy_state(live)
    # Another process reads the log with other settings: the logged ones rank each lookup.
    reader = MemoryStore(
        path, policy="solar", capacity=4, embedder="hash", retrieval="vector", min_score=None
    )
    replayed = reader.scope(user="alice")
    assert policy_state(replayed) == expected
    assert replayed.retrieval == "vector" and replayed.min_score is None  # its own from now on
    replayed.check_invariants()
    reader.close()
    writer.close()


def _strip_ranking(path: Path) -> int:
    """Rewrite the scope's last logged retrieval without its ``ranking`` and ``floor`` (as rows
    were logged before hybrid retrieval), checksum and all; returns its step number."""
    con = sqlite3.connect(path)
    with con:
        scope_id, seq, args, vector, clocks, digest = con.execute(
            "SELECT scope_id, seq, args, vector, clocks, digest FROM solar_ops "
            "WHERE kind = 'retrieve' ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        values = json.loads(args)
        del values["ranking"], values["floor"]
        op = OpRow(seq, "retrieve", json.dumps(values), vector, clocks, digest)
        con.execute(
            "UPDATE solar_ops SET args = ?, checksum = ? WHERE scope_id = ? AND seq = ?",
            (op.args, _op_checksum(scope_id, op), scope_id, seq),
        )
    con.close()
    return int(seq)


def test_a_logged_lookup_without_its_ranking_is_refused(tmp_path: Path) -> None:
    """Retrieve rows always carry ``ranking`` and ``floor``: a row without them (logged before
    hybrid retrieval, or forged) is not guessed at -- the replay stops, naming the step."""
    path = tmp_path / "m.db"
    writer = MemoryStore(path, policy="fifo", capacity=5, embedder="hash", snapshot_every=50)
    live = writer.scope(user="alice")
    live.add("green tea with lemon")
    live.retrieve("tea", k=1)
    seq = _strip_ranking(path)
    reader = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    with pytest.raises(
        PersistenceError, match=rf"step {seq} \(retrieve\) cannot be replayed: .*fields"
    ):
        reader.scope(user="alice")
    reader.close()
    writer.backend.close()
    memory = SolarMemory("fifo", 5, dim=4)
    vector = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
    with pytest.raises(ValueError, match="not a retrieve step's"):  # the reader's own check
        read("retrieve", {"query": "tea", "k": 2, "exclude": []}, vector, memory.dim)


LOGGED = {"query": "tea", "k": 2, "exclude": [], "ranking": "hybrid", "floor": 0.05}


def test_a_logged_lookup_replays_its_ranking_and_floor() -> None:
    vector = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
    step = read("retrieve", LOGGED, vector, 4)
    assert (step.retrieval, step.floor) == ("hybrid", 0.05)  # type: ignore[union-attr]
    plain = read("retrieve", {**LOGGED, "ranking": "vector", "floor": None}, vector, 4)
    assert (plain.retrieval, plain.floor) == ("vector", None)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "bad",
    [
        {"ranking": "bm25"},
        {"floor": float("nan")},
        {"floor": 1},
        {"ranking": None},
        {"extra": 1},
        {"gate": False},
        {"rm": "hybrid"},  # a field under a name of the first log format
    ],
)
def test_a_logged_lookup_with_a_ranking_or_floor_no_call_makes_is_refused(
    bad: dict[str, object],
) -> None:
    memory = SolarMemory("fifo", 5, dim=4)
    vector = np.array([1.0, 0.0, 0.0, 0.0], np.float32)
    with pytest.raises(ValueError, match="not a retrieve step's"):
        read("retrieve", {**LOGGED, **bad}, vector, memory.dim)


def test_a_gated_lookup_replays_gated(tmp_path: Path) -> None:
    """``min_score="strict"`` is logged with the lookup: a reader replays the lookup it gated
    as gated (crediting nothing), whatever its own setting."""
    path = tmp_path / "m.db"
    writer = MemoryStore(path, policy="lfu", capacity=10, dim=2, min_score="strict")
    live = writer.scope(user="ann")
    live.add("I fixed the squeaky door with some oil", embedding=[1.0, 0.0])
    live.add("Max chased the neighbour's cat", embedding=[0.6, 0.8])
    assert not live.retrieve("What's the capital of Peru?", embedding=[-0.6, 0.8])
    assert live.retrieve("Max chased the cat?", embedding=[-0.493, 0.870])
    expected = policy_state(live)
    assert [p["count"] for _, p in expected] == [0.0, 1.0]
    reader = MemoryStore(path, policy="lfu", capacity=10, dim=2, min_score="auto")
    replayed = reader.scope(user="ann")
    assert policy_state(replayed) == expected
    replayed.check_invariants()
    reader.close()
    writer.close()
