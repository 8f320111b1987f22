"""``solar-memory export``: every item of the scopes read, as JSON lines or CSV."""

from __future__ import annotations

import argparse
import csv
import io
import os
import sys
import time
from typing import TextIO

from solar_core.cli import tables
from solar_core.cli.selection import CommandError, Damaged, given_parts, listing, one_scope, reading
from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.reader import MemoryReader, ScopeNotFound
from solar_core.persistence.scope import Scope, shown_scope

COLUMNS = ["scope", "id", "text", "category", "importance", "policy", "retrieved"]
COLUMNS += ["created_step", "created_at", "valid_until", "metadata"]


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


def _write_rows(target: TextIO, rows: list[dict[str, object]], form: str, raw: bool) -> None:
    """``rows`` as ``form``; ``raw`` (a file named with -o): the texts as stored, else without
    control characters (a pipe may reach a terminal; CSV lines end with a newline alone)."""
    if form == "jsonl":
        for row in rows:
            line = tables.json_text(row, ascii=False) if raw else tables.json_line(row)
            target.write(line + "\n")
        return

    def cell(value: object, column: str) -> object:
        if column in ("policy", "metadata"):
            return tables.json_text(value) if raw else tables.json_line(value)
        return tables.safe(value) if not raw and isinstance(value, str) else value

    writer = csv.writer(target) if raw else csv.writer(target, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([cell(row[c], c) for c in COLUMNS])


def export(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> int:
    named = args.scope is not None or args.namespace is not None or given_parts(args)
    scopes = (
        [one_scope(reader, args)] if named else [Scope.from_key(s.key) for s in listing(reader)]
    )
    if args.output is not None:
        check_output(reader, args.output)
    now = time.time()
    rows: list[dict[str, object]] = []
    unread: list[str] = []
    for scope in scopes:
        try:
            with reading(scope.key):
                records = tables.item_records(reader.memory(scope, live=False), now)
        except (Damaged, PersistenceError, ScopeNotFound) as err:  # (forgotten since listed)
            if named:
                raise
            why = err.way_forward(reader.shown_url) if isinstance(err, Damaged) else err
            unread.append(f"{shown_scope(scope)}: {why}")
            continue
        # the scope as `scopes` lists it and --scope takes it back (a namespace by its labels)
        rows += [{"scope": shown_scope(scope), **record} for record in records]
    if args.output is None:
        buffer = io.StringIO()  # standard output gets it through say(), all at once
        _write_rows(buffer, rows, args.format, raw=False)
        tables.say(out, buffer.getvalue())
    else:
        with open(args.output, "w", encoding="utf-8", newline="") as handle:
            _write_rows(handle, rows, args.format, raw=True)
        done = len(scopes) - len(unread)
        tables.say(sys.stderr, f"wrote {len(rows)} items of {done} scopes to {args.output}\n")
    for problem in unread:
        tables.say(sys.stderr, f"solar-memory: error: not exported: {tables.safe(problem)}\n")
    return 1 if unread else 0
