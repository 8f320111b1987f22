"""A scoped semantic response cache: answer again what was answered before, never across scopes.

Tier 1 is the exact (:func:`exact_key`) query answered before in the scope, tier 2 a stored
query more similar than ``threshold``, tier 3 ``generate``, whose answer is stored. Each scope
holds at most ``capacity`` entries, oldest evicted first. A session that already has turns
skips tiers 1 and 2 and seeds nothing: its answers depend on the transcript. Invalidation (a
new fact, a deletion): DESIGN.md, "Lifecycle and response cache".
"""

from __future__ import annotations

import itertools
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, SupportsIndex

import numpy as np
import numpy.typing as npt

from solar_core.basics.validation import _real_array, check_k, check_text, unit_rows
from solar_core.embedders.embedder import Embedder, resolve_embedder
from solar_core.retrieval.item_table import ItemTable

F32 = npt.NDArray[np.float32]
ScopeKey = tuple[tuple[str, str], ...]


def normalise(query: str) -> str:
    """The tier-1 key: lower case, single spaces, no trailing punctuation.

    >>> normalise("  What plan am I on? ")
    'what plan am i on'
    """
    return " ".join(query.lower().split()).rstrip(" ?!.")


def exact_key(query: str) -> str:
    """The tier-1 key of ``query``: :func:`normalise`, unless that leaves no letter or digit
    (``"???"`` and ``"!!!"`` would answer each other); then the query with single spaces.

    >>> exact_key("What plan am I on?"), exact_key("  ???  "), exact_key("!!!")
    ('what plan am i on', '???', '!!!')
    """
    norm = normalise(query)
    return norm if any(c.isalnum() for c in norm) else " ".join(query.split())


def scope_key(scope: Mapping[str, str] | None) -> ScopeKey:
    """A hashable, order-independent key for ``scope`` (str keys and values only)."""
    if scope is None:
        return ()
    if not isinstance(scope, Mapping):
        raise TypeError(f"scope must be a mapping of str to str, got {type(scope).__name__}")
    for k, v in scope.items():
        if not isinstance(k, str) or not isinstance(v, str):
            raise TypeError(f"scope keys and values must be str, got {k!r}: {v!r}")
    return tuple(sorted(scope.items()))


@dataclass(frozen=True)
class Resolution:
    """How a query was answered: ``tier`` 1, 2 (``cached``) or 3 (generated), the similarity of
    the cached query that answered it (1.0 for tier 1, ``None`` for tier 3)."""

    query: str
    response: Any
    tier: int
    cached: bool
    similarity: float | None
    cached_query: str | None = None


@dataclass
class _Scope:
    key: ScopeKey
    queries: ItemTable
    responses: ItemTable
    # exact_key(query) -> entry id, one per entry, oldest first
    exact: dict[str, str] = field(default_factory=dict)


def _refused(how: str) -> TypeError:
    return TypeError(
        f"{how} of a ResponseCache is refused: its watched memories tell the one cache "
        "they watch. Share this object, or make a new ResponseCache and watch() them again"
    )


class ResponseCache:
    """The scoped semantic response cache (see the module docstring). ``embedder`` is as for
    :class:`~solar_core.SolarMemory`; ``enabled=False`` takes the cache out of the path.

    >>> cache = ResponseCache("hash", relate=0.3)   # word-hash vectors: a lower bar than MiniLM's
    >>> alice = {"user": "alice"}
    >>> cache.resolve("What plan am I on?", lambda q: "Enterprise", scope=alice).tier
    3
    >>> cache.resolve("what plan am i on", lambda q: "?", scope=alice).response   # tier 1
    'Enterprise'
    >>> cache.resolve("What plan am I on?", lambda q: "Free", scope={"user": "bob"}).response
    'Free'
    >>> cache.learn("Alice's favourite colour is green", scope=alice)   # unrelated: kept
    0
    >>> cache.learn("I am on the Team plan now", scope=alice)   # related: her entry goes
    1
    >>> cache.resolve("What plan am I on?", lambda q: "Team", scope=alice).tier
    3
    """

    def __init__(
        self,
        embedder: object = None,
        *,
        threshold: float = 0.95,
        capacity: int = 5000,
        enabled: bool = True,
        relate: float = 0.5,
        trace_size: int = 1000,
        clock: Callable[[], float] = time.time,
        trace_retention_days: float = 30.0,
    ) -> None:
        for name, value in (("threshold", threshold), ("relate", relate)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} must be a number, got {type(value).__name__}")
            if not -1.0 <= float(value) <= 1.0:
                raise ValueError(f"{name} must be a cosine in [-1, 1], got {value}")
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool, got {enabled!r}")
        self._embedder: Embedder = resolve_embedder(embedder)
        self.dim, self.enabled = self._embedder.dim, enabled
        self.threshold, self.relate = float(threshold), float(relate)
        self.capacity = check_k(capacity, "capacity")
        self._scopes: dict[ScopeKey, _Scope] = {}  # only scopes holding entries
        self._by_part: dict[tuple[str, str], set[ScopeKey]] = {}  # (part, value) -> scopes
        # the persisted memories watched, by scope: (scope, memory, its journal)
        self._watches: dict[ScopeKey, list[tuple[ScopeKey, Any, Any]]] = {}
        self._deletions = 0  # deletions heard: an answer generated across one is not cached
        self._lock, self._ids = threading.RLock(), 0
        self._trace: deque[dict[str, Any]] = deque(maxlen=check_k(trace_size, "trace_size"))
        if not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__}")
        self._clock = clock
        days = trace_retention_days
        if isinstance(days, bool) or not isinstance(days, int | float):
            raise TypeError("trace_retention_days must be a number")
        if not days > 0:
            raise ValueError(f"trace_retention_days must be > 0, got {days}")
        self.trace_retention_days = float(days)

    # A copy would share the entries but number new ones on its own (the next store of either
    # would collide), and the watched memories tell only the original.
    def __copy__(self) -> NoReturn:
        raise _refused("copy.copy()")

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> NoReturn:
        raise _refused("copy.deepcopy()")

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise _refused("pickling")

    def _unit(self, text: str, vector: object = None) -> F32:
        """``vector`` checked and made unit; ``None``: ``text`` embedded."""
        if vector is None:
            row: F32 = unit_rows(self._embedder.embed([text]), self.dim, 1)[0]
            return row
        # checked as given: a cast to float32 first would drop a complex vector's imaginary part
        given = _real_array(vector, "vector")
        if given.ndim != 1:
            raise ValueError(
                f"vector must be one embedding of {self.dim} numbers, got {given.shape}"
            )
        row = unit_rows(given[None, :], self.dim, 1, "vector")[0]
        return row

    def _scope(self, key: ScopeKey) -> _Scope:
        scope = self._scopes.get(key)
        if scope is None:
            # tables that grow on demand (the cache enforces its own cap): a bounded one would
            # allocate all 5,000 rows for a scope holding one entry
            queries, responses = (ItemTable(self.dim, None, initial_slots=16) for _ in "qr")
            scope = self._scopes[key] = _Scope(key, queries, responses)
            for part in key:
                self._by_part.setdefault(part, set()).add(key)
        return scope

    def _let_go(self, key: ScopeKey) -> None:
        """Forget scope ``key`` and its entries (under the lock)."""
        if self._scopes.pop(key, None) is not None:
            for part in key:  # (every part of a held scope is indexed)
                self._by_part[part].discard(key)
                if not self._by_part[part]:
                    del self._by_part[part]

    def _reached(self, key: ScopeKey) -> list[ScopeKey]:
        """The scopes holding entries that ``key`` reaches: itself and the narrower ones."""
        if not key:
            return list(self._scopes.keys())
        smallest = min((self._by_part.get(part, set()) for part in key), key=len)
        parts = set(key)
        return [k for k in smallest if len(key) == 1 or parts.issubset(k)]

    def _watching(self, key: ScopeKey) -> list[tuple[ScopeKey, Any, Any]]:
        """The persisted memories watched for ``key`` or a broader scope."""
        watches = self._watches
        if len(watches) < 2 ** len(key):
            parts = set(key)
            return [w for k, ws in list(watches.items()) if parts.issuperset(k) for w in ws]
        subsets = (s for n in range(len(key) + 1) for s in itertools.combinations(key, n))
        return [w for sub in subsets for w in watches.get(sub, ())]  # (sorted, as keys are)

    def _current(self, key: ScopeKey) -> bool:
        """Bring every persisted memory watched for ``key`` up to date (its catch-up tells this
        cache of other processes' deletions); ``False`` when one is closed or its scope was
        forgotten: its answers are dropped, nothing could invalidate them any more."""
        current = True
        for watched, memory, journal in self._watching(key):
            if not journal.closed:
                try:
                    with memory.lock:
                        memory.runner.sync()
                except Exception:
                    if not journal.closed:
                        raise
            if journal.closed:
                with memory.lock:
                    memory.events.tell_deletions()  # a forget noticed by a step of another caller
                self._invalidate(watched, traces=False)
                current = False
        return current

    # -- the tiers ----------------------------------------------------------------------------
    def lookup(
        self,
        query: str,
        *,
        scope: Mapping[str, str] | None = None,
        session_turns: int = 0,
        vector: object = None,
    ) -> Resolution | None:
        """A cached answer for ``query`` in ``scope`` (tier 1 or 2), or ``None``; ``vector``:
        the query's embedding, if the caller has it."""
        query = check_text(query, "query")
        key = scope_key(scope)
        if not self.enabled or session_turns:
            return None
        given = None if vector is None else self._unit(query, vector)  # checked on every path
        if self._watches and not self._current(key):
            return None
        with self._lock:
            found = self._scopes.get(key)
            if found is None:
                return None
            entry_id = found.exact.get(exact_key(query))
            if entry_id is not None:
                cached, response = found.queries.payload_at(found.queries.slot_of(entry_id))
                return Resolution(query, response, 1, True, 1.0, cached)
        unit = given if given is not None else self._unit(query)  # outside the lock: slow part
        with self._lock:
            found = self._scopes.get(key)
            if found is None:
                return None
            slots, scores = found.queries.nearest(unit, 1)
            if not scores or scores[0] <= self.threshold:
                return None
            cached, response = found.queries.payload_at(int(slots[0]))
            return Resolution(query, response, 2, True, float(scores[0]), cached)

    def store(
        self,
        query: str,
        response: Any,
        *,
        scope: Mapping[str, str] | None = None,
        session_turns: int = 0,
        response_text: str | None = None,
        vector: object = None,
    ) -> bool:
        """Cache ``response`` for ``query`` in ``scope``; ``False`` when it is not cached
        (disabled, a session with turns, or a scope whose watched persisted memory was closed
        or forgotten: nothing would invalidate the answer). ``response_text`` (default
        ``str(response)``) is what invalidation compares new facts with."""
        return self._store(query, response, scope, session_turns, response_text, vector, None)

    def _store(
        self,
        query: str,
        response: Any,
        scope: Mapping[str, str] | None,
        session_turns: int,
        response_text: str | None,
        vector: object,
        deletions: int | None,
    ) -> bool:
        """:meth:`store`; not if a deletion was heard since ``deletions`` were counted."""
        query = check_text(query, "query")
        key = scope_key(scope)
        if not self.enabled or session_turns:
            return False
        if self._watches and any(journal.closed for *_, journal in self._watching(key)):
            return False
        if response_text is not None and not isinstance(response_text, str):
            raise TypeError(f"response_text must be a str, got {type(response_text).__name__}")
        text = response_text if response_text is not None else str(response)
        q_vec = self._unit(query, vector)
        # A response with no text is related to what its query is related to.
        r_vec = self._unit(text) if text.strip() else q_vec
        with self._lock:
            if deletions is not None and deletions != self._deletions:
                return False  # a deletion landed while it was generated: it may have used it
            found = self._scope(key)
            norm = exact_key(query)
            old = found.exact.get(norm)
            if old is not None:
                self._drop(found, old, keep=True)
            while len(found.queries) >= self.capacity:
                self._drop(found, next(iter(found.exact.values())), keep=True)
            self._ids += 1
            entry_id = f"c{self._ids}"
            found.queries.insert(entry_id, q_vec, (query, response))
            found.responses.insert(entry_id, r_vec, None)
            found.exact[norm] = entry_id
            return True

    def resolve(
        self,
        query: str,
        generate: Callable[..., Any] | Any,
        *,
        scope: Mapping[str, str] | None = None,
        session_turns: int = 0,
        memory: Any = None,
        k: int | None = None,
    ) -> Resolution:
        """Answer ``query``: tier 1, else 2, else 3, which generates and caches the answer.

        ``generate`` (a callable, or a LangChain runnable's ``invoke``) gets the query, or with
        a ``memory`` to retrieve from ``(query, hits)`` (``{"query": ..., "hits": ...}``
        through ``invoke``). Every resolution is traced (:meth:`trace`)."""
        hit = self.lookup(query, scope=scope, session_turns=session_turns)
        ids: list[str] = []
        if hit is None:
            deletions = self._deletions  # the retrieval below sees every deletion heard so far
            call = generate.invoke if hasattr(generate, "invoke") else None
            if memory is not None:
                hits = memory.retrieve(query, k=k)
                deletions = self._deletions  # caught up: the hits are as of these deletions
                ids = [h.id for h in hits]
                answer = call({"query": query, "hits": hits}) if call else generate(query, hits)
            else:
                answer = call(query) if call else generate(query)
            self._store(query, answer, scope, session_turns, None, None, deletions)
            hit = Resolution(query, answer, 3, False, None)
        with self._lock:
            entry = {"kind": "response", "at": self._clock(), "scope": dict(scope_key(scope))}
            entry.update(query=query, tier=hit.tier, cached=hit.cached, similarity=hit.similarity)
            self._trace.append({**entry, "response": hit.response, "ids": ids})
        return hit

    # -- invalidation -------------------------------------------------------------------------
    def learn(
        self, fact: str, *, scope: Mapping[str, str] | None = None, vector: object = None
    ) -> int:
        """A new fact landed in ``scope``: evict the entries it relates to, there and in every
        narrower scope (``{"user": "alice"}`` reaches ``{"user": "alice", "llm": ...}``);
        returns how many. ``vector``: the fact's embedding, if the caller has it."""
        key = scope_key(scope)
        unit = self._unit(check_text(fact, "fact"), vector)
        evicted = 0
        with self._lock:
            for reached in self._reached(key):
                found = self._scopes[reached]
                doomed = {
                    table.id_at(slot)
                    for table in (found.queries, found.responses)
                    for slot in np.flatnonzero(table.similarities(unit) >= self.relate).tolist()
                }
                for entry_id in doomed:
                    self._drop(found, entry_id)
                evicted += len(doomed)
        return evicted

    def watch(self, memory: Any, *, scope: Mapping[str, str] | None = None) -> None:
        """Keep this cache's ``scope`` (and every narrower one) in step with ``memory``: an item
        it stores evicts the answers it relates to (:meth:`learn`); an item it deletes (not by
        eviction) drops every answer of those scopes, and their traces (DESIGN.md). A pickled
        memory does not keep the connection."""
        key = scope_key(scope)
        if memory.dim != self.dim:
            raise ValueError(f"memory dim {memory.dim} differs from the cache's {self.dim}")

        cache = weakref.ref(self)  # the memory holds these, a persisted one's watch it: no cycle

        def on_store(item_id: str, text: str, vector: F32, metadata: Mapping[str, Any]) -> None:
            if (this := cache()) is None:
                return
            if len(vector) != this.dim:  # the scope was re-embedded: nothing here is its own
                this._invalidate(key)
            else:
                this.learn(text, scope=dict(key), vector=vector)

        def on_delete(item_ids: Sequence[str], reason: str) -> None:
            if reason != "evicted" and (this := cache()) is not None:
                this._invalidate(key)

        memory.subscribe(on_store, on_delete=on_delete)
        journal = memory.runner
        if hasattr(journal, "closed"):  # persisted: its journal says when it is closed
            with self._lock:
                self._watches.setdefault(key, []).append((key, memory, journal))

    def _invalidate(self, key: ScopeKey, traces: bool = True) -> None:
        """Drop every entry of ``key`` and narrower scopes; with ``traces``, their traces too."""
        with self._lock:
            reached = self._reached(key)
            if traces or reached:  # (a closed watch, checked again, drops nothing new)
                self._deletions += 1
            for found in reached:
                self._let_go(found)
            if traces:
                parts = set(key)
                kept = [t for t in self._trace if not parts.issubset(t["scope"].items())]
                self._trace.clear()
                self._trace.extend(kept)

    def _drop(self, found: _Scope, entry_id: str, keep: bool = False) -> None:
        """Drop one entry; the scope too when it was its last, unless ``keep`` (a store that
        makes room in it)."""
        slot = found.queries.slot_of(entry_id)
        norm = exact_key(found.queries.payload_at(slot)[0])
        found.queries.remove(slot)
        found.responses.remove(found.responses.slot_of(entry_id))
        del found.exact[norm]
        if not keep and len(found.queries) == 0:
            self._let_go(found.key)

    # -- inspection ---------------------------------------------------------------------------
    def size(self, scope: Mapping[str, str] | None = None) -> int:
        """Entries cached in ``scope``."""
        with self._lock:
            found = self._scopes.get(scope_key(scope))
            return 0 if found is None else len(found.queries)

    def stats(self) -> dict[str, int]:
        """``scopes`` holding entries, ``entries`` in all, ``watched`` persisted memories."""
        with self._lock:
            return {
                "scopes": len(self._scopes),
                "entries": sum(len(s.queries) for s in self._scopes.values()),
                "watched": sum(len(ws) for ws in self._watches.values()),
            }

    def clear(self) -> None:
        """Forget every entry of every scope (for LangChain's ``BaseCache.clear``)."""
        with self._lock:
            self._deletions += 1  # an answer being generated is not cached either
            self._scopes.clear()
            self._by_part.clear()

    def sweep_traces(self) -> int:
        """Drop the response traces older than ``trace_retention_days``; returns how many."""
        with self._lock:
            limit = self._clock() - self.trace_retention_days * 86_400.0
            n = len(self._trace)
            while self._trace and self._trace[0]["at"] < limit:
                self._trace.popleft()
            return n - len(self._trace)

    def trace(self) -> list[dict[str, Any]]:
        """The latest resolutions, oldest first (a watched deletion drops its scopes')."""
        with self._lock:
            return list(self._trace)
