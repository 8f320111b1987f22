"""``MemoryCore``: the policy-driven state machine behind :class:`~solar_core.SolarMemory`.

It holds a memory's state (the store, the policies, the random generator, the counters, the
traces, the rateable retrievals) and applies checked steps (:mod:`solar_core.engine.steps`) to
it; locks, embedding, input checks, subscribers and persistence are the memory's. Given its
state and a step's inputs (clock readings included), a step always does the same thing:
persistence replays a log on that.
"""

from __future__ import annotations

import math
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from itertools import pairwise
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from solar_core.basics.records import Record, Retrieval, copy_metadata, read_copy
from solar_core.basics.state import MOST_COUNT, State, StateReader, part_of, prefixed
from solar_core.basics.types import Decision, Hit, Hits, MemoryItem, UnknownItemError
from solar_core.basics.validation import FloatVector
from solar_core.engine.history import History
from solar_core.engine.record_state import number, read_records, record_columns
from solar_core.engine.steps import Lookup, Offer, Rating, Renewal
from solar_core.policies.admission import AdmissionPolicy, AlwaysAdmit, Candidate, Verdict
from solar_core.policies.admission.base import ALWAYS
from solar_core.policies.deletion import DeletionPolicy
from solar_core.policies.eviction import EvictionPolicy, Victim
from solar_core.retrieval.item_table import ItemTable, Offered
from solar_core.retrieval.ranking import rank
from solar_core.retrieval.repeats import (
    CANDIDATES,
    SKETCH_SLACK,
    canon,
    normalise,
    same_canon,
    same_context,
    sketch,
    word_key,
)

#: how many recent retrievals stay rateable by feedback(retrieval=...)
FEEDBACK_WINDOW = 1000
#: the verdict on an update (``add(..., update=True)`` of a stored id): stored in place
UPDATED = Verdict(True, "updated")
#: a fact with a key: the caller's own, stored without asking the gate
KEYED = Verdict(True, "key")
#: the verdict on an offer when only protected (identity) items are stored and the memory is full
FULL = Verdict(False, "full of protected items")


class StepListener:
    """Hears what steps change in a memory's items, as they change it (under the lock):
    ``stored`` (before the step is traced), ``retrieved`` (a recorded retrieval's records, best
    first), ``removed`` (the reason as :meth:`MemoryCore.drop`'s), ``cleared`` (before the items
    go) and ``renewed`` (``record`` holds the new ``valid_until``). Override what you need; a
    listener is not state (a copy has none)."""

    def stored(self, item_id: str, record: Record, vector: FloatVector) -> None: ...

    def retrieved(self, records: list[Record]) -> None: ...

    def removed(self, item_id: str, reason: str) -> None: ...

    def cleared(self, item_ids: list[str]) -> None: ...

    def renewed(self, item_id: str, record: Record, vector: FloatVector) -> None: ...


class _OfferCandidate(Candidate):
    """An offer's candidate: its metadata (copied), vector, similarities and victim are made when
    a policy first reads them."""

    __slots__ = ("_offer", "_store", "_pick", "_step")

    def __init__(
        self, offer: Offer, store: ItemTable, pick: Callable[[int], Victim], step: int, score: Any
    ) -> None:
        self.size, self.capacity, self.score = len(store), store.capacity, score
        self.text, self.prepared, self.stored, self.refused = offer.text, offer.prepared, None, None
        self._vector = self._similarities = self._victim = None
        self._offer, self._store, self._pick, self._step = offer, store, pick, step

    @property
    def metadata(self) -> Mapping[str, Any]:  # type: ignore[override]
        return copy_metadata(self._offer.metadata)  # a gate's own: changing it stores nothing

    @property
    def vector(self) -> FloatVector:
        if self._vector is None:
            self._vector = self._offer.unit()
        return self._vector

    @property
    def similarities(self) -> FloatVector:
        if self._similarities is None:
            self._similarities = self._store.similarities(self.vector)
        return self._similarities

    @property
    def victim(self) -> Victim | None:
        if self._victim is None and self.capacity is not None and self.size >= self.capacity:
            self._victim = self._pick(self._step)
        return self._victim


class MemoryCore:
    """A memory's state and the steps that change it (see the module's docs).

    >>> import numpy as np
    >>> from solar_core.policies.eviction import FifoEviction
    >>> from solar_core.engine.steps import Lookup, Offer
    >>> core = MemoryCore(AlwaysAdmit(), FifoEviction(), capacity=2, dim=2, clock=lambda: 0.0)
    >>> for text in ("a", "b", "c"):
    ...     decision = core.offer(Offer(text, np.array([1.0, 0.0], np.float32)))
    >>> decision.evicted, core.ids()
    ('m1', ['m2', 'm3'])
    >>> [hit.id for hit in core.retrieve(Lookup(np.array([1.0, 0.0], np.float32), "q", 1))]
    ['m2']
    """

    _pending_score: float | None

    def __init__(
        self,
        admission: AdmissionPolicy,
        eviction: EvictionPolicy,
        *,
        capacity: int | None,
        dim: int,
        clock: Callable[[], float],
        rng: np.random.Generator | None = None,
        deletion: DeletionPolicy | None = None,
        trace_size: int = 1000,
        importance_weight: float = 0.0,
        identity: str = "",
        repeats: bool = False,
    ) -> None:
        self.admission, self.eviction, self.deletion = admission, eviction, deletion
        self.repeats = repeats  # a repeated text refreshes its stored item (``_repeat_of``)
        self.capacity, self.dim, self.importance_weight = capacity, dim, importance_weight
        self.rng = rng if rng is not None else np.random.default_rng()
        self.clock = clock  # where the time is read (a persisted memory records each reading)
        self._store = ItemTable(dim, capacity, neighbours=eviction.neighbours)
        eviction.bind(self._store, self.rng)
        if deletion is not None:
            deletion.bind(self._store)
        self._trace: deque[tuple[float, Decision]] = deque(maxlen=trace_size)  # with step times
        self._retrieval_trace: deque[tuple[float, str | None, list[Hit]]] = deque(maxlen=trace_size)
        self._id_counter = self._retrieval_seq = 0
        self.identity = identity  # who made its rating handles (``Hits.origin``)
        self._history = History(capacity, dim)  # superseded values, out of the slots
        self._offered: Offered | None = None  # what the repeats' look-up made of the offer
        self.listeners = ()
        self.reset_counters()

    def reset_counters(self) -> None:
        # reoffered: offers of an already-stored id with the same text; deleted: by the deletion
        # policy; expired: by the lifecycle; removals: every item taken out (stale retrievals)
        self._steps = self._retrievals = self._admitted = self._rejected = self._reoffered = 0
        self._evicted = self._removed = self._deleted = self._expired = self._feedbacks = 0
        self._superseded = 0  # items that left the slots for the history
        self._removals = 0
        self._score_sum = 0.0
        self._recent: OrderedDict[int, Retrieval] = OrderedDict()  # rateable retrievals
        self._pending_score = None

    @property
    def listeners(self) -> tuple[StepListener, ...]:
        """Who hears what steps change, in the order they are told (:class:`StepListener`)."""
        return self._listeners

    @listeners.setter
    def listeners(self, listeners: Iterable[StepListener]) -> None:
        self._listeners = tuple(listeners)
        # Per event, only the listeners that act on it: a step calls no empty hook.
        self._hear_stored, self._hear_retrieved, self._hear_removed, self._hear_cleared = (
            [h for h in self._listeners if getattr(type(h), e) is not getattr(StepListener, e)]
            for e in ("stored", "retrieved", "removed", "cleared")
        )

    def listen(self, listener: StepListener) -> None:
        """Tell ``listener`` too, after the others, what steps change."""
        self.listeners = (*self._listeners, listener)

    def _reserve(self) -> None:  # the policies' per-slot arrays as long as the store's rows
        self.eviction.reserve(self._store.slots)
        if self.deletion is not None:
            self.deletion.reserve(self._store.slots)

    def _one_policy(self) -> bool:  # one object in both roles (ARC, coverage)
        return self.admission is self.eviction  # type: ignore[comparison-overlap]

    @property
    def store(self) -> ItemTable:
        return self._store

    def ids(self) -> list[str]:
        """Every stored id, oldest insert first."""
        return self._store.ids()

    def records(self, past: bool = False) -> list[tuple[str, Record]]:
        """Every stored ``(id, record)``, oldest insert first (``past``: then the superseded
        values of the history, the longest-superseded first)."""
        store = self._store
        records = [(i, store.payload_at(store.slot_of(i))) for i in store.ids()]
        return records + [(i, r) for i, r, _ in self._history.entries()] if past else records

    def holds(self, item_id: object) -> bool:
        """Whether ``item_id`` names an item held or a past value the history keeps."""
        return item_id in self._store or item_id in self._history

    def past_ids(self) -> list[str]:
        """The ids of the superseded values the history keeps, the longest-superseded first."""
        return self._history.ids()

    def _slot(self, item_id: object) -> int:
        if not isinstance(item_id, str):
            raise TypeError(f"item id must be a str, got {type(item_id).__name__}")
        if item_id not in self._store:
            raise UnknownItemError(f"no item with id {item_id!r} is stored")
        return self._store.slot_of(item_id)

    def vector(self, item_id: str) -> FloatVector:
        """A copy of the stored unit vector of ``item_id`` (a superseded value's too)."""
        if isinstance(item_id, str) and item_id in self._history:
            past: FloatVector = self._history.get(item_id)[1].copy()
            return past
        return self._store.vector(self._slot(item_id))

    def item(self, item_id: str) -> MemoryItem:
        r: Record
        if isinstance(item_id, str) and item_id in self._history:
            r, info = self._history.get(item_id)[0], {}  # no policy knows a past value
        else:
            slot = self._slot(item_id)
            r, info = self._store.payload_at(slot), dict(self.eviction.describe(slot))
            if self.deletion is not None:
                info.update(self.deletion.describe(slot))
        # the metadata is the caller's copy: changing it changes no item
        made = (item_id, r.text, read_copy(r.metadata), r.step, r.created_at, info)
        return MemoryItem(
            *made, r.category, r.importance, r.valid_until, r.seen, r.last_seen,
            r.key, r.superseded_at, r.superseded_by,
        )  # fmt: skip

    # -- retrieval ------------------------------------------------------------------------------
    def retrieve(self, lookup: Lookup) -> Hits:
        """The ``k`` items that best match the lookup (:mod:`solar_core.retrieval.ranking`); if
        recorded, a retrieval event that credits exactly the returned items."""
        vector, store = lookup.vector, self._store
        if lookup.as_of is not None or (lookup.superseded and len(self._history)):
            (table, slots, scores), cosine = self._rank_past(lookup), False
        else:
            weights = self._importance_weights() if self.importance_weight > 0.0 else None
            table, (slots, scores, cosine) = store, rank(store, lookup, weights)
        ids, payloads = table.slot_lists()
        listed = slots.tolist()
        records: list[Record] = [payloads[s] for s in listed]
        hits = [
            Hit(ids[s], r.text, score, read_copy(r.metadata), place)
            for place, (s, r, score) in enumerate(zip(listed, records, scores, strict=True))
        ]
        if not lookup.record:
            return Hits(hits, None, self.identity)
        now = self.clock()  # before any change: a failing clock leaves the memory as it was
        # The trace keeps hits of its own: a caller changing those it got changes no snapshot.
        traced = [
            Hit(hit.id, hit.text, hit.score, rec.metadata.copy(), hit.rank)
            for hit, rec in zip(hits, records, strict=True)
        ]
        if table is not store:  # credit goes to the items held, not to past values
            held = [store.slot_of(hit.id) for hit in hits if hit.id in store]
            slots, records = np.asarray(held, np.int64), [store.payload_at(s) for s in held]
        for listener in self._hear_retrieved:
            listener.retrieved(records)
        self._retrieval_trace.append((now, lookup.query, traced))
        step = self._steps + 1
        # policies learn from similarity, not from what ranked the hits
        cosines = scores if cosine else store.matrix[slots].dot(vector).tolist()
        self.eviction.on_retrieve(slots, step, vector, cosines)
        if self.deletion is not None:
            self.deletion.on_retrieve(slots, step)
        self._retrievals += 1
        self._retrieval_seq += 1  # never reset: a Hits from before clear() stays unknown
        self._recent[self._retrieval_seq] = Retrieval(slots, records, step, self._removals)
        if len(self._recent) > FEEDBACK_WINDOW:
            self._recent.popitem(last=False)
        return Hits(hits, self._retrieval_seq, self.identity)

    def _rank_past(self, lookup: Lookup) -> tuple[ItemTable, npt.NDArray[np.int64], list[float]]:
        """Rank a look-up into the past (``as_of``, or asking for superseded values) in a table
        of its own: the items held that were stored by then, and the history's values current
        then (or, asked for, superseded by then too: those rank after the rest)."""
        table, at = self._past_table(lookup), lookup.as_of
        weights = None
        if self.importance_weight > 0.0:
            w, payloads = self.importance_weight, table.slot_lists()[1]
            weights = np.asarray([1.0 - w + w * r.importance for r in payloads[: len(table)]])
        slots, scores, _ = rank(table, lookup, weights)
        if lookup.superseded and len(slots):
            payloads = table.slot_lists()[1]

            def late(i: int) -> bool:  # superseded by then
                since = payloads[int(slots[i])].superseded_at
                return since is not None and (at is None or since <= at)

            order = sorted(range(len(slots)), key=late)
            slots, scores = slots[order], [scores[i] for i in order]
        return table, slots, scores

    def _past_table(self, lookup: Lookup) -> ItemTable:
        """A table of what a look-up into the past may return (:meth:`_rank_past`): made for
        the look-up, as such look-ups are rare (a copy of the items' rows and records)."""
        at, store = lookup.as_of, self._store
        ids, payloads = store.slot_lists()
        chosen = [
            (ids[slot], payloads[slot], store.matrix[slot])
            for slot in store.active_slots().tolist()
            if at is None or payloads[slot].created_at <= at
        ]
        for item_id, r, vector in self._history.entries():
            since = cast(float, r.superseded_at)
            current = lookup.superseded or since > cast(float, at)
            if (at is None or r.created_at <= at) and current:
                chosen.append((item_id, r, vector))
        table = ItemTable(self.dim, None, initial_slots=max(1, len(chosen)))
        for item_id, r, vector in chosen:
            table.insert(item_id, vector, r)
        return table

    def _importance_weights(self) -> npt.NDArray[np.float64]:  # 1 for empty slots
        store, w = self._store, self.importance_weight
        payloads, active = store.slot_lists()[1], store.active_slots()
        weights = np.ones(store.high_water)
        weights[active] = [1.0 - w + w * payloads[slot].importance for slot in active.tolist()]
        return weights

    # -- feedback -------------------------------------------------------------------------------
    def rate(self, rating: Rating) -> int:
        """Credit the retrieval ``rating`` names; returns that retrieval's id."""
        key, last = self.resolve_retrieval(rating.retrieval)
        if self.eviction.listens_to_feedback or self.deletion is not None:
            live = self._live_slots(last)
            if self.eviction.listens_to_feedback:
                self.eviction.on_feedback(live, rating.reward)
            if self.deletion is not None:  # the step's quality: the score when given
                self.deletion.on_feedback(live, rating.quality)
        last.rated = True
        if last.step == self._steps + 1:
            self._pending_score = rating.quality
        self._feedbacks += 1
        self._score_sum += rating.quality
        return key

    def _live_slots(self, retrieval: Retrieval) -> npt.NDArray[np.int64]:
        """The slots ``retrieval`` returned that still hold the items it returned."""
        if retrieval.removals == self._removals:
            return retrieval.slots
        # Items removed since get no credit; their slots may hold new items (even under the same
        # id), so liveness is the identity of the stored record.
        payload_at, slots = self._store.payload_at, retrieval.slots.tolist()
        live = [s for s, rec in zip(slots, retrieval.records, strict=True) if payload_at(s) is rec]
        return np.asarray(live, dtype=np.int64)

    def resolve_retrieval(self, retrieval: object) -> tuple[int, Retrieval]:
        """The rateable retrieval ``retrieval`` names (``None``: the latest), with its id."""
        if retrieval is None:
            if not self._recent:
                raise ValueError("feedback() rates a retrieval: call retrieve() first")
            key = next(reversed(self._recent))
        else:
            if isinstance(retrieval, Hits):
                if retrieval.retrieval_id is None:
                    raise ValueError("a record=False lookup cannot be rated")
                origin, key = retrieval.origin, retrieval.retrieval_id
            elif isinstance(retrieval, int) and not isinstance(retrieval, bool):
                origin, key = getattr(retrieval, "origin", None), int(retrieval)
            else:
                raise TypeError(
                    "retrieval must be the Hits returned by retrieve() or their retrieval_id, "
                    f"got {type(retrieval).__name__}"
                )
            if origin is not None and origin != self.identity:  # None: a plain id
                raise ValueError(
                    "this retrieval was made by another memory (another scope or user, or an "
                    "independent memory), whose retrieval ids restart at 1 too: rate it with the "
                    "memory that returned it"
                )
            if key not in self._recent:
                raise ValueError(
                    f"unknown or expired retrieval {key}: only the last {FEEDBACK_WINDOW} "
                    "retrievals (since the last clear()) can be rated"
                )
        found = self._recent[key]
        if found.rated:
            raise ValueError("this retrieval already has feedback")
        return key, found

    # -- offers ---------------------------------------------------------------------------------
    def offer(self, offer: Offer) -> Decision:
        """Decide on ``offer``: store it (evicting if full) or refuse it. Ends the step."""
        text, item_id = offer.text, offer.item_id
        store = self._store
        again = replaced = self._offered = None
        if offer.update and item_id is not None and item_id in store:
            replaced = store.slot_of(item_id)  # an update: the new item takes the old one's room
        elif item_id is not None and item_id in store:
            again = store.slot_of(item_id)
            if store.payload_at(again).text != text:
                raise ValueError(
                    f"an item with id {item_id!r} is already stored, with a different text"
                )
        elif item_id is not None and item_id in self._history and not offer.update:
            raise ValueError(
                f"{item_id!r} is the id of a superseded value: offer this one under another id, "
                "or remove that value first"
            )
        repeated = old = None
        # (an update names the item it writes, as LangGraph's keys do: never a repeat)
        if self.repeats and again is None and not offer.update and len(store):
            repeated = self._repeat_of(offer)
        if offer.key is not None and again is None and repeated is None:
            old = self._current_of(offer.key)
            old = None if old == replaced else old  # an update of the fact itself replaces it
        now = self.clock()  # before any change: a failing clock must leave the memory as it was
        step = self._steps + 1
        if repeated is not None:
            return self._repeat(repeated, step, now, offer)
        candidate = None
        full = store.full and store.evictable == 0
        if replaced is not None:
            # One step, so never lost between: the old item goes as removed, the new one is
            # stored without asking the gate (the key was kept already) and evicts nothing.
            self.drop(replaced, "removed")
            verdict = UPDATED
        elif offer.key is not None and again is None and (old is not None or not full):
            # A fact with a key is the caller's own: stored without asking the gate (as an
            # update is); the item it supersedes leaves its slot for the history.
            verdict = KEYED
        elif store.protected and again is None and full:
            # Only identity items left: refused before the gate sees it, so no gate state
            # (regret, ...) moves for an impossible store.
            verdict = FULL
        elif type(self.admission) is AlwaysAdmit:
            verdict = ALWAYS  # what it returns for every candidate: skip building one
        else:
            pick, score = self.eviction.victim, self._pending_score
            candidate = _OfferCandidate(offer, store, pick, step, score)
            candidate.stored = again
            verdict = self.admission.admit(candidate)
        self._steps = step
        self._pending_score = None
        if again is not None:
            # The same experience again: nothing stored, but the step ends and the gate has
            # seen it (ARC counts a request for a cached key), as in the reference runners.
            self._reoffered += 1
            decision = Decision(step, False, item_id, None, "already stored", *verdict[2:])
        elif not verdict.admitted:
            self._rejected += 1
            decision = Decision(step, False, None, None, *verdict[1:])
        else:
            decision = self._insert(offer, verdict, candidate, step, now, old)
        return self._end(decision, step, now, offer)

    def _current_of(self, key: str) -> int | None:
        """The slot of the current item of ``key``, if any (a scan: only keyed offers ask)."""
        payloads = self._store.slot_lists()[1]
        for slot in self._store.active_slots().tolist():
            r: Record = payloads[slot]
            if r.key == key and r.superseded_at is None:
                return int(slot)
        return None

    def _end(
        self, decision: Decision, step: int, now: float, offer: Offer | None = None
    ) -> Decision:
        """End an offer's step: the deletion policy's sweep, then the trace."""
        self._offered = None  # (the offer's parse: its insert, if any, has taken it)
        if offer is not None:
            decision.extraction = offer.extraction
        if self.deletion is not None:
            swept = self.deletion.sweep(step)
            if swept:
                decision.deleted = tuple([(self.drop(slot, "deleted"), why) for slot, why in swept])
        self._trace.append((now, decision))  # the step's time, read before anything changed
        return decision

    def _repeat_of(self, offer: Offer) -> tuple[int, FloatVector] | None:
        """The slot of the stored item ``offer`` repeats (:mod:`~solar_core.retrieval.repeats`)
        and the offer's vector, or ``None``. Read only: the same normalised text is found among
        the texts of its word key, a near-identical wording among the few nearest stored items
        by cosine (their similarities are those its retrieval just computed, if it was one)."""
        store, vector, key = self._store, offer.unit(), offer.key
        offer.row, offer.scale = vector, None  # made once: the gate and the insert read it
        payloads = store.slot_lists()[1]

        def same(slot: int) -> bool:  # a current item (of the same key, for a keyed offer)
            record: Record = payloads[slot]
            return (
                record.superseded_at is None
                and (key is None or record.key == key)
                and record.category == offer.category
                and record.valid_until == offer.valid_until
                and same_context(record.metadata, record.text, offer.metadata, offer.text)
            )

        text = offer.text
        words, norm, slot = word_key(text), None, None
        same_words = store.same_words(words)  # every stored text that normalises as this one
        if same_words:
            norm = normalise(text)
            found = (s for s in reversed(same_words) if store.norm_at(s) == norm and same(s))
            slot = next(found, None)
        self._offered = (words, norm, None, None)  # (what is made of it is kept for its insert)
        if slot is None:
            nearest = store.nearest_slots(vector, CANDIDATES)
            mine = sketch(words)  # the rule parses the offer only for a candidate this close
            near = [s for s in nearest if (mine ^ store.sketch_at(s)).bit_count() <= SKETCH_SLACK]
            made = canon(text, norm) if near else None
            self._offered = (words, norm if made is None else made.norm, mine, made)
            if made is not None:
                found = (s for s in near if same(s) and same_canon(made, store.canon_at(s)))
                slot = next(found, None)
        return None if slot is None else (slot, vector)

    def _repeat(
        self, repeated: tuple[int, FloatVector], step: int, now: float, offer: Offer
    ) -> Decision:
        """The offer repeats the item in a slot: no second slot; that item is observed again
        (its policy learns of it as of an item a retrieval returned, with the offer as the
        query) and counts the repeat. The decision names it (reason ``"repeat"``)."""
        slot, vector = repeated
        store = self._store
        record: Record = store.payload_at(slot)
        record.seen, record.last_seen = record.seen + 1, now
        self._steps, self._pending_score = step, None
        self._reoffered += 1
        slots = np.array([slot], dtype=np.int64)
        for listener in self._hear_retrieved:
            listener.retrieved([record])
        self.eviction.on_retrieve(slots, step, vector, [float(store.matrix[slot].dot(vector))])
        if self.deletion is not None:
            self.deletion.on_retrieve(slots, step)
        return self._end(Decision(step, False, store.id_at(slot), None, "repeat"), step, now, offer)

    def _insert(
        self,
        offer: Offer,
        verdict: Verdict,
        candidate: Candidate | None,
        step: int,
        now: float,
        supersedes: int | None = None,
    ) -> Decision:
        store, eviction = self._store, self.eviction
        new_id = offer.item_id if offer.item_id is not None else self._new_id()
        victim: Victim | None = None
        evicted = superseded = None
        contenders: tuple[tuple[str, float], ...] = ()
        if supersedes is not None:  # it stops being current now: out of the slots
            superseded = self._supersede(supersedes, now, new_id)
        # What the policies made of the candidate is reused: its vector, its similarities and
        # its victim (the item the gate compared it with, if it asked, is the one that leaves).
        vector, sims, chosen = (None, None, None) if candidate is None else candidate.made()
        while store.full:
            victim = chosen if chosen is not None else eviction.victim(step)
            chosen = None
            contenders = tuple([(store.id_at(s), score) for s, score in victim.contenders])
            evicted = self.drop(victim.slot, "evicted")
        if vector is None:
            vector = offer.unit()
        allocated = len(store.matrix)
        # Importance and protection are the lifecycle's rules: it sets them when told (below).
        record = Record(
            offer.text, offer.metadata, step, now, offer.category, 1.0, offer.valid_until
        )
        record.key = offer.key
        if new_id in self._history:  # an update naming a past value: that one gives way now
            self._history.remove(new_id)
        slot = store.insert(new_id, vector, record, sims, self._offered)
        if len(store.matrix) != allocated:  # an unbounded store grew
            self._reserve()
        eviction.on_insert(slot, step)
        if self.deletion is not None:
            self.deletion.on_insert(slot, step)
        self._admitted += 1
        for listener in self._hear_stored:
            listener.stored(new_id, record, vector)
        score = victim.score if victim is not None else None
        decision = Decision(step, True, new_id, evicted, *verdict[1:], score, contenders)
        decision.superseded = superseded
        return decision

    def _supersede(self, slot: int, now: float, by: str) -> str:
        """The item in ``slot`` stops being current: it leaves the slots for the history (whose
        longest-superseded value goes if it is full). Returns its id."""
        record: Record = self._store.payload_at(slot)
        record.superseded_at, record.superseded_by = now, by
        vector = self._store.vector(slot)
        item_id = self.drop(slot, "superseded")
        self._history.keep(item_id, record, vector)
        return item_id

    def _new_id(self) -> str:
        while True:
            self._id_counter += 1
            made = f"m{self._id_counter}"
            if made not in self._store and made not in self._history:
                return made

    # -- deletions ------------------------------------------------------------------------------
    def drop(self, slot: int, reason: str) -> str:
        """Take the item in ``slot`` out: ``"evicted"``, ``"removed"``, ``"deleted"`` (by the
        deletion policy), ``"expired"`` or ``"superseded"`` (for the history); returns its id."""
        item_id = self._store.remove(slot)
        self.eviction.on_remove(slot, reason == "evicted")
        if self.deletion is not None:
            self.deletion.on_remove(slot)
        self._removals += 1
        if reason == "evicted":  # (a branch per counter: this runs at every eviction)
            self._evicted += 1
        elif reason == "deleted":
            self._deleted += 1
        elif reason == "expired":
            self._expired += 1
        elif reason == "superseded":
            self._superseded += 1
        else:
            self._removed += 1
        for listener in self._hear_removed:
            listener.removed(item_id, reason)
        return item_id

    def resize(self, capacity: int, rows: int = 0) -> list[Decision]:
        """Hold at most ``capacity`` items from now on: evict by the policy down to it (each
        eviction traced, reason ``"resized to <capacity>"``) and tell the policies; returns
        those decisions. The items that stay keep their slots and all that was learned (the
        store keeps at least ``rows`` rows: a memory rebuilt from its parameters)."""
        store, n = self._store, len(self._store.protected)
        if self.capacity is None:
            raise ValueError("this memory keeps every item (no capacity): it cannot be resized")
        if n > capacity:  # checked before anything changes
            raise ValueError(
                f"{n} items are protected from eviction (identity items and current facts "
                f"with a key): the capacity must be at least {n} (remove some of them first)"
            )
        # the clock only when something is evicted (read before any change, as steps read it)
        now, evicted = self.clock() if len(store) > capacity else 0.0, []
        while len(store) > capacity:
            victim = self.eviction.victim(self._steps)
            contenders = tuple([(store.id_at(s), score) for s, score in victim.contenders])
            item_id, reason = self.drop(victim.slot, "evicted"), f"resized to {capacity}"
            evicted.append(Decision(self._steps, False, None, item_id, reason))
            evicted[-1].victim_score, evicted[-1].contenders = victim.score, contenders
        store.resize(capacity, rows)
        self._history.resize(capacity)  # as many past values as items
        self.capacity = capacity
        self.eviction.resized(capacity)
        self._reserve()
        self._trace.extend((now, decision) for decision in evicted)
        return evicted

    def remove(self, item_id: str, reason: str = "removed") -> None:
        """Delete ``item_id`` now (not counted as an eviction); a superseded value too."""
        if isinstance(item_id, str) and item_id in self._history:
            self._history.remove(item_id)  # (it holds no slot: no policy knows it, no count)
            for listener in self._hear_removed:  # (a watching cache drops what it answered)
                listener.removed(item_id, reason)
            return
        self.drop(self._slot(item_id), reason)

    def renew(self, renewal: Renewal) -> list[str]:
        """Set ``valid_until = now + seconds`` for each ``(item_id, seconds, seen)`` of
        ``renewal`` that may be renewed (:class:`~solar_core.engine.steps.Renewal`); returns the
        renewed ids. No policy statistic, counter or trace moves (a renewal is not a use)."""
        now = self.clock()  # before any change, as every step reads it
        store = self._store
        renewed = []
        for item_id, seconds, seen in renewal.lifetimes:
            if item_id not in store:
                continue
            slot = store.slot_of(item_id)
            record: Record = store.payload_at(slot)
            until = record.valid_until
            # Checked in the step, not by the caller's earlier read: another process may have
            # re-put the item (with no TTL, or another one) or it may have lapsed since.
            if until is None or now >= until or (seen is not None and until != seen):
                continue
            record.valid_until = now + seconds
            renewed.append(item_id)
            for listener in self._listeners:  # rare: every listener (the others have a no-op)
                listener.renewed(item_id, record, store.vector(slot))
        return renewed

    def clear(self) -> None:
        """Remove every item and reset learned policy state, counters and traces."""
        ids = self._store.ids() if self._hear_cleared else []
        for listener in self._hear_cleared:
            listener.cleared(ids)
        self._store.clear()
        self._history.clear()
        self.eviction.clear()
        if self.deletion is not None:
            self.deletion.clear()
        self._reserve()
        if not self._one_policy():  # one policy in both roles clears once
            self.admission.clear()
        self._trace.clear()
        self._retrieval_trace.clear()
        self.reset_counters()

    def put_back(
        self,
        items: list[tuple[str, Record, FloatVector]],
        continuation: tuple[int, int, Mapping[str, Any] | None],
    ) -> None:
        """Fill this new, empty memory with ``items`` (id, record, unit vector), in order, each
        at its own time with its importance; ``continuation`` (:meth:`continuation`) carries on
        another memory's ids, retrievals and random draws. No decision is traced."""
        admission, deletion, clock, repeats = (
            self.admission,
            self.deletion,
            self.clock,
            self.repeats,
        )
        # Every item was admitted once: not judged again by the gate, nor swept by a deletion
        # policy (it would drop items it never saw retrieved) while the memory fills, nor
        # taken for a repeat of another.
        self.admission, self.deletion, self.repeats = AlwaysAdmit(), None, False
        try:
            for item_id, r, vector in items:
                if r.superseded_at is not None:  # a past value: back into the history
                    self._history.keep(item_id, r, vector)
                    continue
                self.clock = partial(float, r.created_at)  # the item's own time
                offer = Offer(
                    r.text, vector, None, dict(r.metadata), item_id, r.category, r.valid_until
                )
                offer.key = r.key  # (kept as it was: a current fact protected again)
                if not self.offer(offer).admitted:  # pragma: no cover - the old capacity, ids
                    raise ValueError(f"{item_id!r} could not be put back")
                slot = self._store.slot_of(item_id)
                put: Record = self._store.payload_at(slot)
                put.importance, put.seen, put.last_seen = r.importance, r.seen, r.last_seen
        finally:
            self.admission, self.deletion, self.clock = admission, deletion, clock
            self.repeats = repeats
        if deletion is not None:  # it learns of the items now, each as stored at its step
            deletion.reserve(self._store.slots)
            for item_id, record in self.records():
                deletion.on_insert(self._store.slot_of(item_id), record.step)
        self._trace.clear()  # putting an item back is not a decision
        id_counter, self._retrieval_seq, rng_state = continuation
        self._id_counter = max(self._id_counter, id_counter)
        if rng_state is not None:
            self.rng.bit_generator.state = rng_state

    def continuation(self) -> tuple[int, int, Mapping[str, Any]]:
        """The last id number, the last retrieval id and the random generator's state."""
        return self._id_counter, self._retrieval_seq, self.rng.bit_generator.state

    # -- traces ---------------------------------------------------------------------------------
    def decisions(self) -> list[tuple[float, Decision]]:
        """The traced decisions with their step times, oldest first."""
        return list(self._trace)

    def retrievals(self) -> list[tuple[float, str | None, list[Hit]]]:
        """The traced recorded retrievals ``(at, query, hits)``, oldest first."""
        return list(self._retrieval_trace)

    def drop_traces_before(self, decisions: float, retrievals: float) -> dict[str, int]:
        """Drop decisions traced before time ``decisions`` and retrievals before
        ``retrievals``; how many of each went."""
        gone = {}
        for kind, trace, limit in (
            ("decision", self._trace, decisions),
            ("retrieval", self._retrieval_trace, retrievals),
        ):
            n = len(trace)
            while trace and trace[0][0] < limit:
                trace.popleft()
            gone[kind] = n - len(trace)
        return gone

    # -- counters and checks --------------------------------------------------------------------
    def stats(self) -> dict[str, Any]:
        """The counters (see :meth:`SolarMemory.stats <solar_core.SolarMemory.stats>`)."""
        steps = self._steps
        effect = getattr(self.eviction, "rating_effect", None)  # from a policy that counts it
        return {
            "size": len(self._store),
            "capacity": self.capacity,
            **{name: getattr(self, "_" + name) for name in _COUNTERS[:10]},  # ... superseded
            # paper Eq. 1: N = steps whose cache changed; every admission changes it
            "modifications": self._admitted,
            "store_rate": self._admitted / steps if steps else 0.0,
            "feedbacks": self._feedbacks,
            "mean_feedback": self._score_sum / self._feedbacks if self._feedbacks else None,
            "ratings": effect() if effect else None,  # how much ratings moved what is kept
            "tau": self.admission.tau,
            "regret": self.admission.regret,
        }

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if the store, the policies or the counters disagree."""
        self._store.check_invariants()
        self.eviction.check_invariants()
        if not self._one_policy():
            self.admission.check_invariants()
        if self.deletion is not None:
            self.deletion.check_invariants()
        expected = self._admitted - self._evicted - self._removed - self._deleted - self._expired
        expected -= self._superseded
        self._history.check_invariants(dict.fromkeys(self._store.ids()))
        if expected != len(self._store):
            raise AssertionError(f"counters say {expected} items, store has {len(self._store)}")
        if self._admitted + self._rejected + self._reoffered != self._steps:
            raise AssertionError("every step must be admitted or rejected")

    # -- state --------------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        """What the core was built with, besides its parts (see :mod:`solar_core.basics.state`);
        ``rows`` once resized below the rows it has (:meth:`resize`)."""
        rows = self._store.slots
        return {
            "capacity": self.capacity,
            "dim": self.dim,
            "trace_size": self._trace.maxlen,
            "importance_weight": self.importance_weight,
            "repeats": self.repeats,
            **({"rows": rows} if self.capacity is not None and rows > self.capacity else {}),
        }

    def _parts(self) -> dict[str, Any]:  # whose state is in this memory's, by prefix
        parts: dict[str, Any] = {"store": self._store, "eviction": self.eviction}
        parts["history"] = self._history
        if not self._one_policy():
            parts["admission"] = self.admission
        if self.deletion is not None:
            parts["deletion"] = self.deletion
        return parts

    def state(self) -> State:
        """The counters, the random generator, the items' records (by slot, below the store's
        high-water mark), both traces and the rateable retrievals; then the parts' states under
        ``store.``, ``eviction.``, ``admission.`` (when a part of its own) and ``deletion.``.
        Item metadata and traced hits are JSON values as a stored memory holds them."""
        store = self._store
        records: list[Record | None] = store.slot_lists()[1][: store.high_water]
        found = self._retrieval_trace
        state: State = {
            **{name: getattr(self, "_" + name) for name in _COUNTERS},
            "score_sum": self._score_sum,
            "pending_score": self._pending_score,
            "origin": self.identity,  # who made its rating handles
            "rng": _plain(self.rng.bit_generator.state),
            **record_columns(records, "item."),
            "trace.time": np.asarray([at for at, _ in self._trace], dtype=np.float64),
            **_decision_columns([decision for _, decision in self._trace]),
            "found.time": np.asarray([at for at, _, _ in found], dtype=np.float64),
            "found.query": [query for _, query, _ in found],
            **_hit_columns([hits for _, _, hits in found]),
            **_rateable_columns(store, self._recent),
        }
        for name, part in self._parts().items():
            state.update(prefixed(name, part.state()))
        return state

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take ``state`` (:meth:`state`'s) into this new core of the same parameters and
        parts. Every value is checked before it is used; whatever does not hold raises
        :class:`~solar_core.basics.state.StateError` and the core must then be dropped (its parts
        may hold part of the state)."""
        read = StateReader(state, "the memory's state")
        parts = self._parts()  # the parts read their own
        for name in state:
            if "." in name and name.split(".", 1)[0] in parts:
                read.value(name)
        store = self._store
        store.load_state(part_of("store", state))
        counters = {name: read.integer(name) for name in _COUNTERS}
        score_sum = read.number("score_sum", 0.0, float(counters["feedbacks"]))
        pending = read.number("pending_score", 0.0, 1.0, optional=True)
        identity = read.text("origin")
        rng = read.mapping("rng")
        records = read_records(read, store.active_mask.tolist(), "item.")
        if any(r.superseded_at is not None for r in records.values()):
            raise read.fail("a superseded value holds a slot (the history keeps those)")
        limit = self._trace.maxlen or 0
        times = read.array("trace.time", np.float64, (None,))
        found_times = read.array("found.time", np.float64, (None,))
        if len(times) > limit or len(found_times) > limit:
            raise read.fail(f"a trace holds more than trace_size = {limit} entries")
        decisions = _decisions(read, len(times))
        queries = read.listed("found.query", len(found_times))
        if any(q is not None and type(q) is not str for q in queries):
            raise read.fail("a traced query is not a string")
        hits = _hits(read, len(found_times))
        recent = self._read_rateable(read, counters, records)
        read.done()
        try:
            self.rng.bit_generator.state = rng
        except (TypeError, ValueError, KeyError, OverflowError) as err:
            raise read.fail(f"rng is not a state of this random generator: {err}") from None
        payloads = store.slot_lists()[1]
        for slot, record in records.items():
            payloads[slot] = record
        for name, value in counters.items():
            setattr(self, "_" + name, value)
        self._score_sum, self._pending_score, self.identity = score_sum, pending, identity
        self._trace.extend(zip(times.tolist(), decisions, strict=True))
        self._retrieval_trace.extend(zip(found_times.tolist(), queries, hits, strict=True))
        self._recent = recent
        self._reserve()
        for name, part in parts.items():
            if name != "store":
                part.load_state(part_of(name, state))
        # A policy that tells the latest retrieval by its slots array (coverage: a rating of it
        # rescales the ring row it made) gets the very array the memory hands back to rate it.
        latest = getattr(self.eviction, "last_slots", None)
        if latest is not None and recent:
            newest = next(reversed(recent.values()))
            if np.array_equal(newest.slots, latest):
                newest.slots = latest
        try:
            self.check_invariants()
        except AssertionError as err:
            raise read.fail(f"the loaded state breaks an invariant: {err}") from None

    def _read_rateable(
        self, read: StateReader, counters: Mapping[str, int], records: Mapping[int, Record]
    ) -> OrderedDict[int, Retrieval]:
        """The rateable retrievals: ids rising up to the last one, the step and removal count
        they were made at (made when the removal count was today's, they list only items still
        stored), at most :data:`FEEDBACK_WINDOW` of them. An item gone since is ``_GONE``."""
        keys = read.array("rateable.key", np.int64, (None,), lo=1, hi=MOST_COUNT).tolist()
        n = len(keys)
        if n > FEEDBACK_WINDOW:
            raise read.fail(f"more than {FEEDBACK_WINDOW} rateable retrievals")
        steps = read.array("rateable.step", np.int64, (n,), lo=1, hi=MOST_COUNT).tolist()
        removed = read.array("rateable.removals", np.int64, (n,), lo=0, hi=MOST_COUNT).tolist()
        rated_ = read.array("rateable.rated", np.bool_, (n,)).tolist()
        counts = read.array("rateable.count", np.int32, (n,), lo=0, hi=MOST_COUNT).tolist()
        slot_rows = _split(read.array("rateable.slots", np.int32, (sum(counts),)), counts)
        live_rows = _split(read.array("rateable.live", np.bool_, (sum(counts),)), counts)
        out: OrderedDict[int, Retrieval] = OrderedDict()
        previous = 0
        store = self._store
        for row in zip(keys, slot_rows, steps, removed, rated_, live_rows, strict=True):
            key, slots, step, removals, rated, live = row
            ok = (
                previous < key <= counters["retrieval_seq"]
                and step <= counters["steps"] + 1
                and removals <= counters["removals"]
                and all(0 <= s < store.slots for s in slots)
                and len(set(slots)) == len(slots)
            )
            if not ok:
                raise read.fail(f"rateable retrieval {key!r} does not hold together")
            pairs = list(zip(slots, live, strict=True))
            if any(alive and not store.active_full[s] for s, alive in pairs):
                raise read.fail(f"rateable retrieval {key} names an empty slot as live")
            if removals == counters["removals"] and not all(live):
                raise read.fail(f"rateable retrieval {key} lost an item without a removal")
            previous = key
            held = [records.get(s, _GONE) if alive else _GONE for s, alive in pairs]
            out[key] = Retrieval(np.asarray(slots, dtype=np.int64), held, step, removals, rated)
        return out


#: the core's counters, stored by these names (each an int attribute ``_name``)
_COUNTERS = (
    *("steps", "retrievals", "admitted", "rejected", "reoffered", "evicted", "removed"),
    *("deleted", "expired", "superseded", "feedbacks", "removals", "id_counter"),
    "retrieval_seq",
)
#: the record a rateable retrieval holds for an item gone since: no slot ever holds it
_GONE = Record("(gone)", {}, 0, 0.0)


def _plain(value: Any) -> Any:
    """A random generator's state as JSON values (a bit generator may hold arrays)."""
    if isinstance(value, dict):
        return {key: _plain(v) for key, v in value.items()}
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    return value


def _pairs(value: object, second: tuple[type, ...]) -> bool:
    return type(value) is list and all(
        type(pair) is list and len(pair) == 2 and type(pair[0]) is str and type(pair[1]) in second
        for pair in value
    )


def _split(values: npt.NDArray[Any], lengths: list[int]) -> list[list[Any]]:
    """``values`` cut into rows of ``lengths``."""
    bounds = np.cumsum([0, *lengths]).tolist()
    return [values[at:end].tolist() for at, end in pairwise(bounds)]


# The traces and the rateable retrievals are stored a column per field, most of them arrays:
# as rows of JSON they cost a chat memory four times what its items do, and the same few
# reasons and hit texts come back again and again.


def _decision_columns(rows: list[Decision]) -> State:
    """The decision trace as columns; a missing number is NaN with ``trace.given`` false."""
    reasons: dict[str, int] = {}
    numbers = [(d.cost, d.regret, d.tau, d.victim_score) for d in rows]
    return {
        "trace.step": np.asarray([d.step for d in rows], dtype=np.int64),
        "trace.admitted": np.asarray([d.admitted for d in rows], dtype=np.bool_),
        "trace.item": [d.item_id for d in rows],
        "trace.evicted": [d.evicted for d in rows],
        "trace.reason": np.asarray(
            [reasons.setdefault(d.reason, len(reasons)) for d in rows], dtype=np.int32
        ),
        "trace.reasons": list(reasons),
        "trace.numbers": np.asarray(
            [[math.nan if v is None else v for v in row] for row in numbers], dtype=np.float64
        ).reshape(len(rows), 4),
        "trace.given": np.asarray(
            [[v is not None for v in row] for row in numbers], dtype=np.bool_
        ).reshape(len(rows), 4),
        "trace.contenders": [[list(pair) for pair in d.contenders] for d in rows],
        "trace.deleted": [[list(pair) for pair in d.deleted] for d in rows],
        "trace.superseded": [d.superseded for d in rows],
        "trace.extraction": [d.extraction for d in rows],
    }


def _decisions(read: StateReader, n: int) -> list[Decision]:
    """The traced decisions from their columns, each field of its type."""
    steps = read.array("trace.step", np.int64, (n,), lo=1, hi=MOST_COUNT).tolist()
    admitted = read.array("trace.admitted", np.bool_, (n,)).tolist()
    items, evicted = read.listed("trace.item", n), read.listed("trace.evicted", n)
    reasons = read.listed("trace.reasons")
    reason = read.array("trace.reason", np.int32, (n,), lo=0, hi=len(reasons) - 1).tolist()
    given = read.array("trace.given", np.bool_, (n, 4))
    numbers = read.array("trace.numbers", np.float64, (n, 4), finite=False)
    if not np.isfinite(numbers[given]).all():
        raise read.fail("trace.numbers holds a value that is not finite")
    contenders, deleted = read.listed("trace.contenders", n), read.listed("trace.deleted", n)
    superseded = read.listed("trace.superseded", n)
    notes = read.listed("trace.extraction", n)
    if not (
        all(type(v) is str for v in reasons)
        and all(v is None or type(v) is str for v in (*items, *evicted, *superseded, *notes))
        and all(_pairs(c, (int, float)) and all(number(v) for _, v in c) for c in contenders)
        and all(_pairs(d, (str,)) for d in deleted)
    ):
        raise read.fail("the traced decisions do not hold together")
    out = []
    for i, (row, flags) in enumerate(zip(numbers.tolist(), given.tolist(), strict=True)):
        cost, regret, tau, victim = (v if ok else None for v, ok in zip(row, flags, strict=True))
        out.append(
            Decision(
                *(steps[i], admitted[i], items[i], evicted[i], reasons[reason[i]]),
                *(cost, regret, tau, victim),
                tuple((j, float(v)) for j, v in contenders[i]),
                tuple((j, v) for j, v in deleted[i]),
                superseded[i],
                notes[i],
            )
        )
    return out


def _hit_columns(retrievals: list[list[Hit]]) -> State:
    """The traced retrievals' hits as columns (a hit's rank is its place, its text an index)."""
    texts: dict[str, int] = {}
    hits = [hit for found in retrievals for hit in found]
    return {
        "found.count": np.asarray([len(found) for found in retrievals], dtype=np.int32),
        "found.id": [hit.id for hit in hits],
        "found.text": np.asarray(
            [texts.setdefault(hit.text, len(texts)) for hit in hits], dtype=np.int32
        ),
        "found.texts": list(texts),
        "found.score": np.asarray([hit.score for hit in hits], dtype=np.float64),
        "found.metadata": [hit.metadata for hit in hits],
    }


def _hits(read: StateReader, n: int) -> list[list[Hit]]:
    """The traced retrievals' hits from their columns."""
    counts = read.array("found.count", np.int32, (n,), lo=0, hi=MOST_COUNT)
    total = int(counts.sum(dtype=np.int64))
    ids, texts = read.listed("found.id", total), read.listed("found.texts")
    index = read.array("found.text", np.int32, (total,), lo=0, hi=len(texts) - 1).tolist()
    scores = read.array("found.score", np.float64, (total,)).tolist()
    metadata = read.listed("found.metadata", total)
    if not all(type(v) is str for v in (*ids, *texts)):
        raise read.fail("found.id and found.texts must hold strings")
    if not all(type(m) is dict for m in metadata):
        raise read.fail("found.metadata must hold mappings")
    try:
        metas = [copy_metadata(m, "a traced hit's metadata") for m in metadata]
    except ValueError as err:
        raise read.fail(str(err)) from None
    bounds = np.cumsum([0, *counts.tolist()]).tolist()
    return [
        [Hit(ids[i], texts[index[i]], scores[i], metas[i], i - at) for i in range(at, end)]
        for at, end in pairwise(bounds)
    ]


def _rateable_columns(store: ItemTable, recent: Mapping[int, Retrieval]) -> State:
    """The rateable retrievals as columns (``live``: the slot still holds the item it found)."""
    found = list(recent.values())
    return {
        "rateable.key": np.asarray(list(recent), dtype=np.int64),
        "rateable.step": np.asarray([f.step for f in found], dtype=np.int64),
        "rateable.removals": np.asarray([f.removals for f in found], dtype=np.int64),
        "rateable.rated": np.asarray([f.rated for f in found], dtype=np.bool_),
        "rateable.count": np.asarray([len(f.slots) for f in found], dtype=np.int32),
        "rateable.slots": np.concatenate(
            [np.zeros(0, np.int32), *(f.slots.astype(np.int32) for f in found)]
        ),
        "rateable.live": np.asarray(
            [
                store.payload_at(s) is r
                for f in found
                for s, r in zip(f.slots.tolist(), f.records, strict=True)
            ],
            dtype=np.bool_,
        ),
    }
