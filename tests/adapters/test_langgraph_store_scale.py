"""``SolarStore`` with many namespaces (a namespace per user): one namespace's work does not grow
with the others. Checked by what the database is asked -- every statement a call makes reads
an index range, never a whole table -- and by what a TTL sweep holds: one namespace at a time,
never the store. (The times are in ``benchmarks/store_scale.py``.)"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")

from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402

from langchain_solar.store import SolarStore  # noqa: E402
from solar_core.persistence.sqlite_backend import SQLiteBackend  # noqa: E402
from tests.support.clock import Clock  # noqa: E402

MINUTE = 60.0


def make(path: Path, clock: Clock, **kw: Any) -> SolarStore:
    index: Any = {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}
    return SolarStore(
        str(path), index=index, clock=clock, capacity=5, ttl={"default_ttl": 60}, **kw
    )


def filled(path: Path, clock: Clock, n: int = 60) -> SolarStore:
    store = make(path, clock)
    for i in range(n):
        store.put(("users", f"u{i}"), "k0", {"text": f"user {i} likes tea"}, ttl=1 if i else 60)
    return store


@contextmanager
def statements(store: SolarStore) -> Iterator[list[str]]:
    """Every SQL statement ``store``'s connection runs meanwhile (values inlined)."""
    backend = store.store.backend
    assert isinstance(backend, SQLiteBackend)
    seen: list[str] = []
    backend._conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        backend._conn.set_trace_callback(None)


def full_scans(path: Path, seen: list[str]) -> list[str]:
    """The statements among ``seen`` whose plan reads a whole ``solar_*`` table or index."""
    conn = sqlite3.connect(path)
    try:
        bad = []
        for sql in seen:
            if not sql.lstrip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE")):
                continue
            plan = conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
            if any(str(row[-1]).startswith("SCAN solar_") for row in plan):
                bad.append(sql)
        return bad
    finally:
        conn.close()


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.search(("users", "u7"), query="tea"),
        lambda s: s.search(("users", "u7"), filter={"text": "user 7 likes tea"}),
        lambda s: s.put(("users", "u7"), "k1", {"text": "coffee too"}),
        lambda s: s.put(("users", "new"), "k1", {"text": "a new user"}),
        lambda s: s.get(("users", "u7"), "k0"),
        lambda s: s.delete(("users", "u7"), "k0"),
        lambda s: s.sweep_ttl(),
        lambda s: s.list_namespaces(prefix=("users", "u7")),
    ],
    ids=[
        "search",
        "filtered search",
        "put",
        "put new namespace",
        "get",
        "delete",
        "sweep",
        "list under a prefix",
    ],
)
def test_one_namespace_s_calls_read_no_whole_table(
    tmp_path: Path, call: Callable[[SolarStore], object]
) -> None:
    """A call in one namespace (and a sweep with nothing due) asks the database only for index
    ranges: with 100,000 namespaces it reads what it reads with 60. Listing every namespace's
    key for each search (or visiting every namespace on each sweep) scans ``solar_scopes``."""
    path = tmp_path / "store.db"
    store = filled(path, Clock())
    store.store.close()  # the memories go: the call opens its namespace from the database
    store = make(path, Clock())
    with statements(store) as seen:
        call(store)
    assert seen, "the call asked the database nothing: the check would prove nothing"
    assert full_scans(path, seen) == []
    store.close()


def test_a_sweep_visits_only_the_namespaces_with_expired_items(tmp_path: Path) -> None:
    clock = Clock()
    store = filled(tmp_path / "store.db", clock, n=30)  # u1..u29 expire after a minute
    opened: list[tuple[str, ...]] = []
    memory = store.memory

    def spy(namespace: tuple[str, ...]) -> Any:
        opened.append(tuple(namespace))
        return memory(namespace)

    store.memory = spy  # type: ignore[method-assign]
    assert store.sweep_ttl() == 0
    assert opened == []  # nothing due: no namespace opened
    clock.now += 2 * MINUTE
    assert store.sweep_ttl() == 29
    assert sorted(opened) == sorted(("users", f"u{i}") for i in range(1, 30))
    opened.clear()
    assert store.sweep_ttl() == 0 and opened == []  # swept: nothing due any more
    assert [i.key for i in store.search(("users", "u0"))] == ["k0"]
    store.close()


def test_a_call_does_not_wait_for_a_sweep_of_other_namespaces(tmp_path: Path) -> None:
    """While a sweep is in the middle of one namespace, a call in another one goes through
    (the sweep used to hold the store's lock over every namespace: a get waited seconds)."""
    clock = Clock()
    store = filled(tmp_path / "store.db", clock, n=4)
    clock.now += 2 * MINUTE
    inside, release = threading.Event(), threading.Event()
    lapse = store._lapse

    def slow_lapse(memory: Any) -> list[str]:
        inside.set()
        release.wait(10)
        return lapse(memory)

    store._lapse = slow_lapse  # type: ignore[method-assign]
    sweeper = threading.Thread(target=store.sweep_ttl)
    sweeper.start()
    try:
        assert inside.wait(10)
        got: list[Any] = []
        caller = threading.Thread(target=lambda: got.append(store.get(("users", "u0"), "k0")))
        caller.start()
        caller.join(5)
        assert not caller.is_alive(), "the get waited for the sweep"
        assert got[0] is not None and got[0].value == {"text": "user 0 likes tea"}
    finally:
        release.set()
        sweeper.join(10)
    store.close()


def test_the_namespaces_under_a_prefix_are_found_by_their_labels(tmp_path: Path) -> None:
    """A prefix is matched label by label: ("users", "u1") holds ("users", "u1", "notes") but
    not ("users", "u10"); labels of any text (quotes, commas, backslashes, percent signs,
    non-ASCII)."""
    store = make(tmp_path / "store.db", Clock())
    spaces = [
        ("users", "u1"),
        ("users", "u10"),
        ("users", "u1", "notes"),
        ("users", 'u1"'),
        ("users", "u1,x"),
        ("users", "u1\\"),
        ("users", "u%1"),
        ("users", "ü1"),
        ("teams", "u1"),
    ]
    for ns in spaces:
        store.put(ns, "k", {"text": "hello"})
    for prefix in [*spaces, ("users",), ()]:
        want = sorted(ns for ns in spaces if ns[: len(prefix)] == prefix)
        assert sorted(store.namespaces(prefix)) == want, prefix
        found = {tuple(i.namespace) for i in store.search(prefix, limit=100)}
        assert sorted(found) == want, prefix
    store.close()
