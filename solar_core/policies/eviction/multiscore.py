"""SOLAR-A's heuristic multi-score eviction."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import MOST_COUNT, register_part
from solar_core.basics.validation import check_nonnegative, check_positive
from solar_core.policies.admission.base import plain
from solar_core.policies.eviction.base import (
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
class MultiScoreEviction(EvictionPolicy):
    """Evict the lowest ``0.4 * exp(-age / 100) + 0.3 * freq + 0.3 * diversity`` (SOLAR-A):
    steps since the last retrieval or insert, retrievals per step so far, ``clip(1 - cosine to
    the nearest other item, 0, 1)`` (1 alone)."""

    name = "multiscore"
    #: the step of its latest retrieval or insert, its retrievals
    rows = {
        "last": Rows("_last", np.int64, 0, MOST_COUNT),
        "count": Rows("_count", np.int64, 0, MOST_COUNT),
    }
    _last: npt.NDArray[np.int64]
    _count: npt.NDArray[np.int64]

    def __init__(
        self,
        recency_weight: float = 0.4,
        frequency_weight: float = 0.3,
        diversity_weight: float = 0.3,
        age_scale: float = 100.0,
    ) -> None:
        super().__init__()
        check_nonnegative(
            recency_weight=recency_weight,
            frequency_weight=frequency_weight,
            diversity_weight=diversity_weight,
        )
        check_positive(age_scale=age_scale)
        self.weights = (recency_weight, frequency_weight, diversity_weight)
        self.age_scale = age_scale
        self.neighbours = 1 if diversity_weight > 0 else 0

    def params(self) -> dict[str, Any]:
        names = ("recency_weight", "frequency_weight", "diversity_weight")
        weights = {name: plain(w) for name, w in zip(names, self.weights, strict=True)}
        return weights | {"age_scale": plain(self.age_scale)}

    def on_insert(self, slot: int, step: int) -> None:
        self._last[slot] = step
        self._count[slot] = 0

    def on_retrieve(
        self, slots: Slots, step: int, query: Query = None, cosines: Cosines = None
    ) -> None:
        last, count = self._last, self._count
        for slot in slots.tolist():
            last[slot] = step
            count[slot] += 1

    def _victim(self, step: int, slots: Selection) -> Victim:
        # The formula in in-place ufuncs, with the same roundings in the same order
        w_rec, w_freq, w_div = self.weights
        score = np.subtract(step, self._last[slots], dtype=np.float64)  # age
        score /= -self.age_scale
        np.exp(score, out=score)
        score *= w_rec
        frequency = np.multiply(self._count[slots], w_freq)
        frequency /= max(step, 1)
        score += frequency
        index = self.store.neighbours
        if w_div > 0 and index is not None:
            diversity = np.subtract(1.0, index.max_similarity(slots))
            np.maximum(diversity, 0.0, out=diversity)
            np.minimum(diversity, 1.0, out=diversity)
            diversity *= w_div
            score += diversity
        return lowest(score, slots)

    def describe(self, slot: int) -> Mapping[str, float]:
        return {"last_access_step": float(self._last[slot]), "count": float(self._count[slot])}

    def check_invariants(self) -> None:
        slots = self.store.active_slots()
        if (self._count[slots] < 0).any() or not math.isfinite(float(self._last[slots].sum())):
            raise AssertionError("bad SOLAR-A statistics")
