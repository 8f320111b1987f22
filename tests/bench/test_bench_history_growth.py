"""``solar-bench growth --history`` with tiny histories: rows, table, the peers' stored state
(not timed)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from solar_bench import history_growth as hg
from solar_bench.cli import main


def test_history_runs_each_size_in_its_own_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "history.jsonl"
    argv = ["growth", "--history", "--turns", "12,5", "--timed", "3", "--peers", "solar"]
    assert main([*argv, "--format", "json", "--out", str(out), "--quiet"]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["case"], r["stored_turns"]) for r in rows] == [("solar", 5), ("solar", 12)]
    for r in rows:
        assert r["workload"] == "growth" and r["setting"] == "history"
        assert r["timed"] == 3 and 0 < r["median_ms"] <= r["p95_ms"]
        assert r["rss_mb"] > 0 and r["disk_mb"] is None  # it does not persist
    table = hg.render(rows)
    assert "growth --history" in table and "SolarConversationMemory(capacity=100)" in table
    capsys.readouterr()


def test_a_missing_peer_is_a_row_with_its_reason() -> None:
    if importlib.util.find_spec("mem0") is not None:
        pytest.skip("mem0 is installed here")
    rows = hg.run([3], ["mem0"], timed=1)
    assert rows[0]["skipped"].startswith("not installed: pip install mem0ai")
    assert "-: mem0 (infer=False, FAISS) at 3: not installed" in hg.render(rows)


@pytest.mark.parametrize("peer", ["solar-sqlite", "lc-vector", "lc-window-ensemble", "li-vector"])
def test_each_peer_measures_in_process(peer: str) -> None:
    found = hg.measure(peer, 6, timed=2)
    assert found["timed"] == 2 and found["median_ms"] > 0
    assert (found["disk_mb"] is not None) == (peer == "solar-sqlite")


def test_bulk_fill_stores_what_turns_would() -> None:
    pairs = hg.generated(4)
    bulk, turned = hg.LangChainVectors(), hg.LangChainVectors()
    bulk.fill(pairs)
    for a, b in pairs:
        turned.memory.save_context({"input": a}, {"output": b})
    texts = [d["text"] for d in bulk.store.store.values()]
    assert texts == [d["text"] for d in turned.store.store.values()]

    li_bulk, li_turned = hg.LlamaIndexVectors(), hg.LlamaIndexVectors()
    li_bulk.fill(pairs)
    for a, b in pairs:
        li_turned.turn(a, b)

    def stored(peer: hg.LlamaIndexVectors) -> list[tuple[str, object]]:
        docs = peer.memory.vector_index.docstore.docs.values()
        return sorted((n.text, n.metadata["sub_dicts"]) for n in docs)

    assert stored(li_bulk) == stored(li_turned)


def test_locomo_turns_are_paired_and_cycled(tmp_path: Path) -> None:
    def turn(speaker: str, dia_id: str, text: str) -> dict[str, str]:
        return {"speaker": speaker, "dia_id": dia_id, "text": text}

    data = [
        {
            "sample_id": "c",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bo",
                "session_1": [turn("Ann", "D1:1", "hi"), turn("Bo", "D1:2", "hello")],
                "session_2": [turn("Ann", "D2:1", "bye"), turn("Bo", "D2:2", "see you")],
            },
            "qa": [],
        }
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    pairs = hg.conversation(3, path)
    assert len(pairs) == 3 and pairs[0] == pairs[2] != pairs[1]
    assert "hi" in pairs[0][0] and "hello" in pairs[0][1]
    assert len(set(hg.conversation(50))) > 45  # the generated turns vary
