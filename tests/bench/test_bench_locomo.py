"""The LoCoMo offline protocol (docs/benchmarks/locomo.md) and the on-disk embedding cache."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_bench import locomo, policy_spec
from solar_bench.embed_cache import EmbeddingCache, default_cache_dir
from solar_bench.locomo import (
    QA,
    Conversation,
    answer_tokens,
    distinct_texts,
    load_locomo,
    normalise_evidence,
    records,
    run_conversation,
)
from solar_bench.runner import LAMBDA
from solar_core import HashEmbedder, SolarMemory
from tests.support.locomo import LOCOMO, hash_vectors, qa_entry, write_locomo


# -- parsing ------------------------------------------------------------------------------------
def test_load_locomo(tmp_path: Path) -> None:
    convs = load_locomo(write_locomo(tmp_path))
    assert [c.sample_id for c in convs] == ["conv-a", "conv-b"]
    a, b = convs
    assert (len(a.qa), a.skipped) == (11, 1)
    assert (len(b.qa), b.skipped) == (10, 2)
    by_q = {qa.question: qa for qa in a.qa}
    adv = by_q["What did Ann realise after the race?"]
    assert adv.answer == "self-care is important" and adv.category == 5
    assert by_q["When did Ann paint a sunrise?"].answer == "2022"
    assert by_q["Where did Ann travel in summer?"].evidence == {"D8:6", "D9:17"}
    assert by_q["Who visited Ann in May?"].evidence == {"D1:3", "D1:4"}
    assert by_q["Which book did Ann read?"].evidence == {"D1:12"}
    assert by_q["What might Ann study?"].evidence == {"D1:9", "D1:11"}
    assert "What is junk evidence?" not in by_q
    assert {qa.answer for qa in b.qa} >= {"7", "2019"}
    qa = a.qa[0]
    assert qa.experience == "Q: When did Ann go hiking?\nCorrect: 7 May 2023"
    assert qa.category == 2


def test_load_locomo_keeps_file_order_and_missing_sample_id(tmp_path: Path) -> None:
    data = [{"qa": [qa_entry("q one?", "a", ["D1:1"]), qa_entry("q two?", "b", ["D1:2"])]}]
    (conv,) = load_locomo(write_locomo(tmp_path, data))
    assert conv.sample_id == "conv#0"
    assert [qa.question for qa in conv.qa] == ["q one?", "q two?"]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (["D8:6; D9:17"], {"D8:6", "D9:17"}),
        (["D1:3 D1:4"], {"D1:3", "D1:4"}),
        (["D", "D:11:26"], set()),
        (["D10:2;D10:3", "  D2:1  "], {"D10:2", "D10:3", "D2:1"}),
        (["D1:3", "D1:3"], {"D1:3"}),
        (["d1:3", "D1:3x", "XD1:3", "D1:", "S1:2"], set()),
        ([7, None, "D3:4"], {"D3:4"}),
        ("D1:3", set()),  # not a list
        (None, set()),
        ([], set()),
    ],
)
def test_normalise_evidence(raw: object, expected: set[str]) -> None:
    got = normalise_evidence(raw)
    assert isinstance(got, frozenset) and got == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The sunset, painted in 2022!", {"sunset", "painted", "in", "2022"}),
        ("A cat named Luna", {"cat", "named", "luna"}),
        ("self-care is important", {"self", "care", "is", "important"}),
        ("an apple; THE end", {"apple", "end"}),
        ("the a an", set()),
        ("", set()),
    ],
)
def test_answer_tokens(text: str, expected: set[str]) -> None:
    assert answer_tokens(text) == expected


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"qa": []}, "non-empty list"),
        ([], "non-empty list"),
        ([LOCOMO[0], {"sample_id": "x"}], "conversation #1 has no 'qa' list"),
        ([{"sample_id": "x", "qa": "nope"}], "conversation #0 has no 'qa' list"),
        (["not a dict"], "conversation #0"),
        ([{"sample_id": "x", "qa": [qa_entry("ok?", "a", ["D1:1"]), {"answer": "a"}]}],
         "x qa #1 has no 'question'"),
        ([{"sample_id": "x", "qa": [{"question": 3, "answer": "a"}]}], "x qa #0"),
    ],
)  # fmt: skip
def test_load_locomo_schema_errors(tmp_path: Path, data: object, match: str) -> None:
    path = write_locomo(tmp_path, data)
    with pytest.raises(ValueError, match=match) as err:
        load_locomo(path)
    assert str(path) in str(err.value)


def test_load_locomo_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(ValueError, match="not JSON") as err:
        load_locomo(path)
    assert str(path) in str(err.value)


def test_distinct_texts(tmp_path: Path) -> None:
    convs = load_locomo(write_locomo(tmp_path))
    texts = distinct_texts(convs)
    assert len(texts) == len(set(texts)) == 2 * (11 + 10)
    assert texts[:2] == [convs[0].qa[0].question, convs[0].qa[0].experience]
    twice = Conversation("dup", convs[0].qa[:2] + convs[0].qa[:1], 0)
    assert distinct_texts([twice]) == texts[:4]


# -- one conversation ---------------------------------------------------------------------------
def axis(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def crafted() -> tuple[Conversation, Callable[[str], np.ndarray]]:
    """5 QA; seed 42 orders them 3, 1, 2, 4, 0 (warm-up 4 steps, QA0 scored).

    Every question has the vector (5, 4, 3, 2, 1) on axes 0-4 and experience ``i`` lies on axis
    ``i``, so the scored question ranks the stored experiences 1, 2, 3, 4.
    """
    qas = [
        QA(
            "What did Ann paint?", "blue heron lake", frozenset({"D1:1", "D1:2", "D1:3", "D1:4"}), 1
        ),
        QA("What bird did Ann see?", "a heron", frozenset({"D1:1"}), 1),
        QA("Where did Ann swim?", "Lake Tahoe", frozenset({"D5:5"}), 1),
        QA("What colour is Ann's car?", "green", frozenset({"D1:3"}), 1),
        QA("What colour is the sky?", "blue", frozenset({"D1:4"}), 1),
    ]
    q = np.array([5, 4, 3, 2, 1, 0, 0, 0], dtype=np.float32)
    table = {qa.question: q / np.linalg.norm(q) for qa in qas}
    table.update({qa.experience: axis(i) for i, qa in enumerate(qas)})
    return Conversation("crafted", tuple(qas), 0), table.__getitem__


def test_crafted_order_is_random_random_seed_shuffle() -> None:
    order = list(range(5))
    random.Random(42).shuffle(order)
    assert order == [3, 1, 2, 4, 0]  # the premise of the crafted cases below


@pytest.mark.parametrize("feedback", [True, False])
def test_run_conversation_soft_hit_unlimited(feedback: bool) -> None:
    conv, vector = crafted()
    m = run_conversation(conv, vector, "unlimited", 10, 42, feedback=feedback)
    # stored 3, 1, 2, 4; top-3 = 1, 2, 3 -> evidence {D1:1, D5:5, D1:3}: 2 of QA0's 4 ids
    assert m["score"] == pytest.approx(0.5)
    assert m["hit_rate"] == 1.0
    assert m["first_half"] == m["second_half"] == pytest.approx(0.5)
    # gold {blue, heron, lake}: heron (QA1) and lake (QA2) retrieved, blue (QA4) not
    assert m["recall"] == pytest.approx(2 / 3)
    # every warm-up step retrieved nothing useful: s = 0, 0, 0, 0, then 0.5
    assert m["cost"] == pytest.approx(4.5 + LAMBDA * 5)
    assert m["store_rate"] == 1.0 and m["modifications"] == 5


def test_run_conversation_soft_hit_fifo_small() -> None:
    conv, vector = crafted()
    m = run_conversation(conv, vector, "fifo", 3, 42, feedback=False)
    # FIFO K=3 evicted QA3: the store holds 1, 2, 4 -> evidence {D1:1, D5:5, D1:4}
    assert m["score"] == pytest.approx(0.5)
    assert m["recall"] == pytest.approx(1.0)  # blue, heron, lake all retrieved
    assert m["modifications"] == 5


def test_run_conversation_k_one() -> None:
    conv, vector = crafted()
    m = run_conversation(conv, vector, "unlimited", 10, 42, feedback=False, k=1)
    assert m["score"] == pytest.approx(0.25)  # only QA1: {D1:1}
    assert m["recall"] == pytest.approx(1 / 3)


def staircase(n: int, seed: int = 42) -> Conversation:
    """``n`` QA whose soft hit at shuffled position ``t`` is exactly ``1 / (1 + t)`` (0 at t = 0).

    Every QA holds ``D1:1`` plus ``t`` ids of its own, so any non-empty retrieval covers 1 id.
    """
    perm = list(range(n))
    random.Random(seed).shuffle(perm)
    qas: list[QA | None] = [None] * n
    for t, i in enumerate(perm):
        evidence = frozenset({"D1:1", *(f"D{t + 2}:{j}" for j in range(t))})
        qas[i] = QA(f"question number {i}?", f"answer {i}", evidence, 1)
    return Conversation(f"stairs{n}", tuple(q for q in qas if q is not None), 0)


@pytest.mark.parametrize(("n", "warmup"), [(2, 1), (5, 4), (11, 8), (14, 11), (20, 16)])
def test_run_conversation_warmup_is_the_80_percent_floor(n: int, warmup: int) -> None:
    m = run_conversation(staircase(n), hash_vectors(), "unlimited", 5, 42, feedback=False)
    s = [1 / (1 + t) for t in range(warmup, n)]
    assert m["score"] == pytest.approx(np.mean(s))
    half = len(s) // 2
    assert m["second_half"] == pytest.approx(np.mean(s[half:]))
    if half:
        assert m["first_half"] == pytest.approx(np.mean(s[:half]))
    assert m["hit_rate"] == 1.0
    assert m["cost"] == pytest.approx(sum(1 - 1 / (1 + t) for t in range(1, n)) + 1 + LAMBDA * n)


def test_run_conversation_mean_size_is_the_scored_mean() -> None:
    # unlimited, 11 QA, warm-up 8: the store holds 8, 9, 10 items at the scored retrievals
    m = run_conversation(staircase(11), hash_vectors(), "unlimited", 5, 42, feedback=False)
    assert m["mean_size"] == pytest.approx(9.0)


@pytest.mark.parametrize("feedback", [True, False])
def test_run_conversation_feedback_is_like_and_soft_hit(
    feedback: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[tuple[bool | None, float | None, int]] = []

    class Spy(SolarMemory):
        def feedback(self, *, like=None, score=None, retrieval=None):  # type: ignore[no-untyped-def]
            given.append((like, score, len(retrieval)))
            super().feedback(like=like, score=score, retrieval=retrieval)

    monkeypatch.setattr(policy_spec, "SolarMemory", Spy)
    conv, vector = crafted()
    run_conversation(conv, vector, "solar", 10, 42, feedback=feedback)
    if not feedback:
        assert given == []
    else:
        # s = 0, 0, 0, 0, 0.5 (see the unlimited case); like iff s >= 0.5; the step's own hits
        assert given == [(False, 0.0, 0), (False, 0.0, 1), (False, 0.0, 2), (False, 0.0, 3),
                         (True, 0.5, 3)]  # fmt: skip


def test_run_conversation_on_fixture_is_deterministic(tmp_path: Path) -> None:
    (conv, _) = load_locomo(write_locomo(tmp_path))
    vector = hash_vectors()
    a = run_conversation(conv, vector, "solar", 5, 1337, feedback=True)
    b = run_conversation(conv, vector, "solar", 5, 1337, feedback=True)
    assert a == b
    assert a["mean_size"] <= 5


# -- records ------------------------------------------------------------------------------------
def spy_runs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []
    real = locomo.run_conversation

    def spy(conv: Conversation, vector: Any, policy: str, capacity: int, seed: int,
            **kw: Any) -> dict[str, float]:  # fmt: skip
        calls.append((conv.sample_id, policy, capacity, seed, kw["feedback"]))
        return real(conv, vector, policy, capacity, seed, **kw)

    monkeypatch.setattr(locomo, "run_conversation", spy)
    return calls


def test_records_settings_and_unlimited_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    convs = load_locomo(write_locomo(tmp_path))
    calls = spy_runs(monkeypatch)
    ticks: list[int] = []
    recs = records(convs, hash_vectors(), ["fifo", "unlimited"], [3, 6], [42, 7],
                   progress=lambda: ticks.append(1))  # fmt: skip
    # 2 settings x 2 K x 2 policies x 2 conversations x 2 seeds
    assert len(recs) == 32 == len(ticks)
    assert {r["setting"] for r in recs} == {"feedback", "no feedback"}
    fifo_runs = [c for c in calls if c[1] == "fifo"]
    unl_runs = [c for c in calls if c[1] == "unlimited"]
    assert len(fifo_runs) == 16 and len(unl_runs) == 8  # unlimited: once per unit and setting
    assert {c[4] for c in calls if c[1] == "unlimited"} == {True, False}
    for r in recs:
        assert r["workload"] == "locomo" and r["unit"][1] == r["seed"]
        assert r["unit"][0] in {"conv-a", "conv-b"}
    metrics = ("score", "hit_rate", "recall", "cost", "store_rate", "modifications")
    for setting in ("feedback", "no feedback"):
        for unit in {r["unit"] for r in recs}:
            at = [r for r in recs if r["policy"] == "unlimited" and r["setting"] == setting
                  and r["unit"] == unit]  # fmt: skip
            assert sorted(r["capacity"] for r in at) == [3, 6]
            assert all(at[0][x] == at[1][x] for x in metrics)


def test_records_feedback_flag_matches_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    convs = load_locomo(write_locomo(tmp_path))
    calls = spy_runs(monkeypatch)
    records(convs, hash_vectors(), ["fifo"], [4], [42], settings=["feedback"])
    assert calls and all(c[4] is True for c in calls)
    calls.clear()
    recs = records(convs, hash_vectors(), ["fifo"], [4], [42], settings=["no feedback"])
    assert calls and all(c[4] is False for c in calls)
    assert {r["setting"] for r in recs} == {"no feedback"}


def test_records_skip_conversations_with_fewer_than_twoqa_entry() -> None:
    one = Conversation("tiny", (QA("only?", "one", frozenset({"D1:1"}), 1),), 0)
    recs = records([one, staircase(5)], hash_vectors(), ["fifo"], [3], [42])
    assert {r["unit"][0] for r in recs} == {"stairs5"} and len(recs) == 2


def test_records_fifo_is_deterministic(tmp_path: Path) -> None:
    convs = load_locomo(write_locomo(tmp_path))
    runs = [records(convs, hash_vectors(), ["fifo", "lru"], [3, 5], [42, 1337]) for _ in range(2)]
    assert runs[0] == runs[1]
    assert any(r["score"] > 0 for r in runs[0])


# -- the embedding cache -----------------------------------------------------------------------
class CountingEmbedder:
    def __init__(self, dim: int = 16) -> None:
        self.inner = HashEmbedder(dim=dim)
        self.dim = dim
        self.batches: list[int] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(len(texts))
        return self.inner.embed(texts)


def test_embedding_cache_embeds_only_missing_and_persists(tmp_path: Path) -> None:
    made: list[CountingEmbedder] = []

    def factory() -> CountingEmbedder:
        made.append(CountingEmbedder())
        return made[-1]

    cache = EmbeddingCache(factory, "count-16", tmp_path / "cache")  # type: ignore[arg-type]
    texts = [f"text {i}" for i in range(130)]
    got = cache.vectors(texts + texts[:5])  # duplicates embedded once
    assert cache.embedded == 130 and made[0].batches == [64, 64, 2]
    assert cache.path == tmp_path / "cache" / "count-16.npz" and cache.path.exists()
    reference = HashEmbedder(dim=16).embed(texts)
    for i, t in enumerate(texts):
        assert got[t].dtype == np.float32
        np.testing.assert_array_equal(got[t], reference[i])
    more = cache.vectors(["text 0", "new one", "new two"])
    assert cache.embedded == 132 and made[1].batches == [2] and len(made) == 2
    assert set(more) == {"text 0", "new one", "new two"}

    again = EmbeddingCache(factory, "count-16", tmp_path / "cache")  # type: ignore[arg-type]
    back = again.vectors(texts + ["new one"])
    assert again.embedded == 0 and len(made) == 2  # the embedder is never even built
    np.testing.assert_array_equal(back["text 7"], got["text 7"])
    assert not list((tmp_path / "cache").glob("*.tmp*"))


def test_embedding_cache_names_are_separate(tmp_path: Path) -> None:
    a = EmbeddingCache(lambda: HashEmbedder(dim=8), "a", tmp_path)
    a.vectors(["x"])
    b = EmbeddingCache(lambda: HashEmbedder(dim=16), "b", tmp_path)
    assert b.vectors(["x"])["x"].shape == (16,) and b.embedded == 1


def test_default_cache_dir_respects_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOLAR_BENCH_CACHE", str(tmp_path / "env-cache"))
    assert default_cache_dir() == tmp_path / "env-cache"
    cache = EmbeddingCache(lambda: HashEmbedder(dim=8), "hash-8")
    assert cache.path == tmp_path / "env-cache" / "hash-8.npz"
    cache.vectors(["hello"])
    assert cache.path.exists()
    monkeypatch.delenv("SOLAR_BENCH_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "solar-memory"
