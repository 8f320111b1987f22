"""The conversation-memory protocol on dialogue turns (docs/benchmarks/dialogue.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_bench import dialogue as bench
from solar_bench.cli import main
from solar_bench.dialogue import (
    Dialogue,
    Question,
    Turn,
    dialogues_from,
    load_dialogues,
    oracle_turns,
    records,
    run_dialogue,
    schedule,
)

pytestmark = pytest.mark.ranking  # orders of cosine scores: CI runs them under two BLAS kernels


def turn(speaker: str, dia_id: str, text: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": dia_id, "text": text}


def qa(question: str, evidence: list[str]) -> dict[str, Any]:
    return {"question": question, "answer": "x", "evidence": evidence, "category": 1}


#: five turns in two sessions (listed out of order: session 10 comes after session 2)
RAW: list[dict[str, Any]] = [
    {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_10_date_time": "later",
            "session_10": [turn("Bo", "D10:1", "t3"), turn("Ann", "D10:2", "t4")],
            "session_2": [
                turn("Ann", "D2:1", "t0"),
                turn("Bo", "D2:2", "t1"),
                turn("Ann", "D2:3", "t2"),
            ],
        },
        "qa": [
            qa("q0", ["D2:1"]),
            qa("q4", ["D10:2"]),
            qa("q-both", ["D2:1; D10:2"]),
            qa("q-none", ["D7:7", "D"]),  # names no turn: skipped
        ],
    }
]


def one_hot(dim: int = 8) -> bench.Vectors:
    """Turn ``tN`` (and any text ending in it) -> basis vector N; ``q0`` -> turn 0's vector."""
    table = {"Ann: t0": 0, "Bo: t1": 1, "Ann: t2": 2, "Bo: t3": 3, "Ann: t4": 4}
    table |= {"q0": 0, "q4": 4, "q-both": 5}

    def vector(text: str) -> np.ndarray:
        v = np.full(dim, 0.01, np.float32)
        v[table[text]] = 1.0
        if text == "q-both":  # halfway between turns 0 and 4
            v[:] = 0.01
            v[0] = v[4] = 1.0
        return v

    return vector


def dialogue() -> Dialogue:
    return dialogues_from(RAW)[0]


# -- parsing ------------------------------------------------------------------------------------
def test_turns_follow_the_session_numbers_and_name_their_speaker() -> None:
    d = dialogue()
    assert [t.text for t in d.turns] == ["Ann: t0", "Bo: t1", "Ann: t2", "Bo: t3", "Ann: t4"]
    assert [t.dia_id for t in d.turns] == ["D2:1", "D2:2", "D2:3", "D10:1", "D10:2"]


def test_questions_keep_evidence_that_names_a_turn_and_know_their_last_one() -> None:
    d = dialogue()
    assert [(q.text, sorted(q.evidence), q.last) for q in d.questions] == [
        ("q0", ["D2:1"], 0),
        ("q4", ["D10:2"], 4),
        ("q-both", ["D10:2", "D2:1"], 4),
    ]
    assert d.skipped == 1


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ([], "non-empty list"),
        ({"qa": []}, "non-empty list"),
        ([{"qa": []}], "no 'conversation' and 'qa'"),
        ([{"conversation": {"session_1": [{"speaker": "A"}]}, "qa": []}], "without 'text'"),
        ([{"conversation": {}, "qa": [{"answer": "x"}]}], "without a 'question'"),
    ],
)
def test_a_file_that_is_not_locomo_is_named_in_the_error(
    tmp_path: Path, data: object, match: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=match) as err:
        load_dialogues(path)
    assert str(path) in str(err.value)


def test_not_json_is_a_value_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("{nope")
    with pytest.raises(ValueError, match="not JSON"):
        load_dialogues(path)


# -- the protocol -------------------------------------------------------------------------------
def test_fifo_keeps_the_last_k_turns_so_only_the_late_evidence_is_recalled() -> None:
    # K = 2 ends holding t3, t4: q0 finds nothing (0), q4 its turn (1), q-both half (0.5).
    out = run_dialogue(dialogue(), one_hot(), "fifo", 2, seed=1, mode="end")
    assert out["score"] == pytest.approx((0.0 + 1.0 + 0.5) / 3)
    assert out["store_rate"] == 1.0
    assert out["mean_size"] == pytest.approx((1 + 2 + 2 + 2 + 2) / 5)
    assert out["us_per_turn"] > 0


def test_storing_everything_recalls_every_evidence_turn_here() -> None:
    out = run_dialogue(dialogue(), one_hot(), "unlimited", 2, seed=1, mode="end")
    assert out["score"] == 1.0
    assert out["mean_size"] == 3.0


def test_the_oracle_keeps_the_most_cited_turns_earliest_first_on_ties() -> None:
    d = dialogue()
    # t0 and t4 are each cited twice: K = 1 keeps t0, so q0 and half of q-both are found.
    assert oracle_turns(d, 1) == [0]
    assert oracle_turns(d, 3) == [0, 4]  # uncited turns are never kept
    out = run_dialogue(d, one_hot(), bench.ORACLE, 1, seed=1, mode="end")
    assert out["score"] == pytest.approx((1.0 + 0.0 + 0.5) / 3)
    assert out["mean_size"] == 1.0


def test_interleaved_questions_come_after_their_evidence_and_depend_on_the_seed() -> None:
    d = Dialogue(
        "long",
        tuple(Turn(f"D1:{i}", f"t{i}") for i in range(200)),
        tuple(Question(f"q{i}", frozenset({f"D1:{i}"}), i) for i in range(0, 200, 7)),
        0,
    )
    plans = [schedule(d, seed) for seed in (1, 2)]
    for plan in plans:
        asked = [(step, q) for step, qs in plan.items() for q in qs]
        assert sorted(q.text for _, q in asked) == sorted(q.text for q in d.questions)
        assert all(q.last <= step < len(d.turns) for step, q in asked)
    assert plans[0] != plans[1]
    assert schedule(d, 1) == plans[0]


def test_interleaved_rates_each_question_with_its_recall(monkeypatch: pytest.MonkeyPatch) -> None:
    rated: list[tuple[float | None, int]] = []
    made = bench.memory_for

    def spy(policy: str, **kwargs: Any) -> Any:
        memory = made(policy, **kwargs)
        feedback = memory.feedback

        def recorded(**kw: Any) -> None:
            rated.append((kw.get("score"), kw["retrieval"].retrieval_id))
            feedback(**kw)

        memory.feedback = recorded  # type: ignore[method-assign]
        return memory

    monkeypatch.setattr(bench, "memory_for", spy)
    # FIFO K = 1 holds only the latest turn: q4 and q-both are asked after t4 (their last
    # evidence is the last turn) and find 1 and 1/2 of it; q0 finds t0 only if asked at once.
    for seed in range(6):
        rated.clear()
        out = run_dialogue(dialogue(), one_hot(), "fifo", 1, seed=seed, mode="interleaved")
        q0_step = next(
            s for s, qs in schedule(dialogue(), seed).items() for q in qs if q.text == "q0"
        )
        expected = [1.0 if q0_step == 0 else 0.0, 1.0, 0.5]
        assert sorted(score for score, _ in rated) == sorted(expected)
        assert all(rid is not None for _, rid in rated)  # each rated its own retrieval
        assert out["score"] == pytest.approx(np.mean(expected))
    rated.clear()
    run_dialogue(dialogue(), one_hot(), "fifo", 1, seed=3, mode="end")
    assert rated == []  # end mode only looks: nothing rated


def _ratings(monkeypatch: pytest.MonkeyPatch, mode: str, seed: int = 0) -> list[dict[str, Any]]:
    """Every ``feedback`` call of one run in ``mode`` (FIFO, K = 1), in order."""
    rated: list[dict[str, Any]] = []
    made = bench.memory_for

    def spy(policy: str, **kwargs: Any) -> Any:
        memory = made(policy, **kwargs)
        feedback = memory.feedback

        def recorded(**kw: Any) -> None:
            rated.append(kw)
            feedback(**kw)

        memory.feedback = recorded  # type: ignore[method-assign]
        return memory

    monkeypatch.setattr(bench, "memory_for", spy)
    run_dialogue(dialogue(), one_hot(), "fifo", 1, seed=seed, mode=mode)
    return rated


def test_a_mode_names_the_ratings_every_recall_gets(monkeypatch: pytest.MonkeyPatch) -> None:
    turns = len(dialogue().turns)
    disliked = _ratings(monkeypatch, "end+disliked")
    # every turn's recall, the first one (empty: nothing stored yet) too
    assert [kw.get("like") for kw in disliked] == [False] * turns
    randoms = [kw["score"] for kw in _ratings(monkeypatch, "end+random")]
    assert len(randoms) == turns and len(set(randoms)) == turns and all(0 <= s < 1 for s in randoms)
    assert randoms == [kw["score"] for kw in _ratings(monkeypatch, "end+random")]  # seeded
    overlaps = [kw["score"] for kw in _ratings(monkeypatch, "end+overlap")]
    assert len(overlaps) == turns and all(0 <= s <= 1 for s in overlaps)
    # interleaved+none asks the same questions and rates none; +disliked rates them too
    assert _ratings(monkeypatch, "interleaved+none") == []
    asked = len(dialogue().questions)
    assert len(_ratings(monkeypatch, "interleaved+disliked")) == turns + asked
    assert len(_ratings(monkeypatch, "interleaved")) == asked


def test_overlap_is_the_share_of_the_replys_words_in_the_recalled_turns() -> None:
    from types import SimpleNamespace as Hit

    assert bench.overlap("Yes, the CAT!", [Hit(text="a cat"), Hit(text="yes")]) == 2 / 3
    assert bench.overlap("", [Hit(text="a cat")]) == 0.0
    assert bench.overlap("cat", []) == 0.0


def test_a_bad_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="end or interleaved"):
        run_dialogue(dialogue(), one_hot(), "fifo", 2, seed=1, mode="later")


def test_records_run_a_policy_that_ignores_k_once_and_add_the_oracle(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, int, str]] = []
    real = bench.run_dialogue

    def counted(
        d: Dialogue,
        v: Any,
        policy: str,
        capacity: int,
        seed: int,
        mode: str,
        prior: Any = None,
        retrieval: str = "hybrid",
    ) -> Any:
        calls.append((policy, capacity, mode))
        return real(d, v, policy, capacity, seed, mode, prior, retrieval)

    monkeypatch.setattr(bench, "run_dialogue", counted)
    recs = records([dialogue()], one_hot(), ["fifo", "unlimited"], [1, 2], [5])
    keys = [(r["setting"], r["policy"], r["capacity"]) for r in recs]
    assert keys == [
        (mode, policy, k)
        for mode in ("end", "interleaved")
        for k in (1, 2)
        for policy in ("fifo", "unlimited", "oracle")
    ]
    assert sum(p == "unlimited" for p, _, _ in calls) == 2  # once per mode, not per K
    assert sum(p == "oracle" for p, _, _ in calls) == 2  # once per K, not per mode
    assert all(r["unit"] == ("c1", 5) and r["workload"] == "dialogue" for r in recs)


# -- the command --------------------------------------------------------------------------------
def test_the_command_writes_rows_for_both_modes_and_a_plot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(RAW))
    png = tmp_path / "dialogue.png"
    argv = ["dialogue", "--data", str(data), "--embedder", "hash", "--k", "2", "--seeds", "1",
            "--policies", "fifo,unlimited", "--format", "json", "--quiet",
            "--cache-dir", str(tmp_path), "--plot", str(png)]  # fmt: skip
    assert main(argv) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["setting"], r["policy"]) for r in rows] == [
        (mode, p) for mode in ("end", "interleaved") for p in ("fifo", "unlimited", "oracle")
    ]
    assert all(0.0 <= r["score"] <= 1.0 for r in rows)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_command_without_a_file_says_what_to_pass(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="--data must name a LoCoMo-format JSON file"):
        main(["dialogue", "--quiet"])


def test_a_bad_mode_list_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["dialogue", "--modes", "end,later"])
    assert "mode must be end or interleaved" in capsys.readouterr().err
