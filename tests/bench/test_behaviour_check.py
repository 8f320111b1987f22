"""``benchmarks/behaviour_check.py``: two folders of result files compare equal exactly when
every row is, timings aside; and the latency side-by-side runs two checkouts."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    return load_script("behaviour_check")


def _write(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


ROWS = [
    {"policy": "fifo", "hit_rate": 0.5, "us_per_step": 40.0},
    {"policy": "solar", "hit_rate": 0.25, "us_per_step": 45.0},
]


def test_equal_rows_with_other_timings_compare_equal(tmp_path: Path) -> None:
    check = _script()
    _write(tmp_path / "a", "cycling", ROWS)
    _write(tmp_path / "b", "cycling", [dict(r, us_per_step=99.0) for r in ROWS])
    turns = [dict(r, us_per_turn=float(i)) for i, r in enumerate(ROWS)]  # the dialogue's timing
    _write(tmp_path / "a", "dialogue", turns)
    _write(tmp_path / "b", "dialogue", [dict(r, us_per_turn=7.0) for r in turns])
    assert check.compare(tmp_path / "a", tmp_path / "b") == []
    assert check.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0


def test_latency_tables_are_not_compared(tmp_path: Path) -> None:
    check = _script()
    _write(tmp_path / "a", "adapters-locomo-latency", [{"median_us": 1.0}])
    _write(tmp_path / "a", "cycling", ROWS)
    _write(tmp_path / "b", "adapters-locomo-latency", [{"median_us": 2.0}])
    _write(tmp_path / "b", "cycling", ROWS)
    assert check.compare(tmp_path / "a", tmp_path / "b") == []


def test_a_changed_value_a_lost_row_and_a_missing_file_are_reported(tmp_path: Path) -> None:
    check = _script()
    _write(tmp_path / "a", "cycling", ROWS)
    _write(tmp_path / "a", "drift", ROWS)
    _write(tmp_path / "b", "cycling", [ROWS[0], dict(ROWS[1], hit_rate=0.26)])
    problems = check.compare(tmp_path / "a", tmp_path / "b")
    assert problems == [
        "cycling.jsonl row 2: hit_rate: 0.25 -> 0.26",
        f"drift.jsonl: missing in {tmp_path / 'b'}",
    ]
    _write(tmp_path / "b", "drift", ROWS[:1])
    last = check.compare(tmp_path / "a", tmp_path / "b")[-1]
    assert last == "drift.jsonl: 2 rows before, 1 after"
    assert check.main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    assert check.compare(tmp_path / "empty", tmp_path / "b") == [
        f"{tmp_path / 'empty'} holds no result files"
    ]


def test_latency_runs_both_checkouts_in_turn() -> None:
    check = _script()
    rows = check.latency(ROOT, ROOT, "fifo,solar", capacity=20, steps=50, repeats=2)
    assert [r["policy"] for r in rows] == ["fifo", "solar"]
    assert all(r["before_us"] > 0 and r["after_us"] > 0 and r["repeats"] == 2 for r in rows)
