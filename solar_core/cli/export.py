"""``solar-memory export``: every item of the scopes read, as JSON lines or CSV."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from typing import TextIO

from ..persistence.errors import PersistenceError
from ..persistence.reader import MemoryReader, ScopeNotFound
from ..persistence.scope import Scope, shown_scope
from . import tables
from .selection import CommandError, given_parts, one_scope


def check_output(reader: MemoryReader, output: str) -> None:
    """Refuse to write over the database being read (or SQLite's files beside it)."""
    if "://" in str(reader.url) or reader.url == ":memory:":
        return
    database = os.path.realpath(str(reader.url))
    for tail in ("", "-wal", "-shm", "-journal"):
        target = database + tail
        same = os.path.realpath(output) == target
        if not same and os.path.exists(output) and os.path.exists(target):
            same = os.path.samefile(output, target)  # a hard link of it
        if same:
            raise CommandError(f"-o {output} is the database being read: name another file")


def export(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> int:
    named = args.scope is not None or args.namespace is not None or given_parts(args)
    scopes = (
        [one_scope(reader, args)] if named else [Scope.from_key(s.key) for s in reader.scopes()]
    )
    if args.output is not None:
        check_output(reader, args.output)
    now = time.time()
    rows: list[dict[str, object]] = []
    unread: list[str] = []
    for scope in scopes:
        try:
            records = tables.item_records(reader.memory(scope, live=False), now)
        except (PersistenceError, ScopeNotFound) as err:  # (forgotten since it was listed)
            if named:
                raise
            unread.append(f"{tables.safe(shown_scope(scope))}: {err}")
            continue
        rows += [{"scope": scope.key, **record} for record in records]
    target: TextIO = out
    handle = None
    if args.output is not None:
        handle = open(args.output, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed below
        target = handle
    try:
        # A file named with -o gets the texts as stored; standard output, which may reach a
        # terminal through a pipe (`| less -R`, `| head`), never gets their control characters.
        terminal = handle is None
        if args.format == "jsonl":
            for row in rows:
                target.write(json.dumps(row, ensure_ascii=terminal) + "\n")
        else:
            columns = ["scope", "id", "text", "category", "importance", "policy", "retrieved"]
            columns += ["created_step", "created_at", "valid_until", "metadata"]

            def cell(value: object, column: str) -> object:
                if column in ("policy", "metadata"):
                    return json.dumps(value)
                return tables.safe(value) if terminal and isinstance(value, str) else value

            writer = csv.writer(target)
            writer.writerow(columns)
            for row in rows:
                writer.writerow([cell(row[c], c) for c in columns])
    finally:
        if handle is not None:
            handle.close()
    if handle is not None:
        done = len(scopes) - len(unread)
        print(f"wrote {len(rows)} items of {done} scopes to {args.output}", file=sys.stderr)
    for problem in unread:
        print(f"solar-memory: error: not exported: {problem}", file=sys.stderr)
    return 1 if unread else 0
