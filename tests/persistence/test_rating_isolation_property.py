"""Ratings stay where they belong, as a model-based property.

Hypothesis generates programs over several "processes" (MemoryStore / SolarStore objects on
one SQLite file; in the ``slow`` test, real interpreters) and the scopes or namespaces they
share: adds/puts, recorded retrievals and searches, looks (``record=False``), clears, and
ratings -- unnamed, or naming a retrieval by its ``Hits``, its ``RetrievalId`` handle or its
plain id, including retrievals of another process or of another scope. A model predicts what
each rating must do:

- refused (``ValueError``: "retrieval=", "another memory", "unknown or expired", "already",
  "name the search", ...) and then *nothing* changes, in any scope, seen from any process;
- or made, and then only the rated retrieval's scope changes: its feedback count goes up by
  one and, of its items, only those the retrieval returned (still stored, unchanged since) may
  change -- with Thompson sampling (``solar-e``) exactly by ``alpha += reward``,
  ``beta += 1 - reward``. Every other scope's items, posteriors and counters, seen from every
  process, are equal before and after.

Unnamed ``feedback()`` on a memory object rates the latest retrieval made through that same
object (never another process's; an object that made none must be told ``retrieval=``).
A ``SolarStore`` rates only the namespaces of the search it is given (``retrieval=``) or its
own latest search of ``namespace=``; it refuses unnamed ratings and another store's results.
A scope of *another database* is another memory even when its key and row id are the same (a
database has an id of its own, part of each scope's identity).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from solar_core.persistence import MemoryStore
from tests.support.profiles import examples
from tests.support.rating_worker import SCOPES, TEXTS, WORDS, Client, View, spawn

PROCS = 3
CAPACITY = 4  # small: evictions happen, and a rated retrieval's evicted items get no credit

Rating = tuple[bool | None, float | None]  # (like, score)

ratings = st.one_of(
    st.booleans().map(lambda like: (like, None)),
    st.sampled_from([0.0, 0.25, 0.5, 1.0]).map(lambda score: (None, score)),
)
procs = st.integers(0, PROCS - 1)
scopes = st.integers(0, len(SCOPES) - 1)
targets = st.one_of(
    st.none(),  # unnamed
    # (form, a retrieval of the rated scope (mostly) or of any scope, which one)
    st.tuples(
        st.sampled_from(["hits", "handle", "int"]),
        st.sampled_from([True, True, True, False]),
        st.integers(0, 1000),
    ),
)
memory_ops = st.one_of(
    st.tuples(st.just("add"), procs, scopes, st.sampled_from(TEXTS)),
    st.tuples(st.just("add"), procs, scopes, st.sampled_from(TEXTS)),
    st.tuples(st.just("retrieve"), procs, scopes, st.sampled_from(WORDS), st.integers(1, 3)),
    st.tuples(st.just("retrieve"), procs, scopes, st.sampled_from(WORDS), st.integers(1, 3)),
    st.tuples(st.just("look"), procs, scopes, st.sampled_from(WORDS)),
    st.tuples(st.just("rate"), procs, scopes, ratings, targets),
    st.tuples(st.just("rate"), procs, scopes, ratings, targets),
    st.tuples(st.just("rate"), procs, scopes, ratings, targets),
    st.tuples(st.just("clear"), procs, scopes),
)
memory_programs = st.lists(memory_ops, min_size=20, max_size=60)


# -- the drivers: the same program against clients in this process or in child processes ------
class LocalDriver:
    """``PROCS`` clients (stores) on one file in this process."""

    def __init__(self, url: str, policy: str) -> None:
        self.clients = [Client(url, policy, CAPACITY) for _ in range(PROCS)]

    def run(self, proc: int, command: dict[str, Any]) -> Any:
        return self.clients[proc].run(command)

    def target(self, proc: int, maker: int, token: int, form: str) -> object:
        hits = self.clients[maker].made[token]
        if form == "hits":
            return hits  # an object of another store in this process: passed as is
        if form == "handle":
            return hits.handle
        return hits.retrieval_id

    def rate(self, proc: int, scope: int, rating: Rating, target: object) -> str | None:
        return self.clients[proc].rate(scope, rating[0], rating[1], target)

    def close(self) -> None:
        for client in self.clients:
            client.close()


class ProcessDriver:
    """``PROCS`` clients, each in its own interpreter (JSON lines over pipes)."""

    def __init__(self, url: str, policy: str) -> None:
        self.procs = [spawn(url, policy, CAPACITY) for _ in range(PROCS)]
        for proc in self.procs:
            self._reply(proc)

    def _reply(self, proc: Any) -> Any:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"a worker died: {proc.stderr.read()[-3000:]}")
        reply = json.loads(line)
        assert "raised" not in reply, reply["raised"]
        return reply.get("ok")

    def run(self, proc: int, command: dict[str, Any]) -> Any:
        child = self.procs[proc]
        assert child.stdin is not None
        child.stdin.write(json.dumps(command) + "\n")
        child.stdin.flush()
        return self._reply(child)

    def target(self, proc: int, maker: int, token: int, form: str) -> object:
        if form == "hits" and maker == proc:
            return ("hits", token)  # the Hits object itself, in its process
        rid, origin = self.run(maker, {"op": "handle", "token": token})  # as it is now
        if form == "int":
            return ("int", rid)
        return ("handle", [rid, origin])  # what crosses processes: the RetrievalId

    def rate(self, proc: int, scope: int, rating: Rating, target: object) -> str | None:
        command = {"op": "rate", "scope": scope, "like": rating[0], "score": rating[1]}
        error: str | None = self.run(proc, {**command, "target": target})
        return error

    def close(self) -> None:
        for n, child in enumerate(self.procs):
            try:
                self.run(n, {"op": "close"})
            finally:
                assert child.stdin is not None
                child.stdin.close()
                child.wait(timeout=60)
                assert child.returncode == 0, child.stderr.read()[-3000:] if child.stderr else ""


Driver = LocalDriver | ProcessDriver


# -- the model --------------------------------------------------------------------------------
@dataclass
class Made:
    """A recorded retrieval, as the model knows it."""

    maker: int  # which process made it
    token: int  # its number in the maker's list
    scope: int
    ids: list[str]
    epoch: int  # the scope's clear() count when it was made
    # made while the scope was stored nowhere: it found nothing and recorded nothing (its Hits
    # has no retrieval id), so nothing can rate it once the scope is stored
    unrecorded: bool
    rated: bool = False


@dataclass
class Model:
    stored: list[bool] = field(default_factory=lambda: [False] * len(SCOPES))
    epoch: list[int] = field(default_factory=lambda: [0] * len(SCOPES))
    made: list[Made] = field(default_factory=list)
    # each memory object's latest recorded retrieval: (process, scope) -> index into made
    mine: dict[tuple[int, int], int | None] = field(default_factory=dict)

    def expected_error(self, proc: int, scope: int, named: Made | None, form: str) -> str | None:
        """What a rating must be refused with, ``None`` if it must be made; ``"skip"``: a case
        whose outcome is by design another's (a plain int names a retrieval of the rater's own
        memory, whatever made the number)."""
        if named is None:
            return "retrieval="
        if not self.stored[scope]:
            # a scope stored nowhere is empty: a rating of it is accepted and changes nothing,
            # whatever it names
            return None
        if named.unrecorded:
            # its maker's memory rates it as nothing (there was nothing to credit) whoever
            # stored the scope since; another memory cannot name it at all
            return None if proc == named.maker else "cannot be rated"
        if named.scope != scope:
            return "skip" if form == "int" else "another memory"
        if named.epoch != self.epoch[scope]:
            return "unknown or expired"
        if named.rated:
            return "already"
        return None


def views(driver: Driver) -> list[list[View]]:
    return [driver.run(p, {"op": "view"}) for p in range(PROCS)]


def reward_of(rating: Rating) -> float:
    like, score = rating
    return float(like) if like is not None else float(score or 0.0)


def check_rating_effect(
    before: list[list[View]],
    after: list[list[View]],
    rated: dict[int, list[str]],
    reward: float,
    exact: bool,
    seen_by: dict[int, set[int]],
) -> None:
    """``rated``: scope -> the ids its rated retrieval returned (may have been evicted since);
    ``seen_by``: scope -> the processes whose view shows its feedback count go up."""
    for p, (was_p, now_p) in enumerate(zip(before, after, strict=True)):
        for s, (was, now) in enumerate(zip(was_p, now_p, strict=True)):
            where = f"scope {SCOPES[s]} seen by process {p}"
            if s not in rated:
                assert now == was, f"a rating of scope(s) {sorted(rated)} changed {where}"
                continue
            assert set(now["items"]) == set(was["items"]), where
            grew = 1 if p in seen_by[s] else 0
            assert now["feedbacks"] == was["feedbacks"] + grew, where
            for item_id, stats in was["items"].items():
                if item_id not in rated[s]:
                    assert now["items"][item_id] == stats, (
                        f"{item_id} of {where} changed, but the rated retrieval returned {rated[s]}"
                    )
                elif exact:
                    got = now["items"][item_id]
                    assert got["alpha"] == pytest.approx(stats["alpha"] + reward, abs=1e-12)
                    assert got["beta"] == pytest.approx(stats["beta"] + 1.0 - reward, abs=1e-12)


def run_memory_program(driver: Driver, program: list[tuple[Any, ...]], exact: bool) -> int:
    """Runs ``program``, checking every rating against the model; returns how many were made."""
    model = Model()
    made_count = 0
    for op in program:
        kind, proc, scope = op[0], op[1], op[2]
        if kind == "add":
            driver.run(proc, {"op": "add", "scope": scope, "text": op[3]})
            model.stored[scope] = True
        elif kind in ("retrieve", "look"):
            record = kind == "retrieve"
            k = op[4] if record else 3
            command = {"op": "retrieve", "scope": scope, "query": op[3], "k": k, "record": record}
            token, ids = driver.run(proc, command)
            seen = driver.run(proc, {"op": "view"})[scope]["items"]
            assert set(ids) <= set(seen), f"{ids} returned in {SCOPES[scope]}, which holds {seen}"
            if record:
                unrecorded = not model.stored[scope]
                if unrecorded:
                    assert ids == [], f"{SCOPES[scope]} is stored nowhere, yet returned {ids}"
                model.made.append(Made(proc, token, scope, ids, model.epoch[scope], unrecorded))
                model.mine[(proc, scope)] = len(model.made) - 1
        elif kind == "clear":
            driver.run(proc, {"op": "clear", "scope": scope})  # a write: it stores the scope
            model.stored[scope] = True
            model.epoch[scope] += 1
            model.mine[(proc, scope)] = None  # the clearing object's retrievals are gone
        else:
            rating, target = op[3], op[4]
            if target is None:
                index = model.mine.get((proc, scope))
                form = "unnamed"
            else:
                form, same, pick = target
                # (a retrieval that recorded nothing has no id to name it by)
                pool = [
                    i
                    for i, m in enumerate(model.made)
                    if (m.scope == scope or not same) and not m.unrecorded
                ]
                if not pool:
                    continue
                index = pool[pick % len(pool)]
            named = None if index is None else model.made[index]
            expected = model.expected_error(proc, scope, named, form)
            event(f"rating {form}: {expected or 'made'}")
            if expected == "skip":
                continue
            sent: object = None
            if target is not None:
                assert named is not None
                sent = driver.target(proc, named.maker, named.token, form)
            before = views(driver)
            error = driver.rate(proc, scope, rating, sent)
            after = views(driver)
            if expected is not None:
                assert error is not None and expected in error, (
                    f"rating {form} by process {proc} in {SCOPES[scope]}: expected an error "
                    f"about {expected!r}, got {error!r}"
                )
                assert after == before, f"a refused rating ({error}) changed something"
            elif not model.stored[scope] or (named is not None and named.unrecorded):
                assert error is None, (
                    f"rating {form} by process {proc} of {SCOPES[scope]}, stored nowhere: "
                    f"refused with {error!r}"
                )
                assert after == before, "a rating of a scope stored nowhere changed something"
            else:
                assert error is None, (
                    f"rating {form} by process {proc} in {SCOPES[scope]} of {named}: refused "
                    f"with {error!r}"
                )
                assert named is not None
                named.rated = True
                made_count += 1
                seen_by = {scope: set(range(PROCS))}
                check_rating_effect(
                    before, after, {scope: named.ids}, reward_of(rating), exact, seen_by
                )
        for p in range(PROCS):  # everyone catches up
            driver.run(p, {"op": "sync"})
    return made_count


@contextmanager
def database() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as folder:
        yield str(Path(folder) / "m.db")


@pytest.mark.parametrize("policy", ["solar-e", "solar-adaptive"])
@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=memory_programs)
def test_memory_store_ratings_stay_in_their_scope(policy: str, program: list[Any]) -> None:
    with database() as url:
        driver = LocalDriver(url, policy)
        try:
            run_memory_program(driver, program, exact=policy == "solar-e")
        finally:
            driver.close()


@pytest.mark.slow
@settings(
    max_examples=examples(15),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=st.lists(memory_ops, min_size=20, max_size=40))
def test_ratings_stay_in_their_scope_across_processes(program: list[Any]) -> None:
    """The same programs with each store in its own interpreter: a retrieval crosses processes
    as its ``RetrievalId`` (or plain id), as an adapter's metadata carries it."""
    with database() as url:
        MemoryStore(url).close()  # the file's tables, made once (not raced by the workers)
        driver = ProcessDriver(url, "solar-e")
        try:
            run_memory_program(driver, program, exact=True)
        finally:
            driver.close()


def test_a_model_that_expects_a_leak_fails(tmp_path: Path) -> None:
    """The check can fail: a rating whose effect is claimed for another scope is caught."""
    driver = LocalDriver(str(tmp_path / "m.db"), "solar-e")
    try:
        driver.run(0, {"op": "add", "scope": 0, "text": TEXTS[0]})
        driver.run(0, {"op": "add", "scope": 2, "text": TEXTS[0]})
        _, ids = driver.run(
            1, {"op": "retrieve", "scope": 0, "query": WORDS[0], "k": 1, "record": True}
        )
        before = views(driver)
        assert driver.rate(1, 0, (True, None), None) is None
        after = views(driver)
        everyone = set(range(PROCS))
        check_rating_effect(before, after, {0: ids}, 1.0, True, {0: everyone})  # the truth
        with pytest.raises(AssertionError):  # a wrong claim: the rating went to scope 2
            check_rating_effect(before, after, {2: ids}, 1.0, True, {2: everyone})
        with pytest.raises(AssertionError):  # a wrong claim: nothing was credited
            check_rating_effect(before, after, {0: []}, 1.0, True, {0: everyone})
    finally:
        driver.close()


# -- SolarStore: ratings stay in the namespaces of the search they rate -----------------------
NAMESPACES: list[tuple[str, ...]] = [
    ("users", "alice"),
    ("users", "alice", "notes"),
    ("users", "bob"),
    ("team",),
]
PREFIXES: list[tuple[str, ...]] = [(), ("users",), ("users", "alice"), ("users", "bob"), ("team",)]
KEYS = ["k0", "k1", "k2", "k3"]
STORES = 2

stores = st.integers(0, STORES - 1)
namespaces = st.integers(0, len(NAMESPACES) - 1)
store_ops = st.one_of(
    st.tuples(st.just("put"), stores, namespaces, st.sampled_from(KEYS), st.sampled_from(TEXTS)),
    st.tuples(st.just("put"), stores, namespaces, st.sampled_from(KEYS), st.sampled_from(TEXTS)),
    st.tuples(st.just("delete"), stores, namespaces, st.sampled_from(KEYS)),
    st.tuples(
        st.just("search"),
        stores,
        st.integers(0, len(PREFIXES) - 1),
        st.sampled_from(WORDS),
        st.integers(1, 4),
    ),
    st.tuples(st.just("rate_results"), stores, st.integers(0, 1000), ratings),
    st.tuples(st.just("rate_results"), stores, st.integers(0, 1000), ratings),
    st.tuples(st.just("rate_namespace"), stores, namespaces, ratings),
    st.tuples(st.just("rate_namespace"), stores, namespaces, ratings),
    st.tuples(st.just("rate_unnamed"), stores, ratings),
    st.tuples(st.just("rate_foreign"), stores, namespaces, st.sampled_from(WORDS), ratings),
)


def index() -> Any:
    from langchain_core.embeddings import DeterministicFakeEmbedding

    return {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}


def open_solar_store(path: str) -> Any:
    from langchain_solar import SolarStore

    return SolarStore(path, index=index(), capacity=3, policy="solar-e", seed=0)


def store_views(solar: list[Any]) -> list[list[View | None]]:
    out: list[list[View | None]] = []
    for store in solar:
        row: list[View | None] = []
        for ns in NAMESPACES:
            memory = store.memory(ns)
            row.append(
                None
                if memory is None
                else {
                    "items": {item.id: dict(item.policy) for item in memory.items()},
                    "feedbacks": memory.stats()["feedbacks"],
                }
            )
        out.append(row)
    return out


def our_namespaces(store: Any) -> list[tuple[str, ...]]:
    return [tuple(ns) for ns in store.list_namespaces()]


@dataclass
class Search:
    """One namespace's retrieval of a search: the keys it returned, each as it was then."""

    namespace: int
    hits: Any
    versions: dict[str, int]
    rated: bool = False


def run_store_program(folder: Path, program: list[tuple[Any, ...]]) -> None:
    solar = [open_solar_store(str(folder / "store.db")) for _ in range(STORES)]
    foreign = open_solar_store(str(folder / "other.db"))
    # Another database's scopes never share an identity with ours, even with the same keys
    # and row ids (written in the same order here).
    for n, ns in enumerate(NAMESPACES):
        foreign.put(ns, "f", {"text": TEXTS[n]})
    versions: dict[tuple[int, str], int] = {}  # (namespace, key) -> puts so far
    results: list[tuple[Any, list[Search]]] = []  # every search: its results, its retrievals
    latest: dict[tuple[int, int], Search] = {}  # (store, namespace) -> its latest search there
    try:
        for op in program:
            kind, who = op[0], op[1]
            store = solar[who]
            if kind == "put":
                n, key, text = op[2], op[3], op[4]
                store.put(NAMESPACES[n], key, {"text": text})
                versions[(n, key)] = versions.get((n, key), 0) + 1
                continue
            if kind == "delete":
                n, key = op[2], op[3]
                store.delete(NAMESPACES[n], key)
                versions[(n, key)] = versions.get((n, key), 0) + 1
                continue
            if kind == "search":
                prefix, query, limit = PREFIXES[op[2]], op[3], op[4]
                found = store.search(prefix, query=query, limit=limit)
                returned: dict[tuple[str, ...], set[str]] = {}
                for item in found:
                    assert tuple(item.namespace[: len(prefix)]) == prefix
                    returned.setdefault(tuple(item.namespace), set()).add(item.key)
                searches = []
                for ns, hits in found.retrievals:
                    # each namespace's retrieval is what the search returned there, no more
                    assert {h.id for h in hits} == returned.pop(tuple(ns)), (ns, hits)
                    n = NAMESPACES.index(tuple(ns))
                    made = Search(n, hits, {h.id: versions.get((n, h.id), 0) for h in hits})
                    searches.append(made)
                    latest[(who, n)] = made
                assert not returned, f"returned items no retrieval names: {returned}"
                results.append((found, searches))
                continue
            rating = op[-1]
            like, score = rating
            rated: list[Search] = []
            expected: str | None = None
            if kind == "rate_unnamed":
                expected = "name the search"
                call: dict[str, Any] = {}
            elif kind == "rate_foreign":
                n, query = op[2], op[3]
                theirs = foreign.search(NAMESPACES[n], query=query, limit=1)
                (ns, _), *_ = theirs.retrievals
                # refused as another memory's, or (a namespace we do not have) as deleted
                expected = "another memory" if ns in our_namespaces(solar[0]) else "deleted"
                call = {"retrieval": theirs}
            elif kind == "rate_namespace":
                n = op[2]
                call = {"namespace": NAMESPACES[n]}
                known = latest.get((who, n))
                if known is None:
                    expected = "no search"
                else:
                    rated = [known]
            else:  # rate_results: any search of any of our stores (one database: one scope)
                if not results:
                    continue
                found, rated = results[op[2] % len(results)]
                call = {"retrieval": found}
                if not rated:
                    expected = "made no retrieval"
            if expected is None and any(s.rated for s in rated):
                expected = "already"
            event(f"SolarStore {kind}: {expected or 'made'}")
            before = store_views(solar)
            try:
                store.feedback(like=like, score=score, **call)
                error = None
            except ValueError as err:
                error = str(err)
            after = store_views(solar)
            if expected is not None:
                assert error is not None and expected in error, (kind, expected, error)
                assert after == before, f"a refused rating ({error}) changed something"
                continue
            assert error is None, (kind, error)
            for search in rated:
                search.rated = True
            reward = reward_of(rating)
            for was_p, now_p in zip(before, after, strict=True):
                for n, (was, now) in enumerate(zip(was_p, now_p, strict=True)):
                    mine = [s for s in rated if s.namespace == n]
                    if not mine:
                        assert now == was, f"a rating of {[s.namespace for s in rated]} changed {n}"
                        continue
                    assert was is not None and now is not None
                    assert now["feedbacks"] == was["feedbacks"] + 1
                    assert set(now["items"]) == set(was["items"])
                    (search,) = mine
                    for key, stats in was["items"].items():
                        if key not in search.versions:
                            assert now["items"][key] == stats, f"{key} of {NAMESPACES[n]}"
                        elif search.versions[key] == versions.get((n, key), 0):
                            got = now["items"][key]  # returned, and the same item since
                            assert got["alpha"] == pytest.approx(stats["alpha"] + reward)
                            assert got["beta"] == pytest.approx(stats["beta"] + 1.0 - reward)
    finally:
        for store in [*solar, foreign]:
            store.close()


@settings(
    max_examples=examples(20),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=st.lists(store_ops, min_size=20, max_size=60))
def test_solar_store_ratings_stay_in_the_searched_namespaces(program: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run_store_program(Path(folder), program)


# -- another database's retrieval is refused, whatever its scope's key and row id -------------
# A stored scope with no snapshot yet is named (its ``Hits.origin``) by a hash of
# its key, its row id and its database's id: two fresh stores whose first writes come in the
# same order give their scopes the same keys and row ids, never the same identity.
def test_another_solar_stores_results_are_refused_even_with_the_same_row_ids(
    tmp_path: Path,
) -> None:
    ours = open_solar_store(str(tmp_path / "ours.db"))
    theirs = open_solar_store(str(tmp_path / "theirs.db"))
    try:
        for store in (ours, theirs):
            store.put(("bob",), "x", {"text": "pizza"})
        ours.search(("bob",), query="pizza", limit=1)
        other = theirs.search(("bob",), query="pizza", limit=1)
        memory = ours.memory(("bob",))
        before = [dict(i.policy) for i in memory.items()]
        try:
            ours.feedback(like=True, retrieval=other)
        except ValueError as err:
            assert "another memory" in str(err)
        else:
            changed = [dict(i.policy) for i in memory.items()] != before
            raise AssertionError(f"their results were accepted (our posteriors changed: {changed})")
    finally:
        ours.close()
        theirs.close()


def test_another_databases_hits_are_refused_by_a_memory_store_scope(tmp_path: Path) -> None:
    stores = [MemoryStore(tmp_path / f"{n}.db", policy="solar-e", embedder="hash") for n in "ab"]
    try:
        ours, theirs = (store.scope(user="u") for store in stores)
        for scope in (ours, theirs):
            scope.add("green tea")
        ours.retrieve("green tea", k=1)
        other = theirs.retrieve("green tea", k=1)
        before = [dict(i.policy) for i in ours.items()]
        try:
            ours.feedback(like=False, retrieval=other)
        except ValueError as err:
            assert "another memory" in str(err)
        else:
            changed = [dict(i.policy) for i in ours.items()] != before
            raise AssertionError(f"their hits were accepted (our posteriors changed: {changed})")
    finally:
        for store in stores:
            store.close()
