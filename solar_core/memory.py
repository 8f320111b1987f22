"""The facade an agent uses: retrieve, feedback, add."""

from __future__ import annotations

import difflib
import hashlib
import inspect
import math
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from .admission import AdmissionPolicy, AlwaysAdmit, Candidate
from .admission.base import ALWAYS
from .admission.evaluator_gate import Evaluator, EvaluatorGate
from .deletion import DeletionPolicy
from .embedder import Embedder, resolve_embedder
from .eviction import EvictionPolicy, Victim
from .hash_embedder import HashEmbedder
from .lifecycle import INITIAL_IMPORTANCE, Lifecycle, check_category
from .presets import DEFAULT_POLICY, build_policies
from .store import VectorStore
from .types import Decision, Hit, Hits, MemoryItem, UnknownItemError
from .validation import (
    FloatVector,
    check_capacity,
    check_feedback,
    check_k,
    check_metadata,
    check_text,
    scaled,
    unit_rows,
    unit_scale,
)

if TYPE_CHECKING:
    from .persistence.journal import Journal

_T = TypeVar("_T")

#: how many recent retrievals stay rateable by feedback(retrieval=...)
FEEDBACK_WINDOW = 1000


def _legacy_identity(memory: SolarMemory) -> str:
    """An identity for a memory saved without one: the same for every process loading the same
    state (it is then saved with the memory), and as unique as the memory's random generator."""
    basis = repr(
        (memory._rng.bit_generator.state, memory._steps, memory._retrieval_seq, memory.policy)
    )
    return hashlib.blake2b(basis.encode(), digest_size=16).hexdigest()


def _content_key(text: str) -> str:
    """ARC keys its ghosts by content, so re-offering the same text is a ghost hit."""
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass(slots=True)
class _Record:
    text: str
    metadata: dict[str, Any]
    step: int
    created_at: float
    category: str = "context"
    importance: float = 0.5
    valid_until: float | None = None


@dataclass(slots=True)
class _Retrieval:
    slots: npt.NDArray[np.int64]
    records: list[_Record]
    step: int
    removals: int  # the memory's removal count then: unchanged means every slot is still live
    rated: bool = False


#: Why items left a memory, as :meth:`SolarMemory.subscribe`'s ``on_delete`` hears it.
DELETION_REASONS = ("evicted", "removed", "cleared", "expired", "deleted", "reloaded", "forgotten")


class _Subscriber:
    """One subscription (see :meth:`SolarMemory.subscribe`). Called like ``on_store``; ``gone``
    holds the ``(item_id, reason)`` deletions of the running step, told when it ends."""

    __slots__ = ("on_store", "on_delete", "gone")

    def __init__(
        self,
        on_store: Callable[[str, str, FloatVector, dict[str, Any]], None] | None,
        on_delete: Callable[[list[str], str], None] | None,
    ) -> None:
        self.on_store = on_store
        self.on_delete = on_delete
        self.gone: list[tuple[str, str]] = []

    def __call__(self, item_id: str, text: str, vector: FloatVector, meta: dict[str, Any]) -> None:
        if self.on_store is not None:
            self.on_store(item_id, text, vector, meta)


#: Names other memory libraries use for this constructor's arguments.
_ALIASES = {
    **dict.fromkeys(("size", "max_size", "maxsize", "max_items", "maxlen", "limit"), "capacity"),
    **dict.fromkeys(("top_k", "n_results", "similarity_top_k"), "k"),
    **dict.fromkeys(("embeddings", "embed_model", "embedding_model", "model"), "embedder"),
    "random_state": "seed",
}


def _check_misnamed(params: Mapping[str, Any]) -> None:
    """Refuse a keyword that is one of :class:`SolarMemory`'s own arguments under another name
    (``size=10``): it would otherwise reach the policy and be blamed on it.

    >>> _check_misnamed({"size": 10})
    Traceback (most recent call last):
    ...
    TypeError: SolarMemory() has no argument 'size': did you mean capacity=10?
    """
    for name, value in params.items():
        known = _ALIASES.get(name) or next(
            iter(difflib.get_close_matches(name, _OWN_ARGUMENTS, n=1, cutoff=0.8)), None
        )
        if known is not None:
            raise TypeError(
                f"SolarMemory() has no argument {name!r}: did you mean {known}={value!r}?"
            )


class SolarMemory:
    """A bounded, self-curating memory of an agent's experiences.

    One *step* is one agent interaction: :meth:`retrieve` the top-k similar experiences for the
    prompt, optionally rate the answer with :meth:`feedback`, then offer the step's experience with
    :meth:`add`, which decides whether it is stored and, when full, what is evicted.

    Args:
        policy: a preset name (:func:`~solar_core.available_policies`); ``None`` is
            :data:`~solar_core.presets.DEFAULT_POLICY` (``"solar-adaptive"``) unless
            ``admission=``/``eviction=`` compose the policy by hand.
        capacity: the most items kept; ``None`` = unbounded.
        embedder: ``None``/``"minilm"`` (all-MiniLM-L6-v2, loaded on first use), ``"hash"``
            (deterministic, for tests) or any :class:`~solar_core.Embedder`.
        dim: for memories fed only precomputed vectors (``embedding=``): their dimension. With
            ``dim`` and no ``embedder`` the memory has no embedder at all.
        k: default number of hits per retrieval.
        seed: seeds the memory's random generator (Thompson sampling); same seed, same run.
        rng: a ``numpy.random.Generator`` to use instead of ``seed``.
        clock: returns the time in seconds (item ``created_at``); injected for tests.
        admission, eviction: a custom composition instead of a preset.
        evaluator: ``(query, execution, metadata) -> bool | float``: store an offered experience
            only if it accepts it, on top of the policy's own admission (an
            :class:`~solar_core.admission.EvaluatorGate`; the study's addition evaluator).
        deletion: a :class:`~solar_core.deletion.DeletionPolicy` swept at the end of every step
            (periodic, history-based or combined deletion).
        importance_weight: ``w`` in the ranking ``cosine * (1 - w + w * importance)``; 0 (the
            default) ranks by cosine alone (see :mod:`solar_core.lifecycle`).
        ttl_days: age at which :meth:`Lifecycle.expire` removes context items.
        trace_retention_days: ``{"decision": days, "retrieval": days}`` for
            :meth:`Lifecycle.sweep_traces` (30 each by default).
        trace_size: how many recent decisions :meth:`trace` keeps.
        **policy_params: constructor parameters of the preset's policies (e.g.
            ``novelty_bonus=0.0``, ``switching_cost=3.0``).

    All public methods are thread-safe (one lock). Bad input raises ``ValueError``/``TypeError``
    and leaves the memory exactly as it was.

    Example:
        >>> from solar_core import SolarMemory
        >>> memory = SolarMemory("solar", capacity=50, embedder="hash", seed=0)
        >>> memory.retrieve("how do I handle HTTP 429?")
        []
        >>> d = memory.add("Q: how do I handle HTTP 429?\\nA: retry with exponential backoff")
        >>> d.admitted, d.reason
        (True, 'bootstrap')
        >>> hits = memory.retrieve("what to do on HTTP 429", k=1)
        >>> hits[0].id == d.item_id, hits[0].text.splitlines()[1]
        (True, 'A: retry with exponential backoff')
        >>> memory.feedback(like=True)
        >>> memory.get(d.item_id).policy["alpha"]   # prior 2 + retrieved 1 + like 1
        4.0
    """

    def __init__(
        self,
        policy: str | None = None,
        capacity: int | None = 50,
        *,
        embedder: object = None,
        dim: int | None = None,
        k: int = 3,
        seed: int | None = None,
        rng: np.random.Generator | None = None,
        clock: Callable[[], float] = time.time,
        admission: AdmissionPolicy | None = None,
        eviction: EvictionPolicy | None = None,
        trace_size: int = 1000,
        evaluator: Evaluator | None = None,
        deletion: DeletionPolicy | None = None,
        importance_weight: float = 0.0,
        ttl_days: float = 7.0,
        trace_retention_days: Mapping[str, float] | None = None,
        **policy_params: Any,
    ) -> None:
        capacity = check_capacity(capacity)
        self.k = check_k(k)
        check_k(trace_size, "trace_size")
        if not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__}")
        if admission is not None or eviction is not None:
            if policy is not None:
                raise TypeError("pass either policy= or admission=/eviction=, not both")
            if policy_params:
                raise TypeError("policy parameters go to the policy objects when you pass them")
            if not isinstance(eviction, EvictionPolicy):
                raise TypeError("eviction must be an EvictionPolicy when composing by hand")
            self._admission: AdmissionPolicy = admission if admission is not None else AlwaysAdmit()
            if not isinstance(self._admission, AdmissionPolicy):
                raise TypeError("admission must be an AdmissionPolicy")
            self._eviction: EvictionPolicy = eviction
            self.policy = f"{self._admission.name}+{eviction.name}"
        else:
            policy = DEFAULT_POLICY if policy is None else policy
            _check_misnamed(policy_params)
            self._admission, self._eviction, capacity = build_policies(
                policy, capacity, policy_params
            )
            self.policy = policy
        if evaluator is not None:
            self._admission = EvaluatorGate(evaluator, inner=self._admission)
            self.policy = f"{self.policy}+evaluator"
        if deletion is not None and not isinstance(deletion, DeletionPolicy):
            raise TypeError(f"deletion must be a DeletionPolicy, got {type(deletion).__name__}")
        if deletion is not None and deletion.bound:  # refuse before binding anything else
            name = type(deletion).__name__
            raise ValueError(f"this {name} already serves another memory: create one per memory")
        self._deletion = deletion
        self._prepares = type(self._admission).prepare is not AdmissionPolicy.prepare
        self.capacity = capacity
        self._embedder, self.dim = self._resolve_embedder(embedder, dim)
        if rng is not None and seed is not None:
            raise ValueError("pass seed= or rng=, not both")
        self._rng = rng if rng is not None else np.random.default_rng(seed)
        self._clock = clock
        self._store = VectorStore(self.dim, capacity, neighbours=self._eviction.neighbours)
        # The gate first: a refused pairing must leave the eviction policy unbound, reusable.
        self._admission.bind(self._eviction)
        self._eviction.bind(self._store, self._rng)
        if deletion is not None:
            deletion.bind(self._store)
        self._trace: deque[Decision] = deque(maxlen=trace_size)
        self._trace_times: deque[float] = deque(maxlen=trace_size)  # aligned with _trace
        self._retrieval_trace: deque[tuple[float, str | None, list[Hit]]] = deque(maxlen=trace_size)
        if isinstance(importance_weight, bool) or not isinstance(importance_weight, int | float):
            raise TypeError(f"importance_weight must be a number, got {importance_weight!r}")
        if not 0.0 <= importance_weight <= 1.0:
            raise ValueError(f"importance_weight must be in [0, 1], got {importance_weight}")
        self.importance_weight = float(importance_weight)
        self._lock = threading.RLock()
        self._journal: Journal | None = None  # set by a MemoryStore: every step is logged
        self._subscribers: list[_Subscriber] = []
        self._id_counter = 0
        self._retrieval_seq = 0
        # Who this memory is, for its rating handles: random, so no two memories (nor two
        # scopes) share it; part of the state, so a snapshot, a reopen, a copy keep it.
        self._identity = secrets.token_hex(16)
        self.lifecycle = Lifecycle(self, ttl_days=ttl_days, retention_days=trace_retention_days)
        self._reset_counters()

    @staticmethod
    def _resolve_embedder(embedder: object, dim: int | None) -> tuple[Embedder | None, int]:
        if dim is not None:
            dim = check_k(dim, "dim")
            if embedder is None:
                return None, dim  # vectors only
            if embedder == "hash":
                return HashEmbedder(dim=dim), dim
        resolved = resolve_embedder(embedder)
        if dim is not None and dim != resolved.dim:
            raise ValueError(f"dim={dim} disagrees with the embedder's dim {resolved.dim}")
        return resolved, resolved.dim

    def _reset_counters(self) -> None:
        self._steps = 0
        self._retrievals = 0
        self._admitted = 0
        self._rejected = 0
        self._reoffered = 0  # offers of an already-stored id with the same text
        self._evicted = 0
        self._removed = 0
        self._deleted = 0  # by the deletion policy
        self._expired = 0  # by lifecycle.expire()
        self._feedbacks = 0
        self._score_sum = 0.0
        self._removals = 0  # evictions + removals, ever: detects stale retrievals
        self._recent: OrderedDict[int, _Retrieval] = OrderedDict()  # rateable retrievals
        self._pending_score: float | None = None

    # -- inputs ---------------------------------------------------------------------------------
    def _vector(
        self, text: object, embedding: object, what: str
    ) -> tuple[FloatVector, float | None]:
        """The checked input vector as ``(row, scale)``: ``scaled(row, scale)`` is its unit vector.

        Every check runs here, before the memory is touched; only the product is left for later.
        """
        if embedding is not None:
            if text is not None:
                check_text(text, what)
            return unit_scale(embedding, self.dim)
        if text is None:
            raise ValueError(f"pass a {what} text or embedding=")
        check_text(text, what)
        if self._embedder is None:
            raise ValueError(
                "this memory has no embedder (it was built with dim=); pass embedding="
            )
        embed = self._embedder.embed
        if what == "query":  # asymmetric models embed queries and documents differently
            embed = getattr(self._embedder, "embed_queries", embed)
        row: FloatVector = unit_rows(embed([str(text)]), self.dim, 1)[0]
        return row, None

    def embed_query(self, query: str) -> FloatVector:
        """``query`` as the unit vector a retrieval would use: embed once, retrieve several times
        (e.g. look with ``record=False``, then record only what a prompt had room for)."""
        row, scale = self._vector(query, None, "query")
        return scaled(row, scale)

    # -- the step -------------------------------------------------------------------------------
    def retrieve(
        self,
        query: str | None = None,
        *,
        embedding: object = None,
        k: int | None = None,
        record: bool = True,
        exclude: Collection[str] = (),
    ) -> Hits:
        """Return the ``k`` stored items most similar to ``query`` (or ``embedding``), best first.

        A retrieval event: the policy credits the returned items (SOLAR: ``alpha += 1``) and ages
        the others, and :meth:`feedback` can rate it. ``record=False`` only looks: no policy
        update, nothing to rate (for previews, tracing, re-rendering a prompt).

        ``exclude`` names items never to return (ids not stored are ignored), e.g. those already
        in the prompt: the ``k`` hits are the best of the others, and only they are credited.
        """
        if k is None:
            k = self.k
        elif type(k) is not int or k < 1:  # a plain positive int needs no checking
            k = check_k(k)
        if exclude:
            if isinstance(exclude, str):  # a lone id would be read as its characters
                raise TypeError("exclude must be a collection of item ids, not a string")
            exclude = set(exclude)
        row, scale = self._vector(query, embedding, "query")
        vector = scaled(row, scale)
        journal = self._journal
        if journal is not None:  # persisted: logged, and caught up with other writers first
            return journal.retrieve(self, vector, query, k, record, exclude)
        with self._lock:
            return self._retrieve(vector, query, k, record, exclude)

    def _retrieve(
        self,
        vector: FloatVector,
        query: str | None,
        k: int,
        record: bool,
        exclude: Collection[str],
    ) -> Hits:
        """:meth:`retrieve` on a checked unit vector, under the lock (also replays a log)."""
        store = self._store
        if self.importance_weight > 0.0:
            slots, scores = self._weighted_nearest(vector, k, exclude)
        elif exclude:
            slots, scores = self._nearest_except(vector, k, exclude)
        else:
            slots, scores = store.nearest(vector, k)
        ids, payloads = store.slot_lists()
        records: list[_Record] = []
        hits: list[Hit] = []
        for rank, (slot, score) in enumerate(zip(slots.tolist(), scores, strict=True)):
            rec = payloads[slot]
            records.append(rec)
            hits.append(Hit(ids[slot], rec.text, score, rec.metadata.copy(), rank))
        if not record:
            return Hits(hits, None, self._identity)
        now = self._clock()  # before any change: a failing clock leaves the memory as it was
        for rec in records:  # reinforcement: returned to a caller, so more important
            boosted = rec.importance * 1.1
            rec.importance = boosted if boosted < 1.0 else 1.0
        self._retrieval_trace.append((now, query, hits))  # dicts built when asked for
        step = self._steps + 1
        if self._eviction.needs_queries:
            cosines = scores
            if self.importance_weight > 0.0:  # the policy learns from similarity, not rank
                cosines = store.matrix[slots].dot(vector).tolist()
            self._eviction.on_query(vector, slots, cosines, step)
        self._eviction.on_retrieve(slots, step)
        if self._deletion is not None:
            self._deletion.on_retrieve(slots, step)
        self._retrievals += 1
        self._retrieval_seq += 1  # never reset: a Hits from before clear() stays unknown
        retrieval_id = self._retrieval_seq
        self._recent[retrieval_id] = _Retrieval(slots, records, step, self._removals)
        if len(self._recent) > FEEDBACK_WINDOW:
            self._recent.popitem(last=False)
        return Hits(hits, retrieval_id, self._identity)

    def _weighted_nearest(
        self, vector: FloatVector, k: int, exclude: Collection[str]
    ) -> tuple[npt.NDArray[np.int64], list[float]]:
        """Top-k by ``cosine * (1 - w + w * importance)`` (a pass over every item: opt-in)."""
        store = self._store
        sims = store.similarities(vector).astype(np.float64)
        _, payloads = store.slot_lists()
        w = self.importance_weight
        for slot in store.active_slots().tolist():
            sims[slot] *= 1.0 - w + w * payloads[slot].importance
        for item_id in exclude:
            if item_id in store:
                sims[store.slot_of(item_id)] = -np.inf
        n = int(np.isfinite(sims).sum())
        order = np.argsort(-sims, kind="stable")[: min(k, n)]
        return order.astype(np.int64), sims[order].tolist()

    def _records(self) -> list[tuple[str, _Record]]:
        """Every stored ``(id, record)``, oldest insert first."""
        store = self._store
        return [(i, store.payload_at(store.slot_of(i))) for i in store.ids()]

    def _nearest_except(
        self, vector: FloatVector, k: int, exclude: Collection[str]
    ) -> tuple[npt.NDArray[np.int64], list[float]]:
        store = self._store
        skip = {store.slot_of(i) for i in exclude if i in store}
        slots, scores = store.nearest(vector, k + len(skip))
        keep = [j for j, slot in enumerate(slots.tolist()) if slot not in skip][:k]
        return slots[keep], [scores[j] for j in keep]

    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        retrieval: Hits | int | None = None,
    ) -> None:
        """Rate a retrieval: ``like=True/False`` or ``score`` in [0, 1] (or both).

        ``retrieval`` is the :class:`Hits` that :meth:`retrieve` returned (or its
        ``retrieval_id``); by default the latest retrieval. Pass it whenever several callers share
        the memory. Any of the last 1,000 retrievals can be rated, each once. Hits (and an
        adapter's :class:`~solar_core.types.RetrievalId`) of another memory or scope are refused
        with a ``ValueError``: retrieval ids restart at 1 in every memory. A plain ``int`` cannot
        say whose it is: it always names a retrieval of this memory.

        The items that retrieval returned are credited with the reward (``like`` -> 1/0, else
        ``score``): Thompson policies add it to alpha and ``1 - reward`` to beta. If the step of
        that retrieval has not ended (no :meth:`add` since), ``score`` (else the like as 1/0)
        also sets the step cost ``1 - score`` for the regret gate.
        """
        reward, quality = check_feedback(like, score)
        journal = self._journal
        if journal is not None:
            journal.feedback(self, reward, quality, retrieval)
            return
        with self._lock:
            self._feedback(reward, quality, self._resolve_retrieval(retrieval)[1])

    def _feedback(self, reward: float, quality: float, last: _Retrieval) -> None:
        if self._eviction.listens_to_feedback or self._deletion is not None:
            live = self._live_slots(last)
            if self._eviction.listens_to_feedback:
                self._eviction.on_feedback(live, reward)
            if self._deletion is not None:  # the step's quality: the score when given
                self._deletion.on_feedback(live, quality)
        last.rated = True
        if last.step == self._steps + 1:
            self._pending_score = quality
        self._feedbacks += 1
        self._score_sum += quality

    def _live_slots(self, retrieval: _Retrieval) -> npt.NDArray[np.int64]:
        """The slots ``retrieval`` returned that still hold the items it returned."""
        slots = retrieval.slots
        if retrieval.removals != self._removals:
            # Items removed since the retrieval get no credit; their slots may hold new items
            # (even under the same id), so liveness is the identity of the stored record.
            store = self._store
            live = [
                s
                for s, rec in zip(slots.tolist(), retrieval.records, strict=True)
                if store.payload_at(s) is rec
            ]
            return np.asarray(live, dtype=np.int64)
        return slots

    def _resolve_retrieval(self, retrieval: object) -> tuple[int, _Retrieval]:
        """The rateable retrieval ``retrieval`` names, with its id."""
        if retrieval is None:
            if not self._recent:
                raise ValueError("feedback() rates a retrieval: call retrieve() first")
            key = next(reversed(self._recent))
            found = self._recent[key]
        else:
            if isinstance(retrieval, Hits):
                if retrieval.retrieval_id is None:
                    raise ValueError("a record=False lookup cannot be rated")
                self._check_origin(retrieval.origin)
                key = retrieval.retrieval_id
            elif isinstance(retrieval, int) and not isinstance(retrieval, bool):
                self._check_origin(getattr(retrieval, "origin", None))
                key = int(retrieval)
            else:
                raise TypeError(
                    "retrieval must be the Hits returned by retrieve() or their retrieval_id, "
                    f"got {type(retrieval).__name__}"
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

    def _check_origin(self, origin: object) -> None:
        """Refuse a rating handle made by another memory (``None``: a plain id, unchecked)."""
        if origin is not None and origin != self._identity:
            raise ValueError(
                "this retrieval was made by another memory (another scope or user, or an "
                "independent memory), whose retrieval ids restart at 1 too: rate it with the "
                "memory that returned it"
            )

    def add(
        self,
        text: str,
        *,
        embedding: object = None,
        metadata: Mapping[str, Any] | None = None,
        item_id: str | None = None,
        category: str = "context",
        valid_until: float | None = None,
    ) -> Decision:
        """Offer this step's experience; the policy decides whether to store it. Ends the step.

        ``category`` (``"identity"``, ``"knowledge"`` or ``"context"``) sets the item's initial
        importance and lifecycle; ``valid_until`` (a clock time) is when
        :meth:`Lifecycle.expire` removes it whatever its category.

        ``item_id`` names the new item. Offering an id that is already stored with the same text is
        a re-offer: the step ends and the admission policy sees the candidate, but nothing is
        stored (``Decision.reason == "already stored"``); with a different text it is an error.
        """
        text = check_text(text)
        if category != "context":  # the default needs no checking
            category = check_category(category)
        if valid_until is not None and (
            isinstance(valid_until, bool)
            or not isinstance(valid_until, int | float)
            or not math.isfinite(valid_until)
        ):
            raise ValueError(f"valid_until must be a finite clock time, got {valid_until!r}")
        meta = {} if metadata is None else check_metadata(metadata)
        if item_id is not None:
            check_text(item_id, "item_id")
        row, scale = self._vector(text, embedding, "text")
        journal = self._journal
        if journal is not None:
            meta = journal.plain_metadata(meta)  # what a replay of the log will see
        # Outside the lock: it may call an LLM. Skipped for gates that prepare nothing.
        prepared = self._admission.prepare(text, meta) if self._prepares else None
        if journal is not None:
            unit = scaled(row, scale)
            return journal.add(self, text, unit, meta, item_id, category, valid_until, prepared)
        with self._lock:
            try:
                decision, vector = self._add(
                    text, row, scale, meta, item_id, category, valid_until, prepared
                )
            finally:
                if self._subscribers:  # the evicted and deleted items, first
                    self._tell_deletions()
            if decision.admitted and self._subscribers:
                self._notify(decision, text, vector, meta)
            return decision

    def _notify(
        self, decision: Decision, text: str, vector: FloatVector | None, meta: dict[str, Any]
    ) -> None:
        """Tell the subscribers of a stored item, once its step is complete and traced (a
        callback that raises cannot leave the step half done)."""
        assert decision.item_id is not None and vector is not None
        for subscriber in self._subscribers:
            subscriber(decision.item_id, text, vector, meta)

    def _add(
        self,
        text: str,
        row: FloatVector,
        scale: float | None,
        meta: dict[str, Any],
        item_id: str | None,
        category: str,
        valid_until: float | None,
        prepared: object,
    ) -> tuple[Decision, FloatVector | None]:
        """:meth:`add` on checked input, under the lock; returns the decision and the stored
        unit vector (``None`` when it was never needed)."""
        vector = None  # the unit vector, made when first needed: a rejected offer never needs it
        store = self._store
        again = None
        if item_id is not None and item_id in store:
            again = store.slot_of(item_id)
            if store.payload_at(again).text != text:
                raise ValueError(
                    f"an item with id {item_id!r} is already stored, with a different text"
                )
        now = self._clock()  # before any change: a failing clock must leave the memory as it was
        step = self._steps + 1
        score = self._pending_score
        sims = None
        admission = self._admission
        if store.protected and again is None and store.full and store.evictable == 0:
            # Only identity items left: nothing may be evicted to make room. Refused before
            # the gate sees it, so no gate state (regret, ...) moves for an impossible store.
            self._steps = step
            self._pending_score = None
            self._rejected += 1
            refused = Decision(step, False, None, None, "full of protected items")
            return self._record(refused, now), None
        if type(admission) is AlwaysAdmit:
            verdict = ALWAYS  # what it returns for every candidate: skip building one
        else:
            if admission.needs_similarities and score is None:
                vector = scaled(row, scale)
                sims = store.similarities(vector)
            if admission.needs_vector and vector is None:
                vector = scaled(row, scale)
            verdict = admission.admit(
                Candidate(len(store), self.capacity, score, sims, vector, text, meta, prepared)
            )
        self._steps = step
        self._pending_score = None
        if again is not None:
            # The same experience offered again: nothing to store, but the step ends and the
            # gate has seen it (its cost ~0, as it is its own nearest neighbour). ARC counts
            # it as a request for a cached key. Mirrors the reference runners' duplicates.
            self._eviction.on_reoffer(again, step)
            self._reoffered += 1
            reason = "already stored"
            decision = Decision(step, False, item_id, None, reason, *verdict[2:])
            return self._record(decision, now), None
        _, reason, cost, regret, tau = verdict
        if not verdict.admitted:
            self._rejected += 1
            refused = Decision(step, False, None, None, reason, cost, regret, tau)
            return self._record(refused, now), None
        new_id = item_id if item_id is not None else self._new_id()
        eviction = self._eviction
        content_key = _content_key(text) if eviction.uses_content_key else ""
        eviction.prepare_insert(content_key)
        victim: Victim | None = None
        evicted = None
        contenders: tuple[tuple[str, float], ...] = ()
        while store.full:
            victim = eviction.victim(step)
            contenders = (
                tuple([(store.id_at(s), sc) for s, sc in victim.contenders])
                if victim.contenders  # only scoring policies name any
                else ()
            )
            evicted = self._drop(victim.slot, evicted=True)
        if vector is None:
            vector = scaled(row, scale)
        allocated = len(store.matrix)
        record = _Record(text, meta, step, now, category, INITIAL_IMPORTANCE[category], valid_until)
        slot = store.insert(new_id, vector, record, sims)
        if category == "identity":
            store.protected.add(slot)
        if len(store.matrix) != allocated:  # an unbounded store grew
            eviction.reserve(store.slots)
            if self._deletion is not None:
                self._deletion.reserve(store.slots)
        eviction.on_insert(slot, content_key, step)
        if self._deletion is not None:
            self._deletion.on_insert(slot, step)
        self._admitted += 1
        victim_score = victim.score if victim is not None else None
        if self._journal is not None:
            self._journal.inserted(new_id, record, vector)
        decision = self._record(
            Decision(
                step, True, new_id, evicted, reason, cost, regret, tau, victim_score, contenders
            ),
            now,
        )
        return decision, vector

    def _record(self, decision: Decision, now: float) -> Decision:
        if self._deletion is not None:  # the step has ended: sweep
            swept = self._deletion.sweep(decision.step)
            if swept:
                decision.deleted = tuple(
                    [(self._drop(slot, evicted=False, deleted=True), why) for slot, why in swept]
                )
        self._trace.append(decision)
        self._trace_times.append(now)  # the step's time, read before anything changed
        return decision

    def _new_id(self) -> str:
        while True:
            self._id_counter += 1
            candidate = f"m{self._id_counter}"
            if candidate not in self._store:
                return candidate

    def _drop(self, slot: int, evicted: bool, deleted: bool = False, expired: bool = False) -> str:
        item_id = self._store.remove(slot)
        if self._journal is not None:
            self._journal.removed(item_id)
        self._eviction.on_remove(slot, evicted)
        if self._deletion is not None:
            self._deletion.on_remove(slot)
        self._removals += 1
        if evicted:
            self._evicted += 1
        elif deleted:
            self._deleted += 1
        elif expired:
            self._expired += 1
        else:
            self._removed += 1
        if self._subscribers:
            reason = (
                "evicted"
                if evicted
                else "deleted"
                if deleted
                else "expired"
                if expired
                else "removed"
            )
            self._gone([item_id], reason)
        return item_id

    def subscribe(
        self,
        callback: Callable[[str, str, FloatVector, dict[str, Any]], None] | None = None,
        *,
        on_delete: Callable[[list[str], str], None] | None = None,
    ) -> None:
        """Call ``callback(item_id, text, unit_vector, metadata)`` after every stored item, and
        ``on_delete(item_ids, reason)`` after every step that took items out (either may be
        ``None``, not both). Both run under the memory's lock, before the call that made the
        change returns: keep them short.

        ``reason`` is ``"evicted"`` (to make room: a capacity decision), ``"removed"``
        (:meth:`remove`), ``"cleared"`` (:meth:`clear`), ``"expired"`` (:meth:`Lifecycle.expire
        <solar_core.lifecycle.Lifecycle.expire>`), ``"deleted"`` (the deletion policy), and for
        a persisted memory ``"forgotten"`` (its scope was forgotten or erased, here or by another
        process) or ``"reloaded"`` (gone when it caught up with another process's snapshot,
        which folds in removals and evictions alike). A step tells its deletions before its
        stored item; a persisted memory tells those of the steps it catches up with (other
        processes') too, and after a rebuild from the database it may tell a deletion twice.

        :meth:`ResponseCache.watch` uses both: a new fact evicts the answers it relates to, a
        deletion drops the answers that may have used the item. Subscriptions are not state:
        a pickled or copied memory has none."""
        if callback is None and on_delete is None:
            raise TypeError("subscribe() needs a callable callback, on_delete or both")
        for name, given in (("callback", callback), ("on_delete", on_delete)):
            if given is not None and not callable(given):
                raise TypeError(f"{name} must be callable, got {type(given).__name__}")
        with self._lock:
            self._subscribers.append(_Subscriber(callback, on_delete))

    def _gone(self, item_ids: list[str], reason: str) -> None:
        """Note deleted items for the subscribers that hear deletions (told by
        :meth:`_tell_deletions` once the step ends)."""
        for subscriber in self._subscribers:
            if subscriber.on_delete is not None:
                subscriber.gone.extend([(item_id, reason) for item_id in item_ids])

    def _tell_deletions(self) -> None:
        """Tell the subscribers of the deletions noted since last told, one call per run of the
        same reason (under the lock; a callback that raises leaves the others' for later)."""
        for subscriber in self._subscribers:
            if subscriber.gone and subscriber.on_delete is not None:
                gone, subscriber.gone = subscriber.gone, []
                start = 0
                for end in range(1, len(gone) + 1):
                    if end == len(gone) or gone[end][1] != gone[start][1]:
                        ids = [item_id for item_id, _ in gone[start:end]]
                        subscriber.on_delete(ids, gone[start][1])
                        start = end

    # -- inspection and editing ----------------------------------------------------------------
    @property
    def embedder(self) -> Embedder | None:
        """The embedder that turns texts into vectors (``None`` for a vectors-only memory)."""
        return self._embedder

    def __len__(self) -> int:
        if self._journal is not None:
            with self._lock:
                self._journal.sync(self)
        return len(self._store)

    def __contains__(self, item_id: object) -> bool:
        if self._journal is not None:
            with self._lock:
                self._journal.sync(self)
        return item_id in self._store

    def _sync(self) -> None:
        """Persisted: catch up with steps other processes logged (call under the lock)."""
        if self._journal is not None:
            self._journal.sync(self)

    def __iter__(self) -> Iterator[MemoryItem]:
        return iter(self.items())

    def _item(self, item_id: str) -> MemoryItem:
        slot = self._store.slot_of(item_id)
        record: _Record = self._store.payload_at(slot)
        return MemoryItem(
            item_id,
            record.text,
            dict(record.metadata),
            record.step,
            record.created_at,
            self._describe(slot),
            record.category,
            record.importance,
            record.valid_until,
        )

    def _describe(self, slot: int) -> dict[str, float]:
        info = dict(self._eviction.describe(slot))
        if self._deletion is not None:
            info.update(self._deletion.describe(slot))
        return info

    def _check_id(self, item_id: object) -> str:
        if not isinstance(item_id, str):
            raise TypeError(f"item id must be a str, got {type(item_id).__name__}")
        if item_id not in self._store:
            raise UnknownItemError(f"no item with id {item_id!r} is stored")
        return item_id

    def get(self, item_id: str) -> MemoryItem:
        """The stored item ``item_id``; raises :class:`UnknownItemError` if absent."""
        with self._lock:
            self._sync()
            return self._item(self._check_id(item_id))

    def items(self) -> list[MemoryItem]:
        """Every stored item, oldest insert first."""
        with self._lock:
            self._sync()
            return [self._item(i) for i in self._store.ids()]

    def vector(self, item_id: str) -> FloatVector:
        """A copy of the stored unit vector of ``item_id``."""
        with self._lock:
            self._sync()
            return self._store.vector(self._store.slot_of(self._check_id(item_id)))

    def remove(self, item_id: str) -> None:
        """Delete ``item_id`` now (not counted as an eviction)."""
        self._mutate("remove", {"id": item_id}, lambda: self._remove(item_id))

    def _remove(self, item_id: str) -> None:
        self._drop(self._store.slot_of(self._check_id(item_id)), evicted=False)

    def clear(self) -> None:
        """Remove every item and reset learned policy state and counters."""
        self._mutate("clear", {}, self._clear)

    def _mutate(self, kind: str, args: dict[str, Any], apply: Callable[[], _T]) -> _T:
        """Run ``apply`` under the lock; in a persisted memory, as one logged step."""
        journal = self._journal
        if journal is None:
            with self._lock:
                try:
                    return apply()
                finally:
                    if self._subscribers:  # what it deleted, before the call returns
                        self._tell_deletions()
        return journal.run(self, kind, args, None, apply)

    def _clear(self) -> None:
        if self._journal is not None:
            self._journal.cleared()
        if self._subscribers:
            self._gone(self._store.ids(), "cleared")
        self._store.clear()
        self._eviction.clear()
        self._eviction.reserve(self._store.slots)
        if self._deletion is not None:
            self._deletion.clear()
            self._deletion.reserve(self._store.slots)
        self._admission.clear()
        self._trace.clear()
        self._trace_times.clear()
        self._retrieval_trace.clear()
        self._reset_counters()

    def retrieval_trace(self) -> list[dict[str, Any]]:
        """The recorded retrievals kept (query, ids, scores, ``at``), oldest first."""
        with self._lock:
            self._sync()
            return [
                {"at": at, "query": q, "ids": [h.id for h in hs], "scores": [h.score for h in hs]}
                for at, q, hs in self._retrieval_trace
            ]

    def state(self) -> dict[str, Any]:
        """The whole memory as plain data: items (with category, importance, created_at,
        valid_until and policy statistics), counters, lifecycle settings and traces."""
        with self._lock:
            self._sync()
            return {
                "policy": self.policy,
                "capacity": self.capacity,
                "items": [
                    {
                        "id": i.id,
                        "text": i.text,
                        "metadata": dict(i.metadata),
                        "category": i.category,
                        "importance": i.importance,
                        "created_at": i.created_at,
                        "valid_until": i.valid_until,
                        "policy": dict(i.policy),
                    }
                    for i in self.items()
                ],
                "stats": self.stats(),
                "lifecycle": self.lifecycle.state(),
                "decisions": [
                    {"at": at, **{f: getattr(d, f) for f in d.__slots__}}
                    for at, d in zip(self._trace_times, self._trace, strict=True)
                ],
                "retrievals": self.retrieval_trace(),
            }

    def trace(self, last: int | None = None) -> list[Decision]:
        """The most recent decisions, oldest first (at most ``trace_size`` are kept)."""
        with self._lock:
            self._sync()
            decisions = list(self._trace)
        return decisions if last is None else decisions[-check_k(last, "last") :]

    def stats(self) -> dict[str, Any]:
        """Counters: size, capacity, steps, admitted, rejected, evicted, modifications, tau, ..."""
        with self._lock:
            self._sync()
            steps = self._steps
            return {
                "policy": self.policy,
                "size": len(self._store),
                "capacity": self.capacity,
                "steps": steps,
                "retrievals": self._retrievals,
                "admitted": self._admitted,
                "rejected": self._rejected,
                "reoffered": self._reoffered,
                "evicted": self._evicted,
                "removed": self._removed,
                "deleted": self._deleted,
                "expired": self._expired,
                # paper Eq. 1: N = steps whose cache changed; every admission changes it
                "modifications": self._admitted,
                "store_rate": self._admitted / steps if steps else 0.0,
                "feedbacks": self._feedbacks,
                "mean_feedback": self._score_sum / self._feedbacks if self._feedbacks else None,
                "tau": self._admission.tau,
                "regret": self._admission.regret,
            }

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if the store, the policies or the counters disagree."""
        with self._lock:
            self._store.check_invariants()
            self._eviction.check_invariants()
            self._admission.check_invariants()
            expected = (
                self._admitted - self._evicted - self._removed - self._deleted - self._expired
            )
            if expected != len(self._store):
                raise AssertionError(f"counters say {expected} items, store has {len(self)}")
            if self._admitted + self._rejected + self._reoffered != self._steps:
                raise AssertionError("every step must be admitted or rejected")

    # -- pickling (tests compare full state; persistence builds on it) --------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_lock"]
        state["_subscribers"] = []  # callbacks (closures, caches) are not state: re-attach them
        journal = state.pop("_journal", None)
        state["_journal"] = None  # a copy is not persisted: it would write to the same scope
        if journal is not None:
            state["_clock"] = journal.user_clock  # not the journal's recording wrapper
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.RLock()
        if "_identity" not in state:  # saved before memories had one: derive it from the state
            self._identity = _legacy_identity(self)

    def __repr__(self) -> str:
        embedder = type(self._embedder).__name__ if self._embedder is not None else None
        return (
            f"SolarMemory(policy={self.policy!r}, capacity={self.capacity}, size={len(self)}, "
            f"dim={self.dim}, embedder={embedder})"
        )


#: SolarMemory's own keyword arguments (what a misspelt one is compared with).
_OWN_ARGUMENTS = [
    name for name in inspect.signature(SolarMemory.__init__).parameters if name != "self"
][:-1]  # the last one is **policy_params
