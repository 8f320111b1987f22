"""How a retrieval ranks stored items: by meaning (cosine), by words (BM25), or both fused.

``SolarMemory(retrieval=...)`` picks one of :data:`RETRIEVALS`:

- ``"hybrid"`` (the default): ``score = cosine + LEXICAL_WEIGHT x lexical share``. The lexical
  share (:meth:`~solar_core.retrieval.lexical.LexicalIndex.scores`) is an item's BM25 score as a
  part of the most the query's words could score, in ``[0, 1]``; an item holding none of them gets
  0,
  so its score is its cosine. A lookup without text (``retrieve(embedding=v)``), or whose words
  no item holds, ranks exactly as ``"vector"`` does, with the same scores.
- ``"vector"``: ``score = cosine`` of the query's and the item's unit vectors, in ``[-1, 1]``.
- ``"lexical"``: ``score = lexical share``; only items holding a query word are hits.

Why a weighted sum of calibrated scores, not reciprocal-rank fusion: on the dev conversations
it found more of the evidence (recall@5 over every turn: RRF 0.521 at k = 10, 0.539 at k = 5;
the sum 0.564 at weight 3, 0.561 with the weight chosen leave-one-conversation-out), and its
score means the same thing from one query to the next, so a floor on it is a relevance floor;
an RRF score only says where an item ranked.

A floor (``min_score``) drops the hits scoring below it: a retrieval may return fewer than
``k``, or none, and only what it returns is credited. ``"auto"`` is :data:`DEFAULT_FLOORS` for
lookups with text and no floor for a lookup by vector alone (its vectors come from the
caller's model, whose scale is unknown). ``"strict"`` is ``"auto"`` plus a relevance gate
(:func:`relevant`): a text lookup returns nothing when the memory holds nothing about the
query, judged on the whole memory rather than hit by hit.

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
#: how much a full lexical match adds to the cosine in ``"hybrid"`` (dev conversations, every
#: turn stored: recall@5 0.548 at 2, 0.564 at 3, 0.565 at 4, 0.557 at 6; chosen on the other
#: five conversations, 3 or 4 for each, 0.561 out of sample)
LEXICAL_WEIGHT = 3.0
#: the floor ``min_score="auto"`` puts under a text lookup, per ranking. Low on purpose: with
#: MiniLM, a standing instruction ("Please always answer me in French") is 0.08 from the later
#: "When does my order arrive?" it must still shape, and "Can I eat this satay sauce?" is
#: 0.14-0.17 from the "I'm severely allergic to peanuts" turn it must recall, while "How do I
#: fix a squeaky door?" is 0.24 from "What's my dog's name?": no floor on a cosine keeps the
#: first two and drops the third. This one drops only what is unrelated to the query (cosine
#: below 0.05, no shared word) and costs nothing on the dev conversations; pass a higher
#: ``min_score`` (0.25-0.3) for precision over recall: docs/benchmarks/hybrid-retrieval.md has the
#: trade-off. A lexical hit always holds a query word: no floor.
DEFAULT_FLOORS: dict[str, float] = {"hybrid": 0.05, "vector": 0.05, "lexical": 0.0}
#: the relevance gate of ``min_score="strict"``: a text lookup returns hits only if the best
#: cosine in the memory is at least the first, or at least the third while the memory holds the
#: second share (idf-weighted) of the query's words. Chosen on the dev conversations (every
#: question asked of its own conversation and of the others, where nothing relevant is stored):
#: leave-one-conversation-out, foreign prompts given a turn fall from 100 % to 8.8 % while
#: recall@5 on the own questions drops by 0.009 (docs/benchmarks/hybrid-retrieval.md).
STRICT_GATE = (0.48, 0.75, 0.3)

Ranked = tuple[npt.NDArray[np.int64], list[float]]
#: up to this many candidates a plain hybrid lookup sorts them in Python, beyond it in numpy
_SORTED_IN_PYTHON = 16


def check_retrieval(retrieval: object) -> Retrieval:
    """``retrieval`` if it names a ranking, else a ``ValueError`` naming them.

    >>> check_retrieval("bm25")
    Traceback (most recent call last):
    ...
    ValueError: retrieval must be one of 'hybrid', 'vector', 'lexical', got 'bm25'
    """
    if not isinstance(retrieval, str) or retrieval not in RETRIEVALS:
        names = ", ".join(repr(r) for r in RETRIEVALS)
        raise ValueError(f"retrieval must be one of {names}, got {retrieval!r}")
    return retrieval  # type: ignore[return-value]


def check_floor(min_score: object) -> float | str | None:
    """A checked ``min_score``: a finite number, ``None`` (no floor), ``"auto"`` or
    ``"strict"``.

    >>> check_floor(0.4), check_floor(None), check_floor("auto"), check_floor("strict")
    (0.4, None, 'auto', 'strict')
    >>> check_floor("high")
    Traceback (most recent call last):
    ...
    ValueError: min_score must be a number, None (no floor), 'auto' or 'strict', got 'high'
    """
    if min_score is None or min_score == "auto" or min_score == "strict":
        return min_score
    if isinstance(min_score, int | float) and not isinstance(min_score, bool):
        if np.isfinite(min_score):
            return float(min_score)
    raise ValueError(
        f"min_score must be a number, None (no floor), 'auto' or 'strict', got {min_score!r}"
    )


class Setting:
    """A memory's ``retrieval`` or ``min_score``: checked when set (a typo would rank
    differently and could not be logged or snapshotted), so every later lookup can trust it.

    >>> class Holder:
    ...     retrieval = Setting(check_retrieval)
    >>> holder = Holder(); holder.retrieval = "vector"; holder.retrieval
    'vector'
    >>> holder.retrieval = "Hybrid"
    Traceback (most recent call last):
    ...
    ValueError: retrieval must be one of 'hybrid', 'vector', 'lexical', got 'Hybrid'
    """

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
    (:func:`relevant`) applies: ``"auto"`` and ``"strict"`` are :data:`DEFAULT_FLOORS` when
    the lookup has text, ``"strict"`` gated too.

    >>> floor_for("auto", "hybrid", "q"), floor_for("auto", "hybrid", None)
    ((0.05, False), (None, False))
    >>> floor_for(0.2, "vector", None), floor_for(None, "hybrid", "q")
    ((0.2, False), (None, False))
    >>> floor_for("strict", "hybrid", "q"), floor_for("strict", "hybrid", None)
    ((0.05, True), (None, False))
    """
    floor = check_floor(min_score)
    if isinstance(floor, str):
        if text is None:
            return None, False
        return DEFAULT_FLOORS[retrieval], floor == "strict"
    return floor, False


def relevant(store: ItemTable, vector: FloatVector, query: str) -> bool:
    """Whether ``store`` holds anything about the query (the gate of ``min_score="strict"``):
    its best cosine reaches :data:`STRICT_GATE`'s first value, or its third while the store
    holds the second's share of the query's words
    (:meth:`~solar_core.retrieval.lexical.LexicalIndex. coverage`). A name the memory never heard,
    in a question about a topic it has talked
    about, is what the second test catches.

    >>> from solar_core import SolarMemory
    >>> memory = SolarMemory("unlimited", None, dim=2)
    >>> _ = memory.add("I fixed the squeaky door", embedding=[1.0, 0.0])
    >>> store = memory.core._store
    >>> relevant(store, np.array([0.9, 0.436], np.float32), "What is my dog's name?")
    True
    >>> relevant(store, np.array([0.4, 0.917], np.float32), "What is my dog's name?")
    False
    >>> relevant(store, np.array([0.4, 0.917], np.float32), "The squeaky door?")
    True
    """
    if not len(store):
        return False
    cosine, coverage, covered_cosine = STRICT_GATE
    best = float(store.similarities(vector).max())
    if best >= cosine:
        return True
    return best >= covered_cosine and store.lexical.coverage(words(query)) >= coverage


class Query(Protocol):
    """What a lookup asks of :func:`rank` (:class:`~solar_core.engine.steps.Lookup` is one)."""

    @property
    def vector(self) -> FloatVector: ...
    @property
    def query(self) -> str | None: ...
    @property
    def retrieval(self) -> str: ...
    @property
    def k(self) -> int: ...
    @property
    def exclude(self) -> Collection[str]: ...
    @property
    def gate(self) -> bool: ...
    @property
    def floor(self) -> float | None: ...


def rank(
    store: ItemTable, lookup: Query, weights: npt.NDArray[np.float64] | None = None
) -> tuple[npt.NDArray[np.int64], list[float], bool]:
    """The slots and scores of ``lookup``'s hits, best first, and whether the scores are the
    hits' cosines: gated (``min_score="strict"``), ranked by :data:`RETRIEVALS`, each score
    times its slot's ``weights`` (importance) when given, ``exclude``'s items left out, and
    cut at the floor."""
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
    store: ItemTable,
    vector: FloatVector,
    k: int,
    exclude: Collection[str],
    weights: npt.NDArray[np.float64],
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
    weights: npt.NDArray[np.float64] | None,
) -> Ranked | None:
    """Slots and scores of the ``k`` best items by ``retrieval`` over ``query``'s words, best
    first (ties: the lower slot); ``None`` when the words change nothing and the caller's
    vector ranking stands (``"hybrid"`` with no item holding a query word). ``weights``: a
    per-slot factor on every score (importance), if any."""
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
    """:func:`fused`'s hybrid ranking without scoring every item twice: the ``k`` best are among
    the items holding a query word and the ``k`` nearest by cosine (an item holding none scores
    its cosine, and ``k`` others score at least as much). ``None`` when a tie at the ``k``-th
    cosine could let an item outside those in (the full ranking decides it)."""
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
