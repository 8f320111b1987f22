"""``solar-bench demo`` says when it leaves LoCoMo out; LoCoMo's embedding step shows progress."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from solar_bench import cli
from solar_bench.progress import Progress
from tests.support.locomo import write_locomo

HOW_TO = "--data path/to/locomo.json, or make demo LOCOMO=path/to/locomo.json"


@pytest.fixture(autouse=True)
def no_synthetic_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's five synthetic sweeps take seconds and are tested elsewhere: skip them here."""

    def nothing(args: Any, name: str) -> list[dict[str, Any]]:
        return []

    monkeypatch.setattr(cli, "synthetic", nothing)


def run_demo(*argv: str) -> int:
    return cli.main(["demo", "--policies", "fifo", "--steps", "20", "--embedder", "hash", *argv])


def test_demo_without_data_says_locomo_is_skipped(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_demo() == 0
    out, err = capsys.readouterr()
    assert "locomo" not in out and "== latency" in out
    assert "demo: LoCoMo skipped (no --data given)" in err and HOW_TO in err


def test_demo_with_a_missing_file_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere.json"
    assert run_demo("--data", str(missing), "--quiet") == 0  # --quiet keeps the explanation
    out, err = capsys.readouterr()
    assert "locomo" not in out
    assert f"LoCoMo skipped (--data {missing} is not a file)" in err and HOW_TO in err


def test_demo_with_data_runs_locomo_and_says_nothing_about_skipping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_locomo(tmp_path)
    argv = ["--data", str(data), "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    assert run_demo(*argv) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["workload"] for r in rows} == {"locomo", "latency"}
    assert "skipped" not in err
    # capsys' stderr is no terminal: a start line, then the final count (42 texts: 21 QA, each a
    # question and an experience); one batch of 64 passes no quarter mark in between
    lines = [line for line in err.splitlines() if line.startswith("embedding LoCoMo")]
    assert [line.split(" [")[0] for line in lines] == [
        "embedding LoCoMo: 0/42 texts",
        "embedding LoCoMo: 42/42 texts",
    ]
    assert "\r" not in err
    # the second run reads every vector from the cache: no embedding, no progress line
    assert run_demo(*argv) == 0
    assert "embedding LoCoMo" not in capsys.readouterr().err


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
