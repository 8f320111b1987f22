"""Ratings through the chat adapters (``benchmarks/adapter_ratings.py``): answer buttons wired to
``SolarConversationMemory.feedback`` and ``SolarChatMemory.feedback``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.bench.test_dialogue_adapters import RAW
from tests.support.scripts import load_script

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.ranking,  # orders of cosine scores: CI runs them under two BLAS kernels
]


class Chat:
    """What the protocol asks of an adapter, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def turn(self, said: str, answer: str) -> None:
        self.calls.append(("turn", said))

    def ask(self, question: str, during: bool = False) -> tuple[frozenset[str], frozenset[str]]:
        """The window shows turn 20 (q-late's evidence); the memory recalls turn 1 (q-early's)."""
        self.calls.append(("ask", (question, during)))
        return frozenset({"D1:1", "D1:20"}), frozenset({"D1:1"})

    def answered(self) -> None:
        self.calls.append(("answered", None))

    def feedback(self, **rating: Any) -> None:
        self.calls.append(("feedback", rating))


def test_each_setting_rates_what_it_says() -> None:
    bench = load_script("adapter_ratings")
    from solar_bench.dialogue import dialogues_from

    d = dialogues_from(RAW)[0]
    chat = Chat()
    assert bench.run(chat, d, "end+disliked", seed=1) == 1.0
    rated = [c[1] for c in chat.calls if c[0] == "feedback"]
    assert rated == [{"like": False}] * 11  # every exchange's recall
    chat = Chat()
    bench.run(chat, d, "interleaved+evidence", seed=1)
    kinds = [c[0] for c in chat.calls if c[0] != "turn"]
    # q-early's evidence was recalled: rated 1; q-late's was in the window: not rated
    assert kinds == ["ask", "feedback", "answered", "ask", "answered"]
    assert [c[1] for c in chat.calls if c[0] == "feedback"] == [{"score": 1.0}]
    chat = Chat()
    bench.run(chat, d, "interleaved+prompt", seed=1)  # both rated by what the prompt showed
    assert [c[1] for c in chat.calls if c[0] == "feedback"] == [{"score": 1.0}] * 2
    chat = Chat()
    bench.run(chat, d, "interleaved+none", seed=1)
    assert not [c for c in chat.calls if c[0] == "feedback"]


def test_the_command_rates_through_both_adapters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load_script("adapter_ratings")
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(RAW))
    argv = ["--data", str(data), "--embedder", "hash", "--seeds", "1", "--k", "4",
            "--cache-dir", str(tmp_path)]  # fmt: skip
    assert bench.main(argv) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [(r[0], r[1]) for r in rows] == [
        (adapter, setting) for adapter in ("SolarConversationMemory", "SolarChatMemory")
        for setting in bench.SETTINGS
    ]  # fmt: skip
    for row in rows:
        assert 0.0 <= float(row[3]) <= 1.0


def test_the_ceiling_probes_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``benchmarks/rating_ceiling.py``: each probe prints one figure per capacity."""
    probe = load_script("rating_ceiling")
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(RAW))
    for how in ("keep", "demote", "rank"):
        argv = ["--data", str(data), how, "--k", "2", "4", "--cache-dir", str(tmp_path)]
        assert probe.main(argv) == 0
        lines = capsys.readouterr().out.splitlines()
        assert [line.split()[2] for line in lines] == ["K=2:", "K=4:"]
        assert all(0.0 <= float(line.split()[-1]) <= 1.0 for line in lines)
