"""How a retrieval ranks stored items: by meaning (cosine), by words (BM25), or both fused.

``SolarMemory(retrieval=...)``: ``"hybrid"`` (the default, ``cosine + LEXICAL_WEIGHT x lexical
share``; as ``"vector"`` when no item holds a query word), ``"vector"`` or ``"lexical"`` (only
items holding a query word). ``min_score="auto"`` is :data:`DEFAULT_FLOORS` for text lookups,
none by vector; ``"strict"`` adds the relevance gate (:func:`relevant`). Why, and the numbers:
DESIGN.md ("Retrieval: words and meaning"), docs/benchmarks/hybrid-retrieval.md.

>>> from solar_core import SolarMemory
>>> memory = SolarMemory("unlimited", None, embedder="hash", seed=0)
>>> _ = memory.add("My dog is called Max")
>>> _ = memory.add("I fixed the squeaky door with some oil")
>>> [hit.text for hit in memory.retrieve("What is my dog's name?", k=2)]
['My dog is called Max']
>>> len(memory.retrieve("What is my dog's name?", k=2, min_score=None))
2
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from solar_core.basics.validation import FloatVector
from solar_core.retrieval.item_table import ItemTable
from solar_core.retrieval.lexical import words

Retrieval = Literal["hybrid", "vector", "lexical"]
#: the ways a memory can rank (``SolarMemory(retrieval=...)``)
RETRIEVALS: tuple[str, ...] = ("hybrid", "vector", "lexical")
#: the default ranking
DEFAULT_RETRIEVAL: Retrieval = "hybrid"
#: how much a full lexical match adds to the cosine in ``"hybrid"``
LEXICAL_WEIGHT = 3.0
#: the floor ``min_score="auto"`` puts under a text lookup, per ranking (low on purpose: it
#: drops only what is unrelated to the query)
DEFAULT_FLOORS: dict[str, float] = {"hybrid": 0.05, "vector": 0.05, "lexical": 0.0}
#: the relevance gate of ``min_score="strict"``: hits only if the best cosine in the memory is
#: at least the first, or at least the third while the memory holds the second share
#: (idf-weighted) of the query's words
STRICT_GATE = (0.48, 0.75, 0.3)

Ranked = tuple[npt.NDArray[np.int64], list[float]]
Weights = npt.NDArray[np.float64]  # per slot, a factor on its score (importance)
#: up to this many candidates a plain hybrid lookup sorts them in Python, beyond it in numpy
_SORTED_IN_PYTHON = 16


def check_retrieval(retrieval: object) -> Retrieval:
    """``retrieval`` if it names a ranking, else a ``ValueError`` naming them."""
    if not isinstance(retrieval, str) or retrieval not in RETRIEVALS:
        names = ", ".join(repr(r) for r in RETRIEVALS)
        raise ValueError(f"retrieval must be one of {names}, got {retrieval!r}")
    return retrieval  # type: ignore[return-value]


def check_floor(min_score: object) -> float | str | None:
    """A checked ``min_score``: a finite number, ``None`` (no floor), ``"auto"`` or ``"strict"``.

    >>> check_floor(2**64), check_floor(None)
    (1.8446744073709552e+19, None)
    >>> check_floor(10**400)
    Traceback (most recent call last):
    ...
    ValueError: min_score must be a number, None (no floor), 'auto' or 'strict', got 1000...
    """
    if min_score is None or min_score == "auto" or min_score == "strict":
        return min_score
    if isinstance(min_score, int | float) and not isinstance(min_score, bool):
        if abs(min_score) <= sys.float_info.max:  # finite (not NaN), and a float
            return float(min_score)
    raise ValueError(
        f"min_score must be a number, None (no floor), 'auto' or 'strict', got {min_score!r}"
    )


class Setting:
    """A memory's ``retrieval`` or ``min_score``, checked when set (a typo would rank
    differently and could not be logged or snapshotted)."""

    def __init__(self, check: Callable[[object], object]) -> None:
        self.check = check

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = "_" + name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return obj.__dict__[self.name]

    def __set__(self, obj: object, value: object) -> None:
        obj.__dict__[self.name] = self.check(value)


def floor_for(min_score: object, retrieval: str, text: str | None) -> tuple[float | None, bool]:
    """The floor a lookup gets (``min_score`` checked), and whether the relevance gate
    (:func:`relevant`) applies.

    >>> floor_for("strict", "hybrid", "q"), floor_for("auto", "hybrid", None)
    ((0.05, True), (None, False))
    """
    floor = check_floor(min_score)
    if isinstance(floor, str):
        if text is None:
            return None, False
        return DEFAULT_FLOORS[retrieval], floor == "strict"
    return floor, False


def relevant(store: ItemTable, vector: FloatVector, query: str) -> bool:
    """Whether ``store`` holds anything about the query, by :data:`STRICT_GATE` (the gate of
    ``min_score="strict"``; a name the memory never heard fails the words' test)."""
    if not len(store):
        return False
    cosine, coverage, covered_cosine = STRICT_GATE
    best = float(store.similarities(vector).max())
    return best >= cosine or (
        best >= covered_cosine and store.lexical.coverage(words(query)) >= coverage
    )


class Query(Protocol):
    """What a lookup asks of :func:`rank` (:class:`~solar_core.engine.steps.Lookup` is one)."""

    vector: FloatVector
    query: str | None
    retrieval: str
    k: int
    exclude: Collection[str]
    gate: bool
    floor: float | None


def rank(
    store: ItemTable, lookup: Query, weights: Weights | None = None
) -> tuple[npt.NDArray[np.int64], list[float], bool]:
    """The slots and scores of ``lookup``'s hits, best first (gated, ranked, weighted by
    importance, ``exclude`` left out, cut at the floor), and whether the scores are cosines."""
    vector, query, k, exclude = lookup.vector, lookup.query, lookup.k, lookup.exclude
    ranked: Ranked | None = None
    if lookup.gate and query is not None and not relevant(store, vector, query):
        ranked = np.empty(0, np.int64), []  # nothing here is about the query
    elif lookup.retrieval != "vector" and query is not None:
        ranked = fused(store, vector, query, lookup.retrieval, k, exclude, weights)
    if ranked is not None:
        slots, scores = ranked
    elif weights is not None:
        slots, scores = _weighted_nearest(store, vector, k, exclude, weights)
    elif exclude:
        slots, scores = _nearest_except(store, vector, k, exclude)
    else:
        slots, scores = store.nearest(vector, k)
    floor = lookup.floor
    if floor is not None and scores and scores[-1] < floor:  # best first: cut the tail
        kept = sum(1 for score in scores if score >= floor)
        slots, scores = slots[:kept], scores[:kept]
    return slots, scores, ranked is None and weights is None


def _weighted_nearest(
    store: ItemTable, vector: FloatVector, k: int, exclude: Collection[str], weights: Weights
) -> Ranked:
    """Top-k by ``cosine * weight`` (a pass over every item: importance weighting is opt-in)."""
    sims = store.similarities(vector).astype(np.float64) * weights
    for item_id in exclude:
        if item_id in store:
            sims[store.slot_of(item_id)] = -np.inf
    n = int(np.isfinite(sims).sum())
    order = np.argsort(-sims, kind="stable")[: min(k, n)]
    return order.astype(np.int64), sims[order].tolist()


def _nearest_except(
    store: ItemTable, vector: FloatVector, k: int, exclude: Collection[str]
) -> Ranked:
    skip = {store.slot_of(i) for i in exclude if i in store}
    slots, scores = store.nearest(vector, k + len(skip))
    keep = [j for j, slot in enumerate(slots.tolist()) if slot not in skip][:k]
    return slots[keep], [scores[j] for j in keep]


def fused(
    store: ItemTable,
    vector: FloatVector,
    query: str,
    retrieval: str,
    k: int,
    exclude: Collection[str],
    weights: Weights | None,
) -> Ranked | None:
    """Slots and scores of the ``k`` best items by ``retrieval`` over ``query``'s words, best
    first (ties: the lower slot); ``None`` when the vector ranking stands (``"hybrid"``, no
    item holding a query word)."""
    found = store.lexical.scores(words(query))
    if retrieval == "hybrid":
        if found is None:
            return None
        if weights is None and not exclude:
            quick = _hybrid_top(store, vector, found, k)
            if quick is not None:
                return quick
        scores = store.similarities(vector)  # a new array: written in place below
        slots, shares = found
        scores[slots] += LEXICAL_WEIGHT * np.array(shares, np.float32)
        n = len(store)
    else:  # lexical: only the items holding a query word
        scores = np.full(store.high_water, -np.inf, np.float32)
        slots, shares = found if found is not None else ([], [])
        scores[slots] = shares
        n = len(slots)
    if weights is not None:  # (only on real scores: -inf x a zero weight would be NaN)
        finite = scores > -np.inf
        scores[finite] *= weights[: len(scores)][finite].astype(np.float32)
    for item_id in exclude:
        if item_id in store:
            slot = store.slot_of(item_id)
            n -= bool(scores[slot] > -np.inf)
            scores[slot] = -np.inf
    if n <= 0:
        return np.empty(0, np.int64), []
    m = len(scores)
    if k < n:  # every item scoring at least the k-th best: ties at the edge are all in
        kth = scores[scores.argpartition(m - k)[m - k]]
        top = np.flatnonzero(scores >= kth)
    else:
        top = np.flatnonzero(scores > -np.inf)
    # Best first, ties by the lower slot: a total order, so a second look that excludes some
    # of the first one's hits returns the rest of them, never a tied item it did not show.
    order = top[np.lexsort((top, -scores[top]))][:k].astype(np.int64)
    return order, scores[order].tolist()


def _hybrid_top(
    store: ItemTable, vector: FloatVector, found: tuple[list[int], list[float]], k: int
) -> Ranked | None:
    """:func:`fused`'s hybrid ranking over the only candidates: the items holding a query word
    and the ``k`` nearest by cosine. ``None`` when a tie at the ``k``-th cosine could let
    another item in (the full ranking decides it)."""
    sims = store.similarities(vector)
    m = len(sims)
    slots, shares = found
    if k < len(store):
        # the k nearest, and beside them the next one: equal to the k-th, a tie at the edge
        parted = sims.argpartition((m - k - 1, m - k))
        edge = sims[parted[m - k - 1 : m - k + 1]].tolist()
        if edge[0] == edge[1]:
            return None
        candidates = list(dict.fromkeys([*slots, *parted[m - k :].tolist()]))
    else:
        candidates = list(dict.fromkeys([*slots, *store.active_slots().tolist()]))
    # the same float32 sum as the full ranking (cosine + weight x share), so the same scores
    scores = sims[candidates]
    scores[: len(slots)] += LEXICAL_WEIGHT * np.array(shares, np.float32)
    if len(candidates) > _SORTED_IN_PYTHON:
        at = np.array(candidates, np.int64)
        best = np.lexsort((at, -scores))[:k]
        return at[best], scores[best].tolist()
    ranked = sorted(zip((-scores).tolist(), candidates, strict=True))[:k]
    return np.array([slot for _, slot in ranked], np.int64), [-score for score, _ in ranked]
