"""What a stored memory costs on disk, closed and checkpointed: many one-item users, and one
long chat.

    python benchmarks/disk_size.py --json

- ``one_item``: ``MemoryStore(path)`` with the default policy and embedder, ``--users`` users
  (and ``--many-users``) of one ``scope(user=...).add(...)`` each, the store closed, then
  ``PRAGMA wal_checkpoint(TRUNCATE)``: the file's size, the marginal bytes per scope (over a
  store created and closed without a scope), the bars (<= 8 KB per scope, <= 100 MB for
  ``--many-users``), and what takes the space;
- ``chat``: one user, ``policy="solar-dialogue"``, ``capacity=100``, ``--turns`` turns (a
  retrieval, a rating every third turn that found something, an add of a ~200-character turn
  text), closed and checkpointed: the file's size (bar <= 2 MB) and its snapshot's bytes per
  kept item (bar <= 4 KB).

Each database's breakdown: the bytes of each table and index from SQLite's ``dbstat`` (pages, and
the payload), the snapshot blobs', log rows' and item rows' summed lengths, the free pages; and
its largest snapshot decoded with :func:`solar_core.persistence.container.loads`, each state
value's size (an array's bytes, a JSON value's compact JSON), largest first.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import tempfile
import time
from typing import Any

import numpy as np

from solar_core import MemoryStore
from solar_core.persistence import container

KB = 1024
MB = 1024 * 1024
BARS = {
    "one_item_bytes_per_scope": 8 * KB,
    "many_users_file_bytes": 100 * MB,
    "chat_file_bytes": 2 * MB,
    "chat_snapshot_bytes_per_item": 4 * KB,
}


def checkpointed_size(path: str) -> int:
    """The file's bytes once its write-ahead log is folded in and truncated."""
    con = sqlite3.connect(path)
    try:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        con.close()
    wal = path + "-wal"
    return os.path.getsize(path) + (os.path.getsize(wal) if os.path.exists(wal) else 0)


def _sum(con: sqlite3.Connection, sql: str) -> int:
    return int(con.execute(sql).fetchone()[0] or 0)


def breakdown(path: str) -> dict[str, Any]:
    """Where a database's bytes are: per table/index (``dbstat``), per row kind, free pages."""
    con = sqlite3.connect(path)
    try:
        page = _sum(con, "PRAGMA page_size")
        out: dict[str, Any] = {
            "page_size": page,
            "pages": _sum(con, "PRAGMA page_count"),
            "free_pages": _sum(con, "PRAGMA freelist_count"),
        }
        out["free_bytes"] = out["free_pages"] * page
        try:
            rows = con.execute(
                "SELECT name, sum(pgsize), sum(payload), sum(unused), count(*) FROM dbstat "
                "GROUP BY name ORDER BY sum(pgsize) DESC"
            ).fetchall()
            out["dbstat"] = {
                name: {"bytes": size, "payload": payload, "unused": unused, "pages": pages}
                for name, size, payload, unused, pages in rows
            }
        except sqlite3.OperationalError:  # an SQLite built without dbstat
            out["dbstat"] = None
        out["scopes"] = _sum(con, "SELECT count(*) FROM solar_scopes")
        out["scope_rows_bytes"] = _sum(
            con,
            "SELECT sum(length(key) + coalesce(length(org), 0) + coalesce(length(project), 0) "
            "+ coalesce(length(user_id), 0) + coalesce(length(session), 0) + length(config) "
            "+ 32) FROM solar_scopes",
        )
        out["scope_config_bytes"] = _sum(con, "SELECT sum(length(config)) FROM solar_scopes")
        out["snapshots"] = _sum(con, "SELECT count(*) FROM solar_snapshots")
        out["snapshot_bytes"] = _sum(con, "SELECT sum(length(state)) FROM solar_snapshots")
        out["log_rows"] = _sum(con, "SELECT count(*) FROM solar_ops")
        out["log_rows_bytes"] = _sum(
            con,
            "SELECT sum(length(kind) + length(args) + coalesce(length(vector), 0) "
            "+ length(clocks) + length(digest) + length(checksum) + 24) FROM solar_ops",
        )
        out["log_vector_bytes"] = _sum(con, "SELECT sum(length(vector)) FROM solar_ops")
        out["items"] = _sum(con, "SELECT count(*) FROM solar_items")
        out["items_rows_bytes"] = _sum(
            con,
            "SELECT sum(length(item_id) + length(text) + length(metadata) + length(vector) "
            "+ length(category) + length(checksum) + 32) FROM solar_items",
        )
        out["items_vector_bytes"] = _sum(con, "SELECT sum(length(vector)) FROM solar_items")
        blob = con.execute(
            "SELECT state FROM solar_snapshots ORDER BY length(state) DESC LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    out["largest_snapshot"] = None if blob is None else snapshot_sizes(bytes(blob[0]))
    return out


def snapshot_sizes(blob: bytes, top: int = 12) -> dict[str, Any]:
    """A snapshot's bytes: its header (params, values), its arrays, each value's size."""
    params, state = container.loads(blob, "a snapshot")
    sizes: dict[str, int] = {}
    for name, value in state.items():
        if isinstance(value, np.ndarray):
            sizes[name] = int(value.nbytes)
        else:
            sizes[name] = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    arrays = sum(v.nbytes for v in state.values() if isinstance(v, np.ndarray))
    params_bytes = len(json.dumps(params, separators=(",", ":"), ensure_ascii=False))
    ranked = sorted(sizes.items(), key=lambda kv: -kv[1])
    return {
        "bytes": len(blob),
        "params_bytes": params_bytes,
        "values": sum(1 for v in state.values() if not isinstance(v, np.ndarray)),
        "values_bytes": sum(s for n, s in sizes.items() if not isinstance(state[n], np.ndarray)),
        "arrays": sum(1 for v in state.values() if isinstance(v, np.ndarray)),
        "arrays_bytes": int(arrays),
        "header_bytes": len(blob) - int(arrays) - 12 - 14 - 32,
        "largest": dict(ranked[:top]),
    }


def one_item(users: int, folder: str) -> dict[str, Any]:
    """``users`` one-item users in a default store, closed and checkpointed."""
    empty = os.path.join(folder, "empty.db")
    MemoryStore(empty).close()
    base = checkpointed_size(empty)
    path = os.path.join(folder, f"users{users}.db")
    start = time.perf_counter()
    store = MemoryStore(path)
    for user in range(users):
        store.scope(user=f"user-{user:06d}").add(f"user {user} drinks tea with {user % 7} sugars")
    store.close()
    seconds = time.perf_counter() - start
    size = checkpointed_size(path)
    per_scope = (size - base) / users
    return {
        "users": users,
        "file_bytes": size,
        "empty_store_bytes": base,
        "bytes_per_scope": round(per_scope, 1),
        "bar_bytes_per_scope": BARS["one_item_bytes_per_scope"],
        "meets_per_scope_bar": per_scope <= BARS["one_item_bytes_per_scope"],
        "seconds": round(seconds, 1),
        "breakdown": breakdown(path),
    }


WORDS = (
    "tea coffee rain train meeting budget garden python rust invoice sister dentist flight "
    "hotel paris berlin recipe soup bread deadline report music guitar piano running knee "
    "doctor appointment birthday present movie book novel chapter weekend holiday beach "
    "mountain hiking boots jacket password server database backup migration release bug"
).split()


def turn_text(rnd: random.Random, turn: int) -> str:
    """A ~200-character chat turn."""
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < 170:
        words.append(rnd.choice(WORDS))
    return f"turn {turn}: user said " + " ".join(words)[:180]


def chat(turns: int, folder: str) -> dict[str, Any]:
    """One user's database after ``turns`` chat turns at capacity 100."""
    path = os.path.join(folder, "chat.db")
    rnd = random.Random(0)
    start = time.perf_counter()
    store = MemoryStore(path, policy="solar-dialogue", capacity=100, seed=0)
    memory = store.scope(user="alice")
    lengths = []
    for turn in range(turns):
        hits = memory.retrieve(f"what about {rnd.choice(WORDS)} and {rnd.choice(WORDS)}?")
        if hits and turn % 3 == 0:
            memory.feedback(like=rnd.random() < 0.6)
        text = turn_text(rnd, turn)
        lengths.append(len(text))
        memory.add(text)
    kept = len(memory)
    store.close()
    seconds = time.perf_counter() - start
    size = checkpointed_size(path)
    parts = breakdown(path)
    snapshot = parts["snapshot_bytes"]
    per_item = snapshot / kept if kept else float("nan")
    return {
        "turns": turns,
        "mean_turn_chars": round(sum(lengths) / len(lengths), 1),
        "kept_items": kept,
        "file_bytes": size,
        "bar_file_bytes": BARS["chat_file_bytes"],
        "meets_file_bar": size <= BARS["chat_file_bytes"],
        "snapshot_bytes": snapshot,
        "snapshot_bytes_per_kept_item": round(per_item, 1),
        "bar_snapshot_bytes_per_item": BARS["chat_snapshot_bytes_per_item"],
        "meets_snapshot_bar": per_item <= BARS["chat_snapshot_bytes_per_item"],
        "seconds": round(seconds, 1),
        "breakdown": parts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=1000, help="one-item users (marginal)")
    parser.add_argument("--many-users", type=int, default=10_000, help="one-item users (file)")
    parser.add_argument("--turns", type=int, default=10_000, help="chat turns of one user")
    parser.add_argument("--json", action="store_true", help="one JSON object on one line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="solar-disk-") as folder:
        few = one_item(args.users, folder)
        many = one_item(args.many_users, folder)
        many["bar_file_bytes"] = BARS["many_users_file_bytes"]
        many["meets_file_bar"] = many["file_bytes"] <= BARS["many_users_file_bytes"]
        long_chat = chat(args.turns, folder)
    result = {"one_item": few, "many_users": many, "chat": long_chat}
    print(json.dumps(result, indent=None if args.json else 2))


if __name__ == "__main__":
    main()
