"""Salience eviction: keep the dialogue turns later questions are most likely to ask about."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from solar_core.basics.state import State, StateReader, register_part
from solar_core.basics.validation import check_nonnegative, check_positive
from solar_core.policies.admission.base import AdmissionPolicy, Candidate, Verdict, params_of
from solar_core.policies.eviction.base import (
    F64,
    EvictionPolicy,
    Rows,
    Selection,
    Slots,
    Victim,
    argmin_slot,
    read_slot,
)
from solar_core.policies.salience import (
    PRIORS,
    RECENT,
    SaliencePrior,
    TurnContext,
    check_prior,
    load_prior,
    prior_for,
    prior_vector,
)


@register_part
class SalienceEviction(EvictionPolicy, AdmissionPolicy):
    """``solar-dialogue``: keep the conversation turns most likely to be asked about
    (docs/DESIGN.md, "solar-dialogue and the salience prior"). An offered turn's salience is
    the prior's log-odds that a later question cites it; an item's value is that plus
    ``feedback_weight`` x its mean rating less :attr:`baseline`, shrunk by ``rating_strength``
    pseudo-ratings (a retrieval's n-th item gets share ``1/n``). A full memory admits a turn
    iff its salience beats the lowest value held, which leaves (oldest first on ties).

    ``prior``: a shipped prior's name, a prior file's path, a
    :class:`~solar_core.policies.salience.SaliencePrior` or its JSON document, or ``None``
    (:func:`~solar_core.policies.salience.prior_for`'s).

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

    name = "salience"
    # key: value + 1e-9 * insert serial (the victim: one argmin); credit, shares: rank-weighted
    # sums of (rating - baseline) and of shares; plain: the key without its rating part
    rows = {
        name: Rows("_" + name, np.float64, 0.0 if name == "shares" else None)
        for name in ("value", "key", "credit", "shares", "plain")
    }
    _value: F64
    _key: F64
    _credit: F64
    _shares: F64
    _plain: F64
    counters = ("seq", "version", "ratings")
    _pending: tuple[int, float] | None
    _weakest: tuple[int, Victim] | None
    score_names = ("salience", "lowest")  # a turn's salience against the lowest value held

    def __init__(
        self,
        prior: str | SaliencePrior | Mapping[str, Any] | None = None,
        *,
        feedback_weight: float = 2.0,
        rating_strength: float = 4.0,
    ) -> None:
        super().__init__()
        check_nonnegative(feedback_weight=feedback_weight)
        check_positive(rating_strength=rating_strength)  # an unrated item's share is 0: 0/0
        if isinstance(prior, Mapping):  # a prior's document, as params() gives one
            prior = SaliencePrior.from_json(prior, "SalienceEviction's prior")
        if prior is not None and not isinstance(prior, SaliencePrior):
            if not isinstance(prior, str):
                raise TypeError(
                    f"prior must be a prior's name or path, or a SaliencePrior, got {prior!r}"
                )
            prior = load_prior(prior)  # a bad name fails here, before any memory exists
        self.prior: SaliencePrior | None = prior
        self.feedback_weight = float(feedback_weight)
        self.rating_strength = float(rating_strength)
        self.context = TurnContext(dim=0)
        self._seq = 0
        self._pending = None  # (serial it is for, salience)
        self._version = 0  # moves whenever a value does: the named victim is then stale
        self._weakest = None
        self._ratings = 0  # the memory's count and sum of ratings (the baseline: their mean)
        self._rating_sum = 0.0
        self._moved = 0  # decisions the ratings changed
        self._credited = False  # whether any rating moved a value (before: nothing to compare)

    def params(self) -> dict[str, Any]:
        """The prior in use by name if shipped, else as its JSON document (a file may be gone
        when the policy is rebuilt); ``feedback_weight`` and ``rating_strength``."""
        return {"prior": self._prior_param()} | params_of(self, "feedback_weight rating_strength")

    def _prior_param(self) -> str | dict[str, Any] | None:
        prior = self.prior
        if prior is None:
            return None
        if prior.name in PRIORS:
            shipped = load_prior(prior.name)
            if shipped is prior or shipped.to_json() == prior.to_json():
                return prior.name
        return prior.to_json()

    def _more_state(self) -> State:
        """The salience ``pending`` for its insert, the ``weakest`` slot named since the values
        last moved (or nulls), the turn context (``recent`` vectors in ring order)."""
        context, pending, weakest = self.context, self._pending, self._weakest
        return {
            "rating_sum": self._rating_sum,
            "moved": self._moved,
            "credited": self._credited,
            "pending": pending[1] if pending is not None and pending[0] == self._seq + 1 else None,
            "weakest": (
                weakest[1].slot if weakest is not None and weakest[0] == self._version else None
            ),
            "previous": context.previous,
            "recent": context.vectors[: context.count].copy(),
            "head": context.head,
            "last": context.last,
        }

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        store = self.store
        value, key, credit, shares, plain_keys = (
            rows[name] for name in ("_value", "_key", "_credit", "_shares", "_plain")
        )
        seq, version, ratings = rows["_seq"], rows["_version"], rows["_ratings"]
        moved = reader.integer("moved")
        rating_sum = reader.number("rating_sum", 0.0, float(ratings))
        credited = reader.flag("credited")
        slots = store.active_slots()
        if not credited and (credit.any() or plain_keys.any()):
            raise reader.fail("credit and plain must be 0 until a rating moved a value")
        rated = self.feedback_weight * credit[slots] / (shares[slots] + self.rating_strength)
        if credited and not np.allclose(plain_keys[slots], key[slots] - rated, rtol=0.0, atol=1e-9):
            raise reader.fail("plain must be key less the rating part")
        if not np.allclose(key[slots], value[slots], rtol=0.0, atol=1e-9 * (seq + 1)):
            raise reader.fail("key must be value plus a tie-break below 1e-9 * (seq + 1)")
        pending = reader.number("pending", optional=True)
        weakest = read_slot(reader, "weakest", store)
        previous = reader.text("previous", optional=True)
        dim = self.context.dim
        recent = reader.array("recent", np.float32, (None, dim), lo=-1.5, hi=1.5)  # unit vectors
        count = len(recent)
        head = reader.integer("head", 0, RECENT - 1)
        last = reader.integer("last", -1, RECENT - 1)
        if (
            count > RECENT
            or (count < RECENT and head != count)
            or last not in (-1, (head - 1) % RECENT)
            or (count == 0 and last != -1)
            or (previous is None and count)
        ):
            raise reader.fail(
                f"the turn context's ring is inconsistent: {count} rows, head {head}, last {last}"
            )
        context = TurnContext(dim=dim, previous=previous, count=count, head=head, last=last)
        context.vectors[:count] = recent
        return {
            "_rating_sum": rating_sum,
            "_moved": moved,
            "_credited": credited,
            "_pending": None if pending is None else (seq + 1, pending),
            "_weakest": (
                None if weakest is None else (version, Victim(weakest, float(value[weakest])))
            ),
            "context": context,
        }

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

    @property
    def baseline(self) -> float:
        """This memory's usual rating: the mean of every rating it got, 0.5 before any."""
        return (self._rating_sum + 0.5) / (self._ratings + 1)

    def rating_part(self, slots: Selection) -> Any:
        """What ratings add to the value of ``slots``."""
        return (
            self.feedback_weight
            * self._credit[slots]
            / (self._shares[slots] + self.rating_strength)
        )

    def _salience(self, text: str | None, vector: Any) -> float:
        assert self.prior is not None  # bound
        text = "" if text is None else text
        if self.prior.own_vectors:  # the built-in embedder's vector, whatever the memory's
            vector = prior_vector(text)
        score = self.prior.score(text, vector, self.context)
        self.context.push(text, vector if self.prior.reads_vectors else None)
        return score

    def _admit(self, candidate: Candidate) -> Verdict:
        verdict = self._judge(candidate)
        if not verdict.admitted:  # no insert follows: a keyed or updated one must not read it
            self._pending = None
        return verdict

    def _judge(self, candidate: Candidate) -> Verdict:
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
        admitted = salience > victim.score
        reason = "salience > lowest value" if admitted else "salience <= lowest value"
        if self._ratings:
            reason += self._what_ratings_changed(admitted, victim.slot, salience)
        return Verdict(admitted, reason, None, salience, victim.score)

    def _what_ratings_changed(self, admitted: bool, slot: int, salience: float) -> str:
        """A note for the reason if the decision without ratings differs (counted)."""
        if not self._credited:  # no rating has moved a value yet
            return ""
        slots = self.store.evictable_selection()
        unrated = argmin_slot(self._plain[slots], slots)
        part = self.feedback_weight * self._credit.item(unrated)
        part /= self._shares.item(unrated) + self.rating_strength
        would = salience > self._value.item(unrated) - part
        if admitted == would and (not admitted or slot == unrated):
            return ""
        self._moved += 1
        if admitted and would:
            return "; ratings chose the victim"
        return "; ratings made room" if admitted else "; ratings kept it out"

    def on_feedback(self, slots: Slots, reward: float) -> None:
        # Centred on the baseline: uniform ratings say nothing about one item against another
        deviation = reward - self.baseline
        self._ratings += 1
        self._rating_sum += reward
        if not len(slots):
            return
        credit, shares, value, key = self._credit, self._shares, self._value, self._key
        if not deviation and not self._credited:
            for n, slot in enumerate(slots.tolist()):  # one more rating at the baseline:
                shares[slot] += 1.0 / (n + 1)  # every part stays 0
            return
        if not self._credited:  # every part was 0 until now: the keys are the plain keys
            self._credited, self._plain = True, self._key.copy()
        weight, strength = self.feedback_weight, self.rating_strength
        for n, slot in enumerate(slots.tolist()):  # (a few hits: Python floats cost less)
            share = 1.0 / (n + 1)
            had, weighed = credit.item(slot), shares.item(slot)
            credit[slot] = now = had + share * deviation
            shares[slot] = weighs = weighed + share
            moved = weight * (now / (weighs + strength) - had / (weighed + strength))
            value[slot] += moved  # values and keys hold the rating part: one argmin names
            key[slot] += moved  # the victim, as without ratings
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
        if self._credited:
            self._plain[slot] = self._key[slot]

    def on_remove(self, slot: int, evicted: bool) -> None:
        self._version += 1
        self._weakest = None  # stale now (and a loaded state holds none)
        self._empty(slot)

    def victim(self, step: int) -> Victim:
        cached = self._weakest  # no value moved since it was named: the same one
        if cached is not None and cached[0] == self._version:
            return cached[1]
        victim = super().victim(step)
        self._weakest = (self._version, victim)
        return victim

    def _victim(self, step: int, slots: Selection) -> Victim:
        slot = argmin_slot(self._key[slots], slots)
        return Victim(slot, float(self._value[slot]))

    def clear(self) -> None:
        self._empty(slice(None))
        self._ratings, self._rating_sum, self._moved, self._credited = 0, 0.0, 0, False
        self._pending = None
        self._version += 1
        self.context = TurnContext(dim=self.context.dim)

    def describe(self, slot: int) -> Mapping[str, float]:
        rated = float(self.rating_part(np.array([slot]))[0])
        return {"value": float(self._value[slot]), "ratings": rated}

    def rating_effect(self) -> dict[str, float | int]:
        """The ratings, their baseline, and the admission decisions they changed."""
        return {
            "ratings": self._ratings,
            "baseline": self.baseline,
            "decisions_changed": self._moved,
        }

    def check_invariants(self) -> None:
        slots = self.store.active_slots()
        if not np.isfinite(self._value[slots]).all():
            raise AssertionError("non-finite salience value")
        if not (np.isfinite(self._credit[slots]).all() and (self._shares[slots] >= 0).all()):
            raise AssertionError("non-finite or negative rating credit")
        if self._credited and not np.allclose(
            self._plain[slots], self._key[slots] - self.rating_part(slots), rtol=0.0, atol=1e-9
        ):
            raise AssertionError("the keys without ratings disagree with the rating parts")
        nudge = 1e-9 * (self._seq + 1)  # the largest tie-break any key holds
        if not np.allclose(self._key[slots], self._value[slots], rtol=0.0, atol=nudge):
            raise AssertionError("salience victim keys disagree with the values")
