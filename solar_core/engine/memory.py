"""The facade an agent uses: retrieve, feedback, add."""

from __future__ import annotations

import inspect
import secrets
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import replace
from datetime import datetime
from functools import partial
from types import EllipsisType
from typing import Any, cast

import numpy as np

from solar_core.basics.arguments import check_misnamed
from solar_core.basics.records import copy_metadata
from solar_core.basics.types import Decision, Hits
from solar_core.basics.validation import (
    FloatVector,
    check_as_of,
    check_capacity,
    check_exclude,
    check_feedback,
    check_k,
    check_offer,
    check_text,
    check_weight,
    fact_key,
    scaled,
)
from solar_core.engine.async_calls import AsyncCalls
from solar_core.engine.core import MemoryCore
from solar_core.engine.events import Subscribers
from solar_core.engine.extraction import Extraction, offer_extracted
from solar_core.engine.inputs import input_vector, resolve_for_memory
from solar_core.engine.lifecycle import Lifecycle
from solar_core.engine.memory_state import MemoryCopies
from solar_core.engine.steps import (
    Clearing,
    LocalRunner,
    Lookup,
    Offer,
    Rating,
    Removal,
    Resizing,
    Step,
    StepRunner,
)
from solar_core.engine.views import MemoryViews
from solar_core.policies.admission import AdmissionPolicy
from solar_core.policies.admission.evaluator_gate import Evaluator, EvaluatorGate
from solar_core.policies.deletion import DeletionPolicy
from solar_core.policies.eviction import EvictionPolicy, SalienceEviction
from solar_core.policies.presets import compose
from solar_core.retrieval import ranking
from solar_core.retrieval.filters import Filter, Matcher, compile_filter, left_out, only_matching

__all__ = ["SolarMemory"]


class SolarMemory(MemoryViews, AsyncCalls, MemoryCopies):
    """A bounded, self-curating memory of an agent's experiences.

    One *step* is one agent interaction: :meth:`retrieve` experiences for the prompt, optionally
    rate the answer with :meth:`feedback`, then offer the step's experience with :meth:`add`.

    Args:
        policy: a preset name (:func:`~solar_core.available_policies`); ``None`` is
            ``"solar-adaptive"`` unless ``admission=``/``eviction=`` compose the policy.
        capacity: the most items kept; ``None`` = unbounded.
        embedder: ``None``/``"static"`` (built in), ``"minilm"`` (the ``minilm`` extra),
            ``"hash"`` (for tests) or any :class:`~solar_core.Embedder`.
        dim: the dimension of a memory fed only vectors (``embedding=``): it has no embedder.
        k: default number of hits per retrieval.
        retrieval, min_score: how retrievals rank (``"hybrid"``, ``"vector"``, ``"lexical"``)
            and the floor under their scores: see :mod:`solar_core.retrieval.ranking`.
        seed, rng: the memory's random generator's seed, or the generator; same seed, same run.
        clock: returns the time in seconds; injected for tests.
        admission, eviction: a custom composition instead of a preset.
        evaluator: ``(query, execution, metadata) -> bool | float``: store an offered experience
            only if it accepts it, on top of the policy's admission (an ``EvaluatorGate``).
        deletion: a :class:`~solar_core.policies.deletion.DeletionPolicy` swept after every step.
        importance_weight: ``w`` in the ranking ``cosine * (1 - w + w * importance)``.
        ttl_days: age at which :meth:`Lifecycle.expire` removes context items.
        trace_retention_days: ``{"decision": days, "retrieval": days}`` (30 each by default).
        trace_size: how many recent decisions :meth:`trace` keeps.
        repeats: a text that repeats a stored one (the same words, or a near-identical
            wording: :mod:`solar_core.retrieval.repeats`) refreshes that item instead of taking
            a second slot (``False``: each offer is judged on its own, as in the paper).
        extractor, extract: a LangChain chat model, a LlamaIndex LLM or a callable that turns
            an offered text into facts with keys, offered ``"beside"`` it or ``"instead"`` of
            it (:mod:`solar_core.engine.extraction`; a run-time part, as the evaluator is).
        **policy_params: the preset's policies' parameters (e.g. ``novelty_bonus=0.0``).

    All public methods are thread-safe (one lock). Bad input raises ``ValueError``/``TypeError``
    and leaves the memory exactly as it was.

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

    retrieval = ranking.Setting(ranking.check_retrieval)  # checked when set
    min_score = ranking.Setting(ranking.check_floor)

    def __init__(
        self,
        policy: str | None = None,
        capacity: int | None = 50,
        *,
        embedder: object = None,
        dim: int | None = None,
        k: int = 3,
        retrieval: str = ranking.DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
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
        repeats: bool = True,
        extractor: object = None,
        extract: str = "beside",
        **policy_params: Any,
    ) -> None:
        capacity = check_capacity(capacity)
        self.k = check_k(k)
        self.retrieval, self.min_score = retrieval, min_score  # checked (Setting)
        check_k(trace_size, "trace_size")
        if type(repeats) is not bool:
            raise TypeError(f"repeats must be True or False, got {repeats!r}")
        if not callable(clock):
            raise TypeError(f"clock must be callable, got {type(clock).__name__}")
        importance_weight = check_weight(importance_weight, "importance_weight")
        if admission is None and eviction is None:
            check_misnamed(policy_params, OWN_ARGUMENTS)
        admission, eviction, capacity, self.policy = compose(
            policy, capacity, admission, eviction, evaluator, deletion, policy_params
        )
        self._prepares = isinstance(admission, EvaluatorGate)  # asks its evaluator unlocked
        self._embedder, dim = resolve_for_memory(embedder, dim)
        if isinstance(eviction, SalienceEviction):  # its prior's weights belong to one model
            eviction.use_embedder(self._embedder, dim)
        if rng is not None and seed is not None:
            raise ValueError("pass seed= or rng=, not both")
        self._core = MemoryCore(
            admission,
            eviction,
            capacity=capacity,
            dim=dim,
            clock=clock,
            rng=rng if rng is not None else np.random.default_rng(seed),
            deletion=deletion,
            trace_size=trace_size,
            importance_weight=importance_weight,
            identity=secrets.token_hex(16),  # random: no two memories share it; kept as state
            repeats=repeats,
        )
        self.lifecycle = Lifecycle(
            self._core, ttl_days=ttl_days, retention_days=trace_retention_days
        )
        self._wire()
        self.extraction = Extraction.of(extractor, extract)  # (copies and reopenings: none)

    def _wire(self) -> None:
        """The run-time parts around the state: lock, subscriptions, the step runner."""
        self._lock = threading.RLock()
        self._events = Subscribers()  # a step listener once someone subscribes
        self._core.listeners = [self.lifecycle]  # first: it sets what the others read
        self._runner: StepRunner = LocalRunner()
        self._local = True  # a plain memory: its steps need no runner (the usual case)
        self._mine: Hits | None = None  # the latest retrieval made through this handle
        self.lifecycle.bind(self._core, self._run)
        self._dispatch()

    def embed_query(self, query: str) -> FloatVector:
        """``query`` as the unit vector a retrieval would use (embed once, retrieve often)."""
        row, scale = input_vector(self._embedder, self._core.dim, query, None, "query")
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
        filter: Filter | None = None,
        min_score: float | str | None | EllipsisType = ...,
        as_of: float | datetime | None = None,
        include_superseded: bool = False,
    ) -> Hits:
        """The ``k`` stored items that best match ``query`` (or ``embedding``), best first, as
        the memory's ``retrieval`` ranks them, none below ``min_score`` (``None``: no floor).

        A retrieval event the policy learns from and :meth:`feedback` rates; ``record=False``
        only looks. ``exclude``: ids never to return; ``filter``: only items whose metadata
        match it (:mod:`solar_core.retrieval.filters`, e.g. ``{"topic": "billing"}``).
        Facts with a key (:meth:`add`): only the current item of each key, unless
        ``include_superseded`` (then the past values come after the current ones);
        ``as_of`` (clock seconds or a ``datetime``): the items that were current then.
        """
        if k is None:
            k = self.k
        elif type(k) is not int or k < 1:  # a plain positive int needs no checking
            k = check_k(k)
        if exclude:
            exclude = check_exclude(exclude)
        wanted = None if filter is None else compile_filter(filter)  # checked once per query
        at, superseded = check_as_of(as_of, include_superseded)
        row, scale = input_vector(self._embedder, self._core.dim, query, embedding, "query")
        retrieval, chosen = self.retrieval, self.min_score if min_score is ... else min_score
        floor, gate = ranking.floor_for(chosen, retrieval, query)
        lookup = Lookup(scaled(row, scale), query, k, record, exclude, retrieval, floor, gate)
        lookup.as_of, lookup.superseded = at, superseded
        if wanted is not None:
            return self._filtered(lookup, wanted)
        result: Hits = self._run(lookup if self._local else self._runner.check(lookup))
        self._mine = result if record else self._mine  # what feedback() rates by default
        return result

    def _filtered(self, lookup: Lookup, wanted: Matcher) -> Hits:
        """Run ``lookup`` leaving out the items ``wanted`` refuses, read under the step's lock."""
        with self._lock:
            self._sync()  # a persisted memory: other processes' items are judged too
            exclude = left_out(self._core.records(True), wanted, lookup.exclude)
            step: Step = replace(lookup, exclude=exclude)
            result: Hits = self._run(step if self._local else self._runner.check(step))
        self._mine = result if lookup.record else self._mine
        return only_matching(result, wanted)  # another process may have stored one meanwhile

    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        retrieval: Hits | int | None = None,
    ) -> None:
        """Rate a retrieval with ``like`` and/or ``score`` in [0, 1]: its items get the reward
        (``like`` as 1/0, else ``score``); ``score`` (else the like) is the step's quality for
        the admission gate; given both, they must agree (a like with ``score >= 0.5``, a dislike
        with ``score <= 0.5``), else a ``ValueError`` and nothing changes. ``retrieval``: the
        :class:`Hits` (or ``retrieval_id``) to rate, by default this object's latest; any of the
        last 1,000, once, of this memory only.
        """
        checked, rated = check_feedback(like, score), self._mine if retrieval is None else retrieval
        if rated is None and not self._local:  # (a plain memory has no other writer: its latest)
            raise ValueError(
                "feedback() rates a retrieval: call retrieve() first (or name one with retrieval=)"
            )
        rating: Step = Rating(*checked, rated)
        self._run(rating if self._local else self._runner.check(rating))

    def add(
        self,
        text: str,
        *,
        embedding: object = None,
        metadata: Mapping[str, Any] | None = None,
        item_id: str | None = None,
        category: str = "context",
        valid_until: float | None = None,
        update: bool = False,
        key: str | None = None,
    ) -> Decision:
        """Offer this step's experience; the policy decides whether to store it. Ends the step.

        ``category`` (``"identity"``, ``"knowledge"``, ``"context"``) sets its importance and
        lifecycle; ``valid_until`` (a clock time): when it expires. A stored ``item_id`` with the
        same text stores nothing (reason ``"already stored"``: a retry is safe); with another
        text it is an error, unless ``update=True`` replaces the item in one step. ``key`` (or
        ``metadata["key"]``) names the fact it states (``"alice/home"``); a repeat refreshes the
        stored text: see "Facts that stay current" in the guide."""
        text = check_text(text)
        meta = check_offer(metadata, item_id, category, valid_until, update)
        given: dict[str, Any] = {"item_id": item_id, "category": category}
        given.update(valid_until=valid_until, update=update, key=key, embedding=embedding)
        plain = key is meta.get("key") is None and not update and embedding is None  # no fact yet
        if self.extraction is not None and plain:
            return offer_extracted(partial(self._offer, given=given), self.extraction, text, meta)
        return self._offer(text, meta, given)

    def _offer(
        self, text: str, metadata: dict[str, Any], given: dict[str, Any], **more: Any
    ) -> Decision:
        """One checked offer: ``add``'s arguments ``given``, as ``more`` changes them."""
        given = {**given, **more}
        key, embedding = fact_key(given["key"], metadata), given["embedding"]
        embedded = text if embedding is None else None  # (the text is checked: by add)
        row, scale = input_vector(self._embedder, self._core.dim, embedded, embedding, "text")
        made = Offer(text, row, scale, metadata, given["item_id"], given["category"])
        made.valid_until, made.update, made.key = given["valid_until"], given["update"], key
        made.extraction = given.get("extraction")
        offer: Step = made if self._local else self._runner.check(made)
        assert isinstance(offer, Offer)
        if self._prepares:  # outside the lock: it may call an LLM
            gate = cast(EvaluatorGate, self._core.admission)
            offer = replace(offer, prepared=gate.prepare(text, copy_metadata(offer.metadata)))
        return cast(Decision, self._run(offer))

    def remove(self, item_id: str) -> None:
        """Delete ``item_id`` now (not counted as an eviction)."""
        self._run(Removal(item_id))

    def clear(self) -> None:
        """Remove every item and reset learned policy state and counters."""
        self._run(Clearing())
        self._mine = None  # its retrievals are gone with it

    def resize(self, capacity: int) -> list[Decision]:
        """Hold at most ``capacity`` items from now on: growing keeps every item, shrinking
        evicts by the policy, each eviction traced (reason ``"resized to <capacity>"``) and
        returned; what was learned of the items that stay is kept. (A stored scope's memory
        is resized by its store: ``store.resize``.)"""
        capacity = check_k(capacity, "capacity")
        if not self._local:
            raise TypeError(
                "a stored scope's capacity is changed by its store, in one transaction: "
                "store.resize(scope, capacity) (MemoryStore.resize)"
            )
        return cast(list[Decision], self._run(Resizing(capacity)))

    def _run(self, step: Step) -> Any:
        """Run ``step`` under the lock, then tell the subscribers what it deleted and stored
        (once it is complete: a callback that raises cannot undo it)."""
        events = self._events
        with self._lock:
            if not events.active:  # the usual case: nothing to tell
                if self._local:
                    return self._appliers[type(step)](step)
                return self._runner.run(step, self.apply)
            try:
                result = self._runner.run(step, self.apply)
            finally:
                events.tell_deletions()
            if type(step) is Offer and result.admitted:
                stored = events.last_stored
                if stored is not None and stored[0] == result.item_id:
                    meta = copy_metadata(step.metadata)  # the subscriber's own to change
                    events.tell_stored(result.item_id, step.text, stored[1], meta)
            return result

    def apply(self, step: Step) -> Any:
        """Apply a checked step now, under the lock, without the runner (what runners call)."""
        applier = self._appliers.get(type(step))
        if applier is None:
            raise TypeError(f"not a step: {step!r}")
        return applier(step)

    def _dispatch(self) -> None:  # who applies each kind of step: one look-up per step
        core, lifecycle = self._core, self.lifecycle
        self._appliers: dict[type, Callable[[Any], Any]] = {
            Lookup: core.retrieve,
            Offer: core.offer,
            Rating: core.rate,
            Removal: lambda step: core.remove(step.item_id),
            Clearing: lambda step: core.clear(),
            Resizing: lambda step: core.resize(step.capacity),
            **lifecycle.appliers(),  # its sweeps and renewals
        }

    # -- for wrappers (persistence): the parts around the state (their getters: MemoryViews) --
    def use_runner(self, runner: StepRunner) -> None:
        """Run every later step through ``runner`` (a :class:`MemoryStore`'s journal)."""
        self._runner = runner
        self._local = isinstance(runner, LocalRunner)

    def take_state(self, donor: SolarMemory) -> None:
        """Take ``donor``'s state in place (adapters keep this object); run-time parts stay."""
        core = donor._core
        core.listeners, core.clock = self._core.listeners, self._core.clock  # subscribers, journal
        self._core = core
        self.policy, self._prepares, self._embedder = donor.policy, donor._prepares, donor._embedder
        self.lifecycle.take_state(donor.lifecycle, core)
        self._dispatch()


#: SolarMemory's own keyword arguments, for telling a misspelt one (not self, **policy_params)
OWN_ARGUMENTS = list(inspect.signature(SolarMemory.__init__).parameters)[1:-1]
