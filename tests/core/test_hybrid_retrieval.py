"""Hybrid retrieval: the keyword index, the fused ranking, the relevance floor."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solar_core import SolarMemory
from solar_core.persistence import MemoryStore
from solar_core.policies.deletion import PeriodicDeletion
from solar_core.retrieval.lexical import LexicalIndex, words
from solar_core.retrieval.ranking import DEFAULT_FLOORS, LEXICAL_WEIGHT
from tests.support.clock import Clock
from tests.support.memories import full_state, onehot, unit

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels

# -- words ------------------------------------------------------------------------------------


def test_words_fold_case_and_width_and_drop_english_stop_words() -> None:
    assert words("The DOG's Name") == ["dog", "name"]
    assert words("ＡＢＣ ｄｅｆ") == ["abc", "def"]  # full-width forms, NFKC
    assert words("naïve CAFÉ") == ["naïve", "café"]


def test_korean_words_give_bigrams_so_particles_do_not_hide_a_word() -> None:
    # 강아지를 (object particle) and 강아지는 (topic particle) are the same word, 강아지
    shared = set(words("강아지를")) & set(words("강아지는"))
    assert {"강아", "아지"} <= shared and {"강아", "아지"} <= set(words("강아지"))
    assert words("iPhone을 샀어") == ["iphone", "을", "샀어"]  # scripts kept apart


def test_the_index_scores_shares_in_zero_one() -> None:
    index = LexicalIndex()
    index.add(0, "tea tea tea")
    index.add(1, "coffee")
    found = index.scores(words("tea"))
    assert found is not None and found[0] == [0] and 0.0 < found[1][0] <= 1.0
    assert index.scores(words("juice")) is None
    assert index.scores([]) is None


def test_many_postings_score_as_few_do(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past a few dozen postings the shares are summed in numpy: the loop's numbers."""
    import solar_core.retrieval.lexical as lexical

    index = LexicalIndex()
    for slot in range(80):
        index.add(slot, f"tea number {slot} with {'milk' if slot % 3 else 'lemon'} tea")
    query = words("tea with lemon")
    by_numpy = index.scores(query)
    monkeypatch.setattr(lexical, "_PYTHON_POSTINGS", 10**9)
    by_loop = index.scores(query)
    assert by_numpy is not None and by_loop is not None
    assert sorted(by_numpy[0]) == sorted(by_loop[0]) == list(range(80))
    numpy_shares = dict(zip(*by_numpy, strict=True))
    loop_shares = dict(zip(*by_loop, strict=True))
    for slot in range(80):
        assert numpy_shares[slot] == pytest.approx(loop_shares[slot], rel=1e-12)
    assert loop_shares[0] > loop_shares[1]  # slot 0 has lemon, slot 1 milk


def test_the_index_can_be_checked_against_texts() -> None:
    index = LexicalIndex()
    index.add(0, "green tea")
    index.check({0: "green tea"})
    with pytest.raises(AssertionError):
        index.check({0: "black tea"})
    with pytest.raises(AssertionError):
        index.check({1: "green tea"})


# -- the memory's keyword side ---------------------------------------------------------------


def texts_memory(
    policy: str = "unlimited", capacity: int | None = None, **kw: object
) -> SolarMemory:
    return SolarMemory(policy, capacity, embedder="hash", seed=0, **kw)  # type: ignore[arg-type]


def lexical_ids(memory: SolarMemory, query: str) -> list[str]:
    return [h.id for h in memory.retrieve(query, k=10, record=False, min_score=None)]


def test_a_korean_question_finds_its_turn_whatever_the_particles() -> None:
    memory = texts_memory(retrieval="lexical")
    memory.add("우리 강아지 이름은 초코예요", item_id="dog")
    memory.add("내일 회의는 세 시에 시작해요", item_id="meeting")
    assert lexical_ids(memory, "강아지를 찾았어요") == ["dog"]
    assert lexical_ids(memory, "회의가 언제야?") == ["meeting"]


def test_the_keyword_index_follows_evictions_removals_and_clears() -> None:
    memory = texts_memory("fifo", 2, retrieval="lexical")
    memory.add("my dog is called Max", item_id="dog")
    assert lexical_ids(memory, "dog") == ["dog"]  # the index is built now
    memory.add("the door squeaks", item_id="door")
    memory.add("I drink green tea", item_id="tea")  # evicts "dog"
    assert lexical_ids(memory, "dog") == []
    assert lexical_ids(memory, "tea") == ["tea"]
    memory.remove("tea")
    assert lexical_ids(memory, "tea") == []
    memory.check_invariants()  # the index agrees with the stored texts
    memory.clear()
    assert lexical_ids(memory, "door") == []
    memory.add("a new door", item_id="new")
    assert lexical_ids(memory, "door") == ["new"]
    memory.check_invariants()


def test_the_keyword_index_follows_expiry_and_deletion_sweeps() -> None:
    clock = Clock()
    memory = SolarMemory(
        "unlimited", None, embedder="hash", seed=0, clock=clock, retrieval="lexical"
    )
    memory.add("parking in lot B today", item_id="parking", valid_until=clock() + 10)
    memory.add("my dog is called Max", item_id="dog")
    assert lexical_ids(memory, "parking lot") == ["parking"]
    clock.now += 20
    memory.lifecycle.expire()
    assert lexical_ids(memory, "parking lot") == []
    swept = SolarMemory(
        "fifo", 10, embedder="hash", seed=0, retrieval="lexical",
        deletion=PeriodicDeletion(window=2),
    )  # fmt: skip
    for i in range(8):
        swept.add(f"note{i} filler")
        assert lexical_ids(swept, f"note{i}") == [h.id for h in swept.items()][-1:]
    gone = [i for i in range(8) if f"m{i + 1}" not in swept]
    assert gone  # the deletion policy swept some
    for i in gone:
        assert lexical_ids(swept, f"note{i}") == []
    swept.check_invariants()


def test_a_restored_memory_rebuilds_the_index_and_ranks_the_same() -> None:
    memory = texts_memory("fifo", 5)
    for text in ["my dog is called Max", "green tea please", "the door squeaks", "tea time"]:
        memory.add(text)
    before = [(h.id, h.score) for h in memory.retrieve("tea for my dog", record=False)]
    copy = pickle.loads(pickle.dumps(memory))
    assert not [name for name in memory.state() if "lexical" in name]  # made again, not stored
    assert [(h.id, h.score) for h in copy.retrieve("tea for my dog", record=False)] == before


def test_a_reopened_scope_rebuilds_the_index(tmp_path: object) -> None:
    path = f"{tmp_path}/m.db"
    with MemoryStore(path, policy="fifo", capacity=3, embedder="hash", seed=0) as store:
        alice = store.scope(user="alice")
        for text in ["my dog is called Max", "green tea please", "the door squeaks", "tea"]:
            alice.add(text)
        before = [(h.id, h.score) for h in alice.retrieve("tea for my dog", record=False)]
    with MemoryStore(path, policy="fifo", capacity=3, embedder="hash", seed=0) as store:
        alice = store.scope(user="alice")
        after = [(h.id, h.score) for h in alice.retrieve("tea for my dog", record=False)]
        alice.check_invariants()
    assert after == before


# -- the fused ranking --------------------------------------------------------------------------


def test_hybrid_score_is_cosine_plus_weighted_share() -> None:
    memory = texts_memory()
    memory.add("my dog is called Max", item_id="dog")
    memory.add("green tea please", item_id="tea")
    query = "what is my dog called?"
    vector = memory.embed_query(query)
    store = memory.core.store
    found = store.lexical.scores(words(query))
    assert found is not None
    shares = dict(zip(*found, strict=True))
    hits = memory.retrieve(query, k=2, record=False, min_score=None)
    for hit in hits:
        slot = store.slot_of(hit.id)
        cosine = float(store.matrix[slot].dot(vector))
        expected = cosine + LEXICAL_WEIGHT * shares.get(slot, 0.0)
        assert hit.score == pytest.approx(expected, rel=1e-6)
    assert hits[0].id == "dog"


def test_words_rescue_an_item_the_vectors_rank_last() -> None:
    memory = SolarMemory("unlimited", None, dim=8, seed=0)
    memory.add("the invoice number is 4471", embedding=onehot(0), item_id="invoice")
    memory.add("weather talk", embedding=onehot(1), item_id="weather")
    query = "invoice 4471?"
    vector_only = memory.retrieve(query, embedding=onehot(1), k=1, record=False, min_score=None)
    assert [h.id for h in vector_only] == ["invoice"]  # its words outweigh a 0 cosine
    plain = SolarMemory("unlimited", None, dim=8, seed=0, retrieval="vector")
    plain.add("the invoice number is 4471", embedding=onehot(0), item_id="invoice")
    plain.add("weather talk", embedding=onehot(1), item_id="weather")
    assert [h.id for h in plain.retrieve(query, embedding=onehot(1), k=1)] == ["weather"]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=12),
    st.integers(0, 5),
    st.integers(1, 6),
    st.booleans(),
)
def test_without_shared_words_hybrid_ranks_exactly_as_vector(
    topics: list[int], asked: int, k: int, with_text: bool
) -> None:
    """Vector-only lookups, and text lookups whose words no item holds, rank and score as
    ``retrieval="vector"`` does (the synthetic workloads rank exactly as before)."""
    rng = np.random.default_rng(len(topics) * 31 + asked)
    memories = [SolarMemory("solar", 6, dim=8, seed=1, retrieval=r) for r in ("hybrid", "vector")]
    for i, topic in enumerate(topics):
        vector = unit(onehot(topic) + 0.3 * rng.normal(size=8))
        for memory in memories:
            memory.add(f"item {i} alpha", embedding=vector)
    query = unit(onehot(asked) + 0.3 * rng.normal(size=8))
    text = "zebra quokka" if with_text else None
    got = [
        [(h.id, h.score) for h in memory.retrieve(text, embedding=query, k=k)]
        for memory in memories
    ]
    assert got[0] == got[1]
    # and the policies learnt the same from them
    states = [[(i.id, dict(i.policy)) for i in memory.items()] for memory in memories]
    assert states[0] == states[1]


def test_lexical_returns_only_items_holding_a_query_word() -> None:
    memory = texts_memory(retrieval="lexical")
    memory.add("green tea", item_id="tea")
    memory.add("black coffee", item_id="coffee")
    hits = memory.retrieve("tea", k=5)
    assert [h.id for h in hits] == ["tea"] and 0.0 < hits[0].score <= 1.0
    assert memory.retrieve("juice", k=5) == []
    # a lookup by vector alone has no words: it ranks by vector
    assert len(memory.retrieve(embedding=memory.embed_query("tea"), k=5)) == 2


# -- the relevance floor ------------------------------------------------------------------------


def test_the_floor_drops_low_hits_and_credits_only_what_it_returns() -> None:
    memory = SolarMemory("solar", 10, dim=8, seed=0)
    memory.add("close", embedding=onehot(0), item_id="close")
    memory.add("far", embedding=unit(onehot(0) + 3 * onehot(1)), item_id="far")
    hits = memory.retrieve(embedding=onehot(0), k=2, min_score=0.5)
    assert [h.id for h in hits] == ["close"]
    assert memory.get("far").policy["alpha"] == 2.0  # not returned: no credit
    assert memory.get("close").policy["alpha"] == 3.0
    assert len(memory.retrieve(embedding=onehot(0), k=2, min_score=None)) == 2


def test_auto_floor_applies_to_text_lookups_only() -> None:
    memory = SolarMemory("unlimited", None, dim=8, seed=0)
    memory.add("opposite", embedding=-onehot(0))
    assert memory.retrieve(embedding=onehot(0)) != []  # a vector alone: no floor
    assert memory.retrieve("zebra", embedding=onehot(0)) == []  # text: DEFAULT_FLOORS
    assert DEFAULT_FLOORS["hybrid"] > -1.0


def test_a_memory_wide_floor_and_a_per_call_one() -> None:
    memory = SolarMemory("unlimited", None, dim=8, seed=0, min_score=0.9)
    memory.add("a", embedding=unit(onehot(0) + onehot(1)))
    assert memory.retrieve(embedding=onehot(0)) == []
    assert len(memory.retrieve(embedding=onehot(0), min_score=0.5)) == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"retrieval": "bm25"}, "retrieval must be one of 'hybrid', 'vector', 'lexical'"),
        ({"min_score": "high"}, "min_score must be a number, None"),
        ({"min_score": float("nan")}, "min_score must be a number"),
        ({"min_score": True}, "min_score must be a number"),
    ],
)
def test_bad_settings_are_refused_with_the_fix(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        SolarMemory(embedder="hash", **kwargs)  # type: ignore[arg-type]


def test_a_bad_floor_on_a_call_changes_nothing() -> None:
    memory = texts_memory("solar", 5)
    memory.add("green tea")
    before = full_state(memory)
    with pytest.raises(ValueError, match="min_score"):
        memory.retrieve("tea", min_score="high")  # type: ignore[arg-type]
    assert full_state(memory) == before


def test_stats_name_the_ranking_and_the_floor() -> None:
    stats = texts_memory().stats()
    assert stats["retrieval"] == "hybrid" and stats["min_score"] == "auto"


# -- found in review ----------------------------------------------------------------------------


def test_ties_break_by_slot_so_recording_what_was_shown_credits_it() -> None:
    """Equal lexical shares: a look and the recording of part of it must agree on which tied
    items they mean (argpartition alone picks arbitrary ones among ties)."""
    from solar_core.integrations.shown import record_shown

    for retrieval in ("lexical", "hybrid"):
        memory = SolarMemory("solar", 10, embedder="hash", retrieval=retrieval, seed=0)
        for word in ["one", "two", "three", "four"]:
            memory.add(f"tea at {word}", item_id=word)
        vector = memory.embed_query("tea")
        preview = memory.retrieve("tea", embedding=vector, k=3, record=False, min_score=None)
        for shown in ({preview[1].id}, {preview[2].id}, {preview[0].id, preview[2].id}):
            hits = record_shown(memory, vector, preview, shown, query="tea")
            assert {h.id for h in hits} == shown, (retrieval, shown)


def test_settings_are_checked_when_set_and_a_scope_set_by_hand_reopens(tmp_path: object) -> None:
    memory = texts_memory()
    with pytest.raises(ValueError, match="retrieval must be one of"):
        memory.retrieval = "Hybrid"
    with pytest.raises(ValueError, match="min_score must be"):
        memory.min_score = "high"
    path = f"{tmp_path}/m.db"
    with MemoryStore(path, embedder="hash") as store:
        scope = store.scope(user="a")
        scope.add("my dog is called Max")
        scope.min_score = 0  # an int: kept as the float it means
        assert scope.min_score == 0.0 and type(scope.min_score) is float
        scope.retrieve("dog")
    with MemoryStore(path, embedder="hash") as store:
        assert len(store.scope(user="a")) == 1


def test_words_keep_vowel_signs_and_split_unspaced_scripts() -> None:
    assert words("मेरे कुत्ते का नाम मैक्स है") == ["मेरे", "कुत्ते", "का", "नाम", "मैक्स", "है"]
    assert "กิน" not in words("ฉันชอบกินข้าว") and "กิ" in words("ฉันชอบกินข้าว")  # bigrams


def test_long_texts_are_not_kept_in_the_words_cache() -> None:
    from solar_core.retrieval import lexical

    before = lexical._cached_words.cache_info().currsize
    words("word " * 1000)
    assert lexical._cached_words.cache_info().currsize == before
    words("a short chat turn about tea")
    assert lexical._cached_words.cache_info().currsize <= before + 1


def test_a_zero_importance_never_makes_a_nan_hit() -> None:
    memory = SolarMemory(
        "unlimited", None, dim=4, seed=0, retrieval="lexical", importance_weight=1.0
    )
    memory.add("dog facts", embedding=np.ones(4))
    memory.add("old note", embedding=np.ones(4))
    memory.core.store.payload_at(memory.core.store.slot_of("m2")).importance = 0.0
    memory.core.store.payload_at(memory.core.store.slot_of("m1")).importance = 0.0
    hits = memory.retrieve("dog", embedding=np.ones(4), k=2)
    assert [h.id for h in hits] == ["m1"] and not np.isnan(hits[0].score)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(st.integers(0, 5), min_size=1, max_size=30),
    texts=st.lists(
        st.sampled_from(["tea", "milk tea", "coffee", "green tea leaves", "x"]),
        min_size=30,
        max_size=30,
    ),
    query=st.sampled_from(["tea", "milk", "coffee leaves", "green milk tea"]),
    k=st.integers(1, 8),
)
def test_the_short_hybrid_ranking_is_the_full_one(
    rows: list[int], texts: list[str], query: str, k: int
) -> None:
    """A plain hybrid lookup ranks among the word hits and the k nearest only: the same slots
    and scores as ranking every item, duplicate vectors (ties at the edge) included."""
    from solar_core.retrieval import ranking as fusion

    memory = SolarMemory("unlimited", None, dim=6, seed=0)
    for i, row in enumerate(rows):
        memory.add(texts[i], embedding=unit(onehot(row, 6) + 0.1 * onehot((row + 1) % 6, 6)))
    store = memory.core._store
    vector = unit(np.arange(1.0, 7.0, dtype=np.float32))
    short = fusion.fused(store, vector, query, "hybrid", k, (), None)
    # an excluded id that is not stored changes nothing but takes the full ranking
    full = fusion.fused(store, vector, query, "hybrid", k, ("absent",), None)
    if short is None or full is None:
        assert short is None and full is None
        return
    assert short[0].tolist() == full[0].tolist() and short[1] == full[1]


def test_the_short_hybrid_ranking_breaks_ties_at_the_edge_by_slot() -> None:
    """Many items share a vector: the k nearest by cosine are then a choice among equals, and
    the lower slots must win it (as in the full ranking), not whichever the partition chose."""
    from solar_core.retrieval import ranking as fusion

    rng = np.random.default_rng(0)
    vector = np.array([0.8, 0.6, 0.0, 0.0], np.float32)
    for _ in range(300):
        memory = SolarMemory("unlimited", None, dim=4, seed=0)
        for _ in range(int(rng.integers(3, 40))):
            text = "tea" if rng.random() < 0.2 else "zz"
            memory.add(text, embedding=onehot(int(rng.integers(0, 2)), 4))
        store = memory.core._store
        k = int(rng.integers(1, 6))
        short = fusion.fused(store, vector, "tea", "hybrid", k, (), None)
        full = fusion.fused(store, vector, "tea", "hybrid", k, ("absent",), None)
        assert (short is None) == (full is None)
        if short is not None and full is not None:
            assert short[0].tolist() == full[0].tolist() and short[1] == full[1]


# -- the relevance gate -----------------------------------------------------------------------

DOOR, MAX = "I fixed the squeaky door with some oil", "Max chased the neighbour's cat"


def gate_memory() -> SolarMemory:
    memory = SolarMemory("lfu", 10, dim=2, min_score="strict")
    memory.add(DOOR, embedding=[1.0, 0.0])
    memory.add(MAX, embedding=[0.6, 0.8])
    return memory


def credits(memory: SolarMemory | object) -> list[float]:
    return [item.policy["count"] for item in memory.items()]  # type: ignore[attr-defined]


def test_strict_returns_nothing_when_nothing_is_about_the_query() -> None:
    memory = gate_memory()
    far = [-0.6, 0.8]  # cosines -0.6 and 0.28: below the gate, and no word in common
    assert list(memory.retrieve("What's the capital of Peru?", embedding=far)) == []
    assert credits(memory) == [0.0, 0.0]  # nothing credited
    # the plain floor lets the same lookup through
    assert len(memory.retrieve("What's the capital of Peru?", embedding=far, min_score="auto"))


def test_strict_lets_a_near_item_or_a_known_name_through() -> None:
    memory = gate_memory()
    assert memory.retrieve("anything at all", embedding=[0.8, 0.6])  # cosine 0.96
    middling = [-0.493, 0.870]  # best cosine 0.4: passes only if the memory knows the words
    assert memory.retrieve("Max chased the cat?", embedding=middling)
    assert not memory.retrieve("Rex chased the dog?", embedding=middling)
    assert not memory.retrieve("Max chased the cat?", embedding=[-0.6, 0.8])  # cosine 0.28


def test_strict_gates_text_lookups_only() -> None:
    assert gate_memory().retrieve(embedding=[-0.6, 0.8])  # by vector alone: no gate, no floor
