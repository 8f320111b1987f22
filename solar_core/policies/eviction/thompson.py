"""SOLAR's posterior-guided eviction: Thompson sampling over Beta beliefs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from solar_core.basics.state import MOST_COUNT, StateReader, register_part
from solar_core.basics.validation import (
    MAX_NEIGHBOURS,
    check_k,
    check_nonnegative,
    check_positive,
    check_size,
)
from solar_core.policies.admission.base import params_of, plain
from solar_core.policies.beta_posterior import BetaPosterior
from solar_core.policies.eviction.base import (
    F64,
    Cosines,
    EvictionPolicy,
    Query,
    Rows,
    Selection,
    Slots,
    Victim,
    lowest,
)


@register_part
class ThompsonEviction(EvictionPolicy):
    """Evict the lowest ``sample ~ Beta(alpha, beta)`` plus ``novelty_bonus`` x novelty (SOLAR
    §4.3; constants of its reference implementation). An item starts at Beta(2, 1); a retrieval
    adds 1 to its alpha, every ``decay_every``-th adds ``decay`` to the beta of every item it
    did not return; a rating ``r`` adds ``r`` to alpha and ``1 - r`` to beta. Novelty:
    ``clip(1 - mean cosine to the 3 nearest others, 0, 1)``, 0.5 for a lone item."""

    name = "thompson"
    # Evidence adds at most a few units a step: a larger parameter is forged (and numpy's Beta
    # sampler returns NaN for some huge ones)
    rows = {
        "alpha": Rows("_alpha", np.float64, None, float(MOST_COUNT)),
        "beta": Rows("_beta", np.float64, None, float(MOST_COUNT)),
    }
    _alpha: F64
    _beta: F64
    counters = ("retrievals",)

    def __init__(
        self,
        prior_alpha: float = 2.0,
        prior_beta: float = 1.0,
        decay_every: int = 5,
        decay: float = 0.05,
        novelty_bonus: float = 0.3,
        novelty_neighbours: int = 3,
    ) -> None:
        super().__init__()
        check_positive(prior_alpha=prior_alpha, prior_beta=prior_beta)
        check_nonnegative(decay=decay, novelty_bonus=novelty_bonus)
        check_k(decay_every, "decay_every")
        check_size(novelty_neighbours, "novelty_neighbours", MAX_NEIGHBOURS)
        self.prior_alpha = prior_alpha
        self.prior_beta = prior_beta
        self.decay_every = decay_every
        self.decay = decay
        self.novelty_bonus = novelty_bonus
        self.neighbours = novelty_neighbours if novelty_bonus > 0 else 0
        self._retrievals = 0

    def params(self) -> dict[str, Any]:
        # Without a bonus the neighbours are not kept (0), and their count changes nothing:
        # the default stands for it.
        neighbours = plain(self.neighbours) if self.novelty_bonus > 0 else 3
        params = params_of(self, "prior_alpha prior_beta decay_every decay novelty_bonus")
        return params | {"novelty_neighbours": neighbours}

    def _read_more(self, reader: StateReader, rows: dict[str, Any]) -> dict[str, Any]:
        hw, active = self.store.high_water, self.store.active_mask
        alpha, beta = rows["_alpha"][:hw][active], rows["_beta"][:hw][active]
        if not ((alpha > 0.0).all() and (beta > 0.0).all()):
            raise reader.fail("alpha and beta must be > 0 for every stored slot")
        return {}

    def on_insert(self, slot: int, step: int) -> None:
        self._alpha[slot] = self.prior_alpha
        self._beta[slot] = self.prior_beta

    def on_retrieve(
        self, slots: Slots, step: int, query: Query = None, cosines: Cosines = None
    ) -> None:
        alpha = self._alpha
        for slot in slots.tolist():  # a few distinct slots: cheaper than fancy indexing
            alpha[slot] += 1.0
        self._retrievals += 1
        if self._retrievals % self.decay_every == 0:
            self._age(slots)

    def _age(self, retrieved: Slots) -> None:
        """``beta += decay`` for every stored item except those this retrieval returned."""
        store = self.store
        high = store.high_water
        if len(store) == high:
            # No empty slot below the high-water mark: age all, put the retrieved ones back
            beta = self._beta[:high]
            kept = beta[retrieved]
            beta += self.decay
            beta[retrieved] = kept
        else:
            idle = store.active_mask.copy()
            idle[retrieved] = False
            self._beta[: len(idle)][idle] += self.decay

    def on_feedback(self, slots: Slots, reward: float) -> None:
        alpha, beta = self._alpha, self._beta
        miss = 1.0 - reward
        for slot in slots.tolist():
            alpha[slot] += reward
            beta[slot] += miss

    def novelty(self, slots: Slots | slice) -> F64:
        """``clip(1 - mean cosine to the nearest others, 0, 1)``; 0.5 for an item alone."""
        index = self.store.neighbours
        if index is None:
            return np.zeros(len(self._alpha[slots]))  # len(slots) fails for a slice
        # In place; maximum/minimum clip exactly as np.clip, without its Python wrappers
        novelty = np.subtract(1.0, index.mean_similarity(slots))
        np.maximum(novelty, 0.0, out=novelty)
        np.minimum(novelty, 1.0, out=novelty)
        if len(novelty) <= index.k:  # more items than k: every item has neighbours, no NaN
            novelty[np.isnan(novelty)] = 0.5
        return novelty

    def _victim(self, step: int, slots: Selection) -> Victim:
        scores = self._rng.beta(self._alpha[slots], self._beta[slots])
        if self.novelty_bonus > 0:
            bonus = self.novelty(slots)
            bonus *= self.novelty_bonus
            scores += bonus
        return lowest(scores, slots)

    def clear(self) -> None:
        super().clear()
        self._retrievals = 0

    def posterior(self, slot: int) -> BetaPosterior:
        """A copy of the item's belief."""
        return BetaPosterior(float(self._alpha[slot]), float(self._beta[slot]))

    def describe(self, slot: int) -> Mapping[str, float]:
        post = self.posterior(slot)
        return {"alpha": post.alpha, "beta": post.beta, "mean": post.mean}

    def check_invariants(self) -> None:
        slots = self.store.active_slots()
        a, b = self._alpha[slots], self._beta[slots]
        if not (np.isfinite(a).all() and np.isfinite(b).all() and (a > 0).all() and (b > 0).all()):
            raise AssertionError("a Beta posterior has a non-positive or non-finite parameter")
