"""Scoped isolation, as a property: whatever the sequence of writes, reads, removals and
forgets over several users and sessions, a query in one scope never returns another scope's
item or cached answer -- in a plain in-memory scope map, in SQLite-backed scopes (two stores on
one file taking turns, as two processes would) and in the response cache.

Texts come from a tiny vocabulary, so the same text is stored in several scopes at once (the
case a content-keyed shortcut would get wrong). Every item carries its owner in its metadata;
every cached answer names its owner. The heavy runs (>= 100,000 scoped queries in all) are
marked ``slow``; the default run does a few thousand.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solar_core import SolarMemory
from solar_core.engine.response_cache import ResponseCache
from solar_core.engine.scoped_memories import ScopedMemories
from solar_core.persistence import MemoryStore

SCOPES = [("alice", None), ("bob", None), ("alice", "s1"), ("bob", "s1"), ("carol", "s2")]
WORDS = ["locker", "code", "plan", "team", "wifi", "password", "blue", "green"]
TEXTS = [f"my {a} {b}" for a in WORDS[:4] for b in WORDS[4:]]

op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, len(SCOPES) - 1), st.sampled_from(TEXTS)),
    st.tuples(st.just("query"), st.integers(0, len(SCOPES) - 1), st.sampled_from(TEXTS)),
    st.tuples(st.just("query"), st.integers(0, len(SCOPES) - 1), st.sampled_from(TEXTS)),
    st.tuples(st.just("query"), st.integers(0, len(SCOPES) - 1), st.sampled_from(TEXTS)),
    st.tuples(st.just("remove"), st.integers(0, len(SCOPES) - 1), st.just("")),
    st.tuples(st.just("forget"), st.integers(0, len(SCOPES) - 1), st.just("")),
)
programs = st.lists(op, min_size=20, max_size=120)


def owner(index: int) -> str:
    user, session = SCOPES[index]
    return f"{user}/{session}"


def check_hits(hits: list[Any], index: int, stored: set[str]) -> None:
    for hit in hits:
        assert hit.metadata["owner"] == owner(index), (hit, owner(index))
        assert hit.id in stored, f"{hit.id} was never stored in {owner(index)}"


def run_program(
    program: list[tuple[str, int, str]],
    memory_of: Callable[[int, int], SolarMemory],
    forget: Callable[[int, int], None],
) -> int:
    """Runs ``program``; ``memory_of(scope, step)`` is the scope's memory for that step (the
    step lets a caller alternate between handles). Returns the number of queries made."""
    stored: dict[int, set[str]] = {i: set() for i in range(len(SCOPES))}
    queries = 0
    for step, (kind, index, text) in enumerate(program):
        memory = memory_of(index, step)
        if kind == "add":
            decision = memory.add(text, metadata={"owner": owner(index)})
            if decision.admitted:
                stored[index].add(decision.item_id)
        elif kind == "query":
            for record in (True, False):
                check_hits(memory.retrieve(text, k=4, record=record), index, stored[index])
                queries += 1
        elif kind == "remove":
            items = memory.items()
            if items:
                memory.remove(items[0].id)
        else:
            forget(index, step)
            stored[index] = set()
    for index in range(len(SCOPES)):
        memory = memory_of(index, len(program))
        assert {item.metadata["owner"] for item in memory.items()} <= {owner(index)}
    return queries


def run_until(target: int, examples: int, body: Callable[[list[tuple[str, int, str]]], int]) -> int:
    """Runs ``body`` over Hypothesis programs until at least ``target`` queries were made."""
    made = 0

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(programs)
    def run(program: list[tuple[str, int, str]]) -> None:
        nonlocal made
        made += body(program)

    while made < target:
        run()
    return made


def in_memory_body(policy: str) -> Callable[[list[tuple[str, int, str]]], int]:
    def body(program: list[tuple[str, int, str]]) -> int:
        scopes = ScopedMemories(policy, capacity=6, embedder="hash", seed=0)

        def forget(index: int, step: int) -> None:
            scopes.forget(owner(index))

        return run_program(program, lambda index, step: scopes.get(owner(index)), forget)

    return body


def sqlite_body(path: Path, policy: str) -> Callable[[list[tuple[str, int, str]]], int]:
    counter = [0]

    def body(program: list[tuple[str, int, str]]) -> int:
        counter[0] += 1
        url = path / f"iso-{counter[0]}.db"
        # two stores on one file take turns, as two processes would: every step catches up
        # with what the other logged
        stores = [
            MemoryStore(url, policy=policy, capacity=6, embedder="hash", seed=0) for _ in range(2)
        ]
        try:

            def memory_of(index: int, step: int) -> SolarMemory:
                user, session = SCOPES[index]
                return stores[step % 2].scope(user=user, session=session)

            def forget(index: int, step: int) -> None:
                user, session = SCOPES[index]
                stores[step % 2].forget({"user": user, **({"session": session} if session else {})})

            queries = run_program(program, memory_of, forget)
        finally:
            for store in stores:
                store.close()
        return queries

    return body


def cache_body(program: list[tuple[str, int, str]]) -> int:
    cache = ResponseCache("hash", threshold=0.8)
    queries = 0
    for step, (kind, index, text) in enumerate(program):
        user, session = SCOPES[index]
        scope = {"user": user, **({"session": session} if session else {})}
        if kind == "add":
            cache.store(text, (owner(index), step), scope=scope)
        elif kind == "query":
            found = cache.lookup(text, scope=scope)
            assert found is None or found.response[0] == owner(index), (found, owner(index))
            queries += 1
        elif kind == "remove":
            cache.learn(text or "my locker code", scope=scope)
        else:
            cache.learn(TEXTS[step % len(TEXTS)], scope=scope)
    return queries


@pytest.mark.parametrize("policy", ["solar-adaptive", "fifo", "arc"])
def test_in_memory_scopes_never_cross(policy: str) -> None:
    assert run_until(2_000, 30, in_memory_body(policy)) >= 2_000


def test_sqlite_scopes_never_cross(tmp_path: Path) -> None:
    assert run_until(600, 10, sqlite_body(tmp_path, "solar-adaptive")) >= 600


def test_response_cache_scopes_never_cross() -> None:
    assert run_until(2_000, 40, cache_body) >= 2_000


@pytest.mark.slow
def test_at_least_100k_scoped_queries_never_cross(tmp_path: Path) -> None:
    made = 0
    for policy in ["solar-adaptive", "solar", "fifo", "lru", "arc"]:
        made += run_until(10_000, 200, in_memory_body(policy))
    made += run_until(25_000, 200, sqlite_body(tmp_path, "solar-adaptive"))
    made += run_until(30_000, 400, cache_body)
    assert made >= 100_000
