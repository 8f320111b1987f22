"""Calls of a ``MemoryStore`` with session ids a client chose, some spelling the names of stored
scopes: ``python -m tests.support.session_id_worker PATH SEED CALLS`` makes ``CALLS`` of them
on the store at ``PATH`` and prints a JSON line ``{"calls": n, "foreign": n}``, the number of
items of another scope that any call let it see (the test wants 0).

Every item carries the key of the scope it was written into; a call made with the string ``s``
may only ever see items whose key is ``Scope(session=s).key``.
"""

from __future__ import annotations

import json
import random
import sys
from typing import Any

from solar_core import MemoryStore, PersistenceError, SolarMemory
from solar_core.persistence import Scope
from solar_core.persistence.scope import check_identifier

#: the stored scopes whose names the strings spell
NAMED = [
    Scope(user="alice"),
    Scope(org="acme", user="bob"),
    Scope(session="s1"),
    Scope(user="carol", team="billing"),
    Scope(project="p", user="dave", session="x"),
    Scope(session="user=alice"),  # a session whose id spells another scope's name
]

OPERATIONS = ("read", "read", "add", "existing", "in", "forget", "cache", "reembed")


def open_store(path: str) -> MemoryStore:
    return MemoryStore(path, policy="fifo", capacity=8, embedder="hash", seed=0)


def secret(scope: Scope) -> str:
    return f"the locker code of {scope.key} is secret"


#: the named scopes no string opens (each call may forget its own session: these stay)
KEPT = [scope for scope in NAMED if scope.session is None or len(scope.parts()) > 1]


def seed(store: MemoryStore) -> None:
    """Store one secret in each named scope."""
    for scope in NAMED:
        store.get(scope).add(secret(scope), metadata={"owner": scope.key})


def spellings() -> list[str]:
    """The names of the stored scopes, and strings close to them."""
    names = [scope.key for scope in NAMED]
    near = ["user=bob&org=acme", "org=acme&user=bob&", "user%3Dalice", "session=s1", "s1"]
    near += ["session=user%3Dalice", "namespace=users.alice", "user=alice ", "USER=alice"]
    return names + near


def draw(rng: random.Random) -> str:
    """A session id: a stored scope's name (often), a near one, or a random one."""
    roll = rng.random()
    if roll < 0.5:
        return rng.choice([scope.key for scope in NAMED])
    if roll < 0.8:
        return rng.choice(spellings())
    parts = rng.choice(["user", "org", "session", "team", "x"]), rng.choice(["alice", "bob", "s1"])
    return "&".join(f"{p}={v}" for p, v in [parts] * rng.randint(1, 2))


def foreign(items: list[Any], text: str) -> int:
    """How many of ``items`` (records or hits) belong to another scope than session ``text``."""
    own = Scope(session=text).key
    return sum(1 for item in items if (item.metadata or {}).get("owner") != own)


def call(store: MemoryStore, operation: str, text: str, step: int) -> int:
    """One call with the session id ``text``; returns the foreign items it let the caller see."""
    try:
        check_identifier("session", text)
    except ValueError:
        return 0  # not a session id: refused, and nothing the tests draw
    own = Scope(session=text)
    seen = 0
    if operation == "read":
        memory = store.get(text)
        seen += foreign(memory.items(), text)
        seen += foreign(memory.retrieve("locker code secret", k=8), text)
    elif operation == "add":
        store.get(text).add(f"note {step} of {own.key}", metadata={"owner": own.key})
    elif operation == "existing":
        found: SolarMemory | None = store.existing(text)
        if found is not None:
            seen += foreign(found.items(), text)
    elif operation == "in":
        if text in store:  # then the session's own scope is stored
            seen += foreign(store.get(own).items(), text)
    elif operation == "forget":
        store.forget(text)
    elif operation == "cache":  # the session's cache, not a stored scope's
        # Read against the store's own table, not a second call: another process forgetting
        # the session in between makes the second call hand out the session's new cache.
        cache = store.response_cache(text)
        seen += int(store._caches.get(own.key) is not cache)
    else:
        try:
            store.reembed(text)
        except ValueError:
            pass  # the session is not stored: nothing to re-embed (a named scope is not it)
    return seen


def main(argv: list[str] | None = None) -> int:
    path, seed_text, calls_text = (argv or sys.argv[1:])[:3]
    rng = random.Random(int(seed_text))
    store = open_store(path)
    seen = 0
    raced = 0
    for step in range(int(calls_text)):
        operation, text = rng.choice(OPERATIONS), draw(rng)
        for _ in range(5):
            try:
                seen += call(store, operation, text, step)
                break
            except PersistenceError as err:  # the other process forgot the session meanwhile
                if "forgotten" not in str(err):
                    raise
                raced += 1  # the store hands out a new memory: the call is made again
    store.close()
    print(json.dumps({"calls": int(calls_text), "foreign": seen, "raced": raced}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
