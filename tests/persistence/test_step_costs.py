"""What a logged step costs, and that the cheaper ways it is written change nothing stored.

A step's row is written through short cuts (its checksum's JSON written directly, the step's
input through one C encoder made once, the clock readings by ``repr``, flat metadata copied
rather than sent through JSON and back, a class for the SQLite transaction): each must give
exactly what the general way gives, bytes included, since the checksums of rows already in
databases, and other processes' replays, depend on them. Also the statements a step runs.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from solar_core import PersistenceError
from solar_core.engine.steps import Lookup, Offer
from solar_core.persistence import MemoryStore, journal
from solar_core.persistence.backend import OpRow, _op_checksum, row_checksum
from solar_core.persistence.journal import (
    Journal,
    _clocks_json,
    _flat_json,
    _step_json,
    plain_json,
)
from solar_core.persistence.sqlite_backend import SQLiteBackend

#: any str, lone surrogates included (a replayed row's text may hold anything)
_TEXT = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF))
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)


# -- the row checksum ---------------------------------------------------------------------------
@given(
    scope_id=st.integers(min_value=0, max_value=2**62),
    seq=st.integers(min_value=0, max_value=2**62),
    kind=_TEXT,
    args=_TEXT,
    clocks=_TEXT,
    digest=_TEXT,
    vector=st.none() | st.binary(max_size=64),
)
def test_a_log_rows_checksum_is_the_general_one(
    scope_id: int, seq: int, kind: str, args: str, clocks: str, digest: str, vector: bytes | None
) -> None:
    op = OpRow(seq, kind, args, vector, clocks, digest)
    assert _op_checksum(scope_id, op) == row_checksum(
        scope_id, [seq, kind, args, clocks, digest], vector
    )


def test_a_forged_rows_odd_fields_take_the_general_path() -> None:
    # (a database writer may store anything in a column: the same answer, or the same error)
    odd = OpRow(True, "add", "{}", None, "[]", "")
    assert _op_checksum(1, odd) == row_checksum(1, [True, "add", "{}", "[]", ""], None)
    blob = OpRow(1, "add", b"{}", None, "[]", "")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        row_checksum(1, [1, "add", b"{}", "[]", ""], None)
    with pytest.raises(TypeError):
        _op_checksum(1, blob)


# -- a step's input -----------------------------------------------------------------------------
@given(_JSON)
def test_a_steps_input_is_written_as_json_dumps_writes_it(value: Any) -> None:
    assert _step_json(value, "input") == json.dumps(value)


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="CPython's C encoder")
def test_a_steps_input_takes_the_c_encoder_made_once() -> None:
    assert journal._ENCODE is not None


def test_an_input_json_cannot_write_is_refused_as_before() -> None:
    inside: list[Any] = []
    inside.append(inside)
    for bad in ({"id": object()}, {"ids": {1, 2}}, {"me": inside}):
        with pytest.raises(TypeError, match="must be JSON-serialisable") as got:
            _step_json(bad, "a step's input")
        with pytest.raises(TypeError) as general:
            plain_json(bad, "a step's input")
        assert str(got.value) == str(general.value)


@given(
    st.lists(
        st.floats(allow_nan=False, allow_infinity=False)
        | st.integers(min_value=-(2**70), max_value=2**70),
        max_size=4,
    )
)
def test_clock_readings_are_written_as_json_dumps_writes_them(clocks: list[float]) -> None:
    assert _clocks_json(clocks) == json.dumps(clocks)


def test_readings_of_float_subclasses_are_written_as_json_dumps_writes_them() -> None:
    readings = [np.float64(1.5e9), 2.0, -0.0, 5e-324, 1.7976931348623157e308]
    assert _clocks_json(readings) == json.dumps(readings)


# -- an offer's metadata ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "meta",
    [
        {},
        {"human": "hi", "ai": "hello", "n": 3, "x": 0.1, "ok": True, "none": None},
        {"nan": math.nan, "inf": -math.inf, "big": 2**80, "zero": -0.0, "odd": "\ud800"},
    ],
)
def test_flat_metadata_is_copied_as_json_would_give_it_back(meta: dict[str, Any]) -> None:
    assert _flat_json(meta)
    offer = Offer("a turn", np.ones(4, np.float32), 0.5, meta, "turn-1")
    checked = _journal_check(offer)
    assert isinstance(checked, Offer)
    back = json.loads(json.dumps(meta))
    assert checked.metadata is not meta
    assert json.dumps(checked.metadata) == json.dumps(back)
    assert [type(v) for v in checked.metadata.values()] == [type(v) for v in back.values()]


@pytest.mark.parametrize(
    "meta",
    [{"tags": ("a", "b")}, {"nested": {"k": [1]}}, {"n": np.int64(3)}, {1: "int key"}],
)
def test_other_metadata_still_goes_through_json(meta: dict[Any, Any]) -> None:
    assert not _flat_json(meta)
    if isinstance(next(iter(meta.values())), np.integer):
        with pytest.raises(TypeError, match="JSON-serialisable"):
            _journal_check(Offer("a turn", np.ones(4, np.float32), None, meta))
        return
    checked = _journal_check(Offer("a turn", np.ones(4, np.float32), None, meta))
    assert isinstance(checked, Offer)
    assert checked.metadata == json.loads(json.dumps(meta))


def test_a_checked_offer_keeps_every_field() -> None:
    # check() builds the checked Offer field by field: a field added to Offer must be added
    # there too, or the checked step would silently take its default
    names = [f.name for f in dataclasses.fields(Offer)]
    assert names == [
        "text",
        "row",
        "scale",
        "metadata",
        "item_id",
        "category",
        "valid_until",
        "prepared",
        "update",
    ]
    offer = Offer(
        "a turn",
        np.array([3.0, 4.0], np.float32),
        0.2,
        {"k": "v"},
        "id-1",
        "knowledge",
        123.0,
        {"verdict": "keep"},
        True,
    )
    checked = _journal_check(offer)
    expected = dataclasses.replace(
        offer, row=offer.unit(), scale=None, metadata=dict(offer.metadata)
    )
    assert isinstance(checked, Offer)
    for name in names:
        mine, theirs = getattr(checked, name), getattr(expected, name)
        if isinstance(mine, np.ndarray):
            assert mine.tobytes() == theirs.tobytes()
        else:
            assert mine == theirs


def test_a_lookup_excluding_ids_that_are_no_json_is_refused_before_it_runs() -> None:
    ids: set[Any] = {object()}
    lookup = Lookup(np.ones(4, np.float32), "q", 3, True, ids, "hybrid", None, False)
    with pytest.raises(TypeError, match="exclude must be JSON-serialisable"):
        _journal_check(lookup)


_STORE = MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash", seed=0)


def _journal_check(step: Any) -> Any:
    """What a scope's journal makes of ``step`` before it runs."""
    journal = _STORE.scope(user="checks").runner
    assert isinstance(journal, Journal)
    return journal.check(step)


# -- the SQLite transaction ---------------------------------------------------------------------
@pytest.fixture
def backend(tmp_path: Path) -> SQLiteBackend:
    made = SQLiteBackend(tmp_path / "t.db", busy_timeout=0.05)
    made.execute("CREATE TABLE t (x INTEGER)")
    return made


def _count(backend: SQLiteBackend) -> int:
    with backend.transaction(write=False):
        return int(backend.execute("SELECT COUNT(*) FROM t").fetchone()[0])


def _lock_is_free(backend: SQLiteBackend) -> bool:
    """Whether another thread can take the backend's lock (its transaction let go of it)."""
    taken: list[bool] = []

    def take() -> None:
        taken.append(backend.lock.acquire(timeout=1))
        if taken[0]:
            backend.lock.release()

    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return taken[0]


def test_a_transaction_commits_what_its_block_wrote(backend: SQLiteBackend) -> None:
    with backend.transaction(write=True):
        backend.execute("INSERT INTO t VALUES (1)")
    assert _count(backend) == 1 and _lock_is_free(backend)


def test_a_failed_block_is_rolled_back_and_its_error_raised_as_it_is(
    backend: SQLiteBackend,
) -> None:
    class Boom(Exception):
        pass

    with pytest.raises(Boom):
        with backend.transaction(write=True):
            backend.execute("INSERT INTO t VALUES (1)")
            raise Boom
    assert _count(backend) == 0 and _lock_is_free(backend)


def test_a_drivers_error_in_a_block_is_a_persistence_error(backend: SQLiteBackend) -> None:
    with pytest.raises(PersistenceError, match="no such table"):
        with backend.transaction(write=True):
            backend.execute("INSERT INTO t VALUES (1)")
            backend.execute("INSERT INTO missing VALUES (1)")
    assert _count(backend) == 0 and _lock_is_free(backend)


def test_a_transaction_that_cannot_begin_lets_go_of_the_lock(
    backend: SQLiteBackend, tmp_path: Path
) -> None:
    other = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        with pytest.raises(PersistenceError, match="locked"):
            with backend.transaction(write=True):
                pytest.fail("began")  # pragma: no cover
        assert _lock_is_free(backend)
    finally:
        other.execute("ROLLBACK")
        other.close()
    with backend.transaction(write=True):  # and it begins once the other one is done
        backend.execute("INSERT INTO t VALUES (1)")
    assert _count(backend) == 1


# -- the statements of a step -------------------------------------------------------------------
def test_a_step_is_one_transaction_of_five_statements(tmp_path: Path) -> None:
    """A retrieval of a stored scope, nobody else writing: the transaction, one look at whether
    another process committed, the log row, the scope's seq. Nothing is read twice."""
    store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=5, embedder="hash", seed=0)
    memory = store.scope(user="ann")
    memory.add("my locker code is 1234")
    statements: list[str] = []
    connection = store.backend._conn  # type: ignore[attr-defined]
    connection.set_trace_callback(statements.append)
    try:
        hits = memory.retrieve("locker code", k=1)
    finally:
        connection.set_trace_callback(None)
    assert [h.text for h in hits] == ["my locker code is 1234"]
    assert [s.split(" (")[0].split(" SET")[0] for s in statements] == [
        "BEGIN IMMEDIATE",
        "PRAGMA data_version",
        "INSERT INTO solar_ops",
        "UPDATE solar_scopes",
        "COMMIT",
    ]
    store.close()


def test_a_commit_interrupted_is_rolled_back_and_its_interruption_raised(
    backend: SQLiteBackend,
) -> None:
    class Interrupted(BaseException):
        pass

    class Connection:
        """The backend's connection, whose COMMIT is interrupted (a signal, say)."""

        def __init__(self, real: sqlite3.Connection) -> None:
            self.real = real

        def execute(self, sql: str, params: Any = ()) -> Any:
            if sql == "COMMIT":
                raise Interrupted
            return self.real.execute(sql, params)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.real, name)

    real = backend._conn
    backend._conn = Connection(real)  # type: ignore[assignment]
    try:
        with pytest.raises(Interrupted):
            with backend.transaction(write=True):
                backend.execute("INSERT INTO t VALUES (1)")
    finally:
        backend._conn = real
    assert not real.in_transaction and _count(backend) == 0 and _lock_is_free(backend)
