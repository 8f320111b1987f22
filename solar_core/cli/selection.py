"""Which scope a ``solar-memory`` command reads: its options, how a scope is shown and named
back, and the errors a user can fix by naming it otherwise."""

from __future__ import annotations

import argparse

from ..persistence.reader import MemoryReader
from ..persistence.scope import PARTS, Scope, namespace_scope, scope_named, shown_scope


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


def parse_scope(text: str) -> Scope:
    """The scope ``--scope`` names (:func:`~solar_core.persistence.scope.scope_named`)."""
    try:
        return scope_named(text)
    except ValueError as err:
        raise CommandError(f"--scope {text!r} names no scope: {err}") from err


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
        return parse_scope(args.scope)
    if parts:
        return Scope(**parts)
    stored = reader.scopes()
    if len(stored) == 1:
        return Scope.from_key(stored[0].key)
    listed = ", ".join(shown_scope(Scope.from_key(s.key)) for s in stored[:10]) or "none"
    raise CommandError(
        f"name a scope (e.g. --user alice, or --scope KEY): this store holds {len(stored)} "
        f"({listed})"
    )
