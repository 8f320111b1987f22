"""Paper-style figures of benchmark rows (matplotlib, imported only when a plot is asked for).

One panel per workload present: cycling hit rate vs m/K; working-set SOLAR - FIFO gap vs K;
drift hit rate per phase length; retrieval-noise U-curves (hit rate vs K, log axis); LoCoMo bars
of the mean soft hit per K; dialogue-turn recall@5 vs K; latency median us per step per K.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

Rows = Sequence[dict[str, Any]]

# one colour per policy in every panel; the learned policies in warm colours
COLOURS = {
    "fifo": "#1f77b4",
    "lru": "#17becf",
    "lfu": "#2ca02c",
    "arc": "#9467bd",
    "solar-e": "#ff7f0e",
    "solar-a": "#8c564b",
    "solar": "#d62728",
    "solar-adaptive": "#e377c2",
    "solar-dialogue": "#bcbd22",
    "unlimited": "#7f7f7f",
    "oracle": "#000000",
}


def _series(rows: Rows, x: str, y: str) -> dict[str, tuple[list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float]]] = {}
    for r in rows:
        if r.get(y) is None:
            continue
        xs, ys = out.setdefault(r["policy"], ([], []))
        xs.append(float(r[x]))
        ys.append(float(r[y]))
    return out


def _lines(ax: Any, rows: Rows, x: str, y: str, *, logx: bool = False, style: str = "-") -> None:
    for policy, (xs, ys) in _series(rows, x, y).items():
        order = sorted(range(len(xs)), key=xs.__getitem__)
        ax.plot(
            [xs[i] for i in order],
            [ys[i] for i in order],
            style,
            marker="o",
            ms=3,
            label=policy,
            color=COLOURS.get(policy.split(" ")[0]),
        )
    if logx:
        ax.set_xscale("log")
    ax.grid(alpha=0.3)


def _cycling(ax: Any, rows: Rows) -> None:
    for r in rows:
        r["_x"] = float(r["setting"].split("=")[1])
    _lines(ax, rows, "_x", "hit_rate")
    ax.set(title="cycling: hit rate vs m/K", xlabel="m / K", ylabel="hit rate")


def _working_set(ax: Any, rows: Rows) -> None:
    for setting, style in (("uniform", "-"), ("zipf", "--")):
        # FIFO is the zero line; "unlimited" ignores K, so its gap says nothing about a policy
        skip = ("fifo", "unlimited")
        mine = [r for r in rows if r["setting"] == setting and r["policy"] not in skip]
        _lines(
            ax,
            [
                dict(r, policy=f"{r['policy']} {setting}" if setting == "zipf" else r["policy"])
                for r in mine
            ],
            "capacity",
            "d_hit_rate",
            logx=True,
            style=style,
        )
    ax.axhline(0, color="black", lw=0.8)
    ax.set(
        title="working set: hit rate - FIFO's (solid uniform, dashed Zipf)",
        xlabel="K",
        ylabel="Δ hit rate",
    )


def _drift(ax: Any, rows: Rows) -> None:
    for r in rows:
        r["_x"] = float(r["setting"].split("=")[1])
    _lines(ax, rows, "_x", "hit_rate", logx=True)
    ax.set(title="topic drift (K = 20)", xlabel="phase length", ylabel="hit rate")


def _noise(ax: Any, rows: Rows, name: str) -> None:
    _lines(ax, rows, "capacity", "hit_rate", logx=True)
    ax.set(title=f"retrieval noise ({name.split('-')[1]}): U-curve", xlabel="K", ylabel="hit rate")


def _dialogue(ax: Any, rows: Rows) -> None:
    """Evidence recall@5 against K: solid lines for ``end``, dashed for ``interleaved`` (one
    legend entry per policy)."""
    for mode, style in (("end", "-"), ("interleaved", "--")):
        mine = [r for r in rows if r["setting"] == mode]
        _lines(ax, mine, "capacity", "score", logx=True, style=style)
        if mode != "end":  # the solid line already names the policy
            for line in ax.get_lines()[-len(_series(mine, "capacity", "score")) :]:
                line.set_label(f"_{line.get_label()}")
    ks = sorted({int(r["capacity"]) for r in rows})
    ax.minorticks_off()  # the log axis would label 3x10^1 etc. between the Ks
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_ylim(0.0, 0.75)
    ax.set(
        title="dialogue turns, hybrid ranking (solid: end, dashed: interleaved)",
        xlabel="K (turns kept)",
        ylabel="recall@5",
    )


def _bars(ax: Any, rows: Rows, y: str, err: str | None, title: str, ylabel: str) -> None:
    groups = list(dict.fromkeys(f"{r['setting']} K={r['capacity']}" for r in rows))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    width = 0.8 / max(len(policies), 1)
    for j, policy in enumerate(policies):
        mine = {f"{r['setting']} K={r['capacity']}": r for r in rows if r["policy"] == policy}
        xs = [i + j * width for i, g in enumerate(groups) if g in mine]
        ys = [mine[g][y] for g in groups if g in mine]
        es = [mine[g].get(err, 0.0) for g in groups if g in mine] if err else None
        ax.bar(xs, ys, width, yerr=es, label=policy, color=COLOURS.get(policy))
    ax.set_xticks(
        [i + 0.4 - width / 2 for i in range(len(groups))],
        groups,
        rotation=30,
        ha="right",
        fontsize=7,
    )
    ax.set(title=title, ylabel=ylabel)
    ax.grid(axis="y", alpha=0.3)


def _regagent(rows: Rows, path: str | Path, plt: Any) -> Path:
    """Success rate over the task stream, one panel per variant, one line per addition policy
    (no deletion; constrained: combined deletion at capacity 100)."""
    variants = list(dict.fromkeys(r["setting"] for r in rows))
    fig, axes = plt.subplots(1, len(variants), figsize=(6 * len(variants), 4.2), squeeze=False)
    for ax, variant in zip(axes.flat, variants, strict=True):
        for r in rows:
            if r["setting"] != variant or r["deletion"] not in ("none", "combined"):
                continue
            if variant != "constrained" and r["deletion"] != "none":
                continue
            blocks = r["blocks"]
            xs = [(i + 1) * 4000 / len(blocks) for i in range(len(blocks))]
            ax.plot(xs, blocks, label=r["policy"], marker=".")
        ax.set_title(f"RegAgent, {variant}: success rate per {4000 // max(len(blocks), 1)} tasks")
        ax.set_xlabel("task")
        ax.set_ylabel("success rate")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, path, plt)


def _save(fig: Any, path: str | Path, plt: Any) -> Path:
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def plot(rows: Rows, path: str | Path) -> Path:
    """Draw one panel per workload in ``rows`` into the PNG ``path``; returns the path."""
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    if workloads == ["regagent"]:
        return _regagent(rows, path, plt)
    cols = min(len(workloads), 3)
    nrows = math.ceil(len(workloads) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6 * cols, 4.2 * nrows), squeeze=False)
    for ax, name in zip(axes.flat, workloads, strict=False):
        mine = [dict(r) for r in rows if r["workload"] == name]
        if name == "cycling":
            _cycling(ax, mine)
        elif name == "working-set":
            _working_set(ax, mine)
        elif name == "drift":
            _drift(ax, mine)
        elif name.startswith("noise"):
            _noise(ax, mine, name)
        elif name == "locomo":
            _bars(ax, mine, "score", "score_se", "LoCoMo: mean soft hit", "mean s")
        elif name == "dialogue":
            _dialogue(ax, mine)
        elif name == "latency":
            _bars(
                ax,
                [r for r in mine if "us_per_step" in r],
                "us_per_step",
                None,
                "latency per step (d = 384)",
                "median us",
            )
            ax.set_yscale("log")
        ax.legend(fontsize=6, ncol=2)
    for ax in list(axes.flat)[len(workloads) :]:
        ax.set_visible(False)
    return _save(fig, path, plt)
