"""Incrementally maintained nearest-neighbour similarities between stored items."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import State, StateReader


class Rows(Protocol):
    """What the index reads of its :class:`~solar_core.retrieval.item_table.ItemTable` (not
    imported: the table owns the index)."""

    matrix: npt.NDArray[np.float32]
    high_water: int

    def __len__(self) -> int: ...

    @property
    def active_mask(self) -> npt.NDArray[np.bool_]: ...

    def active_slots(self) -> npt.NDArray[np.int64]: ...


NEG_INF = np.float32(-np.inf)


class NeighbourIndex:
    """For every stored item, the cosine similarities of its ``k`` nearest other items (what
    eviction's novelty and diversity read), kept up to date per insert and removal rather than
    a ``K x K`` product per eviction. Spare columns hold ``-inf`` and slot ``-1``."""

    def __init__(self, k: int, slots: int) -> None:
        self.k = k
        self.sim = np.full((slots, k), NEG_INF, dtype=np.float32)
        self.idx = np.full((slots, k), -1, dtype=np.int64)

    def grow(self, slots: int) -> None:
        # each array by its own length (a snapshot may leave out each one's unused rows apart)
        self.sim = np.vstack([self.sim, np.full((slots - len(self.sim), self.k), NEG_INF, "f4")])
        self.idx = np.vstack([self.idx, np.full((slots - len(self.idx), self.k), -1, np.int64)])

    # on_insert/on_remove run at every insert and eviction: ndarray methods, not np.* wrappers,
    # and no masking when every slot below the high-water mark is used.

    def on_insert(self, store: Rows, slot: int, sims: npt.NDArray[np.float32] | None) -> None:
        """Add ``slot`` (already active in ``store``) given its similarities to every slot."""
        high = store.high_water
        if sims is None:
            used = store.matrix if high == len(store.matrix) else store.matrix[:high]
            s = used.dot(store.matrix[slot])  # the gemv of `@`, bit for bit
        elif len(sims) >= high:
            s = sims[:high].copy()
        else:
            s = np.full(high, NEG_INF, dtype=np.float32)
            s[: len(sims)] = sims
        # Precomputed similarities predate this step's eviction: mask empty slots and this one.
        if len(store) < high:
            s[~store.active_mask] = NEG_INF
        s[slot] = NEG_INF
        self._nearest(np.array([slot]), s[None, :], len(store))
        # Every other row whose worst neighbour is farther than the new item takes it instead.
        sim = self.sim[:high]
        worst_col = sim.argmin(axis=1)
        worst = sim[np.arange(high), worst_col]
        rows = (s > worst).nonzero()[0]
        if len(rows):
            cols = worst_col[rows]
            self.sim[rows, cols] = s[rows]
            self.idx[rows, cols] = slot

    def on_remove(self, store: Rows, slot: int) -> None:
        """Forget ``slot`` (already inactive in ``store``); recompute the rows that listed it."""
        self.sim[slot] = NEG_INF
        self.idx[slot] = -1
        high = store.high_water
        # A row lists a slot at most once: the matches' row numbers are the rows listing it.
        rows = (self.idx[:high] == slot).nonzero()[0]
        if len(rows) == 0:
            return
        sims = store.matrix.take(rows, axis=0).dot(store.matrix[:high].T)
        if len(store) < high:
            sims[:, ~store.active_mask] = NEG_INF
        sims[np.arange(len(rows)), rows] = NEG_INF
        self._nearest(rows, sims, len(store))

    def _nearest(self, rows: npt.NDArray[np.int64], sims: npt.NDArray[np.float32], n: int) -> None:
        """List in ``rows`` their nearest by ``sims`` (a row each) among ``n`` stored items."""
        count = min(self.k, n - 1)
        if count < self.k:  # else every column is overwritten below
            self.sim[rows], self.idx[rows] = NEG_INF, -1
        if count > 0:
            top = (-sims).argpartition(count - 1, axis=1)[:, :count]
            self.sim[rows, :count] = sims[np.arange(len(rows))[:, None], top]
            self.idx[rows, :count] = top

    def mean_similarity(self, slots: npt.NDArray[np.int64] | slice) -> npt.NDArray[np.float64]:
        """Mean similarity to the (up to ``k``) nearest others; NaN for an item with none."""
        rows = self.sim[slots]
        if len(rows) > self.k:  # every row is full: the common case, no masking needed
            full: npt.NDArray[np.float64] = np.add.reduce(rows, axis=1, dtype=np.float64)
            full /= rows.shape[1]
            return full
        valid = np.isfinite(rows)
        count = valid.sum(axis=1)
        total = np.where(valid, rows, 0.0).sum(axis=1, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out: npt.NDArray[np.float64] = np.where(count > 0, total / np.maximum(count, 1), np.nan)
        return out

    def max_similarity(self, slots: npt.NDArray[np.int64] | slice) -> npt.NDArray[np.float64]:
        """Similarity to the nearest other item; ``-inf`` for an item with none."""
        rows = self.sim[slots, 0] if self.k == 1 else self.sim[slots].max(axis=1)
        out: npt.NDArray[np.float64] = rows.astype(np.float64)
        return out

    def state(self, rows: int) -> State:
        """Its first ``rows`` rows: the similarities and the slots they are to."""
        return {"sim": self.sim[:rows].copy(), "idx": self.idx[:rows].copy()}

    def load_state(
        self, state: Mapping[str, Any], rows: int, active: npt.NDArray[np.bool_]
    ) -> None:
        """Take ``state`` (of ``rows`` rows) into this new index; the store's used slots are
        ``active``. Every row must list distinct used slots other than its own, similarities
        within [-1, 1] (rounding allowed), and nothing for an empty slot."""
        read = StateReader(state, "the neighbour index's state")
        sim = read.array("sim", np.float32, (rows, self.k), finite=False)
        idx = read.array("idx", np.int64, (rows, self.k), lo=-1, hi=len(active) - 1)
        read.done()
        spare = idx < 0
        if (sim[spare] != NEG_INF).any():
            raise read.fail("a spare column holds a similarity")
        if not np.array_equal(spare, ~np.isfinite(sim)) or (sim[~spare] < -1.01).any():
            raise read.fail("a similarity is out of range or its slot is missing")
        if (sim[~spare] > 1.01).any() or not active[idx[~spare]].all():
            raise read.fail("a row lists an empty slot, or a similarity above 1")
        if (~spare[~active[:rows]]).any() or (idx == np.arange(rows)[:, None]).any():
            raise read.fail("an empty slot has neighbours, or a slot is its own")
        if self.k > 1:
            ordered = np.sort(np.where(spare, -1 - np.arange(self.k), idx), axis=1)
            if (ordered[:, 1:] == ordered[:, :-1]).any():
                raise read.fail("a row lists a slot twice")
        self.sim[:rows], self.idx[:rows] = sim, idx

    def check(self, store: Rows) -> None:
        """Compare against a brute-force recomputation (tests call this; O(K^2 d))."""
        if self.sim.shape != (len(store.matrix), self.k) or self.idx.shape != self.sim.shape:
            raise AssertionError(f"neighbour rows {self.sim.shape} and {self.idx.shape}")
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
            if len(set(listed.tolist())) != len(listed):
                raise AssertionError(f"neighbour row {slot} lists a slot twice")
