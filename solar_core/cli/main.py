"""``solar-memory``: look inside a memory store (a SQLite file or a PostgreSQL URL).

Every command but ``forget`` and ``erase`` only reads, through a
:class:`~solar_core.persistence.reader.MemoryReader`: the database refuses writes, no scope is
created and nothing is snapshotted. ``forget`` and ``erase`` delete, after a confirmation.

>>> import tempfile, os
>>> from solar_core.persistence import MemoryStore
>>> path = os.path.join(tempfile.mkdtemp(), "agent.db")
>>> with MemoryStore(path, policy="fifo", capacity=5, embedder="hash", seed=0) as store:
...     _ = store.scope(user="alice").add("prefers green tea")
>>> main(["scopes", path])
scope       policy  capacity  items  logged steps  age
----------  ------  --------  -----  ------------  ---
user=alice  fifo    5         1      1             ...s
0
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from ..persistence.errors import PersistenceError
from ..persistence.reader import MemoryReader, ScopeNotFound, redacted
from ..persistence.scope import PARTS, Scope, shown_scope
from . import tables
from .export import check_output, export
from .selection import (
    CommandError,
    Declined,
    given_parts,
    one_scope,
    scope_options,
)

EPILOG = """\
examples:
  solar-memory scopes agent.db
  solar-memory items agent.db --user alice --sort posterior
  solar-memory trace agent.db --user alice --last 20
  solar-memory export agent.db --format csv -o memories.csv
  solar-memory plot agent.db --user alice -o memory.png
  solar-memory items agent.db --namespace memories.alice      # a SolarStore namespace
  solar-memory forget agent.db --user alice --session s1
  solar-memory erase agent.db --user alice --yes

DB is a SQLite file or a postgresql:// URL. Every command but forget and erase only reads.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solar-memory",
        description="Look inside a solar-memory store: scopes, items, decisions, plots.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=summary, description=summary)
        sub.add_argument("db", metavar="DB", help="a SQLite file or a postgresql:// URL")
        return sub

    scopes = command("scopes", "list the stored scopes (with parts: those with all of them)")
    for part in PARTS:
        scopes.add_argument(f"--{part}", help=f"only scopes with this {part}")
    scopes.add_argument("--json", action="store_true", help="JSON instead of a table")
    scopes.epilog = (
        "logged steps: every step the scope logged (adds, recorded retrievals, ratings, "
        "removals, clears, lifecycle sweeps, TTL renewals)"
    )

    items = command(
        "items",
        "a scope's items with their policy statistics (retrieved: how often an item was among "
        "the hits of the recorded retrievals the memory keeps, the last 1,000 by default)",
    )
    scope_options(items)
    items.add_argument("--sort", choices=tables.SORTS, default="stored")
    items.add_argument("--limit", type=int, help="show at most this many")
    items.add_argument("--width", type=int, default=48, help="text excerpt width")
    items.add_argument("--json", action="store_true", help="JSON lines instead of a table")

    trace = command("trace", "a scope's decisions: what was stored or refused, and why")
    scope_options(trace)
    trace.add_argument("--last", type=int, default=20, help="the last N decisions (0: all)")
    trace.add_argument("--json", action="store_true", help="JSON lines instead of a table")

    export = command("export", "every item of the scopes (all, or the one named) as data")
    scope_options(export)
    export.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    export.add_argument("-o", "--output", help="a file to write (default: standard output)")

    plot = command("plot", "a PNG timeline of a scope: size, decisions, posterior means")
    scope_options(plot)
    plot.add_argument("-o", "--output", required=True, help="the PNG file to write")

    forget = command("forget", "delete one scope and all its rows (asks first)")
    scope_options(forget)
    forget.add_argument("--yes", action="store_true", help="do not ask")

    erase = command("erase", "delete every scope with these parts (asks first)")
    for part in PARTS:
        erase.add_argument(f"--{part}", help=f"every scope with this {part}")
    erase.add_argument("--yes", action="store_true", help="do not ask")
    return parser


def _write(out: TextIO, text: str) -> None:
    out.write(text if text.endswith("\n") else text + "\n")


def _scopes(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> None:
    found = reader.scopes(**given_parts(args))
    if args.json:
        _write(out, json.dumps([dataclasses.asdict(s) for s in found]))
        return
    now = time.time()
    rows = [
        [
            _shown(s.key),
            tables.safe(s.policy),
            "unbounded" if s.capacity is None else s.capacity,
            s.items,
            s.logged_steps,
            tables.age(now - s.created_at),
        ]
        for s in found
    ]
    header = ["scope", "policy", "capacity", "items", "logged steps", "age"]
    _write(out, tables.table(header, rows))


def _items(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> None:
    if args.width < 8:
        raise CommandError(f"--width must be at least 8 characters, got {args.width}")
    if args.limit is not None and args.limit < 0:
        raise CommandError(f"--limit must be 0 or more, got {args.limit}")
    scope = one_scope(reader, args)
    now = time.time()
    records = tables.item_records(reader.memory(scope, live=False), now, args.sort)
    held = len(records)
    records = records if args.limit is None else records[: args.limit]
    if args.json:
        _write(out, "\n".join(json.dumps(r) for r in records) if records else "")
        return
    shown = f"{len(records)} items" if len(records) == held else f"{len(records)} of {held} items"
    _write(out, f"{tables.safe(shown_scope(scope))}: {shown}")
    if records:
        _write(out, tables.items_table(records, now, args.width))


def _trace(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> None:
    if args.last < 0:
        raise CommandError(f"--last must be 0 (all) or more, got {args.last}")
    scope = one_scope(reader, args)
    memory = reader.memory(scope, live=False)
    records = tables.decision_records(memory, args.last or None)
    if args.json:
        _write(out, "\n".join(json.dumps(r) for r in records) if records else "")
        return
    _write(out, f"{tables.safe(shown_scope(scope))}: the last {len(records)} decisions")
    if records:
        _write(out, tables.decisions_table(records, scores=tables.score_names(memory)))


def _plot(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> None:
    from .timeline import plot

    check_output(reader, args.output)
    scope = one_scope(reader, args)
    plot(reader.memory(scope, live=False), args.output, tables.safe(shown_scope(scope)))
    _write(out, f"wrote {args.output}")


def _confirm(question: str, args: argparse.Namespace, answers: TextIO) -> bool:
    if args.yes:
        return True
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    answer = answers.readline()
    if not answer.endswith("\n"):
        print(file=sys.stderr)  # no answer (end of input): the next message on its own line
    return answer.strip().lower() in ("y", "yes")


def _delete(reader: MemoryReader, args: argparse.Namespace, out: TextIO, answers: TextIO) -> None:
    if args.command == "forget":
        wanted = one_scope(reader, args)
        stored = {s.key: s for s in reader.scopes()}
        if wanted.key not in stored:
            reader.memory(wanted)  # raises ScopeNotFound, naming the stored scopes like it
        found = [stored[wanted.key]]
    else:
        parts = given_parts(args)
        if not parts:
            raise CommandError(f"erase needs at least one of --{', --'.join(PARTS)}")
        found = reader.scopes(**parts)
        if not found:
            _write(out, "no stored scope has these parts: nothing to erase")
            return
    listing = ", ".join(f"{_shown(s.key)} ({s.items} items)" for s in found)
    if not _confirm(f"delete {len(found)} scope(s): {listing}?", args, answers):
        raise Declined("not confirmed: nothing was deleted")
    from ..persistence.memory_store import MemoryStore

    url = reader.url
    reader.close()
    # A store that never opens a memory: it only deletes rows, so it needs no embedder.
    with MemoryStore(url, policy="fifo", capacity=1, dim=1) as store:
        gone = [s.key for s in found if store.forget(Scope.from_key(s.key))]
    _write(out, f"deleted {len(gone)} scope(s): {', '.join(_shown(k) for k in gone)}")


def _shown(key: str) -> str:
    return tables.safe(shown_scope(Scope.from_key(key)))


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    answers: TextIO | None = None,
) -> int:
    """Run the command; the exit status, explained on standard error when not 0: 0 done; 1 an
    error (a scope not stored, a database that cannot be read, a deletion not confirmed, an
    export that had to skip a scope); 2 a mistake on the command line."""
    args = _parser().parse_args(argv)
    out = sys.stdout if out is None else out
    try:
        reader = MemoryReader(args.db)
    except (PersistenceError, ValueError, TypeError, ImportError) as err:
        print(f"solar-memory: error: {redacted(str(err), args.db)}", file=sys.stderr)
        return 1
    try:
        if args.command in ("forget", "erase"):
            _delete(reader, args, out, sys.stdin if answers is None else answers)
        elif args.command == "export":
            return export(reader, args, out)
        else:
            run = {"scopes": _scopes, "items": _items, "trace": _trace, "plot": _plot}
            run[args.command](reader, args, out)
    except ScopeNotFound as err:  # its message names the stored scopes like it
        print(f"solar-memory: error: {redacted(str(err), args.db)}", file=sys.stderr)
        return 1
    except CommandError as err:
        print(f"solar-memory: error: {err}", file=sys.stderr)
        return err.status
    except (PersistenceError, ValueError, ImportError) as err:
        print(f"solar-memory: error: {redacted(str(err), args.db)}", file=sys.stderr)
        return 1
    except OSError as err:
        if isinstance(err, BrokenPipeError):
            raise  # the reader of our output went away (`| head`): run() ends quietly
        print(f"solar-memory: error: {err}", file=sys.stderr)
        return 1
    finally:
        reader.close()
    return 0


def run() -> None:  # pragma: no cover - the console script
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # `solar-memory items ... | head`: the rest of the output is not wanted; no traceback,
        # and nothing more written to the closed pipe when the interpreter exits.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 1
    sys.exit(status)


__all__ = ["main"]
