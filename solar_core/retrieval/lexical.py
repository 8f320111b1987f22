"""Keyword search over a memory's texts: the words of a text, and an incremental BM25 index.

A memory's lexical side (see :mod:`solar_core.retrieval.ranking`) ranks stored items by Okapi BM25
over their words. The index lives beside the vector matrix, slot by slot, and changes with it: an
item stored adds its words, an item evicted, removed, deleted, expired or cleared takes them
out. It is derived from the stored texts alone, so a snapshot never holds it: a restored
memory rebuilds it from its items the first time a query needs it.

Words: the text is NFKC-normalised and case-folded, then split into runs of letters and digits
of one script. Latin, Cyrillic, Greek... runs are words (a short English stop-word list aside).
Korean attaches particles to the word they mark (``강아지를``, ``강아지는``) and Chinese and
Japanese do not separate words at all, so a Hangul, Han or Kana run also gives its character
bigrams: ``강아지를`` and ``강아지는`` share ``강아`` and ``아지`` with the query ``강아지``.

>>> words("What's my dog's name? Max!")
['dog', 'name', 'max']
>>> words("우리 강아지를 찾았어요")
['우리', '강아지를', '강아', '아지', '지를', '찾았어요', '찾았', '았어', '어요']
>>> index = LexicalIndex()
>>> index.add(0, "My dog is called Max")
>>> index.add(1, "I fixed the squeaky door")
>>> slots, shares = index.scores(words("what is my dog's name?"))
>>> slots, [round(share, 2) for share in shares]
([0], [0.13])
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

# Scripts written without spaces between words, or with particles glued to them: Hangul
# (syllables, jamo, compatibility jamo), Han (CJK ideographs and extensions A), Hiragana and
# Katakana; Thai, Lao, Myanmar and Khmer. Their runs are kept apart from other letters so that
# "iPhone을" is two words, and give bigrams.
_CJK = (
    "\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
)
# Combining marks: Python's \w has no vowel sign or virama, which would cut Devanagari, Bengali,
# Tamil... words into single letters; marks over Latin, Greek, Cyrillic, Hebrew and Arabic too.
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

    >>> words("Fixing the SQUEAKY door, again")
    ['fixing', 'squeaky', 'door', 'again']
    >>> words("日本語")
    ['日本語', '日本', '本語']
    """
    return list(_words(text))


def _words(text: str) -> tuple[str, ...]:
    # Cached: a chat turn is usually looked up with, then stored (the same text twice).
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
    """Okapi BM25 over the texts of a store's slots, updated one item at a time.

    Written here rather than taken from ``rank-bm25`` or ``bm25s``: both index a fixed corpus
    (adding or removing one document rebuilds the whole index, and a bounded memory changes on
    every step), and both pull in dependencies for what is a dictionary of postings. Adding or
    removing an item touches only its own words; a query reads only the postings of its words,
    gathered in C (``list.extend``) and scored in one numpy pass.

    >>> index = LexicalIndex()
    >>> index.add(3, "tea with milk")
    >>> index.add(5, "green tea")
    >>> index.remove(3)
    >>> index.scores(["tea"])[0], len(index)
    ([5], 1)
    """

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
        found = _words(text)
        counts: dict[str, int] = {}
        for word in found:  # (a Counter costs more than the loop on a turn's dozen words)
            counts[word] = counts.get(word, 0) + 1
        postings = self._postings
        for word, count in counts.items():
            posting = postings.get(word)
            if posting is None:
                postings[word] = {slot: count}
            else:
                posting[slot] = count
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
        postings = self._postings
        for word in terms:
            posting = postings[word]
            del posting[slot]
            if not posting:
                del postings[word]

    def scores(self, query: list[str]) -> tuple[list[int], list[float]] | None:
        """The slots holding at least one of ``query``'s words (each distinct word counted
        once) and their BM25 scores as a share of the most the query could score, in
        ``(0, 1]``; ``None`` when no item holds any of the words.

        The ceiling is every query word matched with a saturated count, so the share says how
        much of what the query asks for (weighted by how rare each word is here) an item holds:
        comparable across queries and memories, as a raw BM25 sum is not.
        """
        n = len(self._terms)
        if not n or not query:
            return None
        postings = self._postings
        found: list[tuple[float, dict[int, int]]] = []
        ceiling = 0.0
        matched = 0
        log = math.log
        for word in dict.fromkeys(query):
            posting = postings.get(word)
            df = len(posting) if posting is not None else 0
            idf = log(1.0 + (n - df + 0.5) / (df + 0.5))
            ceiling += idf
            if posting is not None:
                found.append((idf, posting))
                matched += df
        if not found:
            return None
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
        idf (rare words count most), in ``[0, 1]``; 0 for a query without words.

        >>> index = LexicalIndex()
        >>> index.add(0, "Max chased the cat")
        >>> index.add(1, "I fed the cat")
        >>> index.coverage(["max", "cat"]), index.coverage(["dog"])
        (1.0, 0.0)
        """
        n = len(self._terms)
        held = every = 0.0
        for word in dict.fromkeys(query):
            posting = self._postings.get(word)
            df = len(posting) if posting is not None else 0
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            every += idf
            held += idf if df else 0.0
        return held / every if every else 0.0

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
