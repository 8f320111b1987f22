"""The look-up that finds an offer's repeats cheaply must never miss one the rule accepts: texts
that normalise alike share a word key, and the word sketches of two repeats differ by at most
``SKETCH_SLACK`` bits. The similarities a retrieval computed are reused by the offer of the
same vector, and never once the table has changed."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solar_bench.rewording import reword
from solar_core import SolarMemory
from solar_core.retrieval.item_table import ItemTable
from solar_core.retrieval.lexical import word_tuple
from solar_core.retrieval.repeats import SKETCH_SLACK, is_repeat, normalise, sketch, word_key

#: characters where normalising and the keyword index could disagree: ASCII punctuation and
#: symbols, Unicode quotes, dashes and ellipses, ligatures, full-width forms, sharp s, Greek,
#: combining marks, an Indic letter and sign, CJK, Arabic-Indic digits, an underscore
PIECES = list(
    "aZ09 .,;:!?'\"-_()[]{}$%&*+/<=>@#^`|~\t\n’‘“”…—–ﬁﬂＡａ１　ßΣς\u0301\u0915\u093e\u0970漢字٣"
) + ["don't", "cannot", "mustn't", "I'm", "it's", "really", "tomorrow", "Straße"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
def test_a_word_key_depends_on_the_normalised_text_only(text: str) -> None:
    # so two texts that normalise alike have the same key: the look-up by key finds every
    # exact repeat, whatever the cosine of the two
    assert word_key(text) == word_tuple(normalise(text))


SENTENCES = [
    "Caroline: I'm really excited about the pottery class next Saturday, it's been a long "
    "time since I made something with my hands!",
    "Melanie: We honestly couldn't believe how beautiful the mountains were this morning",
    "John: I cannot wait to show you the photographs from our trip to Portugal",
    "Gina: My daughter mustn't forget her violin lesson tomorrow afternoon, basically",
    "Andrew: Yeah, I've literally been training every single weekend for the marathon",
]


def test_the_sketches_of_two_repeats_are_close() -> None:
    rng = random.Random(7)
    checked = 0
    for text in SENTENCES:
        speaker, _, said = text.partition(": ")
        for i in range(300):
            new = reword(said, rng) if i % 2 else reword(reword(said, rng), rng)
            new = f"{speaker}: {new}"
            if is_repeat(new, text):
                checked += 1
                apart = sketch(word_key(new)) ^ sketch(word_key(text))
                assert apart.bit_count() <= SKETCH_SLACK, (text, new)
    assert checked > 500


def test_the_largest_edits_stay_within_the_slack() -> None:
    # a typo, a misspelt filler changed, a "cannot": the most the sketch can move
    old = "Maria: I cannot believe the restaurant closed, realy, after twenty years downtown"
    new = "Maria: I can not believe the restuarant closed, actualy, after twenty years downtown"
    assert is_repeat(new, old)
    assert (sketch(word_key(new)) ^ sketch(word_key(old))).bit_count() <= SKETCH_SLACK


def test_an_exact_repeat_far_away_by_cosine_is_found() -> None:
    # the offer's vector is orthogonal to the stored item's, and five others are nearer: the
    # word key still finds it
    memory = SolarMemory("lru", capacity=20, dim=8, seed=0)
    first = memory.add("Ana: Hello, World!", embedding=np.eye(8)[0])
    for i in range(1, 7):
        memory.add(f"Ana: distraction number {i} here", embedding=np.eye(8)[1] + 0.1 * i)
    decision = memory.add("ana:   hello world", embedding=np.eye(8)[1])
    assert (decision.reason, decision.item_id) == ("repeat", first.item_id)


def test_a_retrieval_s_similarities_serve_the_offer_of_the_same_vector() -> None:
    table = ItemTable(dim=2, capacity=4)
    a = np.asarray([1.0, 0.0], dtype=np.float32)
    b = np.asarray([0.0, 1.0], dtype=np.float32)
    table.insert("m0", a, payload=None)
    first = table.similarities(a)
    first[:] = 9.0  # a caller writing into its array changes no later answer
    assert table.similarities(a.copy()).tolist() == [1.0]
    table.insert("m1", b, payload=None)  # a change: computed again
    assert table.similarities(a).tolist() == [1.0, 0.0]
    table.remove(1)
    table.insert("m2", -a, payload=None)  # the same slot and size, another vector
    assert table.similarities(a).tolist() == [1.0, -1.0]
    table.clear()
    table.insert("m3", b, payload=None)
    assert table.similarities(a).tolist() == [0.0]
