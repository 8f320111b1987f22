"""The memory behind the tools, transport aside: one :class:`MemoryStore`, opened on first use,
and the recall handles this server gave out. Every method takes the caller's scope, which the
server decides (the command line over stdio, the bearer token over HTTP): no argument a model
passes can name another scope.

>>> from solar_core.persistence import Scope
>>> service = MemoryService(Settings(store=":memory:", embedder="hash"))
>>> alice = Scope(user="alice")
>>> service.remember(alice, "prefers green tea").stored
True
>>> found = service.recall(alice, "green tea?", k=1)
>>> [item.text for item in found.items]
['prefers green tea']
>>> service.rate(alice, found.handle, rating="like").rated == [found.items[0].id]
True
>>> service.rate(Scope(user="bob"), found.handle, rating="like")
Traceback (most recent call last):
...
mcp_solar.service.ToolProblem: this handle comes from another scope's recall (or was made up): ...
>>> service.close()
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
import threading
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mcp_solar.results import (
    Capacity,
    DecisionRecord,
    Forgotten,
    Kept,
    Page,
    Rated,
    Recall,
    Recalled,
    Removed,
    Stats,
    Verdict,
)
from mcp_solar.settings import DEFAULT_CAPACITY, STORE_ENV, Settings
from solar_core.basics.types import Decision, Hits, RetrievalId, UnknownItemError
from solar_core.engine.memory import SolarMemory
from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.memory_store import MemoryStore, default_capacity
from solar_core.persistence.reader import redacted
from solar_core.persistence.scope import Scope, shown_scope
from solar_core.policies.presets import DEFAULT_POLICY

#: the longest text ``remember`` stores and ``recall`` searches, in characters
MAX_TEXT = 20_000
#: the largest metadata or filter, as JSON
MAX_JSON = 10_000
#: the most hits one recall returns, items one list page holds, ids one forget takes
MAX_K, MAX_PAGE, MAX_IDS = 50, 200, 1000
#: decisions ``stats`` reports
LATEST = 10

#: what a policy's reason means, for the verdict's sentence
_REASONS = {
    "free slot": "there was room",
    "bootstrap": "the memory is still learning what is worth keeping",
    "already stored": "the same item is already kept",
    "full of protected items": "every kept item is protected from eviction",
    "gain <= value": "it would add less than the least valuable kept item is worth",
    "gain > value": "it adds more than the least valuable kept item was worth",
    "victim worthless": "the least valuable kept item had no value left",
    "regime shift": "the requests changed subject, so new items come first",
    "regret <= tau": "too little regret has built up since the last admission",
    "regret > tau": "enough regret built up: recalls were missing items like it",
    "salience <= lowest value": "it is less salient than every kept item",
    "salience > lowest value": "it is more salient than the least valued kept item",
}


class ToolProblem(ValueError):
    """A call the server refuses, changing nothing; the message names the fix."""


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _checked_json(value: object, what: str) -> None:
    """Refuse a metadata or filter that is not small plain JSON (before the memory sees it)."""
    try:
        size = len(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as err:
        raise ToolProblem(
            f"{what} must be plain JSON (objects, lists, text, numbers): {err}"
        ) from None
    if size > MAX_JSON:
        raise ToolProblem(f"{what} is {size} characters as JSON; at most {MAX_JSON}")


def _checked_text(text: object, what: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ToolProblem(f"{what} must be a non-empty string")
    if len(text) > MAX_TEXT:
        raise ToolProblem(
            f"{what} is {len(text)} characters; at most {MAX_TEXT}: remember the fact itself, "
            "in a sentence or a paragraph, not a whole document"
        )
    return text


def _bounded(value: int, name: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise ToolProblem(f"{name} must be a whole number from 1 to {high}, got {value!r}")
    return value


class MemoryService:
    """The tools' work on the memory of the scope each call names (see the module)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._store: MemoryStore | None = None
        self._lock = threading.Lock()

    # -- the store ------------------------------------------------------------------------------
    def store(self) -> MemoryStore:
        """The store, opened now if it is not yet (a failure is told to the caller and retried
        at the next call: the server keeps serving)."""
        with self._lock:
            if self._store is None:
                self._store = self._open()
            return self._store

    def _open(self) -> MemoryStore:
        settings = self.settings
        url = settings.store
        capacity = settings.capacity
        try:
            if "://" not in url and url != ":memory:":
                Path(url).expanduser().parent.mkdir(parents=True, exist_ok=True)
                url = str(Path(url).expanduser())
            return MemoryStore(
                url,
                embedder=settings.embedder,
                policy=settings.policy,  # (None: each scope keeps its own)
                default_policy=DEFAULT_POLICY,
                capacity=default_capacity(DEFAULT_CAPACITY) if capacity is None else capacity,
            )
        except (PersistenceError, ValueError, TypeError, ImportError, OSError) as err:
            message = redacted(str(err), settings.store)
            raise ToolProblem(
                f"the memory store {redacted(settings.store, settings.store)!r} cannot be opened: "
                f"{message}. Fix the STORE argument of `solar-memory mcp` (or ${STORE_ENV}) and "
                "restart the server; nothing was changed"
            ) from None

    def memory(self, scope: Scope) -> SolarMemory:
        """``scope``'s memory (a mismatch of settings is told, naming the fix)."""
        store = self.store()
        try:
            return store.get(scope)
        except (PersistenceError, ValueError, TypeError) as err:
            raise ToolProblem(_unopened(scope, str(err))) from None

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    # -- the tools ------------------------------------------------------------------------------
    def remember(
        self, scope: Scope, text: str, metadata: Mapping[str, Any] | None = None
    ) -> Verdict:
        """Offer ``text``; the verdict says whether it was stored and why."""
        text = _checked_text(text, "text")
        if metadata is not None:
            if not isinstance(metadata, Mapping):
                raise ToolProblem("metadata must be an object of keys to JSON values")
            _checked_json(metadata, "metadata")
        memory = self.memory(scope)
        try:
            decision = memory.add(text, metadata=metadata)
        except (ValueError, TypeError) as err:
            raise ToolProblem(f"not remembered: {err}") from None
        except PersistenceError as err:
            raise ToolProblem(f"not remembered (nothing was stored): {err}") from None
        return _verdict(decision, len(memory), memory.capacity)

    def recall(
        self,
        scope: Scope,
        query: str,
        k: int = 5,
        filter: Mapping[str, Any] | None = None,
    ) -> Recall:
        """The ``k`` kept items closest to ``query``, and a handle to rate them."""
        query = _checked_text(query, "query")
        k = _bounded(k, "k", MAX_K)
        if filter is not None:
            _checked_json(filter, "filter")
        memory = self.memory(scope)
        try:
            hits = memory.retrieve(query, k=k, filter=filter)
        except (ValueError, TypeError) as err:
            raise ToolProblem(f"not recalled: {err}") from None
        except PersistenceError as err:
            raise ToolProblem(f"not recalled: {err}") from None
        items = []
        for hit in hits:
            try:
                stored_at = _when(memory.get(hit.id).created_at)
            except UnknownItemError:  # another client forgot it since: still what was recalled
                stored_at = ""
            items.append(Recalled(id=hit.id, text=hit.text, score=round(hit.score, 4),
                                  stored_at=stored_at, metadata=dict(hit.metadata)))  # fmt: skip
        handle = _handle_of(hits)
        return Recall(handle=handle, items=items)

    def rate(
        self,
        scope: Scope,
        handle: str,
        rating: str | float | None = None,
        like: bool | None = None,
        score: float | None = None,
        dislike: bool | None = None,
    ) -> Rated:
        """Rate exactly the items the recall ``handle`` returned: ``rating`` (``"like"``,
        ``"dislike"`` or a score), ``like``, ``dislike`` or ``score``, one of them."""
        if dislike is not None:  # dislike=true is like=false
            if not isinstance(dislike, bool) or like is not None:
                raise ToolProblem(
                    "rate takes one of: rating='like' or 'dislike', like=true, dislike=true, or "
                    "score=0..1 (dislike is true or false, and not given with like)"
                )
            like = not dislike
        reward = _reward(rating, like, score)
        retrieval = _retrieval_of(handle)
        memory = self.memory(scope)
        try:
            with memory.lock:  # (what it rates, then the rating: no step of another between)
                if retrieval.origin != memory.core.identity:  # (a scope not stored checks none)
                    raise ValueError("made by another memory")
                if retrieval == 0:  # a recall that found nothing and was not recorded
                    return Rated(handle=handle, rated=[], reward=reward)
                memory.check_rating(retrieval)
                rated = _rated_ids(memory, retrieval)
                if like is not None or isinstance(rating, str):  # (a like, not a score)
                    memory.feedback(like=reward == 1.0, retrieval=retrieval)
                else:
                    memory.feedback(score=reward, retrieval=retrieval)
        except (ValueError, TypeError, PersistenceError) as err:
            raise ToolProblem(_refused_rating(str(err))) from None
        return Rated(handle=handle, rated=rated, reward=reward)

    def forget(self, scope: Scope, ids: list[str]) -> Forgotten:
        """Delete these items for good (all, or none if one is not kept)."""
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise ToolProblem("ids must be a non-empty list of item ids (from recall or list)")
        if len(ids) > MAX_IDS:
            raise ToolProblem(f"forget takes at most {MAX_IDS} ids per call, got {len(ids)}")
        wanted = list(dict.fromkeys(ids))
        memory = self.memory(scope)
        unknown = [i for i in wanted if i not in memory]
        if unknown:
            raise ToolProblem(
                f"nothing was forgotten: {len(unknown)} id(s) are not kept "
                f"({', '.join(map(_short, unknown[:5]))}{', ...' if len(unknown) > 5 else ''}); "
                "pass ids that "
                "recall or list returned"
            )
        gone: list[str] = []
        for item_id in wanted:
            try:
                memory.remove(item_id)
            except UnknownItemError:  # another client forgot it meanwhile: gone all the same
                pass
            except PersistenceError as err:
                raise ToolProblem(f"forgot {len(gone)} of {len(wanted)} ids, then: {err}") from None
            gone.append(item_id)
        return Forgotten(forgotten=len(gone), ids=gone)

    def list(self, scope: Scope, cursor: str | None = None, limit: int = 50) -> Page:
        """One page of the kept items, oldest first."""
        limit = _bounded(limit, "limit", MAX_PAGE)
        after = _cursor_position(cursor)
        memory = self.memory(scope)
        items = sorted(memory.items(), key=lambda i: (i.created_step, i.id))
        later = [i for i in items if (i.created_step, i.id) > after] if after else items
        page = later[:limit]
        kept = [
            Kept(id=i.id, text=i.text, stored_at=_when(i.created_at), category=i.category,
                 metadata=dict(i.metadata), posterior={k: float(v) for k, v in i.policy.items()})
            for i in page
        ]  # fmt: skip
        more = len(later) > limit
        next_cursor = _cursor_of(page[-1].created_step, page[-1].id) if more else None
        return Page(items=kept, total=len(items), next_cursor=next_cursor)

    def stats(self, scope: Scope) -> Stats:
        """Policy, capacity, counts and the latest decisions."""
        memory = self.memory(scope)
        stats = memory.stats()
        counts = {
            key: value
            for key, value in stats.items()
            if value is None or (isinstance(value, int | float) and not isinstance(value, bool))
        }
        decisions = [
            DecisionRecord(step=d.step, stored=d.admitted, id=d.item_id, reason=d.reason,
                           evicted=d.evicted)
            for d in memory.trace(LATEST)
        ]  # fmt: skip
        return Stats(
            scope=shown_scope(scope),
            policy=memory.policy,
            capacity=Capacity(used=len(memory), limit=memory.capacity),
            counts=counts,
            latest_decisions=decisions,
        )


def _unopened(scope: Scope, error: str) -> str:
    """Why ``scope``'s memory cannot be opened, with the fix in the server's options."""
    shown = shown_scope(scope)
    found = re.search(r"was created with (\w+)=(.+?); this store asks for", error)
    if found is not None and found.group(1) in ("policy", "capacity"):
        name, theirs = found.groups()
        return (
            f"{shown} was created with {name} {theirs}, and this server asks new scopes for "
            f"another: restart it without --{name} (a scope keeps the settings it was created "
            f"with), or with --{name} {theirs.strip(chr(39))}"
        )
    if "embedder" in error:
        return (
            f"{shown} was stored with another embedder than this server's ({error.split('. ')[0]})"
            ": restart the server with the --embedder the scope was stored with"
        )
    return f"the memory of {shown} cannot be opened: {error}"


def _short(value: object, most: int = 40) -> str:
    """``value`` as a message may quote it: at most ``most`` characters."""
    shown = repr(value)
    return shown if len(shown) <= most else shown[: most - 3] + "..."


def _verdict(decision: Decision, used: int, limit: int | None) -> Verdict:
    gone = [Removed(id=decision.evicted, why="evicted")] if decision.evicted else []
    gone += [Removed(id=i, why=f"deleted: {why}") for i, why in decision.deleted]
    why = "; ".join(_REASONS.get(part, part) for part in decision.reason.split("; "))
    if decision.admitted and decision.reason == "already stored":
        sentence = f"Already kept as {decision.item_id}: nothing changed."
    elif decision.admitted:
        sentence = f"Stored as {decision.item_id} ({why})."
        if decision.evicted:
            sentence += f" {decision.evicted} was evicted to make room."
    else:
        sentence = f"Refused: {why}. Nothing changed."
    return Verdict(
        stored=decision.admitted,
        id=decision.item_id if decision.admitted else None,
        reason=decision.reason,
        explanation=sentence,
        evicted=gone,
        capacity=Capacity(used=used, limit=limit),
    )


def _reward(rating: str | float | None, like: bool | None, score: float | None) -> float:
    """The reward a rating gives: like 1, dislike 0, or a score in [0, 1]."""
    given = [name for name, value in (("rating", rating), ("like", like), ("score", score))
             if value is not None]  # fmt: skip
    if len(given) != 1 or (like is not None and not isinstance(like, bool)):
        raise ToolProblem(
            "rate takes one of: rating='like' or 'dislike', like=true, dislike=true, or "
            f"score=0..1 (got {' and '.join(given) or 'none'})"
        )
    if like is not None:
        return 1.0 if like else 0.0
    if isinstance(rating, str):
        if rating.strip().lower() not in ("like", "dislike"):
            raise ToolProblem(
                f"rating must be 'like' or 'dislike' (or a score 0..1), got {rating!r}"
            )
        return 1.0 if rating.strip().lower() == "like" else 0.0
    value = rating if rating is not None else score
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ToolProblem(f"score must be a number from 0 to 1, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise ToolProblem(
            f"score must be from 0 (useless) to 1 (exactly what was needed), got {value}"
        )
    return float(value)


def _handle_of(hits: Hits) -> str:
    """A recall's handle: its retrieval id and the identity of the memory that made it, which
    every process serving the scope shares (the memory's state), so any of them can rate it.
    A recall the memory did not record (an empty memory's) is ``r0``: rating it rates nothing."""
    return f"r{hits.retrieval_id or 0}.{hits.origin}"


def _retrieval_of(handle: object) -> RetrievalId:
    found = (
        re.fullmatch(r"r([0-9]{1,18})\.([0-9a-f]{1,64})", handle)
        if isinstance(handle, str)
        else None
    )
    if found is None:
        raise ToolProblem(
            f"unknown recall handle {_short(handle)}: pass the handle a recall returned"
        )
    return RetrievalId(int(found.group(1)), found.group(2))


def _rated_ids(memory: SolarMemory, retrieval: RetrievalId) -> list[str]:
    """The ids of the items ``retrieval`` returned that are still kept (under the lock)."""
    core = memory.core
    try:
        _, found = core.resolve_retrieval(retrieval)
    except ValueError:  # a scope not stored yet: its recalls are kept nowhere, rated as nothing
        return []
    store = core.store
    slots = found.slots.tolist()
    return [
        store.id_at(s)
        for s, rec in zip(slots, found.records, strict=True)
        if store.payload_at(s) is rec
    ]


def _refused_rating(message: str) -> str:
    """The memory's refusal of a rating, in the tool's words."""
    if "another memory" in message:
        return (
            "this handle comes from another scope's recall (or was made up): rate only the "
            "handles your own recall calls returned"
        )
    if "already has feedback" in message:
        return "this recall is already rated: each recall is rated once; recall again to rate"
    if "unknown or expired" in message:
        return (
            "unknown recall handle: it names no recall of this memory, or one of more than "
            "1,000 recalls ago; rate a handle from a recent recall"
        )
    return f"not rated: {message}"


def _cursor_of(step: int, item_id: str) -> str:
    raw = json.dumps([step, item_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor_position(cursor: str | None) -> tuple[int, str] | None:
    if cursor is None or cursor == "":
        return None
    try:
        if not isinstance(cursor, str) or len(cursor) > 2 * MAX_TEXT:
            raise ValueError
        step, item_id = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if type(step) is not int or not isinstance(item_id, str):
            raise ValueError
    except (ValueError, TypeError, binascii.Error):
        raise ToolProblem(
            f"unknown cursor {_short(cursor)}: pass the next_cursor a list call returned, or no "
            "cursor for the first page"
        ) from None
    return step, item_id


__all__ = ["MAX_TEXT", "MemoryService", "ToolProblem"]
