"""The fixed-capacity slot matrix that holds every stored vector."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import State, StateReader, part_of, prefixed
from solar_core.retrieval.lexical import LexicalIndex
from solar_core.retrieval.neighbours import NEG_INF, NeighbourIndex
from solar_core.retrieval.repeats import Canon, canon, normalise, sketch, word_key

#: what the repeats' look-up made of an offered text: its :func:`~solar_core.retrieval.repeats.
#: word_key`, normalised, its sketch, its parse (each but the first ``None`` where not made)
Offered = tuple[tuple[str, ...], str | None, int | None, Canon | None]

#: the most rows an unbounded store's state may claim (the validation's capacity bound)
MAX_ROWS = 1 << 21


class ItemTable:
    """``capacity x dim`` float32 matrix of unit rows, with id <-> slot maps and payloads.

    Freed slots are reused last-in first-out, so the used prefix stays short; with
    ``capacity=None`` the matrix doubles when it runs out of rows. :attr:`lexical`, the keyword
    index of the payloads' ``text``, is built on first use, then kept in step; never state.

    >>> import numpy as np
    >>> store = ItemTable(dim=2, capacity=3)
    >>> for i, v in enumerate([[1, 0], [0, 1], [0.6, 0.8]]):
    ...     _ = store.insert(f"m{i}", np.asarray(v, dtype=np.float32), payload=None)
    >>> slots, scores = store.top_k(np.asarray([1, 0], dtype=np.float32), 2)
    >>> [store.id_at(int(s)) for s in slots], [round(float(x), 2) for x in scores]
    (['m0', 'm2'], [1.0, 0.6])
    """

    def __init__(
        self,
        dim: int,
        capacity: int | None,
        *,
        neighbours: int = 0,
        initial_slots: int | None = None,
    ) -> None:
        self.dim, self.capacity, self._neighbour_k = dim, capacity, neighbours
        # bounded: as many rows as the capacity, or more once it was resized down (``resize``)
        rows = (initial_slots or 64) if capacity is None else max(capacity, initial_slots or 0)
        self._initial = rows
        self._allocate(self._initial)

    def _allocate(self, slots: int) -> None:
        self.matrix = np.zeros((slots, self.dim), dtype=np.float32)
        self.active_full = np.zeros(slots, dtype=bool)
        self._ids: list[str | None] = [None] * slots
        self._payloads: list[Any] = [None] * slots
        self._slot_of: dict[str, int] = {}  # insertion-ordered: items() lists oldest first
        self.protected: set[int] = set()  # slots eviction must not choose (identity items)
        self._free = list(range(slots - 1, -1, -1))  # pop() hands out the lowest slot first
        self.high_water = 0  # every active slot is below this
        self.neighbours: NeighbourIndex | None = (
            NeighbourIndex(self._neighbour_k, slots) if self._neighbour_k > 0 else None
        )
        self._lexical: LexicalIndex | None = None
        # The repeats' look-up (:mod:`solar_core.retrieval.repeats`), built on first use: the
        # slots by word key (texts that normalise alike share one), then per slot what was made
        # of its text, each when first asked (most items leave before an offer is compared).
        self._by_words: dict[tuple[str, ...], list[int]] | None = None
        self._keys: dict[int, tuple[str, ...]] = {}  # slot -> its text's word key
        self._norms: dict[int, str] = {}  # slot -> its text normalised
        self._sketches: dict[int, int] = {}  # slot -> its words' sketch
        self._canons: dict[int, Canon] = {}  # slot -> what the repeat rule compares
        self._last_sims: tuple[bytes, npt.NDArray[np.float32]] | None = None  # similarities

    def same_words(self, key: tuple[str, ...]) -> list[int]:
        """The slots whose texts have the word key ``key``, oldest first: every stored text
        that normalises as an offer does is among those of its key."""
        if self._by_words is None:
            self._by_words = {}
            for slot in self._slot_of.values():
                self._note_canon(slot)
        return self._by_words.get(key, [])

    def norm_at(self, slot: int) -> str:
        """The text in ``slot`` normalised (made when first asked, then kept)."""
        made = self._norms.get(slot)
        if made is None:
            made = self._norms[slot] = normalise(_text_of(self._payloads[slot]) or "")
        return made

    def canon_at(self, slot: int) -> Canon:
        """The :class:`Canon` of the text in ``slot`` (made when first asked, then kept)."""
        made = self._canons.get(slot)
        if made is None:
            text = _text_of(self._payloads[slot]) or ""
            made = self._canons[slot] = canon(text, self.norm_at(slot))
        return made

    def sketch_at(self, slot: int) -> int:
        """The :func:`~solar_core.retrieval.repeats.sketch` of the text in ``slot`` (made when
        first asked, then kept)."""
        drawn = self._sketches.get(slot)
        if drawn is None:
            drawn = self._sketches[slot] = sketch(self._keys[slot])
        return drawn

    def nearest_slots(self, vector: npt.NDArray[np.float32], k: int) -> list[int]:
        """The slots of the ``k`` stored items most similar to ``vector``, in no order."""
        if len(self._slot_of) <= k:
            return list(self._slot_of.values())
        sims = self._kept_similarities(vector)  # (read only: no copy)
        m = len(sims)
        return sims.argpartition(m - k)[m - k :].tolist()  # type: ignore[no-any-return]

    def _note_canon(self, slot: int, made: Offered | None = None) -> None:
        if self._by_words is not None and (text := _text_of(self._payloads[slot])) is not None:
            key, normal, drawn, parsed = made or (word_key(text), None, None, None)
            self._keys[slot] = key
            self._by_words.setdefault(key, []).append(slot)
            if normal is not None:  # what the offer made already
                self._norms[slot] = normal
            if drawn is not None:
                self._sketches[slot] = drawn
            if parsed is not None:
                self._canons[slot] = parsed

    def _drop_canon(self, slot: int) -> None:
        self._canons.pop(slot, None)
        self._sketches.pop(slot, None)
        self._norms.pop(slot, None)
        if self._by_words is not None and (key := self._keys.pop(slot, None)) is not None:
            slots = self._by_words[key]
            slots.remove(slot)
            if not slots:
                del self._by_words[key]

    @property
    def lexical(self) -> LexicalIndex:
        """The keyword index of the stored payloads' texts (built on first use)."""
        if self._lexical is None:
            self._lexical = LexicalIndex()
            for slot in self.active_slots().tolist():
                if (text := _text_of(self._payloads[slot])) is not None:
                    self._lexical.add(slot, text)
        return self._lexical

    # -- size ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._slot_of

    @property
    def slots(self) -> int:
        """Rows allocated (policies size their per-slot arrays by this)."""
        return self.matrix.shape[0]

    @property
    def full(self) -> bool:
        return self.capacity is not None and len(self._slot_of) >= self.capacity

    @property
    def active_mask(self) -> npt.NDArray[np.bool_]:
        return self.active_full[: self.high_water]

    def active_slots(self) -> npt.NDArray[np.int64]:
        return np.flatnonzero(self.active_mask)

    def active_selection(self) -> npt.NDArray[np.int64] | slice:
        """The active slots as an index into per-slot arrays: ``slice(0, high_water)`` (a view)
        when every slot below the high-water mark is used, else :meth:`active_slots`."""
        high = self.high_water
        return slice(0, high) if len(self._slot_of) == high else self.active_slots()

    def evictable_selection(self) -> npt.NDArray[np.int64] | slice:
        """:meth:`active_selection` without the protected slots (what eviction may choose)."""
        if not self.protected:
            return self.active_selection()
        active = self.active_slots()
        keep: npt.NDArray[np.int64] = active[~np.isin(active, list(self.protected))]
        return keep

    @property
    def evictable(self) -> int:
        """How many stored items eviction may choose."""
        return len(self._slot_of) - len(self.protected)

    # -- lookup -------------------------------------------------------------------------------
    def slot_of(self, item_id: str) -> int:
        return self._slot_of[item_id]

    def id_at(self, slot: int) -> str:
        item_id = self._ids[slot]
        if item_id is None:
            raise KeyError(f"slot {slot} is empty")
        return item_id

    def payload_at(self, slot: int) -> Any:
        return self._payloads[slot]

    def slot_lists(self) -> tuple[list[str], list[Any]]:
        """The per-slot ids and payloads (``None`` in empty slots), to read, never write."""
        return self._ids, self._payloads  # type: ignore[return-value]

    def ids(self) -> list[str]:
        return list(self._slot_of)

    def vector(self, slot: int) -> npt.NDArray[np.float32]:
        row: npt.NDArray[np.float32] = self.matrix[slot].copy()
        return row

    # -- search -------------------------------------------------------------------------------
    def similarities(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Cosine similarity of ``vector`` to every used slot; ``-inf`` for empty slots (a new
        array). The last vector's are kept until the table changes: a chat turn is looked up,
        then offered, and its offer's look-ups (repeats, a gate) read them again."""
        made: npt.NDArray[np.float32] = self._kept_similarities(vector).copy()
        return made

    def _kept_similarities(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """:meth:`similarities`, the kept array itself: read only."""
        last, given = self._last_sims, vector.tobytes()
        if last is not None and last[0] == given:
            return last[1]
        high = self.high_water
        used = self.matrix if high == len(self.matrix) else self.matrix[:high]
        sims: npt.NDArray[np.float32] = used.dot(vector)
        if len(self._slot_of) < high:
            sims[~self.active_mask] = NEG_INF
        self._last_sims = (given, sims)
        return sims

    def top_k(
        self, vector: npt.NDArray[np.float32], k: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Slots and similarities of the ``k`` most similar items, best first."""
        slots, scores = self.nearest(vector, k)
        return slots, np.array(scores, dtype=np.float32)

    def nearest(
        self, vector: npt.NDArray[np.float32], k: int
    ) -> tuple[npt.NDArray[np.int64], list[float]]:
        """:meth:`top_k` with the similarities as Python floats, as a retrieval reports them."""
        n = len(self._slot_of)
        if n == 0:
            return np.empty(0, dtype=np.int64), []
        sims = self.similarities(vector)
        m = len(sims)
        if k < min(n, m):
            top = sims.argpartition(m - k)[m - k :]  # empty slots hold -inf: never chosen
        else:
            top = self.active_slots()
        # Best first, ties in `top` order. argpartition usually leaves the k candidates
        # ascending: reversed, strictly decreasing, they are the order. (A copy: a kept view
        # would keep argpartition's whole output alive.)
        order = top[::-1].copy()
        scores: list[float] = sims[order].tolist()
        previous = math.inf
        for score in scores:  # (a loop: at every retrieval, a generator costs more)
            if not score < previous:  # a tie, or not sorted: sort
                order = top[(-sims[top]).argsort(kind="stable")]
                scores = sims[order].tolist()
                break
            previous = score
        return order, scores

    # -- mutation -----------------------------------------------------------------------------
    def insert(
        self,
        item_id: str,
        vector: npt.NDArray[np.float32],
        payload: Any,
        sims: npt.NDArray[np.float32] | None = None,
        made: Offered | None = None,
    ) -> int:
        """Store a unit ``vector`` under ``item_id``; return its slot. ``sims`` (its
        :meth:`similarities`, if the caller has them) saves the neighbour index a product,
        ``made`` (what the repeats' look-up made of its text) that look-up the work again."""
        if self.full:
            raise RuntimeError("store is full: evict before inserting")
        if item_id in self._slot_of:
            raise ValueError(f"an item with id {item_id!r} is already stored")
        if not self._free:
            self._grow()
        slot = self._free.pop()
        self._last_sims = None
        self.matrix[slot], self.active_full[slot] = vector, True
        self._ids[slot], self._payloads[slot], self._slot_of[item_id] = item_id, payload, slot
        if slot >= self.high_water:
            self.high_water = slot + 1
        if self.neighbours is not None:
            self.neighbours.on_insert(self, slot, sims)
        if self._lexical is not None and (text := _text_of(payload)) is not None:
            self._lexical.add(slot, text)
        self._note_canon(slot, made)
        return slot

    def remove(self, slot: int) -> str:
        """Free ``slot``; return the id it held."""
        item_id = self.id_at(slot)
        del self._slot_of[item_id]
        self._last_sims = None
        self.active_full[slot], self._ids[slot], self._payloads[slot] = False, None, None
        self.protected.discard(slot)
        self._free.append(slot)
        high = self.high_water
        while self.high_water > 0 and self._ids[self.high_water - 1] is None:
            self.high_water -= 1
        # rows from the high-water mark on are empty, as a snapshot leaves them out
        self.matrix[self.high_water : high] = 0.0
        if self.neighbours is not None:
            self.neighbours.on_remove(self, slot)
        if self._lexical is not None:
            self._lexical.remove(slot)
        self._drop_canon(slot)
        return item_id

    def clear(self) -> None:
        # As many rows as before: the policies' per-slot statistics keep their length.
        self._allocate(len(self.matrix))

    def _grow(self, new: int = 0) -> None:
        old = self.slots
        new = new or max(2 * old, 64)
        self.matrix = np.vstack([self.matrix, np.zeros((new - old, self.dim), dtype=np.float32)])
        self.active_full = np.concatenate([self.active_full, np.zeros(new - old, dtype=bool)])
        self._ids += [None] * (new - old)
        self._payloads += [None] * (new - old)
        self._free = [*range(new - 1, old - 1, -1), *self._free]  # never-used slots first
        if self.neighbours is not None:
            self.neighbours.grow(new)

    def resize(self, capacity: int, rows: int = 0) -> None:
        """Hold at most ``capacity`` items (no fewer than are stored) in at least ``rows`` rows.
        The rows grow to the capacity and never shrink: a stored item keeps its slot, so every
        per-slot statistic stays valid."""
        if capacity < len(self) or self.capacity is None:
            raise ValueError(f"cannot resize a table of {len(self)} items to {capacity}")
        self.capacity = capacity
        if max(capacity, rows) > self.slots:
            self._grow(max(capacity, rows))
        self._initial = self.slots

    # -- checks -------------------------------------------------------------------------------
    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if the maps, masks and free list disagree."""
        n = len(self._slot_of)
        if self.capacity is not None and n > self.capacity:
            raise AssertionError(f"{n} items exceed capacity {self.capacity}")
        if int(self.active_full.sum()) != n:
            raise AssertionError("active mask disagrees with the id map")
        if self.active_full[self.high_water :].any():
            raise AssertionError("an active slot lies above the high-water mark")
        for item_id, slot in self._slot_of.items():
            if self._ids[slot] != item_id or not self.active_full[slot]:
                raise AssertionError(f"id map broken for {item_id!r} at slot {slot}")
        free = self._free
        if len(free) + n != self.slots or len(set(free)) != len(free):
            raise AssertionError("free list broken")
        if free and not 0 <= min(free) <= max(free) < self.slots or self.active_full[free].any():
            raise AssertionError("a free slot lies outside the rows or is active")
        if n and not np.allclose(
            np.linalg.norm(self.matrix[self.active_slots()], axis=1), 1.0, atol=1e-4
        ):
            raise AssertionError("a stored vector is not unit-norm")
        if self.neighbours is not None:
            self.neighbours.check(self)
        if self._lexical is not None:
            texts = {s: _text_of(self._payloads[s]) for s in self._slot_of.values()}
            self._lexical.check({s: t for s, t in texts.items() if t is not None})

    # -- state --------------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        return {
            "dim": self.dim,
            "capacity": self.capacity,
            "neighbours": self._neighbour_k,
            "initial_slots": self._initial,
        }

    def state(self) -> State:
        """The rows below the high-water mark (ids, vectors), the free slots but the never-used
        ones, the protected slots and the neighbour index (stored: another product could differ
        in the last bit). Unbounded, the rows are written whole once more than twice those
        used, so a reader never allocates more than a small multiple of what a state holds.
        Payloads are the core's to write; the keyword index is rebuilt."""
        high, rows = self.high_water, len(self.matrix)
        written = (
            high if self.capacity is not None or rows <= 2 * max(self._initial, high) else rows
        )
        free, top = self._free, rows - 1
        untouched = 0  # the free list starts with the never-used slots, top down: left out
        while untouched < len(free) and free[untouched] == top - untouched:
            untouched += 1
        state: State = {
            "rows": rows,
            "ids": self._ids[:written],
            "vectors": self.matrix[:written].copy(),
            "free": np.asarray(free[untouched:], dtype=np.int64),
            # the id map's order (oldest insert first, what items() lists), as slots
            "order": np.fromiter(self._slot_of.values(), dtype=np.int64, count=len(self._slot_of)),
            "protected": np.asarray(sorted(self.protected), dtype=np.int64),
        }
        if self.neighbours is not None:
            state.update(prefixed("neighbours", self.neighbours.state(written)))
        return state

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take ``state`` into this new, empty table of the same parameters (every payload
        ``None``: the core puts its records in)."""
        read = StateReader(state, "the store's state")
        capacity, initial = self.capacity, self._initial
        vectors = read.array("vectors", np.float32, (None, self.dim))
        written = len(vectors)
        rows = read.integer("rows", 1, initial if capacity is not None else MAX_ROWS)
        if capacity is not None and rows != initial:
            raise read.fail(f"rows must be {initial} (the capacity, or more once resized)")
        if written > rows or (capacity is None and rows > 2 * max(initial, written)):
            raise read.fail(f"{written} rows written do not stand for {rows}")
        ids = read.listed("ids", written)
        slot_of: dict[str, int] = {}
        for slot, item_id in enumerate(ids):
            if item_id is None:
                continue
            if type(item_id) is not str or not item_id or item_id in slot_of:
                raise read.fail(f"slot {slot} holds a bad or repeated id {item_id!r}")
            slot_of[item_id] = slot
        high = max(slot_of.values(), default=-1) + 1
        active = np.zeros(rows, dtype=bool)
        active[list(slot_of.values())] = True
        if written > high and vectors[high:].any():
            raise read.fail("an empty row above the high-water mark holds a vector")
        used = vectors[active[:written]]
        if len(used) and not np.allclose(np.einsum("ij,ij->i", used, used), 1.0, atol=1e-4):
            raise read.fail("a stored vector is not a unit vector")
        listed = read.integers("free", 0, rows - 1)
        untouched = rows - len(slot_of) - len(listed)
        free = [*range(rows - 1, rows - 1 - untouched, -1), *listed]
        if untouched < 0 or len(set(free)) != len(free) or active[free].any():
            raise read.fail("the free slots and the used ones do not make up the rows")
        order = read.integers("order", 0, rows - 1)
        if len(order) != len(slot_of) or set(order) != set(slot_of.values()):
            raise read.fail("the order of the items is not that of the used slots")
        protected = read.integers("protected", 0, rows - 1)
        if len(set(protected)) != len(protected) or not active[protected].all():
            raise read.fail("a protected slot is not a used one, or is listed twice")
        if self._neighbour_k > 0:
            index = NeighbourIndex(self._neighbour_k, rows)
            index.load_state(part_of("neighbours", state), written, active)
            for name in state:
                if name.startswith("neighbours."):
                    read.value(name)
        read.done()
        self._allocate(rows)
        self.matrix[:written], self._ids[:written] = vectors, ids
        self.active_full, self._free, self.high_water = active, free, high
        self.protected = set(protected)
        self._slot_of = {ids[slot]: slot for slot in order}
        if self._neighbour_k > 0:
            self.neighbours = index


def _text_of(payload: Any) -> str | None:
    """What the keyword index reads of a payload: its ``text``, if it has one."""
    text = getattr(payload, "text", None)
    return text if isinstance(text, str) else None
