"""Snapshots forged to make a reader work without bound are refused, having cost about what was
read: a trace past its bound, arrays a small snapshot claims but does not hold, item metadata
nested past the JSON bound, a size unlike the scope's, parameters other than the scope's. And a
snapshot is as small as what the memory holds: a one-item scope takes a few kilobytes.

A snapshot is a container (:mod:`solar_core.persistence.container`) of the memory's parameters
and its flat state: a forgery edits the state dict and writes it with ``container.dumps``, or
writes the container's bytes itself (whoever can write the database can compute the checksum).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import HashEmbedder, MemoryStore, PersistenceError, SolarMemory
from solar_core.basics.state import MAX_JSON_DEPTH
from solar_core.persistence import container
from solar_core.persistence.journal import InconsistentSnapshot, snapshot_params
from solar_core.policies.eviction import CoverageEviction


def _memory(steps: int = 12, metadata: bool = True) -> SolarMemory:
    memory = SolarMemory("solar-adaptive", capacity=20, embedder=HashEmbedder(32), seed=0)
    for i in range(steps):
        if memory.retrieve(f"tea {i % 4}", k=3):
            memory.feedback(like=i % 2 == 0)
        meta = {"i": i, "tags": ["a", "b"]} if metadata else None
        memory.add(f"fact {i} about tea {i % 4}", metadata=meta)
    return memory


class _Scope:
    """A stored scope (solar-adaptive, capacity 20, 32-d) with a snapshot, to forge."""

    def __init__(self, path: Path) -> None:
        self.path = path
        store = self.store()
        memory = store.scope(user="alice")
        for i in range(12):
            if memory.retrieve(f"tea {i % 4}", k=3):
                memory.feedback(like=i % 2 == 0)
            memory.add(f"fact {i} about tea {i % 4}", metadata={"i": i, "tags": ["a", "b"]})
        store.close()  # writes a snapshot

    def store(self) -> MemoryStore:
        return MemoryStore(
            self.path, policy="solar-adaptive", capacity=20, embedder=HashEmbedder(32), seed=0
        )

    def blob(self) -> bytes:
        with sqlite3.connect(self.path) as db:
            (blob,) = db.execute("SELECT state FROM solar_snapshots").fetchone()
        db.close()
        return bytes(blob)

    def loaded(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The snapshot's parameters and state (its own copies: to forge)."""
        params, state = container.loads(self.blob(), "the snapshot")
        return params, {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in state.items()}

    def write(self, blob: bytes) -> None:
        with sqlite3.connect(self.path) as db:
            db.execute("UPDATE solar_snapshots SET state = ?", (blob,))
        db.close()

    def reopen(self) -> int:
        """Open the scope again (its snapshot read): how many items it holds."""
        store = self.store()
        try:
            return len(store.scope(user="alice"))
        finally:
            store.close()


@pytest.fixture
def scope(tmp_path: Path) -> _Scope:
    return _Scope(tmp_path / "m.db")


def _forged(scope: _Scope, forge: Any) -> None:
    """Edit the scope's snapshot with ``forge(params, state)`` and write it back."""
    params, state = scope.loaded()
    forge(params, state)
    scope.write(container.dumps(params, state))


def _parts(blob: bytes) -> tuple[dict[str, Any], bytes]:
    """A container's JSON header and its arrays section."""
    start = len(container.MAGIC) + struct.calcsize("<HIQ")
    _, header_len, arrays_len = struct.unpack_from("<HIQ", blob, len(container.MAGIC))
    header = json.loads(blob[start : start + header_len])
    return header, blob[start + header_len : start + header_len + arrays_len]


def _blob(header: dict[str, Any] | bytes, arrays: bytes, version: int = container.FORMAT) -> bytes:
    """A container of ``header`` and ``arrays``, with the lengths and checksum that make it
    pass every check of its bytes."""
    if isinstance(header, dict):
        header = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    head = container.MAGIC + struct.pack("<HIQ", version, len(header), len(arrays))
    head += header + arrays
    return head + hashlib.blake2b(head, digest_size=32).digest()


def test_the_untouched_snapshot_loads(scope: _Scope) -> None:
    params, state = scope.loaded()
    assert len(state["item.text"]) == 12
    scope.write(container.dumps(params, state))
    assert scope.reopen() == 12


def test_a_trace_past_its_bound_is_refused(scope: _Scope) -> None:
    """18,000 rows sharing one list, in a trace with no bound, took 17.6 s and 2.5 GB."""

    def longer(params: dict[str, Any], state: dict[str, Any]) -> None:
        n = params["trace_size"] + 1
        state["found.time"] = np.zeros(n)
        state["found.query"] = [None] * n
        state["found.count"] = np.zeros(n, np.int32)

    _forged(scope, longer)
    with pytest.raises(InconsistentSnapshot, match="more than trace_size = 1000 entries"):
        scope.reopen()


@pytest.mark.parametrize("shape", [[10**9], [1 << 20, 1 << 19], [1 << 39]])
def test_arrays_a_small_snapshot_claims_are_refused_before_they_are_allocated(
    shape: list[int],
) -> None:
    """Arrays follow one another, each read once: one claiming more bytes than the section
    holds is refused unread (before: 300 tables over one 1 MiB region reached 2.45 GB)."""
    header, arrays = _parts(container.dumps({}, {"a": np.arange(4.0)}))
    header["arrays"].append(["huge", "<f8", shape])
    tracemalloc.start()
    with pytest.raises(PersistenceError, match="'huge' runs past the arrays section"):
        container.loads(_blob(header, arrays), "the snapshot")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1e6, peak


def test_bytes_no_array_claims_or_one_region_read_twice_are_refused() -> None:
    header, arrays = _parts(container.dumps({}, {"a": np.arange(4.0)}))
    with pytest.raises(PersistenceError, match="bytes no array claims"):
        container.loads(_blob(header, arrays + bytes(8)), "the snapshot")
    header["arrays"].append(["b", "<f8", [4]])  # the same bytes, read again
    with pytest.raises(PersistenceError, match="'b' runs past the arrays section"):
        container.loads(_blob(header, arrays), "the snapshot")
    header["arrays"][1][0] = "a"
    with pytest.raises(PersistenceError, match="holds 'a' twice"):
        container.loads(_blob(header, arrays + arrays), "the snapshot")


@pytest.mark.parametrize("dtype", ["|O", "<U8", "<c16", ">f8", [0], {"<f8": 1}])
def test_an_array_of_a_dtype_a_snapshot_never_holds_is_refused(dtype: object) -> None:
    """A dtype that is a list or a mapping escaped as a TypeError (unhashable)."""
    header, arrays = _parts(container.dumps({}, {"a": np.arange(2.0)}))
    header["arrays"][0][1] = dtype
    with pytest.raises(PersistenceError, match="describes an array as"):
        container.loads(_blob(header, arrays), "the snapshot")


def test_metadata_nested_past_the_bound_is_refused(scope: _Scope) -> None:
    """JSON shares nothing: a value is as big as its text (before: 60 lists each holding the
    next twice made 2**60 leaves for an export). Metadata is checked as ``add()`` checks it,
    its nesting bounded as there."""

    def deep(params: dict[str, Any], state: dict[str, Any]) -> None:
        node: object = "leaf"
        for _ in range(110):
            node = [node]
        state["item.metadata"][0]["deep"] = node

    _forged(scope, deep)
    with pytest.raises(InconsistentSnapshot, match="item in slot 0 nests deeper than 100 levels"):
        scope.reopen()


def test_a_value_nested_past_the_json_bound_is_refused(scope: _Scope) -> None:
    def deep(params: dict[str, Any], state: dict[str, Any]) -> None:
        node: object = "leaf"
        for _ in range(MAX_JSON_DEPTH + 10):
            node = [node]
        state["trace.deleted"][0] = node

    _forged(scope, deep)
    with pytest.raises(InconsistentSnapshot, match=f"nests deeper than {MAX_JSON_DEPTH} levels"):
        scope.reopen()


def test_a_header_nested_past_the_parsers_bound_is_refused() -> None:
    """A header of 100,000 nested lists: refused as no JSON, not a crash of the reader."""
    header = b'{"params":{},"values":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b'},"arrays":[]}'
    with pytest.raises(PersistenceError, match="not JSON"):
        container.loads(_blob(header, b""), "the snapshot")


@pytest.mark.parametrize("name", ["capacity", "dim"])
def test_a_size_unlike_the_scopes_is_refused_before_anything_is_allocated(
    scope: _Scope, name: str
) -> None:
    """The rows a snapshot leaves out are made again on load: as many as the scope's settings
    say, never as many as a forged snapshot asks."""

    def bigger(params: dict[str, Any], state: dict[str, Any]) -> None:
        params[name] = 10**9

    _forged(scope, bigger)
    tracemalloc.start()
    with pytest.raises(PersistenceError, match=rf"other parameters than the scope's \({name}\)"):
        scope.reopen()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 50e6, peak


def test_rows_unlike_the_capacity_are_refused(scope: _Scope) -> None:
    def more(params: dict[str, Any], state: dict[str, Any]) -> None:
        state["store.rows"] = 10**9

    _forged(scope, more)
    with pytest.raises(InconsistentSnapshot, match="rows must be an int in"):
        scope.reopen()


def test_a_snapshot_leaves_out_the_rows_nothing_has_used() -> None:
    memory = SolarMemory("solar-adaptive", capacity=100, embedder=HashEmbedder(256), seed=0)
    memory.add("one fact")
    memory.retrieve("one")
    blob = container.dumps(snapshot_params(memory), memory.state())
    assert len(blob) < 8192  # (the 100 x 256 matrix and the 256 x 256 ring were 360 KB)
    params, state = container.loads(blob, "the snapshot")
    reading = {k: v for k, v in memory.params().items() if k not in params}
    back = SolarMemory.from_params({**params, **reading}, embedder=HashEmbedder(256), seed=0)
    back.load_state(state)
    store, live_store = back.core.store, memory.core.store
    assert store.matrix.shape == (100, 256) and len(store._free) == 99
    assert np.array_equal(store.matrix, live_store.matrix)
    assert store._free == live_store._free
    ring, live = back.core.eviction, memory.core.eviction
    assert isinstance(ring, CoverageEviction) and isinstance(live, CoverageEviction)
    assert ring._queries.shape == live._queries.shape == (256, 256)
    assert np.array_equal(ring._owner, live._owner) and np.array_equal(ring._queries, live._queries)


def test_a_one_item_scope_of_the_default_policy_takes_a_few_kilobytes(tmp_path: Path) -> None:
    """It took 318 KB: the whole ``capacity x dim`` matrix and the coverage ring, zeros."""
    path = tmp_path / "m.db"
    store = MemoryStore(str(path))
    users = 100
    for user in range(users):
        store.scope(user=f"u{user}").add(f"user {user} drinks tea")
    store.close()
    assert os.path.getsize(path) / users <= 8192


def test_the_header_is_what_the_forgeries_above_recompute() -> None:
    memory = _memory()
    blob = container.dumps(snapshot_params(memory), memory.state())
    assert _blob(*_parts(blob)) == blob
    assert struct.unpack_from("<H", blob, len(container.MAGIC))[0] == container.FORMAT


@pytest.mark.parametrize("shared", [False, True])
def test_long_lists_of_numbers_in_metadata_reopen(tmp_path: Path, shared: bool) -> None:
    """Metadata is JSON in the header: 5,000 floats were once refused. A list the caller put
    under two keys is logged, and snapshotted, as two."""
    path = str(tmp_path / "m.db")
    numbers = [float(i) for i in range(5000)]
    metadata = {"a": numbers, "b": numbers} if shared else {"a": numbers}
    store = MemoryStore(path, policy="fifo", capacity=4, embedder="hash")
    store.scope(user="a").add("a fact with numbers", metadata=metadata)
    store.close()
    again = MemoryStore(path, policy="fifo", capacity=4, embedder="hash")
    [item] = again.scope(user="a").items()
    assert item.metadata == metadata
    again.close()


@pytest.mark.parametrize("version", [0, 2, 3, 65535])
def test_a_snapshot_labelled_as_another_format_is_refused_unread(
    scope: _Scope, version: int
) -> None:
    """Another format is not read at all: no size a forged one asks for is allocated."""

    def bigger(params: dict[str, Any], state: dict[str, Any]) -> None:
        params["capacity"] = 10**9

    _forged(scope, bigger)
    scope.write(_blob(*_parts(scope.blob()), version=version))
    with pytest.raises(PersistenceError, match=f"snapshot format {version}, which.*reembed"):
        scope.reopen()


@pytest.mark.parametrize(
    "rng",
    [
        {"bit_generator": "MT19937", "state": {"key": [0] * 624, "pos": 624}},
        {"bit_generator": "PCG64", "state": "x"},
        {"bit_generator": "PCG64"},
    ],
)
def test_a_random_generator_of_another_kind_or_state_is_refused(
    scope: _Scope, rng: dict[str, Any]
) -> None:
    """A snapshot holds the state of the one generator its parameters name (before: 100,000
    generators of any kind took 30 s and 444 MB)."""

    def other(params: dict[str, Any], state: dict[str, Any]) -> None:
        state["rng"] = rng

    _forged(scope, other)
    with pytest.raises(InconsistentSnapshot, match="rng"):
        scope.reopen()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("journal", 1.5),
        ("eviction.weakest", "x"),  # a slot or null
        ("eviction.fast_miss", "x"),  # a number or null
        ("eviction.fixed_window", 3),  # a setting, not a value of the state
        ("store.neighbours", ["x"]),
        ("lifecycle.last_decay", "x"),  # a time or null
        ("pending_score", "x"),  # a number or null
    ],
)
def test_a_value_a_new_memory_holds_as_null_holds_only_what_it_reads_as(
    scope: _Scope, name: str, value: object
) -> None:
    """A value that is null in a new memory may hold only what its part reads there: before,
    a forged ``_deletion='x'`` loaded and then made every ``add`` of the scope raise."""

    def forge(params: dict[str, Any], state: dict[str, Any]) -> None:
        state[name] = value

    _forged(scope, forge)
    with pytest.raises(InconsistentSnapshot, match=name.rpartition(".")[2]):
        scope.reopen()


@pytest.mark.parametrize(
    ("name", "value"), [("deletion", "x"), ("deletion.sum", [1.0]), ("admission.tau", 1.0)]
)
def test_state_of_a_part_the_memory_does_not_have_is_refused(
    scope: _Scope, name: str, value: object
) -> None:
    """The scope's memory has no deletion policy and no admission gate of its own: a value
    for one is a name no part knows, refused as any unknown name is (``zzz`` is)."""

    def forge(params: dict[str, Any], state: dict[str, Any]) -> None:
        assert params["deletion"] is None and params["admission"] is None
        state[name] = value

    _forged(scope, forge)
    with pytest.raises(InconsistentSnapshot, match=f"unknown state {name}"):
        scope.reopen()


def test_what_a_part_reads_for_a_value_new_memories_hold_as_null_loads() -> None:
    memory = _memory()
    state = memory.state()
    state["eviction.fast_miss"] = 0.25
    weakest = memory.core.store.active_slots()[0]
    state["eviction.weakest"] = int(weakest)
    params, state = container.loads(container.dumps(memory.params(), state), "the snapshot")
    back = SolarMemory.from_params(params, embedder=HashEmbedder(32), seed=0)
    back.load_state(state)
    eviction = back.core.eviction
    assert isinstance(eviction, CoverageEviction)
    assert eviction._fast_miss == 0.25
    assert eviction._weakest is not None and eviction._weakest[1] == weakest
