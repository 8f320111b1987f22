"""``solar-bench growth`` with tiny user counts: its rows, table and JSON Lines (not timed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from solar_bench import growth
from solar_bench.cli import main


def test_growth_runs_each_count_in_its_own_process_and_checks_flatness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "growth.jsonl"
    argv = ["growth", "--users", "30,12", "--format", "json", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    runs = [r for r in rows if r["setting"] == "run"]
    assert [(r["case"], r["users"]) for r in runs] == [
        ("store", 12),
        ("store", 30),
        ("response-cache", 12),
        ("response-cache", 30),
    ]
    for r in runs:
        assert r["workload"] == "growth"
        assert r["rss_start_mb"] > 0 and r["rss_mb"] > 0 and r["peak_mb"] > 0
        assert r["users_per_s"] > 0 and r["ms_per_user"] > 0
    store = [r for r in runs if r["case"] == "store"]
    assert [r["stored_scopes"] for r in store] == [13, 31]  # the users and the warm-up scope
    assert all(r["open_scopes"] <= r["max_open_scopes"] for r in store)
    cache = [r for r in runs if r["case"] == "response-cache"]
    assert [r["entries_lost"] for r in cache] == [12, 30]  # each session's entry was evicted
    checks = [r for r in rows if r["setting"] == "check"]
    assert [(c["case"], c["from_users"], c["to_users"]) for c in checks] == [
        ("store", 12, 30),
        ("response-cache", 12, 30),
    ]
    assert all(c["limit_mb"] == growth.FLAT_MB and isinstance(c["flat"], bool) for c in checks)
    table = growth.render(rows)
    assert "== growth:" in table and "store: " in table and "response-cache: " in table
    capsys.readouterr()


def test_growth_worker_refuses_an_unknown_case() -> None:
    with pytest.raises(ValueError, match="unknown case"):
        growth.serve("nope", 1)
