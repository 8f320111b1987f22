"""Crafted snapshots and log rows, many of them: each is refused or loaded, in bounded time and
memory, and no log row is replayed that the API would refuse as a call.

    python benchmarks/snapshot_fuzz.py --documents 100000 --rows 100000

Snapshots: real ones (every policy, after a dozen steps) with one structural forgery each
-- a node swapped for a crafted one (references, tables over one region, huge shapes and
counts, deep nesting, unbounded deques, metadata that shares its lists), a trace's rows
sharing one list, a number or byte changed -- with a recomputed header and checksum, as a
database writer would make them. Each is read as a store reads one (against a new memory of
its settings). Log rows: add and retrieve inputs with a field or two forged, under today's
names or a former row's; a row the replay accepts is then made as the API call it records,
which must not be refused.

Prints one JSON line: how many were refused and loaded, the slowest input's seconds and the
largest peak of memory any one input allocated (``tracemalloc``, numpy's arrays included).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import random
import time
import tracemalloc
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from solar_core import HashEmbedder, PersistenceError, SolarMemory
from solar_core.persistence import codec
from solar_core.persistence.journal import snapshot_state
from solar_core.persistence.logged_steps import fields_of, read
from solar_core.presets import PRESETS

DIM = 32


def memory(policy: str, steps: int, metadata: bool = True) -> SolarMemory:
    mem = SolarMemory(policy, capacity=16, embedder=HashEmbedder(DIM), seed=1)
    for i in range(steps):
        if mem.retrieve(f"tea {i % 5}", k=3):
            mem.feedback(like=i % 2 == 0)
        meta = {"i": i, "tags": ["a", str(i % 3)]} if metadata else None
        mem.add(f"fact {i} about tea {i % 5}", metadata=meta)
    return mem


def parts(blob: bytes) -> tuple[dict[str, Any], bytes]:
    start = codec._PREFIX + codec._DIGEST
    _, doc_len, _ = codec._HEAD.unpack_from(blob, len(codec.MAGIC))
    document: dict[str, Any] = json.loads(blob[start : start + doc_len])
    return document, blob[start + doc_len :]


def pack(document: dict[str, Any], arrays: bytes) -> bytes:
    doc = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()
    head = codec.MAGIC + codec._HEAD.pack(codec.FORMAT_VERSION, len(doc), len(arrays))
    digest = hashlib.blake2b(head, digest_size=codec._DIGEST)
    digest.update(doc + arrays)
    return head + digest.digest() + doc + arrays


def nodes(tree: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path into the document's JSON tree."""
    out = [path]
    if isinstance(tree, list):
        for i, child in enumerate(tree):
            out += nodes(child, (*path, i))
    elif isinstance(tree, dict):
        for key, child in tree.items():
            out += nodes(child, (*path, key))
    return out


def put(tree: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    holder = tree
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = value
    return tree


def crafted(rnd: random.Random, arrays: int) -> Any:
    """A node meant to make a reader work: see the module's docs."""
    big = rnd.choice([10**6, 10**9, 2**62, -1, arrays, arrays // 8])
    offset = rnd.choice([0, 8, arrays - 8, arrays, 2**40])
    column = ["a", rnd.choice(["<f8", "<i8", "|b1"]), offset]
    table = ["#", rnd.choice(["C", "T", "O"]), rnd.choice([1, 2, 0, 99]), big, [column]]
    deep: Any = ["L", "x"]
    for _ in range(rnd.choice([50, 400, 5000])):
        deep = ["L", deep]
    shared: Any = "leaf"
    for _ in range(rnd.choice([30, 60])):
        shared = ["L", shared]  # (written as a chain; references below make it a DAG)
    return rnd.choice(
        [
            ["R", rnd.choice([0, 5, 10**6, -1])],
            ["L", *[["L", table] for _ in range(rnd.choice([2, 300]))]],
            ["Q", None, ["L", table]],
            ["Q", rnd.choice([None, 10**9]), *range(rnd.choice([10, 5000]))],
            ["A", rnd.choice(["<f8", "<f4", "|O", "<U4"]), [big, big], offset, "C"],
            ["A", "<f4", [big], 0, "C"],
            ["N", "<f8", "00" * rnd.choice([8, 9])],
            ["G", rnd.choice(["PCG64", "os.system"]), ["d", {"bit_generator": "PCG64"}]],
            ["O", rnd.choice([0, 1, 99]), *([None] * rnd.choice([1, 12, 40]))],
            ["U", "solar_core.types.Hit", [None] * 5],
            ["D", [["R", 0]] * 3, [1, 2, 3]],
            ["S", ["L"], ["L"]],
            deep,
            table,
            ["d", {"deep": shared}],
            [rnd.choice(["Z", "#", "", 7])],
            rnd.choice([float("nan"), float("inf"), 2**70, "x" * 1000, None, True]),
        ]
    )


def forge_document(
    rnd: random.Random, blob: bytes, state: dict[str, Any], paths: list[tuple[Any, ...]]
) -> bytes:
    way = rnd.random()
    if way < 0.15:  # a trace's rows sharing one long list, or a deque without its bound
        forged = copy.copy(state)
        trace = forged["_retrieval_trace"]
        shared = [row for entry in trace for row in entry[2]] * rnd.choice([1, 50])
        rows = [(t, q, shared) for t, q, _ in trace] * rnd.choice([1, 20])
        forged["_retrieval_trace"] = deque(rows, maxlen=rnd.choice([None, trace.maxlen]))
        return codec.dumps(forged)
    if way < 0.25:  # item metadata that holds one list twice, level after level
        forged = copy.deepcopy(state)
        node: Any = "leaf"
        for _ in range(rnd.choice([3, 20, 60])):
            node = [node, node]
        payloads = [p for p in forged["_store"]._payloads if p is not None]
        rnd.choice(payloads).metadata["deep"] = node
        return codec.dumps(forged)
    document, arrays = parts(blob)  # (a fresh copy: the paths are the same in each)
    if way < 0.35:  # a byte of the arrays changed
        raw = bytearray(arrays)
        if raw:
            raw[rnd.randrange(len(raw))] ^= 1 << rnd.randrange(8)
        return pack(document, bytes(raw))
    path = rnd.choice(paths)
    if way < 0.55:  # a number or a string changed
        for _ in range(8):  # a leaf, mostly
            if not isinstance(get(document["root"], path), list | dict):
                break
            path = rnd.choice(paths)
        value = rnd.choice([0, -1, 10**9, 2**63, 1.5, float("nan"), "", "solar_core.x", None])
        return pack({**document, "root": put(document["root"], path, value)}, arrays)
    node = crafted(rnd, len(arrays))
    return pack({**document, "root": put(document["root"], path, node)}, arrays)


def get(tree: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        tree = tree[key]
    return tree


ADD_FORGERIES: list[tuple[str, Any]] = [
    ("t", ""),
    ("t", " "),
    ("t", "a\x00b"),
    ("t", "x\ud800"),
    ("t", 7),
    ("t", "x" * 10000),
    ("id", ""),
    ("id", "\x00"),
    ("id", 5),
    ("id", "fine-id"),
    ("c", "bogus"),
    ("c", "identity"),
    ("vu", float("nan")),
    ("vu", float("inf")),
    ("vu", True),
    ("vu", 2e9),
    ("m", []),
    ("m", {"a": [1, {"b": None}]}),
    ("p", "yes"),
    ("p", True),
    ("u", True),
    ("u", False),
    ("zz", 1),
]
RETRIEVE_FORGERIES: list[tuple[str, Any]] = [
    ("q", ""),
    ("q", "  "),
    ("q", None),
    ("q", "tea\ud800"),
    ("k", 0),
    ("k", 10**7),
    ("k", True),
    ("x", ["a", 5]),
    ("x", []),
    ("rm", "nonsense"),
    ("rm", "keyword"),
    ("f", float("nan")),
    ("f", 0.3),
    ("g", False),
]


def forge_row(rnd: random.Random) -> tuple[str, dict[str, Any], np.ndarray[Any, Any]]:
    vector = np.random.default_rng(rnd.randrange(2**32)).normal(size=DIM).astype(np.float32)
    vector /= np.linalg.norm(vector)
    scale = rnd.choice([1.0] * 6 + [0.0, 3.0, 1.00001, float("nan")])
    vector = (vector * np.float32(scale)).astype(np.float32)
    if rnd.random() < 0.5:
        args: dict[str, Any] = {"t": "a fact", "m": {}, "id": None, "c": "context", "vu": None}
        args["p"] = None
        kind, forgeries = "add", ADD_FORGERIES
    else:
        args = {"q": "tea", "k": 3, "x": [], "rm": "hybrid", "f": None}
        kind, forgeries = "retrieve", RETRIEVE_FORGERIES
    for _ in range(rnd.choice([0, 1, 1, 2])):
        key, value = rnd.choice(forgeries)
        args[key] = value
    if rnd.random() < 0.5:  # as rows are written now (the short names: as they were before)
        try:
            args = fields_of(kind, args)
        except ValueError:
            pass
    return kind, args, vector


def the_api_refuses(kind: str, args: dict[str, Any], vector: np.ndarray[Any, Any]) -> bool:
    """Whether the call the row records is refused by the API (a memory of its dimension)."""
    mem = SolarMemory("fifo", capacity=4, dim=DIM, seed=0)
    try:
        if kind == "add":
            mem.add(
                args["text"],
                embedding=vector,
                metadata=args["metadata"],
                item_id=args["id"],
                category=args["category"],
                valid_until=args["valid_until"],
                update=args.get("update", False),
            )
            return not bool(np.isclose(float(vector.dot(vector)), 1.0, atol=1e-4))
        mem.retrieve(args["query"], embedding=vector, k=args["k"], exclude=args["exclude"])
        return not bool(np.isclose(float(vector.dot(vector)), 1.0, atol=1e-4))
    except (TypeError, ValueError, LookupError):
        return True


class Worst:
    """The slowest input and the largest peak of memory any one input allocated."""

    def __init__(self) -> None:
        self.seconds, self.peak = 0.0, 0

    def measure(self, run: Callable[..., str], *args: Any) -> str:
        tracemalloc.reset_peak()
        start = time.perf_counter()
        try:
            return run(*args)
        finally:
            self.seconds = max(self.seconds, time.perf_counter() - start)
            self.peak = max(self.peak, tracemalloc.get_traced_memory()[1])


def load(forged: bytes, new: dict[str, Any], used: dict[str, Any], steps: bool = False) -> str:
    """Read ``forged`` as a store reads a snapshot of a scope that recorded these settings;
    ``steps``: then, as a store does, make it a memory and check its invariants, and have it
    take a retrieve and an add (a snapshot that loads must take its next steps)."""
    try:
        state = codec.loads(forged, "a forged snapshot", new, (used,), settings=True)
    except PersistenceError:
        return "refused"
    if not steps:
        return "loaded"
    try:
        state["_embedder"], state["_clock"] = HashEmbedder(DIM), time.time
        mem = SolarMemory.__new__(SolarMemory)
        mem.__setstate__(state)
        mem.check_invariants()
    except Exception:  # the store's journal refuses it so (a PersistenceError)
        return "refused"
    try:
        mem.retrieve("tea 1", k=3)
        mem.add("a new fact about coffee")
        mem.check_invariants()
    except Exception:
        return "loaded_but_a_step_fails"
    return "loaded"


def replay(kind: str, row: dict[str, Any], vector: np.ndarray[Any, Any]) -> str:
    """Check ``row`` as a replay does; a row it takes is then made as the call it records."""
    try:
        read(kind, row, vector, DIM)
    except ValueError:
        return "rows_refused"
    if the_api_refuses(kind, fields_of(kind, row), vector):
        return "replayed_but_the_api_refuses"
    return "replayed"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=20261204)
    parser.add_argument(
        "--steps", action="store_true", help="have each loaded snapshot take a retrieve and an add"
    )
    args = parser.parse_args()
    rnd = random.Random(args.seed)
    bases = []
    for policy in sorted(PRESETS):
        state = snapshot_state(memory(policy, 12))
        templates = (snapshot_state(memory(policy, 0)), snapshot_state(memory(policy, 3, False)))
        blob = codec.dumps(state)
        bases.append((blob, state, templates, nodes(parts(blob)[0]["root"])))
    outcome = {"documents": 0, "loaded": 0, "refused": 0, "rows": 0, "replayed": 0}
    if args.steps:
        outcome["loaded_but_a_step_fails"] = 0
    outcome.update({"rows_refused": 0, "replayed_but_the_api_refuses": 0})
    worst = Worst()
    tracemalloc.start()
    for _ in range(args.documents):
        blob, state, (new, used), paths = rnd.choice(bases)
        try:
            forged = forge_document(rnd, blob, state, paths)
        except (PersistenceError, RecursionError):  # the forgery itself cannot be written
            continue
        outcome[worst.measure(load, forged, new, used, args.steps)] += 1
        outcome["documents"] += 1
    for _ in range(args.rows):
        kind, row, vector = forge_row(rnd)
        outcome[worst.measure(replay, kind, row, vector)] += 1
        outcome["rows"] += 1
    tracemalloc.stop()
    result = {
        **outcome,
        "slowest_s": round(worst.seconds, 4),
        "largest_peak_mb": worst.peak / 2**20,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
