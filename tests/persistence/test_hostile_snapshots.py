"""Snapshots forged to make a reader work without bound are refused, having cost about what was
read: a trace with no bound, one region of the arrays read by table after table, item metadata
that shares its lists (2**60 leaves from 60 nodes), a size unlike the scope's. And a snapshot is
as small as what the memory holds: a one-item scope takes a few kilobytes."""

from __future__ import annotations

import json
import os
import struct
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import HashEmbedder, MemoryStore, PersistenceError, SolarMemory
from solar_core.eviction import CoverageEviction
from solar_core.persistence import codec
from solar_core.persistence.journal import snapshot_state


def _memory(steps: int = 12, metadata: bool = True) -> SolarMemory:
    memory = SolarMemory("solar-adaptive", capacity=20, embedder=HashEmbedder(32), seed=0)
    for i in range(steps):
        if memory.retrieve(f"tea {i % 4}", k=3):
            memory.feedback(like=i % 2 == 0)
        meta = {"i": i, "tags": ["a", "b"]} if metadata else None
        memory.add(f"fact {i} about tea {i % 4}", metadata=meta)
    return memory


def _load(state: dict[str, Any] | bytes) -> Any:
    """``state`` read back as a store reads a snapshot: against a new memory of its settings
    and one that took a few steps."""
    blob = state if isinstance(state, bytes) else codec.dumps(state)
    new, used = snapshot_state(_memory(0)), snapshot_state(_memory(3, metadata=False))
    return codec.loads(blob, "the snapshot", new, (used,))


def _parts(blob: bytes) -> tuple[dict[str, Any], bytes]:
    start = codec._PREFIX + codec._DIGEST
    _, doc_len, _ = codec._HEAD.unpack_from(blob, len(codec.MAGIC))
    return json.loads(blob[start : start + doc_len]), blob[start + doc_len :]


def _blob(document: dict[str, Any], arrays: bytes) -> bytes:
    """A snapshot of ``document`` and ``arrays``, with the header and checksum that make it
    pass every check of its bytes (whoever can write the database can compute them)."""
    import hashlib

    doc = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    prefix = codec.MAGIC + codec._HEAD.pack(codec.FORMAT_VERSION, len(doc), len(arrays))
    digest = hashlib.blake2b(prefix, digest_size=codec._DIGEST)
    digest.update(doc + arrays)
    return prefix + digest.digest() + doc + arrays


def test_the_untouched_snapshot_loads() -> None:
    state = _load(snapshot_state(_memory()))
    assert len(state["_store"]) == 12


def test_a_trace_without_its_bound_is_refused() -> None:
    """18,000 rows sharing one list, in a trace with no maxlen, took 17.6 s and 2.5 GB."""
    state = snapshot_state(_memory())
    state["_retrieval_trace"] = deque(state["_retrieval_trace"])  # maxlen None
    with pytest.raises(PersistenceError, match="_retrieval_trace is a deque"):
        _load(state)


def test_one_region_read_by_many_tables_is_refused() -> None:
    """300 tables over one 1 MiB region reached 2.45 GB before they were refused."""
    document, arrays = _parts(codec.dumps(snapshot_state(_memory())))
    offset = len(arrays) + (-len(arrays)) % 8
    region = np.arange(1 << 14, dtype="<f8").tobytes()
    arrays = arrays + bytes(offset - len(arrays)) + region
    table = ["#", "C", 1, 1 << 14, [["a", "<f8", offset]]]
    document["root"][1]["_trace_times"] = ["Q", 1000, *[["L", table] for _ in range(300)]]
    with pytest.raises(PersistenceError, match="reads its arrays more than once"):
        _load(_blob(document, arrays))


def test_metadata_that_shares_its_lists_is_refused() -> None:
    """60 lists each holding the next twice: 60 nodes read, 2**60 leaves for an export."""
    memory = _memory()
    state = snapshot_state(memory)
    node: object = "leaf"
    for _ in range(60):
        node = [node, node]
    state["_store"]._payloads[0].metadata["deep"] = node
    with pytest.raises(PersistenceError, match="metadata holds one list or dict many times over"):
        _load(state)


@pytest.mark.parametrize("attribute", ["capacity", "dim"])
def test_a_size_unlike_the_scopes_is_refused_before_anything_is_allocated(
    attribute: str,
) -> None:
    """The rows a snapshot leaves out are made again on load: as many as the scope's settings
    say, never as many as a forged state asks."""
    state = snapshot_state(_memory())
    setattr(state["_store"], attribute, 10**9)
    with pytest.raises(PersistenceError, match=f"VectorStore.{attribute} is 1000000000"):
        _load(state)


def test_a_snapshot_leaves_out_the_rows_nothing_has_used() -> None:
    memory = SolarMemory("solar-adaptive", capacity=100, embedder=HashEmbedder(256), seed=0)
    memory.add("one fact")
    memory.retrieve("one")
    blob = codec.dumps(snapshot_state(memory))
    assert len(blob) < 8192  # (the 100 x 256 matrix and the 256 x 256 ring were 360 KB)
    back = _load_like(memory, blob)
    store = back["_store"]
    assert store.matrix.shape == (100, 256) and len(store._free) == 99
    assert np.array_equal(store.matrix, memory.core.store.matrix)
    assert store._free == memory.core.store._free
    ring, live = back["_eviction"], memory.core.eviction
    assert isinstance(live, CoverageEviction)
    assert ring._queries.shape == live._queries.shape == (256, 256)
    assert np.array_equal(ring._owner, live._owner) and np.array_equal(ring._queries, live._queries)


def _load_like(memory: SolarMemory, blob: bytes) -> Any:
    fresh = SolarMemory("solar-adaptive", capacity=100, embedder=HashEmbedder(256), seed=0)
    return codec.loads(blob, "the snapshot", snapshot_state(fresh), (snapshot_state(memory),))


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
    blob = codec.dumps(snapshot_state(_memory()))
    assert _blob(*_parts(blob)) == blob
    assert struct.unpack_from("<H", blob, len(codec.MAGIC))[0] == codec.FORMAT_VERSION


@pytest.mark.parametrize("shared", [False, True])
def test_long_lists_of_numbers_in_metadata_reopen(tmp_path: Path, shared: bool) -> None:
    """A list of numbers is a raw column in the arrays, not in the document: metadata is
    measured against both (5,000 floats were refused). A list the caller put under two keys
    is logged, and snapshotted, as two."""
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


def _as_format(blob: bytes, version: int) -> bytes:
    document, arrays = _parts(blob)
    document["format"] = version
    forged = _blob(document, arrays)
    head = codec.MAGIC + codec._HEAD.pack(version, *codec._HEAD.unpack_from(forged, 17)[1:])
    import hashlib

    digest = hashlib.blake2b(head, digest_size=codec._DIGEST)
    digest.update(forged[len(head) + codec._DIGEST :])
    return head + digest.digest() + forged[len(head) + codec._DIGEST :]


def test_a_size_in_a_snapshot_labelled_as_a_former_format_allocates_nothing() -> None:
    """A former format is read without a template first (then brought to today's layout and
    checked): the rows a forged capacity asks for were made in that first read."""
    state = snapshot_state(_memory())
    state["_store"].capacity = 10**9
    with pytest.raises(PersistenceError, match="VectorStore.capacity is 1000000000"):
        _load(_as_format(codec.dumps(state), 3))


def test_a_snapshot_of_many_random_generators_is_refused() -> None:
    """Each takes kilobytes and the system's entropy to make: 100,000 took 30 s and 444 MB."""
    state = snapshot_state(_memory())
    many = [np.random.Generator(np.random.MT19937(seed)) for seed in range(9)]
    state["_trace_times"] = deque(many, maxlen=state["_trace_times"].maxlen)
    with pytest.raises(PersistenceError, match="more than 8 random generators"):
        _load(state)


def test_a_shipped_prior_whose_file_changed_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot names a shipped prior and the digest of its file: a release that changed
    the weights must not go on with them silently."""
    from solar_core import salience

    memory = SolarMemory("solar-dialogue", capacity=8, embedder=HashEmbedder(32), seed=0)
    memory.add("I moved to Lisbon last May.")
    blob = codec.dumps(snapshot_state(memory))
    fresh = SolarMemory("solar-dialogue", capacity=8, embedder=HashEmbedder(32), seed=0)
    template = snapshot_state(fresh)
    back = codec.loads(blob, "the snapshot", template, (snapshot_state(memory),))
    assert back["_eviction"].prior == memory.core.eviction.prior  # type: ignore[attr-defined]
    name = memory.core.eviction.prior.name  # type: ignore[attr-defined]
    monkeypatch.setitem(salience._digests, name, "0" * 16)
    with pytest.raises(PersistenceError, match="not the one this snapshot was written with"):
        codec.loads(blob, "the snapshot", template, (snapshot_state(memory),))


@pytest.mark.parametrize(
    ("where", "attribute", "value"),
    [
        ("root", "_deletion", "x"),  # loaded, then every add raised
        ("root", "_journal", 1.5),
        ("eviction", "_weakest", "x"),  # declared a tuple
        ("eviction", "_fast_miss", "x"),  # declared a float
        ("eviction", "fixed_window", 3),  # a setting the scope's settings leave unset
        ("store", "neighbours", ("x",)),
        ("lifecycle", "_last_decay", "x"),  # declared a float
    ],
)
def test_what_a_new_memory_holds_as_none_holds_only_what_its_class_declares(
    where: str, attribute: str, value: object
) -> None:
    """An attribute that is None in a new memory of the scope's settings and in one that took a
    few steps may hold only what its class's annotation of it says (nothing else if it has
    none): before, it took anything, so a forged ``_deletion='x'`` loaded and then made every
    ``add`` of the scope raise."""
    state = snapshot_state(_memory())
    if where == "root":
        state[attribute] = value
    else:
        target = state["lifecycle" if where == "lifecycle" else f"_{where}"]
        target.__dict__[attribute] = value
    with pytest.raises(PersistenceError, match=attribute):
        _load(state)


def test_what_a_class_declares_for_an_attribute_new_memories_hold_as_none_loads() -> None:
    state = snapshot_state(_memory())
    eviction = state["_eviction"]
    eviction._fast_miss, eviction._weakest = 0.25, (3, 1, 0.5)
    back = _load(state)["_eviction"]
    assert (back._fast_miss, back._weakest) == (0.25, (3, 1, 0.5))
