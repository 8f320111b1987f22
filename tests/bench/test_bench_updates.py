"""``solar-bench updates``: facts that change and turns said again (docs/benchmarks/updates.md)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from solar_bench import updates as bench
from solar_bench.cli import main
from solar_bench.dialogue import Dialogue, Question, Turn
from solar_bench.updates import (
    AS_OF_QUESTIONS,
    ATTRIBUTES,
    CHANGE,
    CURRENT_QUESTIONS,
    FACT,
    INITIAL,
    PET_KINDS,
    VALUES,
    Chain,
    FactQuestion,
    Setup,
    Verdict,
    conversations_from,
    fact_stream,
    judge,
    mentions,
    say,
    scripted_extractor,
    with_repeats,
)
from solar_core import SolarMemory

DATES = [
    "1:56 pm on 8 May, 2023",
    "1:14 pm on 25 May, 2023",
    "7:55 pm on 9 June, 2023",
    "10:37 am on 27 June, 2023",
    "8:18 pm on 3 July, 2023",
    "4:33 pm on 12 July, 2023",
    "1:51 pm on 15 July, 2023",
    "3:31 pm on 23 August, 2023",
]
SAID = [
    ("Ann", "Hi Bo! How have you been?"),
    ("Bo", "Busy with work, but good. I went hiking on Sunday."),
    ("Ann", "I painted a sunrise last week."),
    ("Bo", "That sounds lovely, send me a photo!"),
]


def raw(sessions: int = len(DATES), dates: list[str] | None = None) -> list[dict[str, Any]]:
    """One conversation of ``sessions`` sessions of 4 turns each, with two questions."""
    body: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bo"}
    for n in range(1, sessions + 1):
        body[f"session_{n}_date_time"] = (dates or DATES)[n - 1]
        body[f"session_{n}"] = [
            {"speaker": who, "dia_id": f"D{n}:{i + 1}", "text": f"{text} ({n})"}
            for i, (who, text) in enumerate(SAID)
        ]
    qa = [
        {"question": "What did Ann paint?", "answer": "a sunrise", "evidence": ["D1:3"]},
        {"question": "Where did Bo go?", "answer": "hiking", "evidence": ["D2:2", "D5:2"]},
    ]
    return [{"sample_id": "tiny", "conversation": body, "qa": qa}]


def conversation() -> bench.Conversation:
    return conversations_from(raw())[0]


SEEDS = range(12)


# -- the conversation and its dates ------------------------------------------------------------
def test_turns_carry_their_session_times() -> None:
    conv = conversation()
    assert conv.speakers == ("Ann", "Bo")
    assert len(conv.turns) == 4 * len(DATES)
    assert [bench.day(t.time) for t in conv.turns[::4]] == [
        "8 May 2023", "25 May 2023", "9 June 2023", "27 June 2023", "3 July 2023",
        "12 July 2023", "15 July 2023", "23 August 2023",
    ]  # fmt: skip
    assert [t.session for t in conv.turns[::4]] == list(range(1, 9))
    assert conv.turns[2].text == "Ann: I painted a sunrise last week. (1)"
    assert [q.text for q in conv.questions] == ["What did Ann paint?", "Where did Bo go?"]
    assert [t.text for t in conv.dialogue.turns] == [t.text for t in conv.turns]


def test_a_session_without_a_date_is_named(tmp_path: Path) -> None:
    data = raw()
    del data[0]["conversation"]["session_3_date_time"]
    path = tmp_path / "x.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="tiny session_3 has no date") as err:
        bench.load_conversations(path)
    assert str(path) in str(err.value)


# -- the generator -----------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_each_chain_changes_one_to_four_times_to_new_values(seed: int) -> None:
    stream = fact_stream(conversation(), seed)
    assert stream.chains
    for chain in stream.chains:
        assert 1 <= len(chain.values) - 1 <= 4
        assert len(set(chain.values)) == len(chain.values)  # never back to an earlier value
        assert len(chain.since) == len(chain.dia_ids) == len(chain.values)
    for attribute in ATTRIBUTES:  # the two speakers' values of an attribute never meet
        values = [v for c in stream.chains if c.attribute == attribute for v in c.values]
        assert len(values) == len(set(values))
    for speaker in ("Ann", "Bo"):
        mine = [c.attribute for c in stream.chains if c.speaker == speaker]
        assert len(mine) == len(set(mine)) and 3 <= len(mine) <= 5


@pytest.mark.parametrize("seed", SEEDS)
def test_statements_are_dated_within_the_sessions_a_day_apart(seed: int) -> None:
    conv = conversation()
    stream = fact_stream(conv, seed)
    sessions = {t.session: t.time for t in conv.turns}
    by_id = {t.dia_id: t for t in stream.turns}
    for chain in stream.chains:
        assert all(a < b for a, b in zip(chain.since, chain.since[1:], strict=False))
        days = [bench._date(t) for t in chain.since]
        assert all((b - a).days >= 2 for a, b in zip(days, days[1:], strict=False))
        for value, since, dia_id in zip(chain.values, chain.since, chain.dia_ids, strict=True):
            said = by_id[dia_id]
            assert said.time == since == sessions[said.session]
            assert said.text.startswith(f"{chain.speaker}: ") and mentions(said.text, value)
            assert chain.value_at(since) == value


@pytest.mark.parametrize("seed", SEEDS)
def test_the_conversation_is_kept_and_each_statement_is_a_turn_of_its_session(seed: int) -> None:
    conv = conversation()
    stream = fact_stream(conv, seed)
    injected = [t for t in stream.turns if t.dia_id.startswith("F")]
    assert [t for t in stream.turns if not t.dia_id.startswith("F")] == list(conv.turns)
    assert (
        len({t.dia_id for t in injected})
        == len(injected)
        == sum(len(c.values) for c in stream.chains)
    )
    assert stream.keys == {i: c.key for c in stream.chains for i in c.dia_ids}
    assert [t.session for t in stream.turns] == sorted(t.session for t in stream.turns)
    evidence = {e for q in conv.questions for e in q.evidence}
    assert not evidence & {t.dia_id for t in injected}  # never evidence of its own questions
    text = "\n".join(t.text for t in conv.turns)
    assert not any(mentions(text, v) for c in stream.chains for v in c.values)


def test_the_generator_is_deterministic_for_a_seed() -> None:
    conv = conversation()
    assert fact_stream(conv, 7) == fact_stream(conv, 7)
    assert fact_stream(conv, 7).chains != fact_stream(conv, 8).chains


def test_values_named_by_the_conversation_or_its_speakers_are_not_drawn() -> None:
    data = raw()
    data[0]["conversation"]["session_1"][0]["text"] = "We love Lyon and Porto, and Mochi."
    data[0]["conversation"]["speaker_b"] = "Theo"
    for turn in data[0]["conversation"]["session_2"]:
        turn["speaker"] = "Theo" if turn["speaker"] == "Bo" else turn["speaker"]
    conv = conversations_from(data)[0]
    drawn = {v for seed in SEEDS for c in fact_stream(conv, seed).chains for v in c.values}
    assert not drawn & {"Lyon", "Porto", "Mochi", "Theo"}


def test_too_few_sessions_a_day_apart_give_fewer_changes_or_none() -> None:
    one_day = ["1:56 pm on 8 May, 2023", "3:00 pm on 9 May, 2023", "1:00 pm on 10 May, 2023"]
    conv = conversations_from(raw(3, one_day))[0]
    for seed in SEEDS:
        stream = fact_stream(conv, seed)
        # 8 and 10 May are the only pair with a whole day between them
        assert all(len(c.values) == 2 for c in stream.chains)
    single = conversations_from(raw(1))[0]
    assert fact_stream(single, 1).chains == ()


@pytest.mark.parametrize("seed", SEEDS)
def test_questions_ask_the_current_value_and_each_earlier_one_on_a_day_inside(seed: int) -> None:
    stream = fact_stream(conversation(), seed)
    for chain in stream.chains:
        asked = [q for q in stream.fact_questions if q.chain == chain]
        current = [q for q in asked if q.as_of is None]
        assert [q.answer for q in current] == [chain.values[-1]]
        assert current[0].wrong == chain.values[:-1]
        past = [q for q in asked if q.as_of is not None]
        assert [q.answer for q in past] == list(chain.values[:-1])
        for q, start, end in zip(past, chain.since, chain.since[1:], strict=False):
            assert q.as_of is not None and start < q.as_of < end
            assert bench._date(start) < bench._date(q.as_of) < bench._date(end)
            assert chain.value_at(q.as_of) == q.answer
            assert q.text.endswith(f" on {bench.day(q.as_of)}?")
            assert set(q.wrong) == set(chain.values) - {q.answer}
        for q in asked:
            assert chain.speaker in q.text
            assert not any(mentions(q.text, v) for v in chain.values)


# -- the templates and the extractor -------------------------------------------------------------
def test_enough_templates_and_disjoint_values() -> None:
    for attribute in ATTRIBUTES:
        assert len(INITIAL[attribute]) >= 4 and len(CHANGE[attribute]) >= 4
        assert len(CURRENT_QUESTIONS[attribute]) >= 2 and len(AS_OF_QUESTIONS[attribute]) >= 2
        assert len(VALUES[attribute]) >= 2 * 5  # two speakers, five values each at most
        assert len(set(VALUES[attribute])) == len(VALUES[attribute])
    every = [(a, v) for a in ATTRIBUTES for v in VALUES[a]]
    words = [
        *(t for a in ATTRIBUTES for t in (*INITIAL[a], *CHANGE[a], FACT[a])),
        *(q for a in ATTRIBUTES for q in (*CURRENT_QUESTIONS[a], *AS_OF_QUESTIONS[a])),
        *PET_KINDS,
    ]
    for _, value in every:
        assert not any(mentions(other, value) for _, other in every if other != value), value
        assert not any(mentions(w, value) for w in words), value


@pytest.mark.parametrize("attribute", ATTRIBUTES)
def test_the_extractor_reads_every_template_with_every_value(attribute: str) -> None:
    kinds = PET_KINDS if attribute == "pet" else (None,)
    for template in (*INITIAL[attribute], *CHANGE[attribute]):
        for value in VALUES[attribute]:
            for kind in kinds:
                text = f"Ann: {say(template, value, kind)}"
                fact = say(FACT[attribute], value, kind, "Ann")
                assert scripted_extractor(text) == [(fact, f"Ann/{attribute}")], text


def test_the_extractor_reads_the_generated_statements_and_nothing_else() -> None:
    stream = fact_stream(conversation(), 3)
    owner = {i: c for c in stream.chains for i in c.dia_ids}
    for turn in stream.turns:
        found = scripted_extractor(turn.text)
        if turn.dia_id not in owner:
            assert found == []
            continue
        chain = owner[turn.dia_id]
        ((fact, key),) = found
        assert key == chain.key and fact.startswith(chain.speaker)
        assert mentions(fact, chain.values[chain.dia_ids.index(turn.dia_id)])
    for text in ("Ann: I live in a flat.", "Ann: We moved to Lyon last month", "no speaker"):
        assert scripted_extractor(text) == []


# -- judging ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["A: We moved to Porto!", "A: I live in Lyon."], Verdict(True, False, True)),
        (["A: hello", "A: I live in Lyon.", "A: Porto it is."], Verdict(False, True, True)),
        (["A: I live in Lyon.", "A: hello"], Verdict(False, True, False)),
        (["A: hello", "B: bye"], Verdict(False, False, False)),
        ([], Verdict(False, False, False)),
        (["A: From Lyon to Porto!", "A: Lyon"], Verdict(True, False, True)),  # both: the answer
        (["A: PORTO!!", "A: Lyon"], Verdict(True, False, True)),  # case does not matter
        (["A: Portobello", "A: Lyonnaise", "A: Porto"], Verdict(True, False, True)),  # words
        (["A: Bilbao", "A: Porto"], Verdict(True, False, True)),  # another chain's value
    ],
)
def test_judge(texts: list[str], expected: Verdict) -> None:
    assert judge("Porto", ["Lyon"], texts) == expected


def test_a_past_day_counts_later_values_as_wrong() -> None:
    chain = Chain("A", "home", ("Lyon", "Porto", "Graz"), (1.0, 2.0, 3.0), ("F1", "F2", "F3"))
    q = FactQuestion("Where did A live on ...?", chain, "Porto", 2.5)
    assert q.wrong == ("Lyon", "Graz")
    assert judge(q.answer, q.wrong, ["A: Graz!", "A: Porto"]) == Verdict(False, True, True)


# -- the harness ------------------------------------------------------------------------------
class Recorder:
    """Records the calls the harness makes of a memory (no memory: the calls' arguments)."""

    def __init__(self) -> None:
        self.added: list[tuple[str, dict[str, Any]]] = []
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def retrieve(self, query: str, **kwargs: Any) -> list[Any]:
        self.asked.append((query, kwargs))
        return []

    def add(self, text: str, **kwargs: Any) -> None:
        self.added.append((text, kwargs))

    def __len__(self) -> int:
        return len(self.added)


def zero(text: str) -> np.ndarray:
    return np.ones(4, np.float32)


def test_keys_go_with_the_statements_and_the_extracted_facts_only() -> None:
    stream = fact_stream(conversation(), 5)
    memory = Recorder()
    now = [0.0]
    bench._stream(cast(SolarMemory, memory), stream.turns, zero, now, keys=stream.keys)
    keyed = {text: kw["key"] for text, kw in memory.added if "key" in kw}
    assert keyed == {t.text: stream.keys[t.dia_id] for t in stream.turns if t.dia_id in stream.keys}
    assert now == [stream.turns[-1].time]
    memory = Recorder()
    bench._stream(cast(SolarMemory, memory), stream.turns, zero, now, extractor=scripted_extractor)
    plain = [text for text, kw in memory.added if "key" not in kw]
    assert plain == [t.text for t in stream.turns]  # every turn, as it was said
    facts = [(text, kw["key"]) for text, kw in memory.added if "key" in kw]
    assert facts == [f for t in stream.turns for f in scripted_extractor(t.text)]


def test_only_past_days_are_asked_with_as_of_and_only_where_asked_to() -> None:
    stream = fact_stream(conversation(), 5)
    for as_of in (True, False):
        memory = Recorder()
        verdicts = bench.ask_facts(cast(SolarMemory, memory), stream.fact_questions, zero, as_of)
        assert len(verdicts["current"]) == len(stream.chains)
        assert len(verdicts["as_of"]) == len(stream.fact_questions) - len(stream.chains)
        for (text, kw), q in zip(memory.asked, stream.fact_questions, strict=True):
            assert text == q.text and kw["record"] is False
            assert kw.get("as_of") == (q.as_of if as_of else None)


def test_the_rows() -> None:
    labels = [s.label for s in bench.setups([100])]
    assert labels == [
        "unlimited", "unlimited + keys", "solar-dialogue", "solar-dialogue + keys",
        "solar-dialogue + extractor",
    ]  # fmt: skip
    assert Setup("solar-dialogue", 100, "keys").keyed and not Setup("unlimited", None).keyed


def hashed(dim: int = 256) -> bench.Vectors:
    from solar_core import HashEmbedder

    embedder = HashEmbedder(dim=dim)
    return lambda text: np.asarray(embedder.embed([text])[0], np.float32)


def test_fact_records_run_the_memories_there_are() -> None:
    convs = conversations_from(raw())
    recs, notes = bench.fact_records(convs, hashed(), [5], [1, 2])
    ran = list(dict.fromkeys(r["policy"] for r in recs))
    assert notes == [] and len(ran) == 5
    assert len(recs) == len(ran) * 2 == bench.facts_total(convs, [5], [1, 2])
    for r in recs:
        for name in ("current_first", "current_stale_above", "current_in_top", "recall"):
            assert 0.0 <= r[name] <= 1.0
        assert r["current_first"] <= r["current_in_top"]
        assert r["d_recall"] == pytest.approx(r["recall"] - r["recall_plain"])
    unlimited = [r for r in recs if r["policy"] == "unlimited"]
    assert all(r["mean_size"] > 5 for r in unlimited)  # K=5 does not bound it
    rows = bench.aggregate(recs, per_conversation=True)
    assert [(r["policy"], r["sample"]) for r in rows] == [
        (p, s) for s in ("all", "tiny") for p in ran
    ]
    assert all(r["units"] == 2 for r in rows)


# -- turns said again -------------------------------------------------------------------------
def long_dialogue(n: int = 200) -> Dialogue:
    turns = tuple(
        Turn(f"D{i}", f"{'AB'[i % 2]}: I'm saying thing number {i}, really.") for i in range(n)
    )
    return Dialogue("long", turns, (Question("q", frozenset({"D5", "D150"}), 150),), 0)


@pytest.mark.parametrize("seed", range(5))
def test_thirty_percent_of_the_turns_come_again_later_reworded(seed: int) -> None:
    d = long_dialogue()
    out, where = with_repeats(d, random.Random(seed))
    assert len(where) == 60 and len(out.turns) == 260
    assert len({i for i, _ in where}) == 60
    assert [t for t in out.turns if t not in {out.turns[j] for _, j in where}] == list(d.turns)
    repeats = {j for _, j in where}
    source: list[int | None] = []  # each place's original turn (None: a repeat)
    count = 0
    for k in range(len(out.turns)):
        source.append(None if k in repeats else count)
        count += k not in repeats
    for i, j in where:
        original, again = d.turns[i], out.turns[j]
        assert again.dia_id == original.dia_id  # either copy counts as the evidence
        assert again.text != original.text and again.text[:3] == original.text[:3]
        before = max(s for s in source[:j] if s is not None)  # the original it follows
        assert 3 <= before - i <= 50
    position = {t.dia_id: k for k, t in enumerate(out.turns) if source[k] is not None}
    assert out.questions[0].last == position["D150"]
    assert with_repeats(d, random.Random(seed)) == with_repeats(d, random.Random(seed))


def test_repeat_records_report_each_row_beside_the_reference() -> None:
    d = conversations_from(raw())[0].dialogue
    recs, notes = bench.repeat_records([d], hashed(), [5, 40], [1])
    variants, expected_notes = bench.repeat_variants()
    assert notes == expected_notes
    assert len(recs) == 2 * len(variants) == bench.repeats_total([d], [5, 40], [1])
    reference = [r for r in recs if r["policy"] == bench.REFERENCE]
    assert [r["turns"] for r in reference] == [32.0, 32.0]
    assert all(r["turns"] == 32 + 10 for r in recs if r["policy"] != bench.REFERENCE)
    rows = bench.aggregate(recs)
    assert all(r["d_score"] == 0.0 for r in rows if r["policy"] == bench.REFERENCE)


# -- the command line -------------------------------------------------------------------------
def test_help_names_the_workload_option(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["updates", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "updates" in out and "--workload {facts,repeats}" in out and "--per-conversation" in out


def test_updates_needs_data_and_the_static_embedder(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--data must name"):
        main(["updates", "--quiet"])
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(raw()))
    with pytest.raises(SystemExit, match="--embedder static only"):
        main(["updates", "--data", str(path), "--embedder", "hash", "--quiet"])


@pytest.mark.parametrize("workload", ["facts", "repeats"])
def test_the_command_prints_a_table_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], workload: str
) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(raw()))
    argv = ["updates", "--workload", workload, "--data", str(path), "--seeds", "1", "--k", "5",
            "--cache-dir", str(tmp_path / "cache"), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert table.startswith("### updates") and "| memory | K |" in table
    assert main([*argv, "--format", "json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    ran = [r for r in rows if r["setting"] == workload]
    assert ran and all(r["workload"] == "updates" and r["seeds"] == [1] for r in ran)
    for r in rows:
        if r["setting"] == "skipped":
            assert r["part"] == workload and "pending" in r["note"]
            assert "skipped: " + r["note"] in table
