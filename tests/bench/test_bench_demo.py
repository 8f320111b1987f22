"""``solar-bench demo`` explains each table (a title, what it measures, which way is better, a
takeaway), ends with where to go next, and says when it leaves LoCoMo out; LoCoMo's embedding
step shows progress."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from solar_bench import cli
from solar_bench.demo import GUIDES, REFERENCES, bench_report
from solar_bench.experiments import EXPERIMENTS
from solar_bench.progress import Progress
from tests.support.locomo import qa_entry, write_locomo

HOW_TO = "--data path/to/locomo.json, or make demo LOCOMO=path/to/locomo.json"


def chat(sample_id: str, who: str) -> dict[str, Any]:
    """A tiny conversation: six turns in two sessions and two questions on them."""
    turns = [
        f"I adopted a beagle named Max, {who} said.",
        "What a lovely dog!",
        "I run every Sunday morning.",
        "How far do you run?",
        "Ten kilometres along the river.",
        "Max comes with me.",
    ]
    sessions = {
        f"session_{s}": [
            {"speaker": who if i % 2 == 0 else "Bo", "dia_id": f"D{s}:{i + 1}", "text": text}
            for i, text in enumerate(turns[3 * (s - 1) : 3 * s])
        ]
        for s in (1, 2)
    }
    return {
        "sample_id": sample_id,
        "conversation": {"speaker_a": who, "speaker_b": "Bo", **sessions},
        "qa": [
            qa_entry(f"What is the name of {who}'s dog?", "Max", ["D1:1"]),
            qa_entry(f"How far does {who} run?", "Ten kilometres", ["D2:2"]),
        ],
    }


#: two conversations, each with dialogue turns: enough for every LoCoMo table of the demo
CHATS = [chat("chat-a", "Ann"), chat("chat-b", "Cy")]


@pytest.fixture(autouse=True)
def no_synthetic_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's five synthetic sweeps take seconds and are tested elsewhere: skip them here."""

    def nothing(args: Any, name: str) -> list[dict[str, Any]]:
        return []

    monkeypatch.setattr(cli, "synthetic", nothing)


def run_demo(*argv: str) -> int:
    return cli.main(["demo", "--policies", "fifo", "--steps", "20", "--embedder", "hash", *argv])


def sections(out: str) -> dict[str, str]:
    """The demo's text by block: a table's or the closing blocks' title line -> its lines."""
    blocks: dict[str, str] = {}
    for block in out.split("\n\n== ")[1:]:
        title, _, body = block.partition(" ==\n")
        blocks[title] = body
    return blocks


def assert_explained(body: str) -> None:
    """A table block: its legend, the table, then a takeaway."""
    lines = body.splitlines()
    assert lines[0].startswith("measures  ") and "Cell: " in body
    assert any(line.startswith("better    higher") or line == "better    lower." for line in lines)
    assert any(line.split()[:2] == ["setting", "K"] for line in lines)
    assert lines[-1].strip() and any(line.startswith("takeaway  ") for line in lines)


def assert_next_steps(out: str) -> None:
    # (read as words: where the lines wrap depends on how long the solar-demo command's path is)
    tail = " ".join(out.rstrip().split("\n== Next steps ==\n")[1].split())
    for where in ("solar-demo", "README.md", "docs/BENCHMARKS.md", "make bench"):
        assert where in tail
    assert '"Which policy?"' in tail and "quick starts" in tail


def test_demo_without_data_says_locomo_is_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_demo() == 0
    out, err = capsys.readouterr()
    blocks = sections(out)
    assert list(blocks) == [
        "1. Latency: the time of one memory step, embedding excluded",
        "Skipped",
        "Next steps",
    ]
    assert "demo: LoCoMo skipped (no --data given)" in blocks["Skipped"]
    assert HOW_TO in " ".join(blocks["Skipped"].split())  # wrapped in the text
    assert "skipped" not in err  # said once, in the text, not again on stderr
    assert_next_steps(out)


def test_demo_with_a_missing_file_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.json"
    assert run_demo("--data", str(missing), "--quiet") == 0  # --quiet keeps the explanation
    out, err = capsys.readouterr()
    skipped = " ".join(sections(out)["Skipped"].split())
    assert "LoCoMo" not in "".join(t for t in sections(out) if t != "Skipped")
    assert f"LoCoMo skipped (--data {missing} is not a file)" in skipped and HOW_TO in skipped
    assert err == ""


def test_demo_as_json_says_on_stderr_that_locomo_is_skipped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_demo("--format", "json", "--quiet") == 0
    out, err = capsys.readouterr()
    assert {json.loads(line)["workload"] for line in out.splitlines()} == {"latency"}
    assert "demo: LoCoMo skipped (no --data given)" in err and HOW_TO in err


def test_demo_times_the_default_embedders_dimension_with_the_chat_policy(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_demo("--format", "json", "--quiet") == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["setting"] for r in rows} == {"d=256"}
    assert [r["policy"] for r in rows] == ["fifo", "solar-dialogue"]


def test_demo_with_data_runs_locomo_and_says_nothing_about_skipping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_locomo(tmp_path, CHATS)
    argv = ["--data", str(data), "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    assert run_demo(*argv) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["workload"] for r in rows} == {"locomo", "dialogue", "latency"}
    assert {r["policy"] for r in rows if r["workload"] == "dialogue"} == {
        "fifo",
        "solar-dialogue",
        "oracle",
    }
    assert "skipped" not in err
    # capsys' stderr is no terminal: a start line, then the final count, once per embedding step
    # (LoCoMo's QA: 8 texts, a question and an experience each; then the dialogue turns and
    # questions, and the turns' static vectors for solar-dialogue's prior); one batch of 64
    # passes no quarter mark in between
    lines = [line for line in err.splitlines() if line.startswith("embedding LoCoMo")]
    counts = [line.split(" [")[0].removeprefix("embedding LoCoMo: ") for line in lines]
    assert counts[:2] == ["0/8 texts", "8/8 texts"] and len(counts) == 6
    for start, end in zip(counts[::2], counts[1::2], strict=True):
        total = end.split("/")[1]
        assert start == f"0/{total}" and end == f"{total.split()[0]}/{total}"
    assert "\r" not in err
    # the second run reads every vector from the cache: no embedding, no progress line
    assert run_demo(*argv) == 0
    assert "embedding LoCoMo" not in capsys.readouterr().err


def test_demo_with_data_explains_the_locomo_and_dialogue_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_locomo(tmp_path, CHATS)
    assert run_demo("--data", str(data), "--cache-dir", str(tmp_path / "cache"), "--quiet") == 0
    out = capsys.readouterr().out
    blocks = sections(out)
    assert list(blocks) == [
        "1. LoCoMo: question/answer pairs kept as experiences",
        "2. Dialogue turns: a bounded chat history (the chat memories' job)",
        "3. Latency: the time of one memory step, embedding excluded",
        "Next steps",
    ]
    for title, body in blocks.items():
        if title != "Next steps":
            assert_explained(body)
    chat = blocks["2. Dialogue turns: a bounded chat history (the chat memories' job)"]
    assert "solar-dialogue" in chat.split("takeaway")[0]  # a column of the table
    assert "solar-dialogue, the chat memories' default, recalls" in " ".join(chat.split())
    assert "solar-dialogue: the chat memories' default (in the dialogue and latency tables)" in (
        " ".join(out.split("\n\n== ")[0].split())
    )
    assert_next_steps(out)


def test_demo_with_a_file_too_small_for_the_dialogue_table_says_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_locomo(tmp_path)  # its second conversation has no dialogue turns
    assert run_demo("--data", str(data), "--cache-dir", str(tmp_path / "cache"), "--quiet") == 0
    out = capsys.readouterr().out
    skipped = " ".join(sections(out)["Skipped"].split())
    assert skipped.startswith("Dialogue turns: skipped (") and "no 'conversation'" in skipped
    assert "1. LoCoMo" in out and "Dialogue turns: a bounded" not in out


def test_the_whole_demo_titles_explains_and_ends_with_next_steps(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.undo()  # the synthetic sweeps too (FIFO alone, one process: a few seconds)
    assert run_demo("--quiet", "--jobs", "1") == 0
    out = capsys.readouterr().out
    blocks = sections(out)
    assert [title.split(":")[0] for title in blocks] == [
        "1. Cycling", "2. Working set", "3. Topic drift", "4. Retrieval noise, static pool",
        "5. Retrieval noise, stream", "6. Latency", "Skipped", "Next steps",
    ]  # fmt: skip
    for title, body in blocks.items():
        if title[0].isdigit():
            assert_explained(body)
    assert_next_steps(out)


# -- the text, on rows made by hand (no run) ----------------------------------------------------
def test_every_table_the_demo_prints_has_a_guide() -> None:
    assert set(GUIDES) == {*EXPERIMENTS, "locomo", "dialogue", "latency"}
    for guide in GUIDES.values():
        assert guide.title and guide.measures and guide.better.startswith(("higher", "lower"))


def rows_of(workload: str, table: dict[tuple[str, int], dict[str, float]]) -> list[dict[str, Any]]:
    value = GUIDES[workload].value
    return [
        {"workload": workload, "setting": setting, "capacity": k, "policy": p, value: v,
         "seeds": [42], "units": 1}
        for (setting, k), by_policy in table.items()
        for p, v in by_policy.items()
    ]  # fmt: skip


SYNTHETIC = {
    "cycling": {
        ("m/K=1", 10): {"fifo": 0.9, "lru": 0.4, "solar-adaptive": 0.9, "unlimited": 0.9},
        ("m/K=2", 10): {"fifo": 0.0, "lru": 0.1, "solar-adaptive": 0.45, "unlimited": 0.9},
    },
    "working-set": {
        ("uniform", 5): {"fifo": 0.3, "lru": 0.28, "solar-adaptive": 0.34, "unlimited": 0.97},
        ("uniform", 15): {"fifo": 0.6, "lru": 0.58, "solar-adaptive": 0.96, "unlimited": 0.97},
        ("uniform", 100): {"fifo": 0.97, "lru": 0.96, "solar-adaptive": 0.97, "unlimited": 0.97},
    },
    "drift": {
        ("phase=50", 20): {"fifo": 0.9, "lfu": 0.39, "solar": 0.45, "unlimited": 0.92},
        ("phase=500", 20): {"fifo": 0.98, "lfu": 0.37, "solar": 0.85, "unlimited": 0.99},
    },
    "noise-static": {
        ("static", 100): {"fifo": 0.116, "solar": 0.042, "unlimited": 0.116},
        ("static", 1000): {"fifo": 0.213, "solar": 0.1, "unlimited": 0.213},
        ("static", 5000): {"fifo": 0.11, "solar": 0.079, "unlimited": 0.11},
    },
    "noise-stream": {
        ("stream", 100): {"fifo": 0.055, "solar-a": 0.043, "unlimited": 0.11},
        ("stream", 1000): {"fifo": 0.087, "solar-a": 0.112, "unlimited": 0.11},
    },
}


def test_each_table_has_a_title_a_legend_and_a_takeaway_true_to_its_rows() -> None:
    rows = [r for name, table in SYNTHETIC.items() for r in rows_of(name, table)]
    out = bench_report(rows, solar_demo=".venv/bin/solar-demo")
    blocks = sections(out)
    assert [title.split(":")[0] for title in blocks] == [
        "1. Cycling", "2. Working set", "3. Topic drift", "4. Retrieval noise, static pool",
        "5. Retrieval noise, stream", "Next steps",
    ]  # fmt: skip
    for body in list(blocks.values())[:-1]:
        assert_explained(body)
    text = {
        title.split(". ")[1].split(":")[0]: " ".join(body.split())
        for title, body in blocks.items()
        if ". " in title
    }
    assert "best bounded policy: solar-adaptive in 2 of 2 rows; fifo in 1" in text["Cycling"]
    assert "FIFO has evicted each topic before it comes back" in text["Cycling"]
    assert "(m/K=2: solar-adaptive 0.450)" in text["Cycling"]
    assert (
        "Curating pays most at K = 15: solar-adaptive 0.960 against FIFO's 0.600"
        in (text["Working set"])
    )
    assert "recency pays: FIFO 0.900-0.980" in text["Topic drift"]
    assert "lowest here: lfu (0.370-0.390)" in text["Topic drift"]
    assert (
        "peaks at K = 1000 (0.213) and is 0.110 at K = 5000" in text["Retrieval noise, static pool"]
    )
    assert (
        "(solar-a, 0.112) beats keeping all 5,000 items (0.110)" in text["Retrieval noise, stream"]
    )
    assert " ".join(out.split()).endswith("(installs MiniLM, ~1.6 GB, once)")
    assert "\n  .venv/bin/solar-demo  each decision of a memory and its reason" in out


def test_a_reference_row_is_never_called_best() -> None:
    table = {
        ("end", 100): {"fifo": 0.14, "solar-dialogue": 0.44, "unlimited": 0.56, "oracle": 0.63}
    }
    text = " ".join(bench_report(rows_of("dialogue", table)).split())
    assert "recalls 0.440 (FIFO 0.140, 3.1x)" in text
    assert "keeping every turn 0.560; the oracle bound 0.630" in text
    assert "For a chat history (every turn offered) use solar-dialogue" in text
    assert set(REFERENCES) == {"unlimited", "oracle"}


def test_the_latency_takeaway_reads_lower_as_better() -> None:
    table = {("d=256", 100): {"fifo": 30.0, "solar-e": 120.0, "solar-adaptive": 60.0}}
    text = " ".join(bench_report(rows_of("latency", table)).split())
    assert "better lower." in text and "(d=256: the default static embedder's size)" in text
    assert "Cheapest step at K = 100: fifo (30.0 us)" in text
    assert "solar-adaptive 2.0x, slowest solar-e 4.0x" in text


def test_embedding_progress_off_a_terminal_writes_a_few_lines() -> None:
    stream = io.StringIO()
    bar = Progress("embedding LoCoMo", 2300, unit="texts", stream=stream, log_every=0.25)
    bar.draw()
    for start in range(0, 2300, 64):  # EmbeddingCache's batches
        bar.advance(min(64, 2300 - start))
    bar.close()
    counts = [line.split(" [")[0].split(": ")[1] for line in stream.getvalue().splitlines()]
    assert counts == ["0/2300 texts", "576/2300 texts", "1152/2300 texts", "1728/2300 texts",
                      "2300/2300 texts"]  # fmt: skip


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_embedding_progress_on_a_terminal_redraws_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = iter(float(t) for t in range(100))  # each reading 1 s later: every advance redraws
    monkeypatch.setattr("solar_bench.progress.time.perf_counter", lambda: next(clock))
    stream = Terminal()
    bar = Progress("embedding LoCoMo", 128, unit="texts", stream=stream, log_every=0.25)
    bar.draw()
    bar.advance(64)
    bar.advance(64)
    bar.close()
    text = stream.getvalue()
    assert text.count("\n") == 1 and text.endswith("\n")  # one line, rewritten in place
    assert [part.split(" [")[0] for part in text.strip().split("\r") if part] == [
        "embedding LoCoMo: 0/128 texts",
        "embedding LoCoMo: 64/128 texts",
        "embedding LoCoMo: 128/128 texts",
        "embedding LoCoMo: 128/128 texts",
    ]
