"""Salience eviction: keep the dialogue turns later questions are most likely to ask about."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from ..admission.base import AdmissionPolicy, Candidate, Verdict
from ..registry import settings, stored
from ..salience import (
    SaliencePrior,
    TurnContext,
    check_prior,
    load_prior,
    prior_for,
    prior_vector,
)
from ..validation import check_nonnegative
from .base import Cosines, EvictionPolicy, Query, Selection, Slots, Victim, grow_array


class SalienceEviction(EvictionPolicy, AdmissionPolicy):
    """``solar-dialogue``: a memory of conversation turns that keeps the turns most likely to be
    asked about, by a :mod:`salience prior <solar_core.salience>` and the ratings it gets.

    Every offered turn gets a **salience**: the prior's log-odds that a later question cites
    it, read from its text, its vector and the turns just before it (so the policy is its own
    admission gate: it must see every offer, stored or not, to know what came before). An
    item's **value** is its salience plus ``feedback_weight * (reward - 0.5)`` for every rated
    retrieval that returned it: a liked answer protects what it was built from, a disliked
    one exposes it.

    - A free slot takes any turn (an empty slot helps no question).
    - A full memory admits a turn iff its salience beats the lowest value held, which then
      leaves (oldest first on ties): once every offer has been seen, the memory holds the most
      salient turns of the conversation, moved by the ratings.
    - Retrievals by incoming turns are *not* credited: which earlier turns a new turn resembles
      says little about which ones questions will cite (measured in docs/BENCHMARKS.md:
      crediting them lowers recall at every size).

    ``prior``: a shipped prior's name (``"dialogue-static"``, ``"dialogue-minilm"``,
    ``"dialogue-text"``), a prior file's path, a :class:`~solar_core.salience.SaliencePrior`,
    or ``None``: the memory picks by its embedder (:func:`~solar_core.salience.prior_for`: the
    static prior, which embeds each turn itself, unless the memory's vectors are MiniLM's; the
    text prior when the policy is bound without being told).

    >>> from solar_core import SolarMemory
    >>> memory = SolarMemory("solar-dialogue", capacity=2, embedder="hash", dim=64, seed=0)
    >>> for turn in ["Ann: Hi Bo!", "Bo: Hey Ann!",
    ...              "Ann: I adopted a beagle named Max in March 2022.", "Bo: Wow, cool!",
    ...              "Ann: My sister moved to Lisbon last week.", "Bo: Haha, nice."]:
    ...     _ = memory.add(turn)
    >>> for text in sorted(item.text for item in memory.items()):
    ...     print(text)
    Ann: I adopted a beagle named Max in March 2022.
    Ann: My sister moved to Lisbon last week.
    >>> memory.trace()[-1].reason
    'salience <= lowest value'
    """

    #: its state as a snapshot holds it (attribute -> stored name, see solar_core.registry)
    snapshot_names: ClassVar[dict[str, str]] = stored(
        "_key _pending _seq _value _version _weakest context feedback_weight prior"
    )
    #: the attributes that hold its parameters: a stored scope's come from its recorded settings
    setting_names: ClassVar[tuple[str, ...]] = settings("feedback_weight")
    #: its per-slot arrays, grown by :meth:`reserve` with zeros (a snapshot leaves out their
    #: trailing zero rows, and a loaded memory reserves them again)
    slot_arrays: ClassVar[dict[str, float]] = {"_value": 0, "_key": 0}

    name = "salience"
    # State that a new memory holds as None, and what else it may hold: a snapshot is checked
    # against these annotations (see solar_core.registry.state_class)
    _pending: tuple[int, float] | None
    _weakest: tuple[int, Victim] | None
    score_names = ("salience", "lowest")  # a turn's salience against the lowest value held

    def __init__(
        self, prior: str | SaliencePrior | None = None, *, feedback_weight: float = 2.0
    ) -> None:
        super().__init__()
        check_nonnegative(feedback_weight=feedback_weight)
        if prior is not None and not isinstance(prior, SaliencePrior):
            if not isinstance(prior, str):
                raise TypeError(
                    f"prior must be a prior's name or path, or a SaliencePrior, got {prior!r}"
                )
            prior = load_prior(prior)  # a bad name fails here, before any memory exists
        self.prior: SaliencePrior | None = prior
        self.feedback_weight = float(feedback_weight)
        self.context = TurnContext(dim=0)
        self._value = np.zeros(0)
        # value + 1e-9 * insert serial: the lowest is the victim, the oldest insert among equals
        # (the nudge is far below any real gap); kept up to date so a victim is one argmin
        self._key = np.zeros(0)
        self._seq = 0
        self._pending = None  # (serial it is for, salience)
        self._version = 0  # moves whenever a value does: the named victim is then stale
        self._weakest = None

    # -- wiring ---------------------------------------------------------------------------------
    def use_embedder(self, embedder: object, dim: int) -> None:
        """Pick the prior for the memory's embedder (if none was given), before binding."""
        if self.prior is None:
            self.prior = prior_for(embedder, dim)

    def bind(self, store: Any, rng: np.random.Generator) -> None:
        super().bind(store, rng)
        if self.prior is None:
            self.prior = load_prior("dialogue-text")
        check_prior(self.prior, self.store.dim)
        own = self.prior.dim if self.prior.own_vectors else None  # its vectors, not the store's
        self.context = TurnContext(dim=own or self.store.dim)

    def reserve(self, slots: int) -> None:
        self._value = grow_array(self._value, slots, 0.0)
        self._key = grow_array(self._key, slots, 0.0)

    def _salience(self, text: str | None, vector: Any) -> float:
        assert self.prior is not None  # bound
        text = "" if text is None else text
        if self.prior.own_vectors:  # the built-in embedder's vector, whatever the memory's
            vector = prior_vector(text)
        score = self.prior.score(text, vector, self.context)
        self.context.push(text, vector if self.prior.reads_vectors else None)
        return score

    # -- admission ------------------------------------------------------------------------------
    def _admit(self, candidate: Candidate) -> Verdict:
        vector = candidate.vector if self.prior is not None and self.prior.reads_vectors else None
        salience = self._salience(candidate.text, vector)  # every offer is context for the next
        self._pending = (self._seq + 1, salience)
        if candidate.refused is not None:
            return Verdict(False, candidate.refused)
        if candidate.capacity is None or candidate.size < candidate.capacity:
            return Verdict(True, "free slot", None, salience, None)
        victim = candidate.victim
        if victim is None or victim.score is None:  # pragma: no cover - a full memory has one
            return Verdict(True, "free slot", None, salience, None)
        if salience > victim.score:
            return Verdict(True, "salience > lowest value", None, salience, victim.score)
        return Verdict(False, "salience <= lowest value", None, salience, victim.score)

    # -- events ---------------------------------------------------------------------------------
    def on_retrieve(
        self, slots: Slots, step: int, query: Query = None, cosines: Cosines = None
    ) -> None:
        """Retrievals alone teach nothing here (see the class docstring)."""

    def on_feedback(self, slots: Slots, reward: float) -> None:
        if len(slots) and self.feedback_weight:
            step = self.feedback_weight * (reward - 0.5)
            self._value[slots] += step
            self._key[slots] += step
            self._version += 1

    def on_insert(self, slot: int, step: int) -> None:
        self._version += 1
        self._seq += 1
        pending, self._pending = self._pending, None
        if pending is not None and pending[0] == self._seq:
            salience = pending[1]
        else:  # composed by hand behind another gate: the stored turn is all it sees
            text = self.store.payload_at(slot).text
            vector = self.store.matrix[slot]
            salience = self._salience(
                text, vector if self.prior and self.prior.reads_vectors else None
            )
        self._value[slot] = salience
        self._key[slot] = salience + 1e-9 * self._seq

    def on_remove(self, slot: int, evicted: bool) -> None:
        self._version += 1
        self._value[slot] = 0.0
        self._key[slot] = 0.0

    def victim(self, step: int) -> Victim:
        cached = self._weakest  # no value moved since it was named: the same one
        if cached is not None and cached[0] == self._version:
            return cached[1]
        victim = super().victim(step)
        self._weakest = (self._version, victim)
        return victim

    def _victim(self, step: int, slots: Selection) -> Victim:
        pick = int(self._key[slots].argmin())
        slot = pick if isinstance(slots, slice) else int(slots[pick])
        return Victim(slot, float(self._value[slot]))

    def clear(self) -> None:
        self._value[:] = 0.0
        self._key[:] = 0.0
        self._pending = None
        self._version += 1
        self.context = TurnContext(dim=self.context.dim)

    # -- inspection -----------------------------------------------------------------------------
    def describe(self, slot: int) -> Mapping[str, float]:
        return {"value": float(self._value[slot])}

    def check_invariants(self) -> None:
        slots = self.store.active_slots()
        if not np.isfinite(self._value[slots]).all():
            raise AssertionError("non-finite salience value")
        nudge = 1e-9 * (self._seq + 1)  # the largest tie-break any key holds
        if not np.allclose(self._key[slots], self._value[slots], rtol=0.0, atol=nudge):
            raise AssertionError("salience victim keys disagree with the values")
