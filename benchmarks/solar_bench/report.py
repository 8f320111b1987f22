"""Aggregate per-run records over seeds (or (conversation, seed) units) and format the rows.

A record is one run: ``workload``, ``setting``, ``policy``, ``capacity``, ``seed``, ``unit`` (what
the standard error is over) and metric values. A row is one (workload, setting, policy, capacity):
the mean of each metric over its units, the standard error of the headline metrics and the paired
difference to FIFO on the same units.

>>> recs = [dict(workload="w", setting="s", policy=p, capacity=10, seed=s, unit=s, hit_rate=h,
...              score=h, store_rate=1.0, modifications=5.0)
...         for p, s, h in [("fifo", 1, .5), ("fifo", 2, .7), ("solar", 1, .6), ("solar", 2, .9)]]
>>> rows = aggregate(recs)
>>> rows[1]["policy"], round(rows[1]["hit_rate"], 3), round(rows[1]["d_hit_rate"], 3)
('solar', 0.75, 0.15)
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

KEY = ("workload", "setting", "policy", "capacity")
PAIRED = ("hit_rate", "score")  # metrics reported with a standard error and a paired diff to FIFO
_META = {*KEY, "seed", "unit"}


def _se(values: Sequence[float]) -> float:
    return float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0


def record(
    workload: str,
    setting: str,
    policy: str,
    capacity: int,
    seed: int,
    sample: str,
    metrics: dict[str, float],
) -> dict[str, Any]:
    """One run on one sample (a conversation) with one seed: the unit is ``(sample, seed)``.

    >>> record("locomo", "feedback", "fifo", 10, 42, "conv-26", {"score": 0.5})["unit"]
    ('conv-26', 42)
    """
    return dict(
        workload=workload,
        setting=setting,
        policy=policy,
        capacity=capacity,
        seed=seed,
        unit=(sample, seed),
        **metrics,
    )


def aggregate(records: Sequence[dict[str, Any]], baseline: str = "fifo") -> list[dict[str, Any]]:
    """One row per (workload, setting, policy, capacity), in first-seen order."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for rec in records:
        groups.setdefault(tuple(rec[k] for k in KEY), []).append(rec)
    rows = []
    for key, recs in groups.items():
        row: dict[str, Any] = dict(zip(KEY, key, strict=True))
        row["seeds"] = sorted({r["seed"] for r in recs})
        row["units"] = len(recs)
        for metric in [m for m in recs[0] if m not in _META]:
            row[metric] = float(np.mean([r[metric] for r in recs]))
        for metric in PAIRED:
            if metric in recs[0]:
                row[f"{metric}_se"] = _se([r[metric] for r in recs])
        base = groups.get((key[0], key[1], baseline, key[3]))
        if base is not None:
            by_unit = {r["unit"]: r for r in base}
            for metric in (m for m in PAIRED if m in recs[0]):
                diffs = [
                    r[metric] - by_unit[r["unit"]][metric] for r in recs if r["unit"] in by_unit
                ]
                if diffs:
                    row[f"d_{metric}"] = float(np.mean(diffs))
                    row[f"d_{metric}_se"] = _se(diffs)
        rows.append(row)
    return rows


# column: (header, format); a row without the field prints "-"
COLUMNS: dict[str, tuple[str, str]] = {
    "setting": ("setting", "{}"),
    "policy": ("policy", "{}"),
    "capacity": ("K", "{}"),
    "hit_rate": ("hit", "{:.3f}"),
    "hit_rate_se": ("±se", "{:.3f}"),
    "score": ("score", "{:.3f}"),
    "score_se": ("±se", "{:.3f}"),
    "recall": ("recall", "{:.3f}"),
    "first_half": ("1st half", "{:.3f}"),
    "second_half": ("2nd half", "{:.3f}"),
    "store_rate": ("store", "{:.3f}"),
    "modifications": ("N", "{:.1f}"),
    "cost": ("COST", "{:.1f}"),
    "mean_size": ("fill", "{:.1f}"),
    "d_hit_rate": ("Δhit vs fifo", "{:+.3f}"),
    "d_hit_rate_se": ("±se", "{:.3f}"),
    "d_score": ("Δscore vs fifo", "{:+.3f}"),
    "d_score_se": ("±se", "{:.3f}"),
    "dim": ("d", "{}"),
    "us_per_step": ("median us", "{:.1f}"),
    "us_per_turn": ("us/turn", "{:.1f}"),
    "p99_us": ("p99 us", "{:.1f}"),
    "x_fifo": ("x fifo", "{:.2f}"),
    "x_vector": ("x vector-only", "{:.2f}"),
    "sentences_per_s": ("sentences/s", "{:.0f}"),
    "deletion": ("deletion", "{}"),
    "success_rate": ("SR", "{:.3f}"),
    "success_rate_se": ("±se", "{:.3f}"),
    "first_quarter": ("1st 1/4", "{:.3f}"),
    "last_quarter": ("last 1/4", "{:.3f}"),
    "final_size": ("size", "{:.0f}"),
    "added": ("added", "{:.0f}"),
    "deleted": ("deleted", "{:.0f}"),
    "pearson_r": ("r in/out", "{:.2f}"),
}


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A fixed-width text table of ``columns`` (keys of :data:`COLUMNS`)."""
    head = [COLUMNS[c][0] for c in columns]
    body = [[_cell(row.get(c), COLUMNS[c][1]) for c in columns] for row in rows]
    return _align([head, *body])


def _align(lines: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell: the two key columns left, numbers right."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "\n".join(
        "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in lines
    )


def _cell(value: Any, fmt: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isnan(value):
        return "-"
    return fmt.format(value)


def jsonl(rows: Sequence[dict[str, Any]]) -> str:
    """JSON Lines: one object per row."""
    return "".join(json.dumps(row, sort_keys=False) + "\n" for row in rows)


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    """CSV with the union of the rows' fields (first-seen order); lists joined by spaces."""
    fields: dict[str, None] = {}
    for row in rows:
        fields.update(dict.fromkeys(row))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(fields), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(
            {k: " ".join(map(str, v)) if isinstance(v, list) else v for k, v in row.items()}
        )
    return out.getvalue()


def pivot(rows: Sequence[dict[str, Any]], value: str, fmt: str = "{:.3f}") -> str:
    """A compact view: one line per (setting, K), one column per policy, cells = ``value``.

    >>> print(pivot([dict(setting="s", capacity=10, policy="fifo", hit_rate=0.5),
    ...              dict(setting="s", capacity=10, policy="solar", hit_rate=0.75)], "hit_rate"))
    setting  K    fifo  solar
    s        10  0.500  0.750
    """
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    cells: dict[tuple[Any, Any], dict[str, Any]] = {}
    for r in rows:
        cells.setdefault((r["setting"], r["capacity"]), {})[r["policy"]] = r.get(value)
    lines = [["setting", "K", *policies]]
    for (setting, capacity), by_policy in cells.items():
        lines.append(
            [str(setting), str(capacity), *[_cell(by_policy.get(p), fmt) for p in policies]]
        )
    return _align(lines)
