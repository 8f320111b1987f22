"""The default embedder: static word-piece vectors distilled from all-MiniLM-L6-v2, numpy only.

A text's vector is the normalised mean of its word pieces' vectors, split as MiniLM's tokenizer
splits it (an unknown word is skipped). The work is linear in the text however crafted, and
the caches are bounded. See DESIGN.md ("The default embedder").

>>> embedder = StaticEmbedder()
>>> vectors = embedder.embed(["My dog Max loves the beach", "our puppy likes the sea", "tax forms"])
>>> vectors.shape, vectors.dtype.name
((3, 256), 'float32')
>>> bool(vectors[0] @ vectors[1] > vectors[0] @ vectors[2])
True
>>> embedder.pieces("Unaffable café!")
['una', '##ffa', '##ble', 'cafe', '!']
"""

from __future__ import annotations

import re
import sys
import threading
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from importlib import resources
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

#: in ``solar_core/weights/``: ``tokens`` (UTF-8, one per line) and ``vectors`` (float16)
WEIGHTS = "minilm-static-256.npz"
#: BERT's limit: a longer "word" is one unknown token
_MAX_WORD = 100
#: the bytes the cache of words' pieces may take (a dict slot counted as _SLOT_BYTES)
_CACHE_BYTES = 16 << 20
_SLOT_BYTES = 3 * 24 + 3 * 8
#: the most alternatives the continuation pieces' pattern tries at one point of a word
_FANOUT = 4
#: the non-ASCII characters whose basic tokenization is remembered at once (~7 MiB at most)
_TABLE_CHARS = 1 << 16
#: texts with more words than this are summed by counting (one product), not a row per piece
_COUNT_ABOVE = 4096

# BERT's ASCII punctuation (every printable non-alphanumeric) and dropped controls (all but
# tab, newline and carriage return; the C1 ones too beyond ASCII).
_ASCII_PUNCT = r"!-/:-@\[-`{-~"
_ASCII_WORDS = re.compile(rf"[^\s{_ASCII_PUNCT}]+|[{_ASCII_PUNCT}]")
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _trie_pattern(pieces: Sequence[str]) -> str:
    """A regular expression whose first match at a position is the longest of ``pieces``
    starting there (BERT's greedy longest match), shaped as a trie."""
    trie: dict[str, Any] = {}
    for piece in pieces:
        node = trie
        for char in piece:
            node = node.setdefault(char, {})
        node[""] = {}  # a piece ends here

    def branch(node: dict[str, Any]) -> str:
        # a run of single-child nodes where no piece ends is one literal (and no recursion)
        run = ""
        while len(node) == 1 and "" not in node:
            ((char, node),) = node.items()
            run += re.escape(char)
        children = sorted((char, child) for char, child in node.items() if char)
        if not children:
            return run
        body = choice([(char, re.escape(char) + branch(child)) for char, child in children])
        if "" in node:  # a piece ends here: a longer one first, else this one
            body = body + "?" if len(children) > 1 else "(?:" + body + ")?"
        return run + body

    def choice(alternatives: list[tuple[str, str]]) -> str:
        # Many children (the root has ~1,000) are cut into ranges of characters, each behind one
        # lookahead: a position costs tens of checks, not a thousand.
        if len(alternatives) == 1:
            return alternatives[0][1]
        if len(alternatives) <= _FANOUT:
            return "(?:" + "|".join(pattern for _, pattern in alternatives) + ")"
        size = -(-len(alternatives) // _FANOUT)
        ranges = []
        for at in range(0, len(alternatives), size):
            part = alternatives[at : at + size]
            low, high = re.escape(part[0][0]), re.escape(part[-1][0])
            ranges.append(f"(?=[{low}-{high}]){choice(part)}")
        return "(?:" + "|".join(ranges) + ")"

    return branch(trie)


class _Pieces:
    """A vocabulary's word pieces for the greedy split: ``first`` and ``rest`` (word-initial and
    continuation pieces, without ``##``, to rows) and ``scan`` (a remainder's pieces at once)."""

    __slots__ = ("first", "rest", "longest", "scan", "stray")

    def __init__(self, vocab: dict[str, int]) -> None:
        self.first = vocab
        self.rest = {token[2:]: row for token, row in vocab.items() if token.startswith("##")}
        self.rest.pop("", None)  # "##" alone spells nothing
        self.longest = max((len(t) for t in vocab if not t.startswith("##")), default=0)
        self.scan = re.compile(_trie_pattern(sorted(self.rest)) or "(?!)")
        # a character no continuation piece holds: a word's remainder with one is unknown
        held = "".join(re.escape(char) for char in sorted(set("".join(self.rest))))
        self.stray = re.compile(f"[^{held}]" if held else "(?s:.)")

    def split(self, word: str) -> tuple[int, ...]:
        """The rows of ``word``'s greedy longest-match pieces, ``()`` if none spells it."""
        first = self.first
        for end in range(min(len(word), self.longest), 0, -1):
            row = first.get(word[:end])
            if row is not None:
                break
        else:
            return ()
        if end == len(word):
            return (row,)
        if self.stray.search(word, end):
            return ()
        rest = self.scan.findall(word, end)
        if "".join(rest) != word[end:]:
            return ()  # some position of the word starts no piece: the word is unknown
        return (row, *map(self.rest.__getitem__, rest))


#: the code points BERT counts as CJK ideographs
_CJK = re.compile(
    "[\u4e00-\u9fff\u3400-\u4dbf\U00020000-\U0002a6df\U0002a700-\U0002b73f\U0002b740-\U0002b81f"
    "\U0002b820-\U0002ceaf\uf900-\ufaff\U0002f800-\U0002fa1f]"
)


def _basic(char: str) -> str | None:
    """What BERT's basic tokenizer makes of one character (after NFD): a space, nothing (controls,
    accents), itself between spaces (punctuation, CJK ideographs), or itself in lower case."""
    code = ord(char)
    category = unicodedata.category(char)
    if char in "\t\n\r" or category in ("Zs", "Zl", "Zp"):
        return " "
    if code == 0xFFFD or category.startswith("C") or category == "Mn":
        return None
    if (33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126) or (
        category.startswith("P") or _CJK.match(char)
    ):
        return " " + char.lower() + " "
    return char.lower()


class _BasicTable(dict[int, "str | None"]):
    """:func:`_basic` as a ``str.translate`` table, filled as met, emptied past _TABLE_CHARS."""

    def __missing__(self, code: int) -> str | None:
        value = _basic(chr(code))
        if len(self) >= _TABLE_CHARS:
            self.clear()
        self[code] = value
        return value


_BASIC = _BasicTable()


class StaticEmbedder:
    """MiniLM's word pieces as static vectors (256-d, unit rows). Loaded on the first
    :meth:`embed` (thread-safe), shared by every instance; a pickle carries no weights."""

    DIM = 256
    #: the name of the shipped model (benchmarks cache vectors under it)
    MODEL = "minilm-static-256"
    #: the characters of a text the vector reads (a longer text's vector is its prefix's)
    MAX_CHARS = 1 << 20

    _shared: dict[str, Any] = {}
    _shared_lock = threading.Lock()
    #: the last text embedded alone (the very object), the vocabulary (so the table) and its
    #: vector: a step embeds a turn for the memory, then the salience prior asks for it again
    _recent: tuple[str, dict[str, int], F32] | None = None

    def __init__(self) -> None:
        self._table: F32 | None = None
        self._vocab: dict[str, int] = {}
        self._pieces: _Pieces | None = None
        self._cache: dict[str, tuple[int, ...]] = {}
        self._cache_bytes = 0  # what the cache holds, as _CACHE_BYTES counts it
        self._cache_lock = threading.Lock()
        self._unknown = 0  # the row of "[UNK]", once loaded

    @classmethod
    def of_table(cls, tokens: Sequence[str], table: F32) -> StaticEmbedder:
        """An embedder over a table of your own (a row per token; ``distill_static.py``)."""
        embedder = cls()
        embedder._table = np.asarray(table, dtype=np.float32)
        embedder._vocab = {token: row for row, token in enumerate(tokens)}  # (pieces: when split)
        embedder._unknown = embedder._vocab["[UNK]"]
        return embedder

    @property
    def dim(self) -> int:
        return self.DIM

    def _load(self) -> tuple[F32, dict[str, int]]:
        table = self._table
        if table is None:
            with StaticEmbedder._shared_lock:
                shared = StaticEmbedder._shared
                if not shared:
                    source = resources.files("solar_core") / "weights" / WEIGHTS
                    with source.open("rb") as handle, np.load(handle, allow_pickle=False) as npz:
                        tokens = npz["tokens"].tobytes().decode("utf-8").split("\n")
                        vectors = npz["vectors"].astype(np.float32)
                    if vectors.shape != (len(tokens), self.DIM):  # pragma: no cover - shipped
                        raise RuntimeError(f"{WEIGHTS}: unexpected shape {vectors.shape}")
                    shared["table"] = vectors
                    shared["vocab"] = {token: row for row, token in enumerate(tokens)}
                    shared["pieces"] = _Pieces(shared["vocab"])
                self._vocab = shared["vocab"]
                self._pieces = shared["pieces"]
                self._unknown = self._vocab["[UNK]"]
                table = self._table = shared["table"]
        return table, self._vocab

    @staticmethod
    def words(text: str) -> list[str]:
        """``text`` split into words and punctuation as BERT's uncased basic tokenizer does."""
        if text.isascii():
            return _ASCII_WORDS.findall(_ASCII_CONTROL.sub("", text).lower())
        return unicodedata.normalize("NFD", _CONTROL.sub("", text)).translate(_BASIC).split()

    def _split_words(self, words: Iterable[str], vocab: dict[str, int]) -> list[tuple[int, ...]]:
        """The word pieces of each of ``words``, from the cache or split and remembered (a word
        longer than _MAX_WORD is unknown); the cache is emptied when it would pass _CACHE_BYTES."""
        pieces = self._pieces
        if pieces is None or pieces.first is not vocab:  # a vocabulary given after loading
            pieces = self._pieces = _Pieces(vocab)
        known, split = self._cache.get, pieces.split
        out: list[tuple[int, ...]] = []
        found: list[tuple[str, tuple[int, ...]]] = []
        for word in words:
            ids = known(word)
            if ids is None:
                if len(word) > _MAX_WORD:
                    ids = ()
                else:
                    ids = split(word)
                    found.append((word, ids))
            out.append(ids)
        if not found:
            return out
        size_of = sys.getsizeof
        with self._cache_lock:  # (threads sharing an embedder must not lose a word's bytes)
            cache, held = self._cache, self._cache_bytes
            for word, ids in found:
                size = size_of(word) + size_of(ids) + _SLOT_BYTES
                if held + size > _CACHE_BYTES:
                    cache.clear()
                    held = 0
                cache[word] = ids
                held += size
            self._cache_bytes = held
        return out

    def ids(self, text: str) -> list[int]:
        """The rows of ``text``'s word pieces (of its first :attr:`MAX_CHARS` characters)."""
        _, vocab = self._load()
        return list(
            chain.from_iterable(self._split_words(self.words(text[: self.MAX_CHARS]), vocab))
        )

    def pieces(self, text: str) -> list[str]:
        """``text``'s word pieces (what :meth:`embed` averages)."""
        _, vocab = self._load()
        ids = self.ids(text)
        wanted = set(ids)
        names = {row: token for token, row in vocab.items() if row in wanted}
        return [names[row] for row in ids]

    def embed(self, texts: Sequence[str]) -> F32:
        table, vocab = self._load()
        out = np.zeros((len(texts), table.shape[1]), dtype=np.float32)
        for row, text in enumerate(texts):
            recent = StaticEmbedder._recent  # the prior embeds the text the memory just did
            if recent is not None and recent[0] is text and recent[1] is vocab:
                out[row] = recent[2]
                continue
            words = self.words(text[: self.MAX_CHARS])
            if len(words) > _COUNT_ABOVE:
                # each distinct word's pieces once, weighted by its count, times the table
                counts = Counter(words)
                pieces = self._split_words(counts, vocab)
                ids = list(chain.from_iterable(pieces))
                weights = np.repeat(
                    np.fromiter(counts.values(), np.float64, len(counts)),
                    np.fromiter(map(len, pieces), np.intp, len(pieces)),
                )
                total = np.bincount(ids, weights, minlength=len(table)).astype(np.float32) @ table
            else:
                found = list(chain.from_iterable(self._split_words(words, vocab)))
                total = table[found].sum(axis=0) if found else np.zeros(table.shape[1], "f4")
            if not total.any():
                # no piece the model knows (emoji alone): the unknown piece's, not a zero row
                total = table[self._unknown].copy()
            out[row] = total / max(float(np.linalg.norm(total)), 1e-30)
            if len(texts) == 1:
                StaticEmbedder._recent = (text, vocab, out[row].copy())
        return out

    def __getstate__(self) -> dict[str, Any]:
        # Not an empty dict: pickle protocols 0 and 1 would then skip __setstate__.
        return {"model": self.MODEL}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"StaticEmbedder({self.MODEL!r}, loaded={self._table is not None})"
