"""``solar-bench`` / ``python -m solar_bench``: arguments, output formats, files, errors."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from solar_bench.cli import default_policies, main
from solar_core import available_policies
from tests.support.data import data_path
from tests.support.locomo import write_locomo

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
FIELDS = {"workload", "setting", "policy", "capacity", "hit_rate", "score", "store_rate",
          "modifications", "seeds"}  # fmt: skip


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict[str, Any]]:
    assert main([*argv, "--format", "json", "--quiet"]) == 0
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines()]


def test_cycling_json_all_policies(capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, "cycling", "--seeds", "42", "--jobs", "1")
    policies = default_policies("cycling")
    assert sorted(policies) == [p for p in available_policies() if p != "solar-dialogue"]
    assert len(rows) == 5 * len(policies)
    for row in rows:
        assert FIELDS <= set(row)
        assert row["workload"] == "cycling" and row["capacity"] == 10 and row["seeds"] == [42]
        assert 0 <= row["hit_rate"] <= 1 and 0 <= row["store_rate"] <= 1
    assert [r["setting"] for r in rows[:: len(policies)]] == [
        "m/K=1", "m/K=1.5", "m/K=2", "m/K=3", "m/K=5"
    ]  # fmt: skip
    assert {r["policy"] for r in rows} == set(policies)
    fifo = {r["setting"]: r for r in rows if r["policy"] == "fifo"}
    assert fifo["m/K=1"]["hit_rate"] == 0.9
    for setting in ("m/K=1.5", "m/K=2", "m/K=3", "m/K=5"):
        assert fifo[setting]["hit_rate"] == 0.0
        assert fifo[setting]["d_hit_rate"] == 0.0


def test_cycling_json_two_seeds(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cycling", "--seeds", "42", "1337", "--jobs", "1", "--policies", "fifo,lru"]
    rows = run_json(capsys, *argv)
    assert len(rows) == 10 and all(r["seeds"] == [42, 1337] and r["units"] == 2 for r in rows)
    lru = {r["setting"]: r for r in rows if r["policy"] == "lru"}
    assert lru["m/K=1"]["hit_rate"] == pytest.approx((0.37 + 0.38) / 2)
    assert lru["m/K=1"]["d_hit_rate"] == pytest.approx(lru["m/K=1"]["hit_rate"] - 0.9)
    assert lru["m/K=1"]["hit_rate_se"] == pytest.approx(0.005)


def test_csv_has_a_header(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cycling", "--seeds", "42", "--jobs", "1", "--policies", "fifo", "--quiet"]
    assert main([*argv, "--format", "csv"]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[0].split(",")
    assert header[:4] == ["workload", "setting", "policy", "capacity"]
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 5 and rows[0]["hit_rate"] == "0.9" and rows[0]["seeds"] == "42"


def test_table_format(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cycling", "--seeds", "42", "--jobs", "1", "--policies", "fifo,lru", "--quiet"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("== cycling ==\n")
    head = text.splitlines()[1].split()
    assert head[:4] == ["setting", "policy", "K", "hit"]
    assert "0.900" in text and "m/K=1.5" in text


def test_out_writes_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "res.jsonl"
    argv = ["cycling", "--seeds", "42", "--jobs", "1", "--policies", "fifo", "--quiet"]
    assert main([*argv, "--format", "json", "--out", str(out)]) == 0
    assert capsys.readouterr().out == ""
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 5 and rows[0]["hit_rate"] == 0.9


def test_plot_cycling(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "figs" / "cycling.png"
    argv = ["cycling", "--seeds", "42", "--jobs", "1", "--policies", "fifo,lru", "--quiet"]
    assert main([*argv, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_progress_and_timing_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cycling", "--seeds", "42", "--jobs", "1", "--policies", "fifo", "--format", "json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "cycling:" in captured.err
    assert all(json.loads(line) for line in captured.out.splitlines())


def test_policy_specs_with_parameters_are_their_own_columns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = "solar-adaptive[hysteresis=0;shift=0]"
    rows = run_json(
        capsys, "cycling", "--seeds", "42", "--jobs", "1", "--policies", f"solar-adaptive,{spec}"
    )
    by = {(r["policy"], r["setting"]): r for r in rows}
    assert {r["policy"] for r in rows} == {"solar-adaptive", spec}
    # m/K = 5: without hysteresis the loop churns (the ablation, run for real here)
    assert by[(spec, "m/K=5")]["store_rate"] > 5 * by[("solar-adaptive", "m/K=5")]["store_rate"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("solar-adaptive[bogus=1]", "unknown parameter(s) bogus"),
        ("solar-adaptive[shift]", "write name=value"),
        ("solar-adaptive[hysteresis=-1]", "hysteresis"),
        ("fifo[", "bad policy spec"),
        ("solar-adaptive[shift=0]]", "bad policy spec"),
        ("solar-adaptive[shift=0;shift=1]", "given twice"),
        ("solar-adaptive[use_feedback=false]", "use_feedback must be a bool"),
        ("fifo[deletion=history;deletion_window=3]", "do not apply to deletion=history"),
        ("fifo[deletion_n=3]", "need deletion="),
    ],
)
def test_bad_policy_specs(spec: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(["cycling", "--policies", spec])
    assert err.value.code == 2
    assert message in capsys.readouterr().err


# -- argument errors ----------------------------------------------------------------------------
def test_unknown_policy(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(["cycling", "--policies", "fifo,nope"])
    assert err.value.code == 2
    msg = capsys.readouterr().err
    assert "unknown policy 'nope'" in msg
    for name in available_policies():
        assert name in msg


def test_empty_policy_list(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["cycling", "--policies", ","])
    assert "known:" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--k", "0"], ["--k", "5", "-3"], ["--jobs", "0"],
                                  ["--steps", "0"]])  # fmt: skip
def test_non_positive_numbers_rejected(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(["cycling", *argv])
    assert err.value.code == 2
    assert "must be >= 1" in capsys.readouterr().err


def test_unknown_workload(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["tetris"])
    assert "invalid choice" in capsys.readouterr().err


def test_locomo_without_data() -> None:
    with pytest.raises(SystemExit) as err:
        main(["locomo", "--embedder", "hash", "--quiet"])
    assert "--data must name a LoCoMo-format JSON file" in str(err.value.code)


def test_locomo_with_a_folder_as_data(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="--data"):
        main(["locomo", "--data", str(tmp_path), "--embedder", "hash", "--quiet"])


# -- locomo, latency -----------------------------------------------------------------------------
def test_locomo_hash_embedder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_locomo(tmp_path)
    cache = tmp_path / "cache"
    argv = ["locomo", "--data", str(data), "--embedder", "hash", "--cache-dir", str(cache),
            "--seeds", "42", "--k", "5", "--quiet", "--format", "json"]  # fmt: skip
    assert main(argv) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    policies = default_policies("locomo")  # every preset but the one for dialogue turns
    assert len(rows) == 2 * len(policies)
    assert {r["setting"] for r in rows} == {"feedback", "no feedback"}
    for r in rows:
        assert {"score", "recall", "cost", "d_score", "score_se", "hit_rate"} <= set(r)
        assert r["workload"] == "locomo" and r["capacity"] == 5 and r["seeds"] == [42]
        assert r["units"] == 2  # (conversation, seed) units
        assert 0 <= r["score"] <= 1 and 0 <= r["recall"] <= 1
    assert all(r["d_score"] == 0.0 for r in rows if r["policy"] == "fifo")
    assert (cache / "hash-384.npz").exists()
    # a second run reads every vector from the cache and gives the same rows
    assert main([*argv[:-1], "table"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("== locomo ==") and "recall" in text
    assert main(argv) == 0
    again = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert again == rows


def test_locomo_reports_embedding_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_locomo(tmp_path)
    argv = ["locomo", "--data", str(data), "--embedder", "hash", "--cache-dir",
            str(tmp_path / "c"), "--seeds", "42", "--k", "5", "--policies", "fifo"]  # fmt: skip
    assert main(argv) == 0
    assert "embedded 42 new texts" in capsys.readouterr().err  # 21 QA: question + experience
    assert main(argv) == 0
    assert "embedded" not in capsys.readouterr().err


def test_latency(capsys: pytest.CaptureFixture[str]) -> None:
    rows = run_json(capsys, "latency", "--k", "20", "--steps", "50", "--embedder", "hash")
    assert [r["policy"] for r in rows] == [p for p in
        ["fifo", "lru", "lfu", "arc", "solar-e", "solar-a", "solar", "solar-adaptive",
         "unlimited"]
        if p in available_policies()]  # fmt: skip
    for r in rows:
        assert r["workload"] == "latency" and r["capacity"] == 20 and r["steps"] == 50
        assert r["us_per_step"] > 0 and r["x_fifo"] > 0 and r["p99_us"] >= r["us_per_step"]
    assert rows[0]["x_fifo"] == 1.0


def test_latency_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    png = tmp_path / "latency.png"
    argv = ["latency", "--k", "20", "--steps", "50", "--embedder", "hash", "--quiet",
            "--policies", "fifo,solar", "--plot", str(png)]  # fmt: skip
    assert main(argv) == 0
    assert "latency" in capsys.readouterr().out
    assert png.read_bytes()[:8] == PNG_MAGIC


# -- parallel runs, entry point ------------------------------------------------------------------
def test_jobs_2_equals_jobs_1(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["working-set", "--k", "15", "--seeds", "42", "--policies", "fifo,solar"]
    one = run_json(capsys, *argv, "--jobs", "1")
    two = run_json(capsys, *argv, "--jobs", "2")
    assert len(one) == len(two) == 4
    timing = {"us_per_step"}
    for a, b in zip(one, two, strict=True):
        assert {k: v for k, v in a.items() if k not in timing} == {
            k: v for k, v in b.items() if k not in timing
        }


def test_module_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "solar_bench", "--help"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0
    assert "usage: solar-bench" in done.stdout and "locomo" in done.stdout


# -- --data: replaying the reference files -------------------------------------------------------
SHARED = data_path("solar_synthetic")
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"{SHARED} not available: set SOLAR_DATA to the data folder"
)
TIMING = {"us_per_step"}


def without_timing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


@needs_shared
def test_replay_gives_the_generated_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cycling", "--seeds", "42", "--jobs", "1", "--policies", "fifo,lru"]
    generated = run_json(capsys, *argv)
    replayed = run_json(capsys, *argv, "--data", str(SHARED))
    assert without_timing(replayed) == without_timing(generated)


@needs_shared
def test_replay_keeps_only_the_stored_variants(capsys: pytest.CaptureFixture[str]) -> None:
    # the reference stored working_set/distuniform only (no zipf)
    argv = ["working-set", "--k", "15", "--seeds", "42", "--policies", "fifo", "--jobs", "1"]
    rows = run_json(capsys, *argv, "--data", str(SHARED))
    assert [r["setting"] for r in rows] == ["uniform"]
    generated = [r for r in run_json(capsys, *argv) if r["setting"] == "uniform"]
    assert without_timing(rows) == without_timing(generated)


@needs_shared
def test_replay_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit, match="no reference files to replay"):
        main(["noise-stream", "--data", str(SHARED), "--quiet", "--k", "10"])
    with pytest.raises(SystemExit, match="no reference files"):
        main(["cycling", "--data", str(SHARED), "--quiet", "--seeds", "7"])


def test_data_that_is_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="solar_synthetic"):
        main(["cycling", "--data", str(tmp_path / "nope"), "--quiet", "--policies", "fifo"])
    with pytest.raises(SystemExit, match="solar_synthetic"):
        main(["cycling", "--data", str(write_locomo(tmp_path)), "--quiet"])
    with pytest.raises(SystemExit, match="not found"):
        main(["cycling", "--data", str(tmp_path), "--quiet", "--policies", "fifo"])


def test_out_without_quiet_also_shows_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "res.csv"
    argv = ["cycling", "--seeds", "42", "--jobs", "1", "--policies", "fifo", "--format", "csv"]
    assert main([*argv, "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("== cycling ==") and "0.900" in shown
    assert out.read_text(encoding="utf-8").startswith("workload,setting,policy,capacity")


def test_regagent_smoke(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rows = run_json(capsys, "regagent", "--seeds", "3", "--steps", "300")
    assert {r["setting"] for r in rows} == {"standard", "shift", "constrained"}
    assert {r["policy"] for r in rows} == {"fixed", "all", "C1", "C2", "C3", "strict"}
    by = {(r["setting"], r["policy"], r["deletion"]): r for r in rows}
    assert len(by) == len(rows) == 6 * 4 * 2 + 6
    fixed = by[("standard", "fixed", "none")]
    assert fixed["added"] == 0 and fixed["final_size"] == 100
    assert by[("standard", "all", "none")]["added"] == 300
    assert by[("constrained", "all", "combined")]["final_size"] <= 100
    for r in rows:
        assert 0.0 <= r["success_rate"] <= 1.0


def test_response_cache_bench_smoke(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = write_locomo(tmp_path)
    argv = ["response-cache", "--data", str(data), "--embedder", "hash", "--cache-dir",
            str(tmp_path / "c"), "--seeds", "1"]  # fmt: skip
    rows = run_json(capsys, *argv)
    kinds = [r["setting"] for r in rows]
    assert kinds.count("pairs") == kinds.count("stream") == 7 and kinds.count("latency") == 1
    pairs = [r for r in rows if r["setting"] == "pairs"]
    rates = [r["hit_rate"] for r in pairs]
    assert rates == sorted(rates, reverse=True)  # a higher threshold never serves more
    latency = next(r for r in rows if r["setting"] == "latency")
    assert latency["tier2_us"] > 0 and latency["tier3_us"] > 0
    assert main([*argv, "--quiet"]) == 0
    assert "paraphrase hit" in capsys.readouterr().out


def test_persistence_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["persistence", "--capacities", "10", "--steps", "6", "--repeats", "1",
            "--processes", "2", "--no-postgres"]  # fmt: skip
    rows = run_json(capsys, *argv)
    runs = [r for r in rows if r["setting"] == "run"]
    assert [(r["backend"], r["durability"], r["processes"], r["scope"]) for r in runs] == [
        ("memory", None, 1, "own"),
        ("sqlite", "normal", 1, "own"),
        ("sqlite", "full", 1, "own"),
        ("memory", None, 2, "independent"),
        ("sqlite", "normal", 2, "same"),
        ("sqlite", "normal", 2, "separate"),
    ]
    for r in runs:
        assert r["capacity"] == 10 and r["steps"] == 6 and r["full"]
        assert r["steps_per_s"] > 0 and r["median_ms"] > 0 and r["mean_ms"] > 0
    assert all(r["overhead_median_ms"] == 0.0 for r in runs if r["backend"] == "memory")
    (check,) = [r for r in rows if r["setting"] == "check"]
    assert check["ok"] and check["expected"] == 10 + 2 * 6 and check["found"] == [22]
    (skipped,) = [r for r in rows if r["setting"] == "skipped"]
    assert skipped["reason"] == "--no-postgres"
    out = tmp_path / "persistence.txt"
    assert main([*argv, "--processes", "1", "--quiet", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("== persistence: solar") and "goal (SQLite" in text
    assert "sqlite    full" in text and "postgres: skipped: --no-postgres" in text
    assert "same" not in text  # one process: no multi-process rows
    assert "== snapshot codec: solar" in text
    (codec,) = [r for r in rows if r["setting"] == "codec"]
    assert codec["capacity"] == 10 and codec["bytes"] > 0 and codec["decode_ms"] > 0


def test_persistence_bad_capacities(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as err:
        main(["persistence", "--capacities", "100,x"])
    assert err.value.code == 2
    assert "expected numbers like 100,1000" in capsys.readouterr().err
