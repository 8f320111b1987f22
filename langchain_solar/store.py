"""LangGraph's long-term memory API (``BaseStore``), every namespace a SOLAR-curated memory.

``create_agent(model, tools, store=SolarStore(...))`` and tools that use ``runtime.store`` get
what LangGraph's ``InMemoryStore`` / ``PostgresStore`` give (namespaces, ``put``/``get``/
``search``/``delete``/``list_namespaces``, ``batch``/``abatch``, semantic ``search(query=...)``
with an ``index``), plus a bound: each namespace is one persistent scope of a
:class:`~solar_core.persistence.MemoryStore` (SQLite by default, or a PostgreSQL URL) holding at
most ``capacity`` items, whose policy decides what a ``put`` keeps and what it evicts.

- ``put`` is an offer: the policy may refuse it, or evict another item of the namespace to make
  room (:attr:`SolarStore.last_decision` says which; the scope's trace keeps every decision).
  ``put(..., pinned=True)`` stores the item as an ``identity`` item: never refused for being
  weak, never evicted. Updating a key replaces its value and keeps its place and ``created_at``.
- ``search(query=...)`` is a retrieval: the items it returns are credited, and
  :meth:`SolarStore.feedback` rates them (a like keeps them, a dislike exposes them).
- With ``capacity=None`` nothing is refused or evicted, and results are those of
  ``InMemoryStore`` (same keys, values, namespaces, filters and orders; scores differ only by
  float rounding), checked by a property test.

Differences from ``InMemoryStore``, on purpose: an item has one vector (its indexed texts
joined by newlines; ``InMemoryStore`` keeps one per field and ranks by the best); a ``get`` or
a ``delete`` never creates a namespace (``InMemoryStore`` lists a namespace a ``get`` touched);
TTL is not supported (``put(ttl=...)`` raises, as LangGraph stores without TTL do).

>>> from langchain_core.embeddings import DeterministicFakeEmbedding
>>> store = SolarStore(index={"dims": 32, "embed": DeterministicFakeEmbedding(size=32)})
>>> store.put(("users", "alice"), "food", {"text": "I like pizza"})
>>> store.get(("users", "alice"), "food").value
{'text': 'I like pizza'}
>>> [item.key for item in store.search(("users",), query="pizza")]
['food']
>>> store.list_namespaces()
[('users', 'alice')]
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)

from solar_core import SolarMemory
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore, Scope
from solar_core.types import Decision, Hits

from .embeddings import LangChainEmbedder, to_embedder

#: the scope part that marks a namespace's memory (a namespace is the scope's ``user``)
PROJECT = "langgraph-store"
# metadata keys of a stored item
VALUE, CREATED, UPDATED, POSITION, INDEXED = (
    "value",
    "created_at",
    "updated_at",
    "position",
    "indexed",
)


def scope_of(namespace: tuple[str, ...]) -> Scope:
    """The scope holding ``namespace``: its labels as a JSON list, under :data:`PROJECT`.

    >>> scope_of(("users", "alice")).user
    '["users","alice"]'
    """
    return Scope(project=PROJECT, user=json.dumps(list(namespace), separators=(",", ":")))


def namespace_of(scope: Scope) -> tuple[str, ...]:
    assert scope.user is not None
    return tuple(json.loads(scope.user))


class SolarStore(BaseStore):
    """A LangGraph ``BaseStore`` whose namespaces are SOLAR-curated memories (module docstring).

    Args:
        store: a SQLite path, a ``postgresql://`` URL or an open
            :class:`~solar_core.persistence.MemoryStore`; ``None``: an in-memory SQLite
            database (gone with the process, like ``InMemoryStore``).
        index: LangGraph's index config: ``{"dims": ..., "embed": ..., "fields": [...]}``
            (``embed``: any LangChain ``Embeddings``, an embedding function, or a
            ``"provider:model"`` string; without it, ``embedder``: MiniLM by default). Without
            an index, ``search`` ignores ``query`` (as LangGraph's stores do) and items are
            embedded with ``embedder`` for curation only.
        capacity: items kept per namespace (``None``: unbounded, nothing ever evicted).
        policy: the policy of every namespace (default: the library's default; ``unlimited``
            when ``capacity`` is ``None``).
        embedder: without ``index``, what embeds items for curation (default: MiniLM).
        seed: seeds every namespace's policy.
    """

    supports_ttl = False

    def __init__(
        self,
        store: str | os.PathLike[str] | MemoryStore | None = None,
        *,
        index: IndexConfig | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        policy: str | None = None,
        embedder: object = None,
        seed: int | None = None,
    ) -> None:
        self.index_config: dict[str, Any] | None = dict(index) if index else None
        if self.index_config is not None:
            if "embed" in self.index_config:
                if "dims" not in self.index_config:
                    raise ValueError('index with "embed" needs "dims", as in LangGraph\'s stores')
                embeddings = ensure_embeddings(self.index_config["embed"])
                embedder = LangChainEmbedder(embeddings, dim=int(self.index_config["dims"]))
            else:  # no model named: ``embedder`` (MiniLM by default)
                embedder = to_embedder(embedder)
            fields = self.index_config.get("fields") or ["$"]
            self._fields: list[tuple[str, Any]] = [
                (p, tokenize_path(p)) if p != "$" else (p, p) for p in fields
            ]
        else:
            embedder = to_embedder(embedder)
            self._fields = []
        if capacity is None and policy is None:
            policy = "unlimited"  # unbounded: keep everything, as LangGraph's stores do
        if isinstance(store, MemoryStore):
            self.store, self._owned = store, False
        else:
            self.store = MemoryStore(
                ":memory:" if store is None else store,
                policy=policy,
                capacity=capacity,
                embedder=embedder,
                seed=seed,
            )
            self._owned = True
        self._lock = threading.RLock()
        #: the decision on the latest ``put`` (stored? what it evicted, and why)
        self.last_decision: Decision | None = None
        self._last_search: list[tuple[SolarMemory, Hits]] = []

    # -- namespaces -----------------------------------------------------------------------------
    def namespaces(self) -> list[tuple[str, ...]]:
        """Every namespace written to, oldest first."""
        return [namespace_of(s) for s in self.store.scopes(project=PROJECT)]

    def memory(self, namespace: tuple[str, ...]) -> SolarMemory | None:
        """The SOLAR memory of ``namespace`` (``None`` if nothing was ever put there): its
        items, trace and stats, for inspection."""
        return self.store.existing(scope_of(namespace))

    # -- batches --------------------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order, every read seeing the store as it was before the batch (as in
        LangGraph's stores); the batch's puts are applied last, the last put of a key wins."""
        with self._lock:
            results: list[Result] = []
            puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
            for op in ops:
                if isinstance(op, GetOp):
                    results.append(self._get(op))
                elif isinstance(op, SearchOp):
                    results.append(self._search(op))
                elif isinstance(op, ListNamespacesOp):
                    results.append(self._list(op))
                elif isinstance(op, PutOp):
                    puts[(op.namespace, op.key)] = op
                    results.append(None)
                else:
                    raise ValueError(f"Unknown operation type: {type(op)}")
            for op in puts.values():
                self._put(op, pinned=False)
            return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Any = None,
        *,
        ttl: Any = None,
        pinned: bool = False,
    ) -> None:
        """``BaseStore.put``; ``pinned=True`` keeps the item whatever the policy says."""
        if not pinned:
            super().put(namespace, key, value, index, **({} if ttl is None else {"ttl": ttl}))
            return
        if ttl is not None:
            super().put(namespace, key, value, index, ttl=ttl)  # raises: no TTL here
        with self._lock:
            self._put(PutOp(namespace, str(key), value, index), pinned=True)

    def feedback(self, *, like: bool | None = None, score: float | None = None) -> None:
        """Rate the latest ``search(query=...)``: every item it returned, in each namespace."""
        for memory, hits in self._last_search:
            memory.feedback(like=like, score=score, retrieval=hits)

    def close(self) -> None:
        """Close the underlying store (if this object opened it)."""
        if self._owned:
            self.store.close()

    # -- operations -----------------------------------------------------------------------------
    def _get(self, op: GetOp) -> Item | None:
        memory = self.memory(op.namespace)
        if memory is None or op.key not in memory:
            return None
        item: Item = _item(op.namespace, memory.get(op.key))
        return item

    def _texts(self, op: PutOp) -> list[str]:
        if not self._fields or op.index is False or op.value is None:
            return []
        paths = self._fields if op.index is None else [(p, tokenize_path(p)) for p in op.index]
        texts: list[str] = []
        for _, field in paths:
            texts += get_text_at_path(op.value, field)
        return [t for t in texts if t]

    def _put(self, op: PutOp, *, pinned: bool) -> None:
        namespace, key = op.namespace, op.key
        if op.value is None:
            memory = self.memory(namespace)
            if memory is not None and key in memory:
                memory.remove(key)
            return
        memory = self.store.get(scope_of(namespace))
        now = datetime.now(timezone.utc).isoformat()
        created, position = now, None
        if key in memory:  # an update keeps the item's place and creation time
            old = memory.get(key).metadata
            created, position = old[CREATED], old[POSITION]
            memory.remove(key)
        if position is None:
            position = 1 + max((i.metadata[POSITION] for i in memory.items()), default=-1)
        texts = self._texts(op)
        text = "\n".join(texts) if texts else json.dumps(op.value, sort_keys=True, default=str)
        meta = {
            VALUE: dict(op.value),
            CREATED: created,
            UPDATED: now,
            POSITION: position,
            INDEXED: bool(texts),
        }
        category = "identity" if pinned else "context"
        self.last_decision = memory.add(text, item_id=key, metadata=meta, category=category)

    def _candidates(self, op: SearchOp) -> list[tuple[tuple[str, ...], SolarMemory, Any]]:
        prefix = op.namespace_prefix
        out = []
        for namespace in self.namespaces():
            if namespace[: len(prefix)] != prefix:
                continue
            memory = self.memory(namespace)
            if memory is None:
                continue
            items = sorted(memory.items(), key=lambda i: i.metadata[POSITION])
            for item in items:
                value = item.metadata[VALUE]
                if not op.filter or all(_compare(value.get(k), v) for k, v in op.filter.items()):
                    out.append((namespace, memory, item))
        return out

    def _search(self, op: SearchOp) -> list[SearchItem]:
        candidates = self._candidates(op)
        if not (op.query and self._fields):
            return [
                _item(ns, item, cls=SearchItem)
                for ns, _, item in candidates[op.offset : op.offset + op.limit]
            ]
        scored: list[tuple[float, int]] = []
        scoreless: list[int] = []
        vectors: dict[int, Any] = {}
        for n, (_, memory, item) in enumerate(candidates):
            if not item.metadata[INDEXED]:
                scoreless.append(n)
                continue
            key = id(memory)
            if key not in vectors:
                query = memory.embed_query(op.query)
                look = memory.retrieve(embedding=query, k=max(1, len(memory)), record=False)
                vectors[key] = (query, {h.id: h.score for h in look})
            scored.append((vectors[key][1][item.id], n))
        ranked = sorted(scored, key=lambda s: -s[0])  # stable: candidate order on ties
        kept = ranked[op.offset : op.offset + op.limit]
        chosen: list[tuple[float | None, int]] = [(s, n) for s, n in kept]
        if scoreless and len(chosen) < op.limit:
            chosen += [(None, n) for n in scoreless[: op.limit - len(chosen)]]
        self._record([candidates[n] for s, n in chosen if s is not None], vectors)
        return [
            _item(candidates[n][0], candidates[n][2], cls=SearchItem, score=s) for s, n in chosen
        ]

    def _record(
        self, returned: Sequence[tuple[tuple[str, ...], SolarMemory, Any]], vectors: dict[int, Any]
    ) -> None:
        """A search is a retrieval: each namespace credits the items it returned."""
        self._last_search = []
        by_memory: dict[int, tuple[SolarMemory, list[str]]] = {}
        for _, memory, item in returned:
            by_memory.setdefault(id(memory), (memory, []))[1].append(item.id)
        for key, (memory, ids) in by_memory.items():
            others = [i.id for i in memory.items() if i.id not in set(ids)]
            hits = memory.retrieve(embedding=vectors[key][0], k=len(ids), exclude=others)
            self._last_search.append((memory, hits))

    def _list(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = self.namespaces()
        if op.match_conditions:
            namespaces = [
                ns for ns in namespaces if all(_matches(c, ns) for c in op.match_conditions)
            ]
        if op.max_depth is not None:
            namespaces = sorted({ns[: op.max_depth] for ns in namespaces})
        else:
            namespaces = sorted(namespaces)
        return namespaces[op.offset : op.offset + op.limit]


def _item(
    namespace: tuple[str, ...], item: Any, cls: type[Item] = Item, score: float | None = None
) -> Any:
    meta = item.metadata
    fields = dict(
        value=dict(meta[VALUE]),
        key=item.id,
        namespace=namespace,
        created_at=datetime.fromisoformat(meta[CREATED]),
        updated_at=datetime.fromisoformat(meta[UPDATED]),
    )
    if cls is SearchItem:
        return SearchItem(**fields, score=score)
    return Item(**fields)


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """A namespace against a prefix or suffix condition (``"*"`` matches any label)."""
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or label == p for label, p in pairs)


def _compare(value: Any, wanted: Any) -> bool:
    """LangGraph's filter rule: nested dicts match key by key, ``$eq``/``$ne``/``$gt``/``$gte``/
    ``$lt``/``$lte`` compare, lists match element by element, anything else by equality."""
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(value, op, v) for op, v in wanted.items())
        if not isinstance(value, dict):
            return False
        return all(_compare(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(a, b) for a, b in zip(value, wanted, strict=False))
        )
    return bool(value == wanted)


def _operator(value: Any, operator: str, wanted: Any) -> bool:
    if operator == "$eq":
        return bool(value == wanted)
    if operator == "$ne":
        return bool(value != wanted)
    compare = {
        "$gt": float.__gt__,
        "$gte": float.__ge__,
        "$lt": float.__lt__,
        "$lte": float.__le__,
    }.get(operator)
    if compare is None:
        raise ValueError(f"Unsupported operator: {operator}")
    return bool(compare(float(value), float(wanted)))
