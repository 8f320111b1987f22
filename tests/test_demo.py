"""The main job: the demo runs end to end and tells a coherent story."""

from __future__ import annotations

import pytest

from solar_core import demo


def test_demo_runs_with_the_hash_embedder(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--embedder", "hash", "--policies", "fifo,solar,lru"]) == 0
    out = capsys.readouterr().out
    assert "=== fifo:" in out and "=== solar:" in out and "summary" in out
    assert "evicted turn" in out and "why:" in out


def test_demo_run_policy_counts_match_memory_stats() -> None:
    from solar_core import HashEmbedder

    run = demo.run_policy("solar", capacity=6, embedder=HashEmbedder(), seed=0)
    assert run.memory is not None
    stats = run.memory.stats()
    assert stats["steps"] == len(demo.TURNS) and stats["size"] <= 6
    assert run.scored == sum(topic != "chat" for topic, _, _ in demo.TURNS)
    assert 0 <= run.useful <= run.scored


@pytest.mark.minilm
def test_demo_runs_on_minilm(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--quiet"]) == 0
    out = capsys.readouterr().out
    assert "MiniLMEmbedder" in out and "useful recall" in out
