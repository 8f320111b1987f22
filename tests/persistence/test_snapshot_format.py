"""The snapshot format and the row checksums: what a database writer can and cannot do.

A snapshot is data only (a JSON header and raw arrays, see
:mod:`solar_core.persistence.container`);
nothing read back from storage reaches a loader that constructs objects of the data's choosing.
These tests check that statically (no such loader in the package), on the known attack (a forged
pickle that turned eight bytes into an object pointer), by fuzzing real snapshots and log rows
in worker processes (every case loads a working memory or is a ``PersistenceError``: never a
crash, a hang or another exception), and that a reopened memory still continues bit for bit.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import shutil
import sqlite3
import struct
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from solar_core import PersistenceError
from solar_core.persistence import MemoryStore, container
from solar_core.persistence.reader import MemoryReader
from solar_core.persistence.scope import Scope
from solar_core.policies.presets import PRESETS
from tests.support.persistence import Clock, apply, make_store, reference, same, stream
from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "solar_core" / "persistence"
LEGACY_MAGIC = b"SOLAR-SNAPSHOT-1\n"  # spelt out: the old code has no name for it


# -- no object loader -------------------------------------------------------------------------
#: names whose mere use in the persistence package means a loader that can build arbitrary objects
_FORBIDDEN_NAMES = {
    "pickle",
    "cPickle",
    "_pickle",
    "marshal",
    "shelve",
    "dill",
    "jsonpickle",
    "cloudpickle",
    "copyreg",
    "joblib",
    "__reduce__",
    "__reduce_ex__",
    "find_class",
    "Unpickler",
    "__import__",
    "import_module",
}
#: names forbidden as calls
_FORBIDDEN_CALLS = {"eval", "exec", "compile"}


def _code_tokens(path: Path) -> Iterator[tuple[int, str, str]]:
    """``(line, token, next token)`` of the code of ``path`` (not its strings or comments)."""
    tokens = [
        t
        for t in tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        if t.type in (tokenize.NAME, tokenize.OP)
    ]
    for here, after in zip(tokens, [*tokens[1:], None], strict=True):
        yield here.start[0], here.string, "" if after is None else after.string


def test_the_persistence_package_has_no_object_loader() -> None:
    files = sorted(PACKAGE.glob("*.py"))
    assert files
    found = []
    for path in files:
        for line, name, after in _code_tokens(path):
            if name in _FORBIDDEN_NAMES or (name in _FORBIDDEN_CALLS and after == "("):
                found.append(f"{path.name}:{line}: {name}")
        text = path.read_text()
        for needle in ("import pickle", "yaml.load", "np.load(", "allow_pickle"):
            if needle in text:
                found.append(f"{path.name}: {needle!r}")
    assert not found, found


# -- the known attack ---------------------------------------------------------------------------
def _forged_pickle() -> bytes:
    """A first-format payload whose numpy scalar is an object pointer at 0x4141414141414141."""

    def x(text: str) -> bytes:
        return b"X" + struct.pack("<I", len(text)) + text.encode()

    def j(n: int) -> bytes:
        return b"J" + struct.pack("<i", n)

    dtype = (
        b"cnumpy\ndtype\n(" + x("O8") + b"\x89\x88tR" + b"(" + j(3) + x("|") + b"NNN"
        + j(-1) + j(-1) + j(0) + b"tb"
    )  # fmt: skip
    fake = (
        b"cnumpy._core.multiarray\nscalar\n(" + dtype + b"B" + struct.pack("<I", 8)
        + struct.pack("<Q", 0x4141414141414141) + b"tR0"
    )  # fmt: skip
    payload = fake + pickle.dumps({"x": 1})
    return LEGACY_MAGIC + hashlib.blake2b(payload, digest_size=16).digest() + payload


def test_a_forged_first_format_snapshot_is_refused_not_read(tmp_path: Path) -> None:
    """The published repro: it crashed every process that opened the scope (SIGSEGV)."""
    path = str(tmp_path / "v.db")
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    store.scope(user="alice").add("hi")
    store.close()
    con = sqlite3.connect(path)
    con.execute("UPDATE solar_snapshots SET state = ?", (_forged_pickle(),))
    con.commit()
    con.close()
    victim = (
        "import sys\n"
        "from solar_core.persistence import MemoryStore, PersistenceError\n"
        f"store = MemoryStore({path!r}, policy='fifo', capacity=5, embedder='hash')\n"
        "try:\n"
        "    store.scope(user='alice')\n"
        "except PersistenceError as err:\n"
        "    print('refused:', err)\n"
        "    sys.exit(0)\n"
        "print('loaded')\n"
        "sys.exit(3)\n"
    )
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", victim],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr[-2000:])
    assert "refused:" in done.stdout
    assert "store.reembed({'user': 'alice'})" in done.stdout


def _forge(header: dict[str, Any], arrays: bytes, version: int = container.FORMAT) -> bytes:
    """A container around ``header`` and ``arrays`` with a valid checksum (as an attacker)."""
    text = json.dumps(header, separators=(",", ":"), allow_nan=True).encode()
    head = container.MAGIC + struct.pack("<HIQ", version, len(text), len(arrays)) + text + arrays
    return head + hashlib.blake2b(head, digest_size=32).digest()


def _split(blob: bytes) -> tuple[dict[str, Any], bytes]:
    start = len(container.MAGIC) + 14
    _, length, arrays = struct.unpack_from("<HIQ", blob, len(container.MAGIC))
    header: dict[str, Any] = json.loads(blob[start : start + length])
    return header, blob[start + length : start + length + arrays]


@pytest.mark.parametrize(
    "header",
    [
        {"params": {}, "values": {}, "arrays": [["a", "|O8", [1]]]},
        {"params": {}, "values": {}, "arrays": [["a", "O", [1]]]},
        {"params": {}, "values": {}, "arrays": [["a", "<f8", [1 << 62]]]},
        {"params": {}, "values": {}, "arrays": [["a", "<f8", [-1]]]},
        {"params": {}, "values": {}, "arrays": [["a", "<f8", [1] * 40]]},
        {"params": {}, "values": {}, "arrays": [["a", "<f8", [2]]]},  # 16 bytes, 8 there
        {"params": {}, "values": {}, "arrays": []},  # bytes no array claims
        {"params": {}, "values": {"a": 1}, "arrays": [["a", "<f8", [1]]]},
        {"params": {}, "values": {}, "arrays": [["a", "<f8", [1], 0]]},
        {"params": {}, "values": {}},
        {"params": [], "values": {}, "arrays": []},
        ["params", "values", "arrays"],
    ],
)
def test_crafted_containers_are_refused(header: Any) -> None:
    with pytest.raises(PersistenceError, match="a crafted snapshot"):
        container.loads(_forge(header, b"\0" * 8), "a crafted snapshot")


@pytest.mark.parametrize("depth", [50, 5000, 100_000])
def test_deep_nesting_is_read_or_refused_never_a_crash(depth: int) -> None:
    blob = _forge({"params": {}, "values": {"deep": 1}, "arrays": []}, b"")
    header, _ = _split(blob)
    text = b'{"params":{},"values":{"deep":' + b"[" * depth + b"]" * depth + b'},"arrays":[]}'
    head = container.MAGIC + struct.pack("<HIQ", container.FORMAT, len(text), 0) + text
    forged = head + hashlib.blake2b(head, digest_size=32).digest()
    try:
        params, state = container.loads(forged, "a deep snapshot")
    except PersistenceError as err:
        assert "a deep snapshot" in str(err)
    else:
        assert params == {} and isinstance(state["deep"], list)
    assert header["values"] == {"deep": 1}


def test_a_snapshot_of_a_format_this_version_does_not_know_is_refused(tmp_path: Path) -> None:
    """What a later (or an earlier, unreleased) version wrote is not guessed at: the message
    says what to do."""
    path = str(tmp_path / "m.db")
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    store.scope(user="alice").add("hi")
    store.close()
    with sqlite3.connect(path) as con:
        blob = bytes(con.execute("SELECT state FROM solar_snapshots").fetchone()[0])
        header, arrays = _split(blob)
        con.execute("UPDATE solar_snapshots SET state = ?", (_forge(header, arrays, version=2),))
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    with pytest.raises(PersistenceError, match="snapshot format 2") as caught:
        store.scope(user="alice")
    assert "store.reembed({'user': 'alice'})" in str(caught.value)
    assert store.reembed({"user": "alice"})  # rebuilt from its item rows
    assert [item.text for item in store.scope(user="alice").items()] == ["hi"]
    store.close()


def test_a_database_of_a_schema_this_version_does_not_know_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    MemoryStore(path, policy="fifo", capacity=5, embedder="hash").close()
    with sqlite3.connect(path) as con:
        con.execute("PRAGMA user_version=7")
        con.execute("UPDATE solar_meta SET value = '7' WHERE key = 'schema'")
    before = Path(path).read_bytes()
    for opening in (
        lambda: MemoryStore(path, policy="fifo", capacity=5, embedder="hash"),
        lambda: MemoryReader(path),
    ):
        with pytest.raises(PersistenceError, match="schema version 7") as caught:
            opening()
        assert "Open it with that version" in str(caught.value)
    assert Path(path).read_bytes() == before


def test_a_snapshot_unlike_the_scopes_settings_is_refused(tmp_path: Path) -> None:
    """A valid snapshot of another policy, planted in a scope: the template check refuses it."""
    one, two = str(tmp_path / "one.db"), str(tmp_path / "two.db")
    for path, policy in ((one, "fifo"), (two, "lru")):
        store = MemoryStore(path, policy=policy, capacity=5, embedder="hash")
        store.scope(user="alice").add("hi")
        store.close()
    blob = sqlite3.connect(two).execute("SELECT state FROM solar_snapshots").fetchone()[0]
    con = sqlite3.connect(one)
    con.execute("UPDATE solar_snapshots SET state = ?", (blob,))
    con.commit()
    con.close()
    store = MemoryStore(one, policy="fifo", capacity=5, embedder="hash")
    with pytest.raises(PersistenceError, match="snapshot of scope"):
        store.scope(user="alice")
    store.close()


# -- log rows -----------------------------------------------------------------------------------
def _steps(path: str, n: int, **kw: Any) -> MemoryStore:
    """A store left open (no closing snapshot) after ``n`` adds: its log holds them."""
    store = MemoryStore(path, policy="fifo", capacity=500, embedder="hash", **kw)
    memory = store.scope(user="alice")
    for i in range(n):
        memory.add(f"fact number {i}", metadata={"i": i})
    return store


def test_a_bit_flip_in_a_log_row_is_refused(tmp_path: Path) -> None:
    """One flipped bit in one of 300 logged texts used to replay as another text, silently."""
    path = str(tmp_path / "m.db")
    writer = _steps(path, 300)
    con = sqlite3.connect(path)
    args = con.execute("SELECT args FROM solar_ops WHERE seq = 150").fetchone()[0]
    assert "fact number 149" in args
    con.execute(
        "UPDATE solar_ops SET args = ? WHERE seq = 150",
        (args.replace("fact number 149", "fact numbes 149"),),
    )
    con.commit()
    con.close()
    reader = MemoryStore(path, policy="fifo", capacity=500, embedder="hash")
    with pytest.raises(PersistenceError, match="step 150 of the log is corrupted"):
        reader.scope(user="alice")
    reader.close()
    writer.backend.close()


def test_a_bit_flip_in_an_item_row_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    store = _steps(path, 10)
    con = sqlite3.connect(path)
    con.execute("UPDATE solar_items SET text = 'fact numbes 4' WHERE item_id = 'm5'")
    con.commit()
    con.close()
    with store.backend.transaction(write=False), pytest.raises(PersistenceError, match="'m5'"):
        store.backend.item_rows(1)
    store.close()


def test_a_log_row_without_its_own_checksum_is_refused(tmp_path: Path) -> None:
    """A row cannot lose its checksum (the column is NOT NULL: the database refuses), and a row
    carrying another row's checksum -- or an empty one -- is refused when read."""
    path = str(tmp_path / "m.db")
    writer = _steps(path, 5)
    con = sqlite3.connect(path)
    for table in ("solar_ops", "solar_items"):
        with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"):
            con.execute(f"UPDATE {table} SET checksum = NULL")
    con.rollback()
    for forged in ("(SELECT checksum FROM solar_ops WHERE seq = 2)", "''"):
        with con:
            con.execute(f"UPDATE solar_ops SET checksum = {forged} WHERE seq = 3")
        reader = MemoryStore(path, policy="fifo", capacity=500, embedder="hash")
        with pytest.raises(PersistenceError, match=r"step 3 of the log is corrupted \(checksum"):
            reader.scope(user="alice")
        reader.close()
    con.close()
    writer.backend.close()


# -- a read-only database -----------------------------------------------------------------------
def _make_read_only(path: Path) -> Iterator[None]:
    """``path`` and its folder read-only for this process, whoever it is (root ignores modes:
    then the immutable attribute, if the file system has it)."""
    folder = path.parent
    if os.geteuid() != 0:
        path.chmod(0o444)
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
            path.chmod(0o644)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: cannot make a file read-only")
    made = subprocess.run(["chattr", "+i", str(path), str(folder)], capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"running as root and chattr +i failed: {made.stderr!r}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path), str(folder)], check=True)


def test_a_read_only_database_says_so_and_how_to_fix_it(tmp_path: Path) -> None:
    folder = tmp_path / "db"
    folder.mkdir()
    path = folder / "m.db"
    store = MemoryStore(str(path), policy="fifo", capacity=5, embedder="hash")
    store.scope(user="alice").add("hi")
    store.close()
    assert sorted(p.name for p in folder.iterdir()) == ["m.db"]
    for _ in _make_read_only(path):
        with pytest.raises(PersistenceError) as caught:
            MemoryStore(str(path), policy="fifo", capacity=5, embedder="hash").scope(user="alice")
        message = str(caught.value)
        assert "not a SQLite database" not in message
        assert "read-only" in message and "write permission" in message, message


def test_a_path_in_a_missing_folder_names_the_folder_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    for path in (missing / "agent.db", f"sqlite:///{missing}/agent.db"):
        with pytest.raises(PersistenceError) as caught:
            MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
        message = str(caught.value)
        assert f"its folder {missing} does not exist" in message, message
        assert "os.makedirs" in message and "unable to open" not in message
    (tmp_path / "file").write_text("")
    with pytest.raises(PersistenceError, match=r"its folder .*file is not a folder"):
        MemoryStore(str(tmp_path / "file" / "agent.db"), embedder="hash")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_a_path_that_starts_with_a_tilde_is_in_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(PersistenceError, match=f"its folder {tmp_path / 'x'} does not exist"):
        MemoryStore("~/x/agent.db", embedder="hash")
    (tmp_path / "x").mkdir()
    with MemoryStore("~/x/agent.db", policy="fifo", capacity=5, embedder="hash") as store:
        store.scope(user="ann").add("hi")
    assert (tmp_path / "x" / "agent.db").is_file() and not Path("~").exists()
    with MemoryReader("~/x/agent.db") as reader:
        assert [item.text for item in reader.memory({"user": "ann"}).items()] == ["hi"]


# -- fuzzing real snapshots and log rows in worker processes -------------------------------------
#: cases of each kind here; ``benchmarks/snapshot_fuzz.py`` (the same forgeries, the same
#: workers) runs 100,000 and reports their time and memory
FUZZ_CASES = 500


def test_fuzzed_snapshots_and_log_rows_load_or_are_refused(tmp_path: Path) -> None:
    """Forged state containers and log rows, each a real database's, every checksum
    recomputed: each is refused with a ``PersistenceError`` or loads into a memory that takes
    its next steps (a retrieval, a rating, an add, a close, a reopen) without raising."""
    fuzz = load_script("snapshot_fuzz")
    bases: dict[str, list[tuple[str, str]]] = {"state": [], "log": []}
    for kind, policies in (("state", fuzz.SNAPSHOT_POLICIES), ("log", fuzz.LOG_POLICIES)):
        for policy in policies:
            path = str(tmp_path / f"{kind}-{policy}.db")
            fuzz.build_base(path, policy, log=kind == "log")
            bases[kind].append((path, policy))
    seed = int(os.environ.get("SOLAR_FUZZ_SEED", "20240611"))
    cases = fuzz.make_cases(seed, 0, FUZZ_CASES, ["state", "log"], bases)
    tally = fuzz.Tally()
    fuzz.run_batch(cases, tmp_path, 600.0, tally)
    assert not tally.bad, "\n".join(tally.bad[:20])
    for kind in ("state", "log"):
        counts = tally.counts[kind]
        assert sum(counts.values()) == FUZZ_CASES
        assert counts["loaded"] > 10 and counts["refused"] > 100, (kind, counts)


# -- round trip ---------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", sorted(PRESETS))
def test_every_preset_resumes_bit_for_bit_from_a_snapshot(tmp_path: Path, policy: str) -> None:
    """A few hundred steps (retrievals, feedback, lifecycle), a snapshot, a reopen: the memory
    is the same and makes the same next decisions, retrievals and random draws."""
    url = str(tmp_path / "m.db")
    ops = stream(260)
    key = Scope(user="alice").key
    ref_clock, clock = Clock(), Clock()
    ref = reference(policy, {}, ref_clock, key)
    expected = [apply(ref, op, ref_clock) for op in ops[:200]]
    store = make_store(url, policy, {}, clock, snapshot_every=10**6)
    memory = store.scope(user="alice")
    assert [apply(memory, op, clock) for op in ops[:200]] == expected
    before = memory.detached()  # a plain copy, as it was snapshotted
    store.close()  # everything is in the snapshot now
    with sqlite3.connect(url) as con:
        assert con.execute("SELECT COUNT(*) FROM solar_ops").fetchone()[0] == 0
        blob = con.execute("SELECT state FROM solar_snapshots").fetchone()[0]
    assert bytes(blob).startswith(container.MAGIC)
    again = make_store(url, policy, {}, clock)
    resumed = again.scope(user="alice")
    same(resumed, before)  # (not ``ref``: each memory has its own identity token)
    rest = ops[200:]
    assert [apply(resumed, op, clock) for op in rest] == [apply(ref, op, ref_clock) for op in rest]
    assert resumed.core.rng.random() == ref.core.rng.random()
    again.close()
