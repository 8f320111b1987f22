"""``Journal``: makes one :class:`~solar_core.SolarMemory` persistent, step by step.

Every step that changes a memory is logged as its *inputs* (the unit vector, the texts, the
clock readings, an evaluator's verdict) in the transaction that advances the scope's ``seq``;
the memory is deterministic given its state and those inputs, so the latest snapshot plus the
log rebuilds it bit for bit (exact resume, whole steps only after a crash, many writers that
catch up before each step). A replay is checked against a digest of what the step did first.
A scope is stored by its first write; a retrieval can wait for the memory's next write
(:func:`deferred_retrievals`). DESIGN.md, "Persistence and scopes", says why and what each
promises.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from solar_core.basics.records import Record
from solar_core.basics.state import StateError
from solar_core.basics.types import Decision, Hits
from solar_core.engine.core import StepListener
from solar_core.engine.steps import Clearing, Lookup, Offer, Rating, Removal, Renewal, Step, Sweep
from solar_core.persistence import container
from solar_core.persistence.backend import Backend, ItemChange, OpRow, ScopeRow
from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.logged_steps import read, storable
from solar_core.persistence.scope import Scope, call_for, named

if TYPE_CHECKING:
    from solar_core.basics.validation import FloatVector
    from solar_core.engine.memory import SolarMemory

_T = TypeVar("_T")
#: errors a step raises before it changes anything (checked input): nothing to undo
_BAD_INPUT = (ValueError, TypeError, LookupError)
#: the store's look-up of a scope's row in the caller's transaction: ``locate(create,
#: config)`` is ``(row, whether this call created it)``, or ``None`` (not stored, not created)
Locate = Callable[[bool, str], tuple[ScopeRow, bool] | None]


#: whether recorded retrievals wait for their memory's next write (see deferred_retrievals)
_DEFERRED: ContextVar[bool] = ContextVar("solar_deferred_retrievals", default=False)


@contextmanager
def deferred_retrievals() -> Iterator[None]:
    """Log the recorded retrievals of persisted memories made in this block with each memory's
    next write, in its transaction (see the module's docs): a chat turn's recall and store are
    then one transaction. Memories that are not persisted are unaffected.

    >>> from solar_core.persistence import MemoryStore, deferred_retrievals
    >>> with MemoryStore(":memory:", policy="fifo", capacity=3, embedder="hash") as store:
    ...     memory = store.scope(user="ann")
    ...     _ = memory.add("prefers tea")
    ...     with deferred_retrievals():
    ...         hits = memory.retrieve("tea")
    ...     _ = memory.add("lives in Lisbon")  # the retrieval is logged with this add
    ...     [hit.text for hit in hits]
    ['prefers tea']
    """
    token = _DEFERRED.set(True)
    try:
        yield
    finally:
        _DEFERRED.reset(token)


def plain_json(value: object, what: str) -> str:
    try:
        return json.dumps(value, allow_nan=True)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} must be JSON-serialisable to be persisted: {err}") from None


#: the parameters a snapshot's must equal those of the scope's memory in: not the reading
#: settings a store is opened with (they are the store's, not the scope's)
_READING = ("k", "retrieval", "min_score")


def snapshot_params(memory: SolarMemory) -> dict[str, Any]:
    """The parameters a snapshot of ``memory`` records (checked against the scope's on load)."""
    return {k: v for k, v in memory.params().items() if k not in _READING}


def _digest(kind: str, result: object) -> str:
    """What a step did, to check its replay against."""
    if kind == "retrieve":
        assert isinstance(result, Hits)
        return ",".join([h.id for h in result])
    if kind == "add":
        assert isinstance(result, Decision)
        deleted = ",".join([i for i, _ in result.deleted])
        return f"{int(result.admitted)}|{result.item_id}|{result.evicted}|{deleted}"
    if kind in ("expire", "lapse", "renew"):
        assert isinstance(result, list)
        return ",".join(result)
    return ""


class InconsistentSnapshot(PersistenceError):
    """A snapshot that decodes, but whose memory is not consistent (its counters, store and
    policies disagree): its scope is rebuilt from its item rows by ``store.reembed``."""


class Journal(StepListener):
    """The link between one live memory and its scope's rows (made by :class:`MemoryStore`).

    ``scope_id`` is ``None`` while the scope is not stored (see the module's docs); ``config``
    is the scope's settings as stored (``config_text``, the row's text as last read), which
    ``build`` turns into a new, empty memory; ``settle`` checks a stored config this process
    has not seen (another process created or re-embedded the scope) and returns it, or raises
    :class:`PersistenceError` if this store cannot use it.
    """

    def __init__(
        self,
        backend: Backend,
        scope: Scope,
        *,
        scope_id: int | None,
        config_text: str,
        config: dict[str, Any],
        build: Callable[[dict[str, Any]], SolarMemory],
        settle: Callable[[str], dict[str, Any]],
        locate: Locate,
        snapshot_every: int,
    ) -> None:
        self.backend = backend
        self.scope_id = scope_id
        self.scope = scope
        self.config_text = config_text
        self.config = config
        self._build = build
        self._settle = settle
        self._locate = locate
        self._creating = False  # the open write transaction creates the scope's row
        self._reading = False  # reading the memory for a snapshot: its reads must not sync
        # the hits of retrievals before the scope's first write (held by their callers)
        self._unrecorded: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
        self.snapshot_every = snapshot_every
        self.seq = 0  # the last step this process's memory has applied
        self.snapshot_seq = 0
        self._token: object = object()  # never equal to a backend's: the first look reads
        self._stale = False  # the memory may differ from the database: rebuild before use
        self._closed = False
        self._clocks: list[float] | None = None  # readings of the step being logged
        self._replay: deque[float] | None = None  # readings of the step being replayed
        self._items: list[ItemChange] | None = None
        self._notified = 0  # the last step whose stored item the subscribers were told of
        self._pending_notes: list[tuple[str, str, FloatVector, Any, int]] = []
        # a deferred retrieval, applied but not logged: its row, item changes and hits; and
        # the one the open write transaction logged (held again if that rolls back)
        self._held: tuple[OpRow, list[ItemChange], Hits] | None = None
        self._written: tuple[OpRow, list[ItemChange], Hits] | None = None
        self._memory: weakref.ref[SolarMemory] | None = None  # the attached memory
        self.user_clock: Callable[[], float] = time.time

    # -- wiring -------------------------------------------------------------------------------
    def _blank(self) -> SolarMemory:
        """A new, empty memory with the scope's settings (the state before its first step)."""
        memory = self._build(self.config)
        if self.scope_id is not None:
            memory.core.identity = self._stored_identity()
        return memory

    def _stored_identity(self) -> str:
        """The identity (what a rating handle names) of a stored scope that has no snapshot
        yet: every process rebuilding it from its log must name it alike, so it comes from the
        scope's key and row id (ids are never reused, so a scope forgotten and stored again is
        another memory)."""
        # and the database's own id: two databases give scopes of one key the same row id
        database = self.backend.database_id()
        name = f"{self.scope.key}\x00{self._id}" + (f"\x00{database}" if database else "")
        digest = hashlib.blake2b(name.encode(), digest_size=16)
        return digest.hexdigest()

    @property
    def _id(self) -> int:
        assert self.scope_id is not None  # only asked of a stored scope
        return self.scope_id

    def unrecorded(self, retrieval: object) -> bool:
        """Whether ``retrieval`` is the hits of a retrieval made before the scope's first write
        (rating them changes nothing, whoever stored the scope since)."""
        return retrieval is not None and self._unrecorded.get(id(retrieval)) is retrieval

    @property
    def unstored(self) -> bool:
        """Whether the scope has no row yet (as this process last looked): its memory is empty,
        and a retrieval or a rating of it changes nothing."""
        return self.scope_id is None

    def recheck(self) -> None:
        """Look at the database on the next use even if nobody else committed (this process
        changed the scope's rows itself, outside this journal)."""
        self._token = object()

    def attach(self, memory: SolarMemory) -> None:
        """Become ``memory``'s step runner, take over its clock and bring it up to the scope's
        latest step."""
        self.user_clock = memory.core.clock
        memory.core.clock = self._read_clock  # (not kept here: it would be a cycle)
        memory.core.listen(self)  # the item rows a step writes
        memory.use_runner(self)
        with memory.lock, self.backend.transaction(write=False):
            self._read_log(memory, False, False)
        self._pending_notes.clear()  # nobody subscribed yet: what was stored is not news
        self._notified = self.seq
        self._memory = weakref.ref(memory)  # whose subscribers hear that the scope is forgotten

    def _read_clock(self) -> float:
        replay = self._replay
        if replay is not None:
            if not replay:
                raise PersistenceError("a replayed step read the clock more often than logged")
            return replay.popleft()
        now = self.user_clock()
        if self._clocks is not None:
            if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
                # (what a replay would refuse: refused before anything of the step is logged)
                raise PersistenceError(
                    f"the memory's clock returned {now!r}: a clock must return finite seconds "
                    "(e.g. time.time)"
                )
            self._clocks.append(now)
        return now

    @property
    def closed(self) -> bool:
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise PersistenceError(
                f"the memory of {named(self.scope)} was closed or forgotten; "
                "get it from an open MemoryStore again"
            )

    # -- logging a step -----------------------------------------------------------------------
    def _logged(
        self,
        memory: SolarMemory,
        kind: str,
        args: dict[str, Any],
        vector: FloatVector | None,
        apply: Callable[[], _T],
    ) -> _T:
        """Apply one step and log it in one transaction (after catching up with the log, and
        logging the deferred retrieval), storing the scope if it is not stored yet."""
        with memory.lock:
            self._check_open()
            try:
                with self._write_transaction():
                    self._write_held(memory)
                    result, op, items = self._applied(kind, args, vector, apply)
                    try:
                        self.backend.append_op(self._id, op, time.time(), items)
                        # A removal or a clear is a request to forget: a snapshot now prunes
                        # the log that still holds the text (evicted items go at the next one).
                        purge = kind in ("remove", "clear")
                        snapshot = purge or op.seq - self.snapshot_seq >= self.snapshot_every
                        if snapshot:
                            self._write_snapshot(memory, op.seq, purge)
                    except BaseException:
                        self._stale = True
                        raise
            except BaseException:
                if memory.events:  # what the catch-up deleted went all the same
                    memory.events.tell_deletions()
                raise
            self.seq = op.seq
            if snapshot:
                self.snapshot_seq = op.seq
            self._deliver(memory)
            self._notified = max(self._notified, op.seq)
            return result

    def _applied(
        self, kind: str, args: dict[str, Any], vector: FloatVector | None, apply: Callable[[], _T]
    ) -> tuple[_T, OpRow, list[ItemChange]]:
        """Apply a step (as the next one of the log), and what logging it writes."""
        self._clocks, self._items = [], []
        applied = False
        try:
            result = apply()
            applied = True
            clocks, items = self._clocks, self._items
            row = None if vector is None else vector.tobytes()
            text = plain_json(args, "a step's input")
            op = OpRow(self.seq + 1, kind, text, row, json.dumps(clocks), _digest(kind, result))
        except BaseException as err:
            # refused input raises before any change; anything else: the database is the truth
            if applied or not isinstance(err, _BAD_INPUT):
                self._stale = True
            raise
        finally:
            self._clocks = self._items = None
        return result, op, items

    @contextmanager
    def _write_transaction(self) -> Iterator[None]:
        """A write transaction, and what a rollback undoes here: a creation of the scope's row
        (it is not stored after all), the logging of a deferred retrieval (held again, unless
        the memory is rebuilt anyway)."""
        try:
            with self.backend.transaction(write=True):
                yield
        except BaseException:
            if self._creating:
                self.scope_id = None
                self.snapshot_seq = 0
                self._token = object()
            if self._written is not None:
                self.seq = self._written[0].seq - 1
                if self._stale:
                    self._unrecorded[id(self._written[2])] = self._written[2]
                else:
                    self._held = self._written
            raise
        finally:
            self._creating = False
            self._written = None

    def _write_held(self, memory: SolarMemory) -> None:
        """In a write transaction: catch up with the log, logging the deferred retrieval first
        if nobody else wrote the scope since it ran; else it is dropped (see the module's docs)."""
        held, self._held = self._held, None
        if held is not None:
            token = self.backend.version_token()
            if self._stale or token is None or token != self._token:
                seqs = self.backend.scope_seqs(self._id, self.scope.key, True)
                if seqs != (self.seq, self.snapshot_seq, self.config_text):
                    self._stale = True  # it ran before their steps: rebuilt without it
                    self._unrecorded[id(held[2])] = held[2]
                    held = None
                else:  # (under the write lock: nobody else writes the scope before this)
                    self._token = token
        if held is None:
            self._read_log(memory, True, True)
            return
        self.backend.append_op(self._id, held[0], time.time(), held[1])
        self.seq = held[0].seq
        self._written = held

    def _hold(
        self,
        memory: SolarMemory,
        args: dict[str, Any],
        vector: FloatVector,
        apply: Callable[[], _T],
    ) -> _T:
        """Apply a deferred retrieval now and keep its row for the memory's next write."""
        with memory.lock:
            self._check_open()
            if self._held is not None:  # one at a time, in order
                self._flush(memory)
            self.catch_up(memory)
            hits, op, items = self._applied("retrieve", args, vector, apply)
            assert isinstance(hits, Hits)
            self._held = (op, items, hits)
            return hits

    def _flush(self, memory: SolarMemory) -> None:
        """Log the deferred retrieval in a transaction of its own (under the memory's lock)."""
        try:
            with self._write_transaction():
                self._write_held(memory)
        except BaseException:
            if memory.events:
                memory.events.tell_deletions()
            raise

    def _write_snapshot(self, memory: SolarMemory, seq: int, purge: bool = False) -> None:
        blob = self._snapshot_of(memory, seq)
        self.backend.write_snapshot(self._id, seq, blob, time.time(), purge)

    def _snapshot_of(self, memory: SolarMemory, seq: int) -> bytes:
        """``memory``'s snapshot at step ``seq``, read back as a reopen reads it before it is
        written: a snapshot its own reader would refuse is never written. Written, it would
        replace the log it stands for (a purge deletes the steps before it) and the scope
        could not be opened again; refused, the step's transaction rolls back, the log stays
        the scope's truth and this memory is rebuilt from the database on its next use."""
        self._reading = True  # (in this step's transaction: caught up already)
        try:
            blob = container.dumps(snapshot_params(memory), memory.state())
        finally:
            self._reading = False
        try:
            self._memory_from(blob, f"the snapshot of {named(self.scope)} at step {seq}", False)
        except PersistenceError as err:
            self._stale = True  # this memory is what the check refused: rebuild it
            raise PersistenceError(
                f"{err}; it was not written: the scope's log holds every step, and this "
                "memory is rebuilt from the database on its next use"
            ) from err
        return blob

    def read_snapshot(self, blob: bytes, what: str) -> SolarMemory:
        """The memory the snapshot ``blob`` holds, checked as a reopen checks it, else
        :class:`PersistenceError` (:class:`InconsistentSnapshot` if it decodes but its memory
        is not consistent; ``what``: the snapshot, as the message names it)."""
        return self._memory_from(blob, what)

    def _memory_from(self, blob: bytes, what: str, stored: bool = True) -> SolarMemory:
        """The memory a snapshot holds, checked: its format (see :mod:`.container`), its
        parameters against the scope's, then every value and the memory's invariants as it
        loads (``stored``: a snapshot read from the database, not one about to be written)."""
        fix = (
            f"; {call_for('reembed', self.scope)} rebuilds the scope from its stored items (their "
            "texts and metadata are kept; the policy's statistics start over)"
            if stored
            else ""
        )
        try:
            params, state = container.loads(blob, what)
        except PersistenceError as err:
            raise PersistenceError(f"{err}{fix}") from err
        donor = self._blank()
        wanted = snapshot_params(donor)
        if params != wanted:
            differ = sorted(k for k in {*params, *wanted} if params.get(k) != wanted.get(k))
            raise PersistenceError(
                f"{what} was written by a memory of other parameters than the scope's "
                f"({', '.join(differ)}); the database was edited by hand"
            )
        try:
            donor.load_state(state)
        except StateError as err:
            message = f"{what} does not hold a memory's state: {err}{fix}"
            raise InconsistentSnapshot(message) from err
        return donor

    def _deliver(self, memory: SolarMemory) -> None:
        """Tell the subscribers of the items that went (this step's and the replayed steps'),
        then of the items other processes stored (after the transaction)."""
        if memory.events:
            memory.events.tell_deletions()
        if not self._pending_notes:
            return  # (after nearly every step: nobody else stored anything)
        notes, self._pending_notes = self._pending_notes, []
        fresh = [note for note in notes if note[-1] > self._notified]
        if not fresh:
            return
        self._notified = max(note[-1] for note in fresh)
        for item_id, text, vector, meta, _ in fresh:
            memory.events.tell_stored(item_id, text, vector, meta)

    # item rows, collected while a step runs (not while one is replayed: they are written)
    def stored(self, item_id: str, record: Record, vector: FloatVector) -> None:
        if self._items is not None:
            self._items.append(
                (
                    "put",
                    item_id,
                    record.text,
                    json.dumps(record.metadata),
                    vector.tobytes(),
                    record.category,
                    float(record.created_at),
                    None if record.valid_until is None else float(record.valid_until),
                    record.step,
                )
            )

    def removed(self, item_id: str, reason: str) -> None:
        if self._items is not None:
            self._items.append(("del", item_id))

    def renewed(self, item_id: str, record: Record, vector: FloatVector) -> None:
        # The item's row is rewritten with its new valid_until (a row is put whole, never
        # updated in place: the backend checksums it whole).
        self.removed(item_id, "renewed")
        self.stored(item_id, record, vector)

    def cleared(self, item_ids: list[str]) -> None:
        if self._items is not None:
            self._items.append(("clear",))

    @staticmethod
    def plain_metadata(meta: dict[str, Any]) -> dict[str, Any]:
        """``meta`` as the log will give it back (JSON), so live and replayed steps agree."""
        loaded: dict[str, Any] = json.loads(plain_json(meta, "metadata"))
        return loaded

    # -- running steps (the memory's StepRunner) ----------------------------------------------
    def check(self, step: Step) -> Step:
        """What a step must be to be logged, checked before it runs: texts every backend can
        store, metadata as the log will give it back (JSON), the unit vector logged."""
        if isinstance(step, Offer):
            storable(step.text, "text")
            if step.item_id is not None:
                storable(step.item_id, "item_id")
            if step.key is not None:
                storable(step.key, "key")
            if step.extraction is not None:
                storable(step.extraction, "extraction")
            meta = self.plain_metadata(step.metadata)
            return replace(step, row=step.unit(), scale=None, metadata=meta)
        if isinstance(step, Lookup) and step.record:
            plain_json(list(step.exclude), "exclude")
        return step

    def run(self, step: Step, apply: Callable[[Step], _T]) -> _T:
        """Apply ``step`` and log it in one transaction, after catching up with the log (see
        :meth:`_logged`); a look is not logged, only caught up."""
        ref = self._memory
        memory = None if ref is None else ref()
        assert memory is not None  # the memory running a step is alive
        kind = type(step)
        if kind is Rating and self._held is not None:
            with memory.lock:  # rated after the deferred retrieval is logged (or dropped)
                self._check_open()
                if self._held is not None:
                    self._flush(memory)
        if kind is Rating and self.unrecorded(getattr(step, "retrieval", None)):
            return cast(_T, None)  # hits of a read before the first write: nothing to credit
        if (kind is Lookup or kind is Rating) and self._still_unstored(memory):
            # Before its first write a scope is empty: a retrieval finds nothing and records
            # nothing, and a rating has nothing to credit (see the module's docs).
            if kind is Rating:
                return cast(_T, None)
            assert isinstance(step, Lookup)
            if not step.record:
                return apply(step)
            hits = apply(replace(step, record=False))
            self._unrecorded[id(hits)] = hits  # rating them later changes nothing either
            return hits
        if kind is Lookup:
            assert isinstance(step, Lookup)
            if not step.record:  # a look changes nothing: nothing to log, but see the latest
                with memory.lock:
                    self.catch_up(memory)
                    return apply(step)
            args: dict[str, Any] = {"query": step.query, "k": step.k}
            args.update(exclude=list(step.exclude), ranking=step.retrieval, floor=step.floor)
            if step.gate:  # (a row without it replays as before: ungated)
                args["gate"] = True
            if step.as_of is not None:  # (likewise: logged only when set)
                args["as_of"] = step.as_of
            if step.superseded:
                args["superseded"] = True
            if _DEFERRED.get():
                return self._hold(memory, args, step.vector, lambda: apply(step))
            return self._logged(memory, "retrieve", args, step.vector, lambda: apply(step))
        if kind is Rating:
            assert isinstance(step, Rating)
            rating = step
            args = {"reward": step.reward, "quality": step.quality}

            def rate() -> _T:
                key = apply(rating)
                args["retrieval"] = key  # "the latest" as it was, not as a replay finds it
                return key

            return self._logged(memory, "feedback", args, None, rate)
        if kind is Offer:
            assert isinstance(step, Offer)
            offer = step
            args = {"text": step.text, "metadata": step.metadata, "id": step.item_id}
            args.update(category=step.category, valid_until=step.valid_until)
            args["verdict"] = step.prepared
            if step.update:  # (a row without it replays as before: a plain offer)
                args["update"] = True
            if step.key is not None:
                args["key"] = step.key
            if step.extraction is not None:
                args["extraction"] = step.extraction

            def store() -> _T:
                decision = apply(offer)
                judged = getattr(memory.core.admission, "judged", None)
                if judged is not None:  # an evaluator's verdict: a replay must not ask it again
                    args["verdict"] = judged
                return decision

            return self._logged(memory, "add", args, step.row, store)
        if kind is Removal:
            assert isinstance(step, Removal)
            return self._logged(memory, "remove", {"id": step.item_id}, None, lambda: apply(step))
        if kind is Clearing:
            return self._logged(memory, "clear", {}, None, lambda: apply(step))
        if kind is Renewal:
            assert isinstance(step, Renewal)
            args = {"lifetimes": [list(entry) for entry in step.lifetimes]}
            return self._logged(memory, "renew", args, None, lambda: apply(step))
        assert isinstance(step, Sweep)
        return self._logged(memory, step.kind, {}, None, lambda: apply(step))

    def _still_unstored(self, memory: SolarMemory) -> bool:
        """Whether the scope has no row even now (another process may have stored it)."""
        if self.scope_id is not None:
            return False
        with memory.lock:
            self._check_open()
            if self.scope_id is None:
                with self.backend.transaction(write=False):
                    self._read_log(memory, False, False)
            return self.scope_id is None

    # -- catching up --------------------------------------------------------------------------
    def sync(self) -> None:
        """Catch up with the steps other processes logged (the memory's reads call this; not
        while this journal reads the memory itself, in its own transaction)."""
        memory = None if self._memory is None else self._memory()
        if memory is not None and not self._reading:
            self.catch_up(memory)

    def catch_up(self, memory: SolarMemory) -> None:
        """Apply the steps other processes logged since this one last looked (under the
        memory's lock). A no-op when the backend can tell nobody else wrote."""
        self._check_open()
        if not self._stale:
            token = self.backend.version_token()
            if token is not None and token == self._token:
                self._deliver(memory)  # what an earlier catch-up (e.g. a checkpoint) left untold
                return
        if self._held is not None:  # the scope changed: the deferred retrieval goes first
            self._flush(memory)
            self._deliver(memory)
            return
        try:
            with self.backend.transaction(write=False):
                self._read_log(memory, False, False)
        except BaseException:
            if memory.events:  # what the catch-up deleted (or a forget elsewhere) is told
                memory.events.tell_deletions()
            raise
        self._deliver(memory)

    def _read_log(self, memory: SolarMemory, lock: bool, create: bool) -> None:
        backend = self.backend
        token = backend.version_token()
        if self.scope_id is None:
            if not create and not self._stale and token is not None and token == self._token:
                return  # nobody else committed since we last looked: still not stored
            if self._stale:  # a step failed half-way: empty again, as the scope is
                memory.take_state(self._blank())
                self.seq, self._stale = 0, False
            if not self._find(memory, create):
                self._token = token
                return
        elif not self._stale and token is not None and token == self._token:
            return  # nobody else committed since we last looked
        seqs = backend.scope_seqs(self._id, self.scope.key, lock)
        if seqs is None:
            self._closed = True
            if memory.events:  # every item went with the scope (told by the caller)
                memory.events.gone(memory.core.ids(), "forgotten")
            raise PersistenceError(
                f"{named(self.scope)} was forgotten by another process: get its memory "
                "from the MemoryStore again (store.scope(...) or store.get(...)) for a new, "
                "empty one"
            )
        db_seq, snapshot_seq, config_text = seqs
        if config_text != self.config_text:
            # Another process re-embedded the scope (or pinned its embedder): check that this
            # store may still use it before reading a step of it.
            self.config = self._settle(config_text)
            self.config_text = config_text
        ops: list[OpRow] | None = None
        if not self._stale and 0 < self.seq < snapshot_seq <= db_seq:
            # Another process snapshotted since we looked. A snapshot keeps the log of the
            # interval before it, so a memory a little behind usually finds its next step
            # there: replaying is far cheaper than reading (and checking) the whole snapshot.
            ops = list(backend.ops_after(self._id, self.seq, db_seq))
            if not ops or ops[0].seq != self.seq + 1:
                ops = None  # pruned past us: from the snapshot then
        if self._stale or db_seq < self.seq or (self.seq < snapshot_seq and ops is None):
            self._load_base(memory, snapshot_seq)
        if self.seq == 0 and snapshot_seq == 0:
            # rebuilt from the log alone: named as every process rebuilding it names it
            memory.core.identity = self._stored_identity()
        if db_seq > self.seq:
            for op in ops if ops is not None else backend.ops_after(self._id, self.seq, db_seq):
                if op.seq != self.seq + 1:
                    raise PersistenceError(
                        f"{named(self.scope)}: the log jumps from step {self.seq} to "
                        f"{op.seq}; the database was edited by hand"
                    )
                self._apply_logged(memory, op)
                self.seq = op.seq
        if self.seq != db_seq:
            self._stale = True
            raise PersistenceError(
                f"{named(self.scope)}: the log ends at step {self.seq}, the scope says "
                f"{db_seq}; the database was edited by hand"
            )
        self.snapshot_seq = snapshot_seq
        self._stale = False
        self._token = token

    def _find(self, memory: SolarMemory, create: bool) -> bool:
        """Look for the scope's row in the current transaction, creating it if ``create``;
        whether the scope is stored now."""
        found = self._locate(create, self.config_text)
        if found is None:
            return False
        row, created = found
        self.scope_id = row.id
        if created:  # the step creating it is logged next, in this transaction
            self._creating = True
            memory.core.identity = self._stored_identity()  # as other processes name it
            return True
        # Another process stored the scope first: take the stored scope (if this store may).
        self.config = self._settle(row.config)
        self.config_text = row.config
        self._stale = True  # rebuilt from the stored scope by the caller
        self._notified = 0  # every stored item is news here
        return True

    def _load_base(self, memory: SolarMemory, snapshot_seq: int) -> None:
        """Reset ``memory`` to the snapshot (or to a new memory when there is none)."""
        self._stale = True  # until the replay on top of it completes
        if snapshot_seq > 0:
            found = self.backend.read_snapshot(self._id)
            if found is None or found[0] != snapshot_seq:
                raise PersistenceError(f"{named(self.scope)}: its snapshot is missing")
            seq, blob = found
            what = f"the snapshot of {named(self.scope)} (step {seq})"
            donor = self._memory_from(blob, what)
        else:
            seq, donor = 0, self._blank()
        news = seq > self._notified and bool(memory.events)
        listening = bool(memory.events)
        had = [(i, r.step, r.text) for i, r in memory.core.records()] if listening else []
        before = set(had) if news else set()
        memory.take_state(donor)
        self.seq = seq
        if listening:
            # Items the snapshot does not hold went (removed, expired, evicted: it cannot say
            # which): tell the subscribers, a response cache must not answer from them.
            has = {(i, r.step, r.text) for i, r in memory.core.records()}
            vanished = [item_id for item_id, step, text in had if (item_id, step, text) not in has]
            if vanished:
                memory.events.gone(vanished, "reloaded")
        if news:
            # Steps folded into a snapshot by another process are not replayed: tell the
            # subscribers of the items it brought (a response cache must hear of them too).
            for item_id, record in memory.core.records():
                if (item_id, record.step, record.text) not in before:
                    vector = memory.core.vector(item_id)
                    note = (item_id, record.text, vector, dict(record.metadata), seq)
                    self._pending_notes.append(note)

    def _apply_logged(self, memory: SolarMemory, op: OpRow) -> None:
        where = f"{named(self.scope)}, step {op.seq} ({op.kind})"
        try:
            args = json.loads(op.args)
            vector = None if op.vector is None else np.frombuffer(op.vector, np.float32).copy()
            clocks = json.loads(op.clocks)
            if type(clocks) is not list or not all(
                type(c) in (int, float) and math.isfinite(c) for c in clocks
            ):  # a NaN deadline would never pass, an infinite one always
                raise PersistenceError("its clock readings are not finite numbers")
            self._replay = deque(clocks)
            result = self._replay_step(memory, op.kind, args, vector)
            if self._replay:
                raise PersistenceError("it read the clock less often than logged")
        except PersistenceError as err:
            self._stale = True
            raise PersistenceError(f"{where} cannot be replayed: {err}") from err
        except Exception as err:
            self._stale = True
            raise PersistenceError(f"{where} cannot be replayed: {err!r}") from err
        finally:
            self._replay = None
        if (
            op.kind == "add"
            and isinstance(result, Decision)
            and result.admitted
            and op.seq > self._notified
        ):
            # Another process's new fact (e.g. for a response cache): told once the
            # transaction is over, so a subscriber may use the memory; never twice.
            assert result.item_id is not None and vector is not None
            note = (result.item_id, args["text"], vector, args["metadata"], op.seq)
            self._pending_notes.append(note)
        digest = _digest(op.kind, result)
        if digest != op.digest:
            self._stale = True
            raise PersistenceError(
                f"{where} replays differently (logged {op.digest!r}, now {digest!r}): every "
                "process sharing a scope must run the same solar-memory and numpy builds"
            )

    @staticmethod
    def _replay_step(
        memory: SolarMemory, kind: str, args: dict[str, Any], vector: FloatVector | None
    ) -> object:
        try:
            step = read(kind, args, vector, memory.dim)
        except ValueError as err:  # (as a call would have been refused)
            raise PersistenceError(str(err)) from None
        return memory.apply(step)

    # -- closing ------------------------------------------------------------------------------
    def checkpoint(self, memory: SolarMemory, unless_below: int = 0) -> None:
        """Write a snapshot of the latest state (so a reopen replays nothing), staying attached;
        with ``unless_below``, only if the log since the snapshot holds at least that many
        steps. A scope forgotten by another process meanwhile raises :class:`PersistenceError` and
        leaves the journal closed (as any step would)."""
        with memory.lock:
            self._check_open()
            if self._stale or self.scope_id is None:
                return  # (a scope not stored yet holds nothing to write)
            if self._held is None and self._no_snapshot_due(unless_below):
                return  # (a deferred retrieval is always logged, and snapshotted)
            with self._write_transaction():
                self._write_held(memory)
                written = self.seq > self.snapshot_seq
                if written:  # closing or evicted: all the log goes, the database stays small
                    self._write_snapshot(memory, self.seq, purge=True)
            if written:
                self.snapshot_seq = self.seq

    def _no_snapshot_due(self, unless_below: int) -> bool:
        """Whether the log since the snapshot holds fewer than ``unless_below`` steps, or no
        step at all, here or elsewhere."""
        if self.seq - self.snapshot_seq < unless_below:
            return True
        if self.seq != self.snapshot_seq:
            return False
        token = self.backend.version_token()
        return token is not None and token == self._token

    def close(self, memory: SolarMemory, snapshot: bool = True) -> None:
        """Write a snapshot of the latest state (so a reopen replays nothing) and detach."""
        with memory.lock:
            if self._closed:
                return
            try:
                if snapshot:
                    self.checkpoint(memory)
            finally:
                self._closed = True

    def forgotten(self) -> None:
        """The scope is being forgotten in this process (under the memory's lock): closed, and
        its subscribers hear that every item went."""
        self._closed = True
        self._held = None
        memory = None if self._memory is None else self._memory()
        if memory is not None and memory.events:
            memory.events.gone(memory.core.ids(), "forgotten")
            memory.events.tell_deletions()
