"""Forged state containers and log rows, many of them: each is refused with a
``PersistenceError`` or loaded, in bounded time and memory, and a loaded one takes its next steps.

    python benchmarks/snapshot_fuzz.py --cases 100000 --seed 1 --json

``--cases N`` forged state containers and ``N`` forged log rows (``--kinds`` to run one kind
only). Each case is a real SQLite database of one scope (several presets, capacity 12, the
hash embedder, 90 steps: adds with metadata, retrievals, ratings, a decay) with one forgery made
as a database writer would make it -- every checksum recomputed:

- a state container (the scope's snapshot, the store closed): a value of the JSON header
  changed (the parameters or the state's values), an array's dtype, shape or name changed, the
  arrays' bytes overwritten (NaN, infinities, any bytes), bytes truncated, inserted or flipped,
  a value dropped, added or two arrays swapped -- then the container's checksum recomputed;
- a log row replayed on a reopen (the store abandoned after a snapshot at logged step 100, the
  log holds the 80 steps after it; one of those forged): a field of
  the row's arguments changed, added or dropped, its vector's bytes changed (NaN, not of unit
  length, truncated), its clock readings, digest or kind changed, a bit of any of them flipped --
  then the row's checksum recomputed.

Each worker first opens, steps and closes each base once, unmeasured (its imports and first
builds are no case's cost). The case then opens the database as an application does
(``MemoryStore(path, ...)``, ``store.scope(user="u")``, its length): the *load*, timed, its peak
of allocated memory measured with ``tracemalloc`` (numpy's arrays included). A refusal must be
a ``PersistenceError``. A loaded memory must then take further steps without raising anything:
its invariants, a retrieval, a rating, an add, a close (which writes and checks a snapshot), a
reopen and a retrieval and an add there. Anything else -- another exception, a crash or a hang
of the worker -- is a *bad* case.

Cases run in worker subprocesses, ``--batch`` at a time, each batch with a timeout (a hang or a
crash is the outcome of the case it was running; the batch's other cases run in a new worker).
``--start`` runs the cases from that index (the cases are the same for a seed whatever the
chunk), ``--max-seconds`` stops after the batch that passes that time (the report says how many
ran). Prints the counts (loaded, refused, bad), the slowest load, the largest load peak, the
slowest whole case, the workers' peak resident set and the first bad cases.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from solar_core import PersistenceError
from solar_core.persistence import MemoryStore, container
from solar_core.persistence.backend import row_checksum

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT_POLICIES = [
    "arc",
    "fifo",
    "lfu",
    "lru",
    "solar",
    "solar-a",
    "solar-adaptive",
    "solar-dialogue",
    "solar-e",
    "unlimited",
]
LOG_POLICIES = ["solar", "solar-adaptive", "solar-dialogue", "lfu", "arc"]
CAPACITY = 12
#: the bars: each case's load within this time and this peak of allocated memory
BAR_SECONDS = 1.0
BAR_MB = 200.0


def open_store(path: str, policy: str, snapshot_every: int = 1000) -> MemoryStore:
    return MemoryStore(
        path,
        policy=policy,
        capacity=CAPACITY,
        embedder="hash",
        seed=3,
        snapshot_every=snapshot_every,
    )


def build_base(path: str, policy: str, log: bool) -> None:
    """A scope after 90 steps (about 180 logged: adds, retrievals, ratings, a decay);
    ``log``: abandoned after a snapshot at logged step 100 (the log holds the 80 after it),
    else closed (all of it in the snapshot). One self-contained file (no WAL)."""
    raw = path + ".raw"
    store = open_store(raw, policy, snapshot_every=100)
    memory = store.scope(user="u")
    rnd = random.Random(policy)
    for i in range(90):
        topic = rnd.choice(["tea", "rust", "cats", "rain"])
        memory.add(f"fact {i} about {topic}", metadata={"i": i, "tags": [topic, str(i % 3)]})
        if i % 2:
            memory.retrieve(f"what about {rnd.choice(['tea', 'rust', 'cats'])}")
            memory.feedback(score=rnd.random())
        if i == 45:
            memory.lifecycle.decay()
    if log:
        store.backend.close()  # abandoned: no closing snapshot
    else:
        store.close()
    with sqlite3.connect(raw) as source, sqlite3.connect(path) as target:
        source.backup(target)
    source.close()
    target.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(raw + suffix):
            os.remove(raw + suffix)
    con = sqlite3.connect(path)
    after = con.execute(
        "SELECT count(*) FROM solar_ops WHERE seq > (SELECT snapshot_seq FROM solar_scopes)"
    ).fetchone()[0]
    snapshot = con.execute("SELECT snapshot_seq FROM solar_scopes").fetchone()[0]
    con.close()
    if log and not (after >= 30 and snapshot > 0):
        raise AssertionError(f"{policy}: {after} logged steps after the snapshot at {snapshot}")


# -- forging -------------------------------------------------------------------------------------
def forge(header: dict[str, Any], arrays: bytes, version: int = container.FORMAT) -> bytes:
    """A container of ``header`` and ``arrays`` with its checksum (as an attacker writes one)."""
    text = json.dumps(header, separators=(",", ":"), allow_nan=True).encode()
    return seal(
        container.MAGIC + struct.pack("<HIQ", version, len(text), len(arrays)) + text + arrays
    )


def seal(head: bytes) -> bytes:
    return head + hashlib.blake2b(head, digest_size=32).digest()


def split(blob: bytes) -> tuple[dict[str, Any], bytes]:
    start = len(container.MAGIC) + 14
    _, length, arrays = struct.unpack_from("<HIQ", blob, len(container.MAGIC))
    header: dict[str, Any] = json.loads(blob[start : start + length])
    return header, blob[start + length : start + length + arrays]


VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    7,
    2**31,
    2**63,
    2**64 + 1,
    -(2**63),
    10**400,
    0.5,
    -0.0,
    1e-300,
    float("nan"),
    float("inf"),
    -float("inf"),
    1e308,
    "",
    "x",
    "\x00",
    "x" * 5000,
    "O",
    "|O8",
    "os.system",
    "__class__",
    "ThompsonEviction",
    "FifoEviction",
    "PCG64",
    "MT19937",
    [],
    {},
    [0],
    [-1, 2],
    [[1, 2]],
    [None] * 50,
    list(range(2000)),
    {"class": "FifoEviction", "params": {}},
    {"class": "os.system", "params": {"x": 1}},
    {"bit_generator": "MT19937"},
    {"bit_generator": "PCG64", "state": {"state": -1, "inc": 2**200}},
    ["x", None, 1.5],
]


def mutate_json(rnd: random.Random, document: Any) -> str:
    """Change, drop or add one value somewhere in ``document`` (in place); what was done."""
    slots: list[tuple[Any, Any]] = []
    todo: list[Any] = [document]
    while todo:
        node = todo.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            slots.append((node, key))
            if isinstance(value, list | dict):
                todo.append(value)
    if not slots:
        return "json: nothing to change"
    holder, key = rnd.choice(slots)
    old = holder[key]
    way = rnd.random()
    if way < 0.08 and isinstance(holder, dict):
        del holder[key]
        return f"json drop {key!r}"
    if way < 0.14 and isinstance(holder, dict):
        name = rnd.choice([f"{key}_", "x", "", "lifecycle.x", str(key).split(".")[0] + ".extra"])
        holder[name] = rnd.choice(VALUES)
        return f"json add {name!r}"
    choices = list(VALUES)
    if isinstance(old, bool):
        choices += [not old] * 5
    elif isinstance(old, int):
        choices += [old + 1, old - 1, -old, old * 1000, old + 2**32] * 2
    elif isinstance(old, float):
        choices += [old * 2, -old, old + 1e-9, old * 1e300] * 2
    elif isinstance(old, str):
        choices += [old + "x", old[:-1], old.upper(), old * 2] * 2
    elif isinstance(old, list) and old:
        dropped = list(old)
        del dropped[rnd.randrange(len(dropped))]
        choices += [dropped, [*old, old[-1]], old[::-1], old * 2, [old]] * 2
    elif isinstance(old, dict) and old:
        choices += [{k: None for k in old}, dict(list(old.items())[::-1])]
    new = rnd.choice(choices)
    holder[key] = new
    return f"json {key!r}: {str(old)[:40]} -> {str(new)[:40]}"


def mutate_array_entry(rnd: random.Random, header: dict[str, Any]) -> str:
    arrays = header["arrays"]
    if not arrays:
        return "no array"
    entry = rnd.choice(arrays)
    field = rnd.choice(["dtype", "shape", "shape", "name", "swap", "drop"])
    if field == "dtype":
        dtypes = [
            "|O8",
            "O",
            "<c16",
            "<M8[s]",
            "|V8",
            "|S4",
            ">f8",
            "<f4",
            "<f8",
            "<i8",
            "|b1",
            "<i4",
        ]
        entry[1] = rnd.choice(dtypes)
    elif field == "shape":
        shape = entry[2]
        shapes = [
            [1 << 62],
            [-1],
            [10**6, 10**6],
            [],
            [0],
            [1] * 40,
            [3, "x"],
            5,
            [2, 0],
            shape[::-1],
            [*shape, 1],
            [n + 1 for n in shape],
            [max(0, n - 1) for n in shape],
            [n * 2 for n in shape],
        ]
        entry[2] = rnd.choice(shapes)
    elif field == "name":
        other = rnd.choice(arrays)[0]
        entry[0] = rnd.choice(["", "x", 7, None, other, f"{entry[0]}x", *header["values"]][:9])
    elif field == "swap" and len(arrays) > 1:
        i, j = rnd.sample(range(len(arrays)), 2)
        arrays[i][0], arrays[j][0] = arrays[j][0], arrays[i][0]
    else:
        arrays.remove(entry)
    return f"array {field} -> {entry}"[:120]


def mutate_snapshot(rnd: random.Random, blob: bytes) -> tuple[bytes, str]:
    how = rnd.choice(
        [
            "flip",
            "flip-sealed",
            "truncate",
            "truncate-sealed",
            "insert-sealed",
            "params",
            "params",
            "values",
            "values",
            "values",
            "array",
            "array",
            "arrays",
            "arrays",
        ]
    )
    head = blob[:-32]
    if how == "flip":  # the checksum left as it was
        at = rnd.randrange(len(blob))
        return blob[:at] + bytes([blob[at] ^ (1 << rnd.randrange(8))]) + blob[at + 1 :], how
    if how == "flip-sealed":
        at = rnd.randrange(len(head))
        return seal(head[:at] + bytes([head[at] ^ (1 << rnd.randrange(8))]) + head[at + 1 :]), how
    if how == "truncate":
        return blob[: rnd.randrange(len(blob))], how
    if how == "truncate-sealed":
        return seal(head[: rnd.randrange(len(head))]), how
    if how == "insert-sealed":
        at = rnd.randrange(len(head))
        return seal(head[:at] + rnd.randbytes(rnd.randrange(1, 9)) + head[at:]), how
    header, arrays = split(blob)
    if how == "params":
        what = "params " + mutate_json(rnd, header["params"])
    elif how == "values":
        what = "values " + mutate_json(rnd, header["values"])
    elif how == "array":
        what = mutate_array_entry(rnd, header)
    else:  # the arrays' bytes: any values, NaN included
        raw = bytearray(arrays)
        fills = [
            lambda: rnd.randbytes(8),
            lambda: struct.pack("<d", float("nan")),
            lambda: struct.pack("<ff", float("nan"), float("inf")),
            lambda: struct.pack("<d", -float("inf")),
            lambda: struct.pack("<q", rnd.choice([-1, 2**62, -(2**63), 10**9])),
            lambda: struct.pack("<ii", -1, 2**31 - 1),
            lambda: b"\xff" * 8,
            lambda: b"\x00" * 8,
        ]
        for _ in range(rnd.randrange(1, 4)):
            if len(raw) < 8:
                break
            at = rnd.randrange(len(raw) - 7)
            raw[at : at + 8] = rnd.choice(fills)()
        arrays, what = bytes(raw), "arrays bytes"
    return forge(header, arrays), what


DTYPES = ["|O8", "O", "<c16", "<M8[s]", "|V8", "|S4", ">f8", "<f4", "<f8", "<i8", "|b1", "<i4"]
LOG_COLUMNS = ["args", "args", "args", "vector", "clocks", "digest", "kind"]


def mutate_log(rnd: random.Random, con: sqlite3.Connection) -> str:
    """Forge one row of the log (its checksum recomputed, as an attacker would)."""
    rows = con.execute(  # the steps a reopen replays: those after the snapshot
        "SELECT scope_id, seq, kind, args, vector, clocks, digest FROM solar_ops "
        "WHERE seq > (SELECT snapshot_seq FROM solar_scopes) ORDER BY seq"
    ).fetchall()
    scope_id, seq, kind, args, vector, clocks, digest = rnd.choice(rows)
    vector = None if vector is None else bytes(vector)
    how = rnd.choice(["flip", "edit", "edit", "edit", "edit"])
    column = rnd.choice(LOG_COLUMNS)
    if how == "flip":  # a bit of a field flipped
        fields = {"args": args, "clocks": clocks, "digest": digest, "vector": vector, "kind": kind}
        old = fields[column]
        if old is None or len(old) == 0:
            column, old = "args", args
        at = rnd.randrange(len(old))
        if isinstance(old, bytes):
            new: Any = old[:at] + bytes([old[at] ^ (1 << rnd.randrange(8))]) + old[at + 1 :]
        else:
            new = old[:at] + chr(ord(old[at]) ^ (1 << rnd.randrange(7))) + old[at + 1 :]
        fields[column] = new
        args, clocks, digest, vector, kind = (
            fields["args"],
            fields["clocks"],
            fields["digest"],
            fields["vector"],
            fields["kind"],
        )
        what = f"flip {column}"
    elif column == "args":
        if rnd.random() < 0.1:
            args = rnd.choice(["", "{", "[]", "null", args[: rnd.randrange(len(args))], "{}"])
            what = "args text"
        else:
            loaded = json.loads(args)
            what = mutate_json(rnd, {"args": loaded})
            args = json.dumps(loaded, allow_nan=True)
    elif column == "clocks":
        old_clocks = json.loads(clocks)
        clocks = rnd.choice(
            [
                "[]",
                "[1e308]",
                '["x"]',
                "[null, null]",
                "{}",
                "[NaN]",
                "[Infinity]",
                "[-1]",
                json.dumps([*old_clocks, 0.0]),
                json.dumps(old_clocks[:-1]),
                json.dumps([c + 10**9 for c in old_clocks]),
                json.dumps([-c for c in old_clocks]),
            ]
        )
        what = f"clocks {clocks[:40]}"
    elif column == "digest":
        digest = rnd.choice(
            ["", "x", digest + "1", digest[:-1], "1|m1|None|", ",".join(["m1"] * 3)]
        )
        what = "digest"
    elif column == "vector":
        raw = bytearray(vector if vector is not None else b"\0" * 1024)
        choice = rnd.randrange(6)
        if choice == 0:
            vector = None
        elif choice == 1:
            vector = bytes(raw[: rnd.randrange(len(raw) + 1)])
        elif choice == 2:
            vector = bytes(raw) + b"\0" * rnd.choice([4, 8, 1024])
        elif choice == 3:
            at = rnd.randrange(max(1, len(raw) // 4)) * 4
            raw[at : at + 4] = struct.pack("<f", rnd.choice([float("nan"), float("inf"), 1e30]))
            vector = bytes(raw)
        elif choice == 4:  # scaled: not of unit length, or just within the tolerance
            scale = rnd.choice([0.0, 0.5, 1.00001, 1.0001, 2.0, -1.0])
            floats = struct.unpack(f"<{len(raw) // 4}f", bytes(raw[: len(raw) // 4 * 4]))
            vector = struct.pack(f"<{len(floats)}f", *(f * scale for f in floats))
        else:
            vector = rnd.randbytes(len(raw))
        what = f"vector {choice}"
    else:
        kind = rnd.choice(
            ["add", "retrieve", "feedback", "remove", "clear", "expire", "renew", "decay", "boom"]
        )
        what = f"kind {kind}"
    checksum = row_checksum(scope_id, [seq, kind, args, clocks, digest], vector)
    con.execute(
        "UPDATE solar_ops SET kind = ?, args = ?, vector = ?, clocks = ?, digest = ?, "
        "checksum = ? WHERE seq = ?",
        (kind, args, vector, clocks, digest, checksum, seq),
    )
    return f"log step {seq} ({kind}): {what}"


# -- one worker: its cases -----------------------------------------------------------------------
def _steps(memory: Any) -> None:
    memory.check_invariants()
    hits = memory.retrieve("what about tea")
    if hits:
        memory.feedback(like=True)
    memory.add("a new fact about rain", metadata={"new": True})
    memory.check_invariants()


def run_case(case: dict[str, Any], work: Path) -> tuple[str, float, int, float, str]:
    """``(outcome, load seconds, load peak bytes, case seconds, what was forged)``."""
    rnd = random.Random(case["seed"])
    path = str(work / "case.db")
    for suffix in ("-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    shutil.copyfile(case["base"], path)
    con = sqlite3.connect(path)
    if case["kind"] == "log":
        what = mutate_log(rnd, con)
    else:
        blob = bytes(con.execute("SELECT state FROM solar_snapshots").fetchone()[0])
        bad, what = mutate_snapshot(rnd, blob)
        con.execute("UPDATE solar_snapshots SET state = ?", (bad,))
    con.commit()
    con.close()
    print(f"{case['index']}\tstart\t{what}", flush=True)
    policy = case["policy"]
    began = time.perf_counter()
    tracemalloc.start()
    load_s, peak = 0.0, 0
    store: MemoryStore | None = None
    stage = "load"
    try:
        store = open_store(path, policy)
        memory = store.scope(user="u")
        len(memory)  # caught up: the snapshot read, the log replayed
        load_s = time.perf_counter() - began
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        stage = "steps"
        _steps(memory)
        stage = "close"
        store.close()
        store = None
        stage = "reopen"
        store = open_store(path, policy)
        _steps(store.scope(user="u"))
        stage = "close again"
        store.close()
        store = None
        outcome = "loaded"
    except PersistenceError as err:
        outcome = "refused" if stage == "load" else f"BAD at {stage}: {err!r}"[:400]
    except BaseException as err:  # anything else is the benchmark's failure
        outcome = f"BAD at {stage}: {err!r}"[:400]
    finally:
        if tracemalloc.is_tracing():
            load_s = time.perf_counter() - began
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        if store is not None:
            try:
                store.backend.close()
            except Exception:  # noqa: S110 (the case's outcome is set already)
                pass
    return outcome, load_s, peak, time.perf_counter() - began, what


def worker(spec: str, work: str) -> None:
    """Run the cases of the file ``spec``: print one tab-separated line per case."""
    cases = json.loads(Path(spec).read_text())
    folder = Path(work)
    warm = folder / "warm.db"
    for base, policy in sorted({(c["base"], c["policy"]) for c in cases}):
        # not measured: the first load of a process imports and builds what every later one
        # reuses (modules, the embedder, numpy's routines)
        shutil.copyfile(base, warm)
        store = open_store(str(warm), policy)
        _steps(store.scope(user="u"))
        store.close()
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(str(warm) + suffix):
                os.remove(str(warm) + suffix)
    for case in cases:
        outcome, load_s, peak, case_s, what = run_case(case, folder)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KB (Linux)
        what = what.replace("\t", " ").replace("\n", " ")
        outcome = outcome.replace("\t", " ").replace("\n", " ")
        print(
            f"{case['index']}\tdone\t{outcome}\t{load_s:.6f}\t{peak}\t{case_s:.6f}\t{rss}\t{what}",
            flush=True,
        )


# -- the parent: batches in subprocesses ---------------------------------------------------------
class Tally:
    def __init__(self) -> None:
        self.counts = {"state": {"loaded": 0, "refused": 0, "bad": 0}}
        self.counts["log"] = {"loaded": 0, "refused": 0, "bad": 0}
        self.max_load_s = 0.0
        self.max_load_where = ""
        self.max_peak = 0
        self.max_peak_where = ""
        self.max_case_s = 0.0
        self.max_rss_kb = 0
        self.over_bar = 0
        self.bad: list[str] = []
        self.how: dict[str, dict[str, int]] = {}

    def add(self, kind: str, outcome: str, fields: list[str] | None, what: str) -> None:
        group = "bad" if outcome.startswith(("BAD", "CRASH", "HANG")) else outcome
        self.counts[kind][group] += 1
        key = f"{kind} {what.split(':')[0].split(' ')[0] if kind == 'state' else _log_how(what)}"
        self.how.setdefault(key, {"loaded": 0, "refused": 0, "bad": 0})[group] += 1
        if group == "bad" and len(self.bad) < 50:
            self.bad.append(f"{kind}: {outcome} [{what}]")
        if fields is not None:
            load_s, peak, case_s, rss = (
                float(fields[0]),
                int(fields[1]),
                float(fields[2]),
                int(fields[3]),
            )
            if load_s > self.max_load_s:
                self.max_load_s, self.max_load_where = load_s, f"{kind}: {what}"[:160]
            if peak > self.max_peak:
                self.max_peak, self.max_peak_where = peak, f"{kind}: {what}"[:160]
            self.max_case_s = max(self.max_case_s, case_s)
            self.max_rss_kb = max(self.max_rss_kb, rss)
            if load_s > BAR_SECONDS or peak > BAR_MB * 2**20:
                self.over_bar += 1


def _log_how(what: str) -> str:
    tail = what.split(": ", 1)[-1]
    return (
        tail.split(" ")[0]
        if tail.startswith(("flip", "clocks", "digest", "vector", "kind", "args"))
        else "args-json"
    )


def run_batch(cases: list[dict[str, Any]], folder: Path, timeout: float, tally: Tally) -> None:
    todo = list(cases)
    by_index = {c["index"]: c for c in cases}
    while todo:
        spec = folder / "cases.json"
        spec.write_text(json.dumps(todo))
        work = folder / "work"
        work.mkdir(exist_ok=True)
        proc = subprocess.Popen(
            [sys.executable, "-W", "ignore", __file__, "--worker", str(spec), str(work)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"},
        )
        try:
            out, err = proc.communicate(timeout=timeout)
            ending = f"CRASH (exit code {proc.returncode}): {err[-300:]}"
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            ending = f"HANG (no answer in {timeout:.0f} s)"
        done: set[int] = set()
        started: tuple[int, str] | None = None
        for line in out.splitlines():
            parts = line.split("\t")
            index = int(parts[0])
            if parts[1] == "start":
                started = (index, parts[2])
            elif parts[1] == "done":
                tally.add(by_index[index]["kind"], parts[2], parts[3:7], parts[7])
                done.add(index)
                started = None
        if started is not None:  # it died or hung on this case
            tally.add(by_index[started[0]]["kind"], ending, None, started[1])
            done.add(started[0])
        elif proc.returncode not in (0, None) and not done:
            raise RuntimeError(f"the fuzz worker failed outside a case: {err[-2000:]}")
        todo = [c for c in todo if c["index"] not in done]


def make_cases(
    seed: int, start: int, count: int, kinds: list[str], bases: dict[str, list[tuple[str, str]]]
) -> list[dict[str, Any]]:
    """Cases ``start .. start + count`` of each kind, interleaved: the same for a seed, whatever
    the chunk."""
    cases = []
    for index in range(start, start + count):
        for kind in kinds:
            rnd = random.Random(f"{seed}/{kind}/{index}")
            base, policy = rnd.choice(bases[kind])
            cases.append(
                {
                    "index": len(cases),
                    "case": index,
                    "kind": kind,
                    "base": base,
                    "policy": policy,
                    "seed": rnd.randrange(2**63),
                }
            )
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=100_000, help="cases of each kind")
    parser.add_argument("--seed", type=int, default=20261206)
    parser.add_argument("--start", type=int, default=0, help="the first case's index")
    parser.add_argument("--kinds", default="state,log", help="state, log or state,log")
    parser.add_argument("--batch", type=int, default=1000, help="cases per worker process")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per batch")
    parser.add_argument("--max-seconds", type=float, default=None, help="stop after this")
    parser.add_argument("--json", action="store_true", help="one JSON object, no progress")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    kinds = [k for k in args.kinds.split(",") if k]
    began = time.perf_counter()
    tally = Tally()
    ran = 0
    with tempfile.TemporaryDirectory(prefix="solar-fuzz-") as tmp:
        folder = Path(tmp)
        bases: dict[str, list[tuple[str, str]]] = {"state": [], "log": []}
        for policy in SNAPSHOT_POLICIES if "state" in kinds else []:
            path = str(folder / f"state-{policy}.db")
            build_base(path, policy, log=False)
            bases["state"].append((path, policy))
        for policy in LOG_POLICIES if "log" in kinds else []:
            path = str(folder / f"log-{policy}.db")
            build_base(path, policy, log=True)
            bases["log"].append((path, policy))
        cases = make_cases(args.seed, args.start, args.cases, kinds, bases)
        stopped = False
        for first in range(0, len(cases), args.batch):
            batch = cases[first : first + args.batch]
            run_batch(batch, folder, args.timeout, tally)
            ran += len(batch)
            elapsed = time.perf_counter() - began
            if not args.json:
                print(
                    f"{ran}/{len(cases)} cases, {elapsed:.0f} s: {tally.counts}",
                    file=sys.stderr,
                    flush=True,
                )
            if args.max_seconds is not None and elapsed > args.max_seconds and ran < len(cases):
                stopped = True
                break
    result = {
        "seed": args.seed,
        "start": args.start,
        "asked": {k: args.cases for k in kinds},
        "ran": {k: sum(tally.counts[k].values()) for k in kinds},
        "stopped_early": stopped,
        "counts": {k: tally.counts[k] for k in kinds},
        "by_forgery": dict(sorted(tally.how.items())),
        "max_load_s": round(tally.max_load_s, 4),
        "max_load_case": tally.max_load_where,
        "max_load_peak_mb": round(tally.max_peak / 2**20, 3),
        "max_load_peak_case": tally.max_peak_where,
        "max_case_s": round(tally.max_case_s, 4),
        "max_worker_rss_mb": round(tally.max_rss_kb / 2**10, 1),
        "cases_over_the_bar": tally.over_bar,
        "bar": {"seconds": BAR_SECONDS, "mb": BAR_MB},
        "bad": tally.bad,
        "seconds": round(time.perf_counter() - began, 1),
    }
    print(json.dumps(result, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
