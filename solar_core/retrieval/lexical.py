"""Keyword search over a memory's texts: the words of a text, and an incremental BM25 index
(derived from the stored texts, never state). Why and how: DESIGN.md ("Retrieval: words and
meaning").

>>> words("우리 강아지를 찾았어요")
['우리', '강아지를', '강아', '아지', '지를', '찾았어요', '찾았', '았어', '어요']
"""

from __future__ import annotations

import math
import re
import unicodedata
from functools import lru_cache

import numpy as np

#: BM25's term-frequency saturation and length normalisation (Robertson's usual values)
K1 = 1.2
B = 0.75

# Scripts without spaces between words, or with particles glued to them (Hangul, Han, Kana,
# Thai, Lao, Myanmar, Khmer): their runs are kept apart from other letters ("iPhone을" is two
# words) and give bigrams.
_CJK = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
)
# Combining marks: Python's \w has no vowel sign or virama (Devanagari... words would fall apart).
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670"
    "\u06d6-\u06ed\u0900-\u0963\u0966-\u0dff\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff"
    "\ufe20-\ufe2f"
)
_RUNS = re.compile(rf"[{_CJK}]+|(?:[^\W_{_CJK}]|[{_MARKS}])+")
_IS_CJK = re.compile(rf"[{_CJK}]")
#: texts longer than this are not cached (a chat turn is far shorter; a document need not stay)
_CACHED_LENGTH = 2000
_ASCII_RUNS = re.compile(r"[a-z0-9]+")
#: up to this many postings a query's shares are summed in a Python loop, beyond it in numpy
_PYTHON_POSTINGS = 48

#: common English function words: they match everywhere and say nothing about an item
STOP_WORDS = frozenset(
    """
    a about after all also am an and any are as at be because been before being but by can
    could did do does doing for from had has have having he her here hers him his how i if in
    into is it its just me more most my no nor not now of off on once only or other our ours
    out over own s same she should so some such t than that the their theirs them then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours d ll m o re ve y don didn doesn isn wasn
    aren weren hasn haven hadn won wouldn shouldn couldn
    """.split()
)


def words(text: str) -> list[str]:
    """The indexed words of ``text``, in order (repeats kept: BM25 counts them).

    >>> words("What's my dog's name? Max!")
    ['dog', 'name', 'max']
    """
    return list(word_tuple(text))


def word_tuple(text: str) -> tuple[str, ...]:
    """:func:`words` as a tuple, cached: a chat turn is looked up, then stored (and its repeats
    looked up: :func:`~solar_core.retrieval.repeats.word_key`).

    >>> word_tuple("What's my dog's name? Max!")
    ('dog', 'name', 'max')
    """
    return _cached_words(text) if len(text) <= _CACHED_LENGTH else _split(text)


def _split(text: str) -> tuple[str, ...]:
    if text.isascii():  # most texts: no normalisation or script to look at
        found = _ASCII_RUNS.findall(text.lower())
        return tuple([word for word in found if word not in STOP_WORDS])
    out: list[str] = []
    for run in _RUNS.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _IS_CJK.match(run):
            out.append(run)
            if len(run) > 2:
                out.extend([run[i : i + 2] for i in range(len(run) - 1)])
        elif run not in STOP_WORDS:
            out.append(run)
    return tuple(out)


_cached_words = lru_cache(maxsize=1024)(_split)


class LexicalIndex:
    """Okapi BM25 over the texts of a store's slots, updated one item at a time."""

    __slots__ = ("_postings", "_terms", "_lengths", "_by_slot", "_total")

    def __init__(self) -> None:
        self._postings: dict[str, dict[int, int]] = {}  # word -> {slot: count}
        self._terms: dict[int, tuple[str, ...]] = {}  # slot -> its distinct words
        self._lengths: dict[int, int] = {}  # slot -> its length in words
        self._by_slot = np.zeros(64)  # the same, as an array (the numpy path reads it)
        self._total = 0  # the indexed texts' lengths, summed

    def __len__(self) -> int:
        return len(self._terms)

    def add(self, slot: int, text: str) -> None:
        """Index ``text`` as the item in ``slot`` (a slot already indexed is replaced)."""
        if slot in self._terms:
            self.remove(slot)
        found = word_tuple(text)
        counts: dict[str, int] = {}
        for word in found:  # (a Counter costs more than the loop on a turn's dozen words)
            counts[word] = counts.get(word, 0) + 1
        for word, count in counts.items():
            self._postings.setdefault(word, {})[slot] = count
        self._lengths[slot] = len(found)
        if slot >= len(self._by_slot):
            grown = np.zeros(max(2 * len(self._by_slot), slot + 1))
            grown[: len(self._by_slot)] = self._by_slot
            self._by_slot = grown
        self._by_slot[slot] = len(found)
        self._terms[slot] = tuple(counts)
        self._total += len(found)

    def remove(self, slot: int) -> None:
        """Take the item in ``slot`` out (a slot not indexed is ignored)."""
        terms = self._terms.pop(slot, None)
        if terms is None:
            return
        self._total -= self._lengths.pop(slot)
        for word in terms:
            posting = self._postings[word]
            del posting[slot]
            if not posting:
                del self._postings[word]

    def scores(self, query: list[str]) -> tuple[list[int], list[float]] | None:
        """The slots holding at least one of ``query``'s distinct words and their BM25 scores
        as a share of the most the query could score (every word matched with a saturated
        count), in ``(0, 1]``; ``None`` when no item holds any of the words."""
        n = len(self._terms)
        if not n or not query:
            return None
        found: list[tuple[float, dict[int, int]]] = []
        ceiling = 0.0
        for idf, posting in self._idf(query):
            ceiling += idf
            if posting:
                found.append((idf, posting))
        if not found:
            return None
        matched = sum(len(posting) for _, posting in found)
        average = self._total / n if self._total else 1.0
        # BM25's saturation tf / (tf + K1 (1 - B + B len / average)), weighted by idf over the
        # ceiling (the sum of idf: BM25's (K1 + 1) cancels out of the share)
        flat, slope = K1 * (1.0 - B), K1 * B / average
        if matched <= _PYTHON_POSTINGS:  # a few postings: a loop beats numpy's call overhead
            lengths = self._lengths
            out: dict[int, float] = {}
            for idf, posting in found:
                weight = idf / ceiling
                for slot, tf in posting.items():
                    part = weight * tf / (tf + flat + slope * lengths[slot])
                    out[slot] = out.get(slot, 0.0) + part
            return list(out), list(out.values())
        slots: list[int] = []
        counts: list[int] = []
        for _, posting in found:
            slots.extend(posting)  # in C
            counts.extend(posting.values())
        at = np.array(slots)
        counted = np.array(counts, dtype=np.float64)
        norm = flat + slope * self._by_slot[at]
        weights = np.repeat(
            np.array([idf for idf, _ in found]) / ceiling, [len(p) for _, p in found]
        )
        summed = np.bincount(at, weights=weights * counted / (counted + norm))
        hit = np.flatnonzero(summed)
        return hit.tolist(), summed[hit].tolist()

    def coverage(self, query: list[str]) -> float:
        """The share of ``query``'s distinct words held by some item, each weighted by its
        idf (rare words count most), in ``[0, 1]``; 0 for a query without words."""
        held = every = 0.0
        for idf, posting in self._idf(query):
            every += idf
            held += idf if posting else 0.0
        return held / every if every else 0.0

    def _idf(self, query: list[str]) -> list[tuple[float, dict[int, int]]]:
        """Each distinct word of ``query``: its BM25 idf and posting (empty: no item holds it)."""
        n = len(self._terms)
        postings = [self._postings.get(word, {}) for word in dict.fromkeys(query)]
        return [(math.log(1.0 + (n - len(p) + 0.5) / (len(p) + 0.5)), p) for p in postings]

    def check(self, slots: dict[int, str]) -> None:
        """Raise ``AssertionError`` unless the index holds exactly ``slots`` (slot -> text)."""
        if set(self._terms) != set(slots):
            raise AssertionError("the lexical index and the store hold different slots")
        rebuilt = LexicalIndex()
        for slot, text in slots.items():
            rebuilt.add(slot, text)
        if rebuilt._postings != self._postings or rebuilt._total != self._total:
            raise AssertionError("the lexical index disagrees with the stored texts")
        if rebuilt._lengths != self._lengths:
            raise AssertionError("the lexical index has an item's length wrong")
