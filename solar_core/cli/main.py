"""``solar-memory``: look inside a memory store. Every command but ``forget`` and ``erase``
(which delete, after a confirmation) only reads, through a ``MemoryReader``.

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
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import TextIO
from urllib.parse import quote, urlencode

from mcp_solar import settings as mcp_settings
from solar_core.cli import tables
from solar_core.cli.export import check_output, export
from solar_core.cli.selection import (
    CommandError,
    Damaged,
    Declined,
    given_parts,
    listing,
    one_scope,
    reading,
    scope_options,
    stored_keys,
)
from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.reader import MemoryReader, ScopeNotFound, redacted
from solar_core.persistence.scope import NAMESPACE_PROJECT, PARTS, Scope, shown_scope

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
  solar-memory mcp --scope user=alice                          # an MCP server (stdio)

DB is a SQLite file, a postgresql:// URL or a libpq "host=... dbname=..." string. Every
command but forget and erase only reads.
"""

_LIBPQ_KEYWORDS = frozenset(
    """host hostaddr port dbname user password passfile require_auth channel_binding
    connect_timeout client_encoding options application_name fallback_application_name
    keepalives keepalives_idle keepalives_interval keepalives_count tcp_user_timeout
    replication gssencmode sslmode requiressl sslcompression sslcert sslkey sslpassword
    sslcertmode sslrootcert sslcrl sslcrldir sslsni requirepeer ssl_min_protocol_version
    ssl_max_protocol_version krbsrvname gsslib gssdelegation service target_session_attrs
    load_balance_hosts""".split()
)
#: one ``keyword = value`` of a libpq string: a value in single quotes, or up to a space
_LIBPQ_PAIR = re.compile(r"\s*(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)+)")
#: a password wherever a message may quote one: ``password=...`` and a URL's ``user:password@``
_PASSWORDS = (
    (re.compile(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&']+)", re.IGNORECASE), r"\1***"),
    (re.compile(r"(\w://[^/\s:@]*:)[^@\s]*@"), r"\1***@"),
)


def database(given: str) -> str:
    """``given`` as a database: a libpq connection string as its ``postgresql://`` URL, else as is.

    >>> database("host=db dbname=agents user=app password='s3 cr\\\\'et'")
    'postgresql://?host=db&dbname=agents&user=app&password=s3%20cr%27et'
    """
    if "://" in given or "=" not in given or os.path.exists(given):
        return given
    pairs, at = [], 0
    while at < len(given.rstrip()):
        match = _LIBPQ_PAIR.match(given, at)
        if match is None:
            return given
        value = match.group(2)
        value = value[1:-1] if value.startswith("'") else value
        pairs.append((match.group(1), re.sub(r"\\(.)", r"\1", value)))
        at = match.end()
    if not all(keyword in _LIBPQ_KEYWORDS for keyword, _ in pairs):
        return given  # a file name with "=" in it, not there: reading says so
    return "postgresql://?" + urlencode(pairs, quote_via=quote)


def without_passwords(message: str, *databases: str) -> str:
    """``message`` without the passwords of ``databases`` nor any it quotes.

    >>> without_passwords("cannot connect to host=db password=s3cret (s3cret)", "password=s3cret")
    'cannot connect to host=db password=*** (***)'
    """
    for url in databases:
        message = redacted(message, url)  # a URL's password, as written or percent-decoded
        for _, value in _PASSWORDS[0][0].findall(url):  # a connection string's, quoted or not
            for form in {value, value.strip("'")} - {"", "***"}:
                message = message.replace(form, "***")
    for pattern, mask in _PASSWORDS:
        message = pattern.sub(mask, message)
    return message


class _Parser(argparse.ArgumentParser):
    """argparse, whose messages (usage errors echo the command line) go through tables.say."""

    def _print_message(self, message: str, file: tables.Stream | None = None) -> None:
        if message:
            tables.say(sys.stderr if file is None else file, message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="solar-memory",
        description="Look inside a solar-memory store: scopes, items, decisions, plots.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, summary: str, one_scope: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=summary, description=summary)
        sub.add_argument(
            "db", metavar="DB", help="a SQLite file, a postgresql:// URL or libpq key=value pairs"
        )
        if one_scope:
            scope_options(sub)
        return sub

    scopes = command("scopes", "list the stored scopes (with parts: those with all of them)", False)
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
    items.add_argument("--sort", choices=tables.SORTS, default="stored")
    items.add_argument("--limit", type=int, help="show at most this many")
    items.add_argument("--width", type=int, default=48, help="text excerpt width")
    items.add_argument("--json", action="store_true", help="JSON lines instead of a table")

    trace = command("trace", "a scope's decisions: what was stored or refused, and why")
    trace.add_argument("--last", type=int, default=20, help="the last N decisions (0: all)")
    trace.add_argument("--json", action="store_true", help="JSON lines instead of a table")

    export = command("export", "every item of the scopes (all, or the one named) as data")
    export.add_argument("--format", choices=("jsonl", "csv"), default="jsonl")
    export.add_argument("-o", "--output", help="a file to write (default: standard output)")

    plot = command("plot", "a PNG timeline of a scope: size, decisions, posterior means")
    plot.add_argument("-o", "--output", required=True, help="the PNG file to write")

    forget = command("forget", "delete one scope and all its rows (asks first)")
    forget.add_argument("--yes", action="store_true", help="do not ask")

    erase = command("erase", "delete every scope with these parts (asks first)", False)
    for part in PARTS:
        erase.add_argument(f"--{part}", help=f"every scope with this {part}")
    erase.add_argument("--yes", action="store_true", help="do not ask")
    # one scope is forget's: taken here only to say so (argparse would just call them unknown)
    erase.add_argument("--scope", help=argparse.SUPPRESS)
    erase.add_argument("--namespace", help=argparse.SUPPRESS)

    summary = "serve a scope's memory to MCP clients (stdio, or HTTP with bearer tokens)"
    mcp_settings.add_arguments(commands.add_parser("mcp", help=summary, description=summary))
    return parser


def _write(out: TextIO, text: str) -> None:
    tables.say(out, text if text.endswith("\n") else text + "\n")


def _scopes(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> None:
    found = listing(reader, **given_parts(args))
    for s in found:
        with reading(s.key):
            tables.checked_time(s.created_at, f"the creation time of scope {s.key!r}")
            counts = (s.capacity or 0, s.logged_steps, s.items)
            if not all(type(count) is int and count >= 0 for count in counts):
                raise ValueError(
                    f"scope {s.key!r} has the capacity {s.capacity!r}, {s.logged_steps!r} "
                    f"logged steps, {s.items!r} items"
                )
    if args.json:
        _write(out, tables.json_line([dataclasses.asdict(s) for s in found]))
        return
    now, rows = time.time(), []
    for s in found:
        capacity = "unbounded" if s.capacity is None else s.capacity
        row = [_shown(s.key), tables.safe(s.policy), capacity, s.items, s.logged_steps]
        rows.append([*row, tables.age(now - s.created_at)])
    header = ["scope", "policy", "capacity", "items", "logged steps", "age"]
    _write(out, tables.table(header, rows))


def _items(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> None:
    if args.width < 8:
        raise CommandError(f"--width must be at least 8 characters, got {args.width}")
    if args.limit is not None and args.limit < 0:
        raise CommandError(f"--limit must be 0 or more, got {args.limit}")
    scope = one_scope(reader, args)
    now = time.time()
    with reading(scope.key):
        records = tables.item_records(reader.memory(scope, live=False), now, args.sort)
        held = len(records)
        records = records[: args.limit]  # (None: all)
        table = tables.items_table(records, now, args.width) if records else ""
    shown = f"{len(records)} items" if len(records) == held else f"{len(records)} of {held} items"
    past = sum(r["superseded_at"] is not None for r in records)
    shown += f" ({past} superseded, kept for as_of)" if past else ""
    _listed(out, args, records, f"{tables.safe(shown_scope(scope))}: {shown}", table)


def _trace(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> None:
    if args.last < 0:
        raise CommandError(f"--last must be 0 (all) or more, got {args.last}")
    scope = one_scope(reader, args)
    with reading(scope.key):
        memory = reader.memory(scope, live=False)
        records = tables.decision_records(memory, args.last or None)
        scores = memory.core.admission.score_names
        effect = memory.stats()["ratings"]
        table = tables.decisions_table(records, scores=scores) if records else ""
    title = f"{tables.safe(shown_scope(scope))}: the last {len(records)} decisions"
    if _listed(out, args, records, title, table) and effect is not None and effect["ratings"]:
        moved = sum("; ratings " in str(r["reason"]) for r in records)
        _write(
            out,
            f"ratings: {effect['ratings']}, usual rating {effect['baseline']:.2f}; they changed "
            f"{moved} of these decisions ({effect['decisions_changed']} in all)",
        )


def _listed(
    out: TextIO, args: argparse.Namespace, records: list[dict[str, object]], title: str, table: str
) -> bool:
    """``records`` as JSON lines (``--json``: False), else ``title`` and ``table`` (True)."""
    if args.json:
        _write(out, "\n".join(tables.json_line(r) for r in records))
        return False
    _write(out, title)
    if records:
        _write(out, table)
    return True


def _plot(reader: MemoryReader, args: argparse.Namespace, out: TextIO) -> None:
    from solar_core.cli.timeline import plot

    check_output(reader, args.output)
    scope = one_scope(reader, args)
    with reading(scope.key):
        plot(reader.memory(scope, live=False), args.output, tables.safe(shown_scope(scope)))
    _write(out, f"wrote {args.output}")


def _confirm(question: str, args: argparse.Namespace, answers: TextIO) -> bool:
    if args.yes:
        return True
    tables.say(sys.stderr, f"{question} [y/N] ")
    sys.stderr.flush()
    answer = answers.readline()
    if not answer.endswith("\n"):
        tables.say(sys.stderr, "\n")  # no answer (end of input): the next message on its own line
    return answer.strip().lower() in ("y", "yes")


def _delete(reader: MemoryReader, args: argparse.Namespace, out: TextIO, answers: TextIO) -> None:
    # The keys alone: the rows of a damaged scope must not stand in the way.
    if args.command == "forget":
        wanted = one_scope(reader, args)
        if wanted.key not in stored_keys(reader):
            reader.memory(wanted)  # raises ScopeNotFound, naming the stored scopes like it
        found = [wanted.key]
    else:
        if args.scope is not None or args.namespace is not None:
            named = "--scope KEY" if args.scope is not None else "--namespace LABELS"
            raise CommandError(
                f"erase deletes every scope with the parts given (--{', --'.join(PARTS)}); "
                f"{named} names one scope: delete it with: solar-memory forget DB {named} "
                "(every namespace of a LangGraph store: solar-memory erase DB --project "
                f"{NAMESPACE_PROJECT})"
            )
        parts = given_parts(args)
        if not parts:
            raise CommandError(f"erase needs at least one of --{', --'.join(PARTS)}")
        found = stored_keys(reader, parts)
        if not found:
            _write(out, "no stored scope has these parts: nothing to erase")
            return
    try:
        counts = {s.key: f" ({s.items} items)" for s in reader.scopes()}
    except (PersistenceError, ValueError, TypeError, OverflowError):
        counts = {}  # a damaged row: the keys are enough to say what goes
    listed = ", ".join(f"{_shown(key)}{counts.get(key, '')}" for key in found)
    if not _confirm(f"delete {len(found)} scope(s): {listed}?", args, answers):
        raise Declined("not confirmed: nothing was deleted")
    from solar_core.persistence.memory_store import MemoryStore

    url = reader.url
    reader.close()
    # A store that never opens a memory: it only deletes rows, so it needs no embedder.
    with MemoryStore(url, policy="fifo", capacity=1, dim=1) as store:
        gone = [key for key in found if store.forget(Scope.from_key(key))]
    _write(out, f"deleted {len(gone)} scope(s): {', '.join(_shown(k) for k in gone)}")


def _shown(key: str) -> str:
    try:
        return tables.safe(shown_scope(Scope.from_key(key)))
    except ValueError:  # a key no solar-memory writes (edited by hand): shown as stored
        return tables.safe(key)


def main(
    argv: Sequence[str] | None = None,
    out: TextIO | None = None,
    answers: TextIO | None = None,
) -> int:
    """Run the command; the exit status (explained on standard error): 0 done, 1 an error, 2 a
    mistake on the command line."""
    args = _parser().parse_args(argv)
    if args.command == "mcp":
        return _mcp(args)
    out = sys.stdout if out is None else out
    url = database(args.db)

    def error(message: str) -> None:
        """One line on standard error (a driver's may span lines), escaped, no password in it."""
        folded = re.sub(r"\s*\n\s*", " ", message.strip())
        shown = tables.safe(without_passwords(folded, args.db, url))
        tables.say(sys.stderr, f"solar-memory: error: {shown}\n")

    try:
        reader = MemoryReader(url)
    except (PersistenceError, ValueError, TypeError, ImportError, OSError) as err:
        error(str(err))
        return 1
    try:
        if args.command in ("forget", "erase"):
            _delete(reader, args, out, sys.stdin if answers is None else answers)
        elif args.command == "export":
            return export(reader, args, out)
        else:
            run = {"scopes": _scopes, "items": _items, "trace": _trace, "plot": _plot}
            run[args.command](reader, args, out)
    except Damaged as err:  # rows changed outside solar-memory: how to recover
        error(err.way_forward(reader.shown_url))
        return 1
    except CommandError as err:
        error(str(err))
        return err.status
    except BrokenPipeError:
        raise  # the reader of our output went away (`| head`): run() ends quietly
    except (ScopeNotFound, PersistenceError, ValueError, ImportError, OSError) as err:
        error(str(err))  # (ScopeNotFound's message names the stored scopes like it)
        return 1
    finally:
        reader.close()
    return 0


def _mcp(args: argparse.Namespace) -> int:
    """Serve an MCP server until its client goes (stdio) or it is stopped (HTTP)."""
    try:
        settings = mcp_settings.settings_from(args)
        from mcp_solar.server import serve
    except (mcp_settings.SettingsError, ImportError) as err:
        tables.say(sys.stderr, f"solar-memory mcp: error: {err}\n")
        return 2 if isinstance(err, mcp_settings.SettingsError) else 1
    try:
        serve(settings)
    except KeyboardInterrupt:  # Ctrl-C on the HTTP server: stopped, not failed
        return 130
    return 0


def run() -> None:  # pragma: no cover - the console script
    try:
        status = main()
        if not sys.stdout.closed:  # (an MCP server over stdio closes it when its client goes)
            sys.stdout.flush()
    except BrokenPipeError:
        # `... | head`: no traceback, and nothing more written to the closed pipe at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 1
    sys.exit(status)


__all__ = ["main"]
