"""Aggregation over seeds / units and the table, JSON Lines and CSV renderings of the rows."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

import pytest

from solar_bench import report
from solar_bench.cli import LATENCY_COLUMNS, LOCOMO_COLUMNS, SYNTHETIC_COLUMNS, render


def rec(policy: str, seed: int, hit: float, *, capacity: int = 10, setting: str = "s",
        unit: Any = None, score: float | None = None, **extra: Any) -> dict[str, Any]:  # fmt: skip
    return dict(workload="w", setting=setting, policy=policy, capacity=capacity, seed=seed,
                unit=seed if unit is None else unit, hit_rate=hit,
                score=hit / 2 if score is None else score, store_rate=1.0, **extra)  # fmt: skip


FIFO = [rec("fifo", 1, 0.5), rec("fifo", 2, 0.7), rec("fifo", 3, 0.6)]
SOLAR = [rec("solar", 1, 0.6), rec("solar", 2, 0.9), rec("solar", 3, 0.9)]


def test_aggregate_means_se_and_paired_diffs() -> None:
    rows = report.aggregate(FIFO + SOLAR)
    assert [r["policy"] for r in rows] == ["fifo", "solar"]
    fifo, solar = rows
    assert fifo["seeds"] == [1, 2, 3] and fifo["units"] == 3
    assert fifo["hit_rate"] == pytest.approx(0.6)
    assert fifo["hit_rate_se"] == pytest.approx(0.1 / math.sqrt(3))
    assert fifo["score"] == pytest.approx(0.3)
    assert fifo["score_se"] == pytest.approx(0.05 / math.sqrt(3))
    assert fifo["store_rate"] == 1.0 and "store_rate_se" not in fifo
    assert fifo["d_hit_rate"] == 0.0 and fifo["d_hit_rate_se"] == 0.0
    assert solar["hit_rate"] == pytest.approx(0.8)
    # paired by unit: diffs 0.1, 0.2, 0.3
    assert solar["d_hit_rate"] == pytest.approx(0.2)
    assert solar["d_hit_rate_se"] == pytest.approx(0.1 / math.sqrt(3))
    assert solar["d_score"] == pytest.approx(0.1)
    for key in ("workload", "setting", "capacity"):
        assert solar[key] == FIFO[0][key]
    assert "seed" not in solar and "unit" not in solar


def test_aggregate_pairs_by_unit_not_by_position() -> None:
    # the solar records arrive in another order, with a unit fifo does not have
    solar = [rec("solar", 3, 0.9), rec("solar", 1, 0.6), rec("solar", 4, 0.0), rec("solar", 2, 0.9)]
    row = report.aggregate(FIFO + solar)[1]
    assert row["seeds"] == [1, 2, 3, 4] and row["units"] == 4
    assert row["hit_rate"] == pytest.approx(0.6)
    assert row["d_hit_rate"] == pytest.approx(0.2)  # unit 4 is unpaired: left out


def test_aggregate_groups_by_setting_and_capacity() -> None:
    recs = [
        rec("fifo", 1, 0.1, capacity=5), rec("solar", 1, 0.4, capacity=5),
        rec("fifo", 1, 0.2, capacity=10), rec("solar", 1, 0.1, capacity=10),
        rec("solar", 1, 0.3, setting="other"),
    ]  # fmt: skip
    rows = report.aggregate(recs)
    assert [(r["policy"], r["capacity"], r["setting"]) for r in rows] == [
        ("fifo", 5, "s"), ("solar", 5, "s"), ("fifo", 10, "s"), ("solar", 10, "s"),
        ("solar", 10, "other"),
    ]  # fmt: skip
    assert rows[1]["d_hit_rate"] == pytest.approx(0.3)
    assert rows[3]["d_hit_rate"] == pytest.approx(-0.1)
    assert "d_hit_rate" not in rows[4]  # no fifo in that setting
    assert rows[0]["hit_rate_se"] == 0.0  # one unit


def test_aggregate_other_baseline_and_tuple_units() -> None:
    recs = [rec(p, s, h, unit=("conv", s)) for p, s, h in
            [("lru", 1, 0.2), ("lru", 2, 0.4), ("arc", 1, 0.5), ("arc", 2, 0.5)]]  # fmt: skip
    rows = report.aggregate(recs, baseline="lru")
    assert rows[1]["d_hit_rate"] == pytest.approx(0.2)
    assert "d_hit_rate" not in report.aggregate(recs)[1]  # no fifo at all


def recall_records(policy: str) -> list[dict[str, Any]]:
    return [dict(workload="w", setting="s", policy=policy, capacity=1, seed=s, unit=s, recall=r)
            for s, r in [(1, 0.2), (2, 0.4)]]  # fmt: skip


def test_aggregate_without_paired_metrics() -> None:
    (row,) = report.aggregate(recall_records("lru"))
    assert row["recall"] == pytest.approx(0.3)
    assert not [k for k in row if k.endswith("_se") or k.startswith("d_")]


def test_aggregate_without_paired_metrics_with_fifo_baseline() -> None:
    rows = report.aggregate(recall_records("fifo") + recall_records("lru"))
    assert [r["recall"] for r in rows] == pytest.approx([0.3, 0.3])
    assert not [k for r in rows for k in r if k.startswith("d_")]


# -- formatting ---------------------------------------------------------------------------------
ROWS = report.aggregate(FIFO + SOLAR)


def test_table() -> None:
    text = report.table(ROWS, ["setting", "policy", "capacity", "hit_rate", "d_hit_rate", "cost"])
    lines = text.splitlines()
    assert len(lines) == 3
    assert lines[0].split() == ["setting", "policy", "K", "hit", "Δhit", "vs", "fifo", "COST"]
    fifo, solar = (line.split() for line in lines[1:])
    assert fifo == ["s", "fifo", "10", "0.600", "+0.000", "-"]
    assert solar == ["s", "solar", "10", "0.800", "+0.200", "-"]
    assert len({len(line) for line in lines}) == 1  # fixed width
    # text columns are left-aligned, numbers right-aligned
    assert lines[1].startswith("s        fifo ")
    assert lines[1].endswith("     -")


def test_table_dashes_for_missing_and_nan() -> None:
    rows = [{"policy": "x", "hit_rate": float("nan"), "score": None}, {"policy": "yy"}]
    text = report.table(rows, ["policy", "hit_rate", "score", "x_fifo"])
    body = [line.split() for line in text.splitlines()[1:]]
    assert body == [["x", "-", "-", "-"], ["yy", "-", "-", "-"]]


def test_table_formats() -> None:
    row = {"modifications": 12.345, "cost": 1234.56, "us_per_step": 7.25, "x_fifo": 1.5,
           "sentences_per_s": 812.6, "d_score": -0.01234}  # fmt: skip
    cols = list(row)
    assert report.table([row], cols).splitlines()[1].split() == [
        "12.3", "1234.6", "7.2", "1.50", "813", "-0.012"
    ]  # fmt: skip


def test_every_cli_column_has_a_format() -> None:
    for col in [*SYNTHETIC_COLUMNS, *LOCOMO_COLUMNS, *LATENCY_COLUMNS]:
        assert col in report.COLUMNS


def test_jsonl() -> None:
    text = report.jsonl(ROWS)
    assert text.endswith("\n") and text.count("\n") == 2
    back = [json.loads(line) for line in text.splitlines()]
    assert back == ROWS
    assert list(back[0])[:4] == ["workload", "setting", "policy", "capacity"]
    assert report.jsonl([]) == ""


def test_csv() -> None:
    rows = [{"policy": "a", "seeds": [42, 1337], "x": 1.5}, {"policy": "b", "y": None, "x": 2}]
    text = report.to_csv(rows)
    assert text.splitlines()[0] == "policy,seeds,x,y"  # union, first-seen order
    parsed = list(csv.DictReader(io.StringIO(text)))
    assert parsed == [
        {"policy": "a", "seeds": "42 1337", "x": "1.5", "y": ""},
        {"policy": "b", "seeds": "", "x": "2", "y": ""},
    ]
    assert "\r" not in text


def test_render_dispatch() -> None:
    assert render(ROWS, "json") == report.jsonl(ROWS)
    assert render(ROWS, "csv") == report.to_csv(ROWS)
    table = render(ROWS, "table")
    assert table.startswith("== w ==\n") and table.endswith("\n")
    assert "Δhit vs fifo" in table and "0.800" in table


def test_render_table_groups_by_workload_and_prints_throughput() -> None:
    rows = [
        {"workload": "latency", "setting": "d=384", "policy": "fifo", "capacity": 100,
         "us_per_step": 10.0, "p99_us": 20.0, "x_fifo": 1.0},
        {"workload": "latency", "setting": "embed batch=64", "policy": "minilm",
         "capacity": None, "sentences_per_s": 512.4, "runs": [500.0, 512.4, 530.0]},
        {"workload": "other", "setting": "s", "policy": "fifo", "capacity": 5, "hit_rate": 0.5},
    ]  # fmt: skip
    text = render(rows, "table")
    parts = text.split("\n\n")
    assert parts[0].startswith("== latency ==") and "median us" in parts[0]
    assert "minilm" not in parts[0]
    assert parts[1] == "MiniLM embedding, batch 64: 512 sentences/s"
    assert parts[2].startswith("== other ==") and "0.500" in parts[2]


def test_pivot() -> None:
    rows = [
        dict(setting="s", capacity=10, policy="fifo", hit_rate=0.5),
        dict(setting="s", capacity=10, policy="solar", hit_rate=0.75),
        dict(setting="s", capacity=20, policy="solar", hit_rate=1.0),
        dict(setting="t", capacity=10, policy="fifo", hit_rate=None),
    ]
    lines = report.pivot(rows, "hit_rate").splitlines()
    assert [line.split() for line in lines] == [
        ["setting", "K", "fifo", "solar"],
        ["s", "10", "0.500", "0.750"],
        ["s", "20", "-", "1.000"],
        ["t", "10", "-", "-"],
    ]
    assert len({len(line) for line in lines}) == 1


def test_render_compact() -> None:
    rows = [
        dict(workload="cycling", setting="m/K=1", capacity=10, policy="fifo", hit_rate=0.9),
        dict(workload="locomo", setting="feedback", capacity=10, policy="fifo", score=0.25,
             hit_rate=0.5),
        dict(workload="latency", setting="d=384", capacity=100, policy="fifo", us_per_step=12.34),
    ]  # fmt: skip
    parts = render(rows, "table", compact=True).split("\n\n")
    assert parts[0].splitlines()[0] == "== cycling: hit rate =="
    assert parts[0].splitlines()[2].split() == ["m/K=1", "10", "0.900"]
    assert parts[1].splitlines()[0] == "== locomo: mean soft hit s =="
    assert parts[1].splitlines()[2].split() == ["feedback", "10", "0.250"]
    assert parts[2].splitlines()[2].split() == ["d=384", "100", "12.3"]
