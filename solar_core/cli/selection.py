"""Which scope a ``solar-memory`` command reads, and the errors that say how to recover."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager

from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.reader import MemoryReader, ScopeNotFound, ScopeSummary
from solar_core.persistence.scope import PARTS, Scope, namespace_scope, scope_named, shown_scope

#: what the library's errors say of rows it refuses as changed outside it
DAMAGE = (
    "corrupted",
    "edited by hand",
    "cannot be replayed",
    "snapshot is missing",
    "not a SOLAR memory snapshot",
    "memory's state",
    "no readable settings",
    "not a scope key",
    "cannot be read:",
)
#: what they say of rows another build may have written: damaged, or for that build
OTHER_BUILD = ("cannot build", "replays differently", "snapshot format")


def scope_options(parser: argparse.ArgumentParser) -> None:
    for part in PARTS:
        parser.add_argument(f"--{part}", help=f"the scope's {part}")
    parser.add_argument("--scope", metavar="KEY", help="a scope as `scopes` lists it")
    parser.add_argument(
        "--namespace",
        metavar="LABELS",
        help="a LangGraph store namespace (SolarStore), its labels joined by dots: users.alice",
    )


class CommandError(Exception):
    """A mistake on the command line: the message says how to fix it (exit status 2)."""

    status = 2


class Declined(CommandError):
    """A deletion the user did not confirm (exit status 1)."""

    status = 1


class Damaged(Exception):
    """Rows of a scope changed outside solar-memory (exit status 1); ``keys``: the stored ones;
    ``other``: maybe no damage, but written by another solar-memory build."""

    def __init__(
        self, problem: str, key: str | None, keys: list[str] | None = None, other: bool = False
    ) -> None:
        super().__init__(problem)
        self.problem, self.key, self.keys, self.other_build = problem, key, keys or [], other

    def way_forward(self, db: str) -> str:
        """The problem and how to recover, with the exact command that drops the scope."""
        problem = self.problem.rstrip(". ")
        if self.key is not None and repr(self.key) not in problem:
            problem = f"scope {self.key!r}: {problem}"
        restore = "To recover: restore the database from a backup"
        if self.other_build:
            restore = (
                "If another solar-memory build wrote it, read it with that one; if not, its "
                "rows were changed outside solar-memory: restore the database from a backup"
            )
        forget = f"solar-memory forget {shlex.quote(db)} --scope"
        if self.key is not None:
            how = f"this scope and all its rows with: {forget} {shlex.quote(self.key)} --yes"
        elif self.keys:
            keys = ", ".join(self.keys[:10])
            how = f"the damaged scope with: {forget} KEY --yes (stored keys: {keys})"
        else:
            return f"{problem}. {restore}"
        return f"{problem}. {restore}, or delete {how}"


def damage(err: Exception) -> bool:
    """Whether ``err`` refuses rows changed outside the library (or by another build)."""
    return isinstance(err, PersistenceError) and any(m in str(err) for m in DAMAGE + OTHER_BUILD)


@contextmanager
def reading(key: str) -> Iterator[None]:
    """Reading the scope ``key``: damaged rows, and values no solar-memory writes, become
    :class:`Damaged` naming the scope (the message says how to recover)."""
    try:
        yield
    except ScopeNotFound:
        raise
    except PersistenceError as err:
        if damage(err):
            raise Damaged(str(err), key, other=any(m in str(err) for m in OTHER_BUILD)) from err
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError) as err:
        raise Damaged(f"scope {key!r} holds a value no solar-memory writes: {err!r}", key) from err


def stored_keys(reader: MemoryReader, parts: dict[str, str] | None = None) -> list[str]:
    """The stored scopes' keys (with these parts), without reading their (maybe damaged) rows."""
    with reader.backend.transaction(write=False):
        return [str(k) for k in reader.backend.scope_keys(parts or None)]


def listing(reader: MemoryReader, **parts: str) -> list[ScopeSummary]:
    """:meth:`MemoryReader.scopes`; a damaged scope row: :class:`Damaged` naming it."""
    try:
        return reader.scopes(**parts)
    except (PersistenceError, ValueError, TypeError, OverflowError) as err:
        if isinstance(err, PersistenceError) and not damage(err):
            raise
        keys = stored_keys(reader)
        named = [k for k in re.findall(r"scope '([^']*)'", str(err)) if k in keys]
        problem = str(err) if damage(err) else f"a scope row holds a value never written: {err!r}"
        raise Damaged(problem, named[0] if named else None, keys) from err


def given_parts(args: argparse.Namespace) -> dict[str, str]:
    return {part: getattr(args, part) for part in PARTS if getattr(args, part) is not None}


def one_scope(reader: MemoryReader, args: argparse.Namespace) -> Scope:
    """The scope the options name; the only stored one when none is named."""
    parts = given_parts(args)
    named = [args.scope is not None, args.namespace is not None, bool(parts)]
    if sum(named) > 1:
        raise CommandError("name the scope one way: --scope, --namespace or its parts")
    if args.namespace is not None:
        return namespace_scope(args.namespace.split("."))
    if args.scope is not None:
        try:
            return scope_named(args.scope)
        except ValueError as err:
            raise CommandError(f"--scope {args.scope!r} names no scope: {err}") from err
    if parts:
        return Scope(**parts)
    stored = listing(reader)
    if len(stored) == 1:
        return Scope.from_key(stored[0].key)
    listed = ", ".join(shown_scope(Scope.from_key(s.key)) for s in stored[:10]) or "none"
    raise CommandError(
        f"name a scope (e.g. --user alice, or --scope KEY): this store holds {len(stored)} "
        f"({listed})"
    )
