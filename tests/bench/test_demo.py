"""The main job: the demo runs end to end and tells a coherent story."""

from __future__ import annotations

import pytest

from solar_bench import demo


def test_demo_runs_with_the_hash_embedder(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--embedder", "hash", "--policies", "fifo,solar,lru"]) == 0
    out = capsys.readouterr().out
    assert "=== fifo:" in out and "=== solar:" in out and "summary" in out
    assert "scenario 'recurring'" in out and "scenario 'emerging'" in out
    assert "evicted turn" in out and "why:" in out


def test_demo_run_policy_counts_match_memory_stats() -> None:
    from solar_core import HashEmbedder

    run = demo.run_policy("solar", capacity=6, embedder=HashEmbedder(), seed=0)
    assert run.memory is not None
    stats = run.memory.stats()
    assert stats["steps"] == len(demo.TURNS) and stats["size"] <= 6
    assert run.scored == sum(topic != "chat" for topic, _, _ in demo.TURNS)
    assert 0 <= run.useful <= run.scored


def test_demo_scenarios_are_the_same_turns_in_two_orders() -> None:
    recurring, emerging = demo.SCENARIOS["recurring"], demo.SCENARIOS["emerging"]
    assert sorted(recurring) == sorted(emerging) and recurring != emerging
    for topic in {t for t, _, _ in recurring}:  # each topic's questions keep their order
        assert [q for t, q, _ in recurring if t == topic] == [
            q for t, q, _ in emerging if t == topic
        ]


def test_demo_rejects_an_unknown_scenario() -> None:
    with pytest.raises(SystemExit):
        demo.main(["--embedder", "hash", "--scenarios", "nope"])


def test_demo_runs_on_the_default_embedder(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--quiet"]) == 0
    out = capsys.readouterr().out
    assert "StaticEmbedder" in out and "useful recall" in out


@pytest.mark.minilm
def test_demo_runs_on_minilm(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main(["--quiet", "--embedder", "minilm"]) == 0
    out = capsys.readouterr().out
    assert "MiniLMEmbedder" in out and "useful recall" in out
