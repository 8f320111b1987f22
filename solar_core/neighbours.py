"""Incrementally maintained nearest-neighbour similarities between stored items."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from .store import VectorStore

NEG_INF = np.float32(-np.inf)


class NeighbourIndex:
    """For every stored item, the cosine similarities of its ``k`` nearest other items.

    SOLAR's eviction novelty (mean cosine to the 3 nearest other items) and SOLAR-A's diversity
    (1 - cosine to the nearest other item) are read at every eviction. Recomputing them means a
    ``K x K`` product per eviction (0.1 ms at K=100, seconds at K=10,000); keeping them up to date
    costs one product per insert (which the admission gate computes anyway) plus one row per item
    whose neighbour left. Rows with fewer than ``k`` other items hold ``-inf`` in the spare columns.
    """

    def __init__(self, k: int, slots: int) -> None:
        self.k = k
        self.sim = np.full((slots, k), NEG_INF, dtype=np.float32)
        self.idx = np.full((slots, k), -1, dtype=np.int64)

    def grow(self, slots: int) -> None:
        extra = slots - self.sim.shape[0]
        if extra > 0:
            self.sim = np.vstack([self.sim, np.full((extra, self.k), NEG_INF, dtype=np.float32)])
            self.idx = np.vstack([self.idx, np.full((extra, self.k), -1, dtype=np.int64)])

    def clear(self) -> None:
        self.sim.fill(NEG_INF)
        self.idx.fill(-1)

    def on_insert(
        self, store: VectorStore, slot: int, sims: npt.NDArray[np.float32] | None
    ) -> None:
        """Add ``slot`` (already active in ``store``) given its similarities to every slot."""
        high = store.high_water
        s = np.full(high, NEG_INF, dtype=np.float32)
        if sims is None:
            s[:] = store.matrix[:high] @ store.matrix[slot]
        else:
            n = min(len(sims), high)
            s[:n] = sims[:n]
        # Precomputed similarities predate any eviction this step: mask every empty slot, and the
        # slot itself (it may have held the evicted item).
        s[~store.active_mask] = NEG_INF
        s[slot] = NEG_INF
        # The new item's own row.
        self.sim[slot] = NEG_INF
        self.idx[slot] = -1
        count = min(self.k, len(store) - 1)
        if count > 0:
            top = np.argpartition(-s, count - 1)[:count]
            self.sim[slot, :count] = s[top]
            self.idx[slot, :count] = top
        # Every other row whose worst neighbour is farther than the new item takes it instead.
        worst_col = self.sim[:high].argmin(axis=1)
        worst = self.sim[np.arange(high), worst_col]
        rows = np.flatnonzero(s > worst)
        self.sim[rows, worst_col[rows]] = s[rows]
        self.idx[rows, worst_col[rows]] = slot

    def on_remove(self, store: VectorStore, slot: int) -> None:
        """Forget ``slot`` (already inactive in ``store``); recompute the rows that listed it."""
        self.sim[slot] = NEG_INF
        self.idx[slot] = -1
        high = store.high_water
        rows = np.flatnonzero((self.idx[:high] == slot).any(axis=1))
        if len(rows) == 0:
            return
        sims = store.matrix[rows] @ store.matrix[:high].T
        sims[:, ~store.active_mask] = NEG_INF
        sims[np.arange(len(rows)), rows] = NEG_INF
        self.sim[rows] = NEG_INF
        self.idx[rows] = -1
        count = min(self.k, len(store) - 1)
        if count > 0:
            top = np.argpartition(-sims, count - 1, axis=1)[:, :count]
            self.sim[rows, :count] = sims[np.arange(len(rows))[:, None], top]
            self.idx[rows, :count] = top

    def mean_similarity(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """Mean similarity to the (up to ``k``) nearest others; NaN for an item with none."""
        rows = self.sim[slots]
        if len(slots) > self.k:  # every row is full: the common case, no masking needed
            full: npt.NDArray[np.float64] = rows.mean(axis=1, dtype=np.float64)
            return full
        valid = np.isfinite(rows)
        count = valid.sum(axis=1)
        total = np.where(valid, rows, 0.0).sum(axis=1, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out: npt.NDArray[np.float64] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        return out

    def max_similarity(self, slots: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """Similarity to the nearest other item; ``-inf`` for an item with none."""
        out: npt.NDArray[np.float64] = self.sim[slots].max(axis=1).astype(np.float64)
        return out

    def check(self, store: VectorStore) -> None:
        """Compare against a brute-force recomputation (tests call this; O(K^2 d))."""
        slots = store.active_slots()
        if len(slots) == 0:
            return
        matrix = store.matrix[slots]
        full = matrix @ matrix.T
        np.fill_diagonal(full, NEG_INF)
        count = min(self.k, len(slots) - 1)
        for row, slot in enumerate(slots):
            want = np.sort(full[row])[::-1][:count]
            have = np.sort(self.sim[slot][np.isfinite(self.sim[slot])])[::-1]
            if len(have) != count or not np.allclose(want, have, atol=1e-5):
                raise AssertionError(f"neighbour row {slot}: have {have}, want {want}")
            listed = self.idx[slot][self.idx[slot] >= 0]
            if not store.active_mask[listed].all():
                raise AssertionError(f"neighbour row {slot} lists an inactive slot")
