"""The demos: ``solar-demo``, one scripted conversation through a FIFO memory and a SOLAR memory,
side by side, and the guide ``solar-bench demo`` (``make demo``) prints around its tables.

Run ``python -m solar_bench.demo`` (or ``solar-demo``). Two scenarios use the same 52 turns in two
orders (:data:`~solar_bench.demo_script.SCENARIOS`): topics that come back after more turns than
the memory holds, and topics that emerge one by one and come back quickly. Each turn the
assistant recalls the top-3
past experiences for Maya's question; a recall is *useful* when one of them is about the same
topic, and Maya then likes the answer (``feedback(like=True)``), else dislikes it; small talk
gets no rating. The turn's Q/A is then offered to the memory, which decides what to keep and what
to evict.

``solar-bench demo`` runs every experiment in a quick version (``solar_bench.cli.demo``);
:func:`bench_report` prints its tables with, for each, a title, what it measures, which way is
better and what to take from it (computed from the table's own rows), then where to go next.
"""

from __future__ import annotations

import argparse
import math
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solar_core.basics.types import Decision
from solar_core.embedders.cached_embedder import CachedEmbedder
from solar_core.embedders.embedder import Embedder, resolve_embedder
from solar_core.engine.memory import SolarMemory
from solar_core.policies.presets import PRESETS

from . import report
from .demo_script import SCENARIOS, TURNS


@dataclass
class PolicyRun:
    policy: str
    useful: int = 0
    scored: int = 0
    lines: list[str] = field(default_factory=list)
    memory: SolarMemory | None = None


def _short(text: str, width: int = 44) -> str:
    first = text.splitlines()[0].removeprefix("Q: ")
    return first if len(first) <= width else first[: width - 1] + "…"


def _why_evicted(decision: Decision, before: dict[str, dict[str, float]], policy: str) -> str:
    victim = decision.evicted or ""
    stats = before.get(victim, {})
    if "alpha" in stats and decision.victim_score is not None:
        others = ", ".join(f"{s:.2f}" for _, s in decision.contenders[1:])
        return (
            f"lowest Thompson score {decision.victim_score:.2f} "
            f"(Beta({stats['alpha']:.2f}, {stats['beta']:.2f}) sample + novelty; "
            f"next lowest {others})"
        )
    if decision.victim_score is not None:
        return f"lowest score {decision.victim_score:.2f}"
    return f"{PRESETS[policy].rule.split('; ')[-1]}" if policy in PRESETS else "policy choice"


def run_policy(
    policy: str,
    capacity: int,
    embedder: Embedder,
    seed: int,
    turns: tuple[tuple[str, str, str], ...] = TURNS,
) -> PolicyRun:
    """Stream ``turns`` through one memory and log every decision."""
    memory = SolarMemory(policy, capacity=capacity, embedder=embedder, seed=seed)
    run = PolicyRun(policy, memory=memory)
    texts: dict[str, tuple[int, str, str]] = {}  # id -> (turn, topic, text)
    for turn, (topic, question, answer) in enumerate(turns, start=1):
        hits = memory.retrieve(question, k=3)
        useful = topic != "chat" and any(h.metadata["topic"] == topic for h in hits)
        if topic != "chat":
            run.scored += 1
            run.useful += useful
        if topic != "chat":  # nobody rates small talk: the gate then uses its implicit cost
            memory.feedback(like=useful, retrieval=hits)
        before = {item.id: dict(item.policy) for item in memory.items()}
        decision = memory.add(f"Q: {question}\nA: {answer}", metadata={"topic": topic})
        recalled = ",".join(str(h.metadata["topic"]) for h in hits) or "-"
        mark = "useful " if useful else ("       " if topic == "chat" else "missed ")
        line = f"{turn:3d} {topic:<5} {mark} recalled [{recalled:<16}] "
        if decision.admitted and decision.item_id is not None:
            texts[decision.item_id] = (turn, topic, question)
            line += f"stored ({decision.reason})"
        else:
            line += f"skipped ({decision.reason}: {decision.regret:.2f} <= {decision.tau:.2f})"
        if decision.evicted is not None:
            t0, topic0, q0 = texts[decision.evicted]
            line += (
                f'\n{"":17}evicted turn {t0} [{topic0}] "{_short(q0)}"\n{"":17}  why: '
                + _why_evicted(decision, before, policy)
            )
        run.lines.append(line)
    return run


def _kept(run: PolicyRun) -> list[str]:
    assert run.memory is not None
    out = []
    for item in run.memory.items():
        stats = item.policy
        extra = (
            f"  Beta({stats['alpha']:.1f}, {stats['beta']:.2f}) mean {stats['mean']:.2f}"
            if "alpha" in stats
            else ""
        )
        out.append(f"  [{item.metadata['topic']:<5}] {_short(item.text, 52):<52}{extra}")
    return out


def _report(scenario: str, runs: list[PolicyRun], capacity: int, quiet: bool) -> None:
    turns = SCENARIOS[scenario]
    topics = Counter(topic for topic, _, _ in turns)
    order = "".join("." if t == "chat" else t[0] for t, _, _ in turns)
    print(f"\n##### scenario '{scenario}': {len(turns)} turns, capacity {capacity}, top-3")
    print(
        f"{sum(v for k, v in topics.items() if k != 'chat')} questions on 5 topics, "
        f"{topics['chat']} small-talk turns (.), in this order:\n{order}"
    )
    for run in runs:
        print(f"\n=== {run.policy}: {PRESETS[run.policy].rule} ===")
        if not quiet:
            print("\n".join(run.lines))
        print(f"\nkept at the end ({run.policy}):")
        print("\n".join(_kept(run)))


def _summary(results: dict[str, list[PolicyRun]]) -> None:
    print("\nsummary (useful recall = a same-topic experience among the top-3):")
    print(f"{'scenario':<10} {'policy':<10} {'useful recall':>14} {'stored':>8} {'evicted':>8}")
    for scenario, runs in results.items():
        for run in runs:
            assert run.memory is not None
            st = run.memory.stats()
            rate = run.useful / run.scored
            print(
                f"{scenario:<10} {run.policy:<10} {run.useful:>3}/{run.scored} = {rate:4.2f} "
                f"{st['admitted']:>4}/{st['steps']} {st['evicted']:>8}"
            )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="SOLAR agent memory demo")
    parser.add_argument("--policies", default="fifo,solar", help="comma-separated presets")
    parser.add_argument(
        "--scenarios", default="recurring,emerging", help=f"any of {', '.join(SCENARIOS)}"
    )
    parser.add_argument("--capacity", type=int, default=6)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--embedder", default="static", help="'static' (default, built in), 'minilm' or 'hash'"
    )
    parser.add_argument("--quiet", action="store_true", help="summary only, no per-turn log")
    args = parser.parse_args(argv)
    scenarios = args.scenarios.split(",")
    unknown = [s for s in scenarios if s not in SCENARIOS]
    if unknown:
        parser.error(f"unknown scenario(s) {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    start = time.perf_counter()
    inner = resolve_embedder(args.embedder)
    print(f"Loading the {type(inner).__name__} embedder...", flush=True)
    # Every question and Q/A of the script is embedded once, in batches, for all policies.
    embedder = CachedEmbedder(inner)
    embedder.prime([q for _, q, _ in TURNS] + [f"Q: {q}\nA: {a}" for _, q, a in TURNS])
    results: dict[str, list[PolicyRun]] = {}
    for scenario in scenarios:
        results[scenario] = [
            run_policy(p, args.capacity, embedder, args.seed, SCENARIOS[scenario])
            for p in args.policies.split(",")
        ]
        _report(scenario, results[scenario], args.capacity, args.quiet)
    _summary(results)
    print(f"\n({time.perf_counter() - start:.1f} s)")
    return 0


# -- `solar-bench demo`: a title, a legend and a takeaway for each table ------------------------
Row = dict[str, Any]
Cells = dict[tuple[str, Any], dict[str, float]]  # (setting, K) -> policy -> the table's value
#: reference rows, not bounded memories: shown beside the policies, never called "best"
REFERENCES = ("unlimited", "oracle")
WIDTH = 100


@dataclass(frozen=True)
class Guide:
    """How ``solar-bench demo`` presents one workload's table."""

    title: str
    value: str  # the row field each cell shows
    measures: str  # what one cell is; ``{ks}``: the table's capacities
    better: str
    takeaway: Callable[[list[Row], Cells], list[str]]
    fmt: str = "{:.3f}"
    lower: bool = False  # lower is better (a time)


def _cells(rows: Sequence[Row], value: str) -> Cells:
    cells: Cells = {}
    for r in rows:
        if r.get(value) is not None:
            cells.setdefault((r["setting"], r["capacity"]), {})[r["policy"]] = float(r[value])
    return cells


def _best(
    row: dict[str, float], fmt: str = "{:.3f}", lower: bool = False
) -> tuple[list[str], float]:
    """The bounded policies with the best value of ``row`` (as printed: ties share it).

    >>> _best({"fifo": 0.5, "lru": 0.5004, "lfu": 0.2, "unlimited": 0.9})
    (['fifo', 'lru'], 0.5004)
    """
    bounded = {p: v for p, v in row.items() if p not in REFERENCES}
    if not bounded:
        return [], math.nan
    target = (min if lower else max)(bounded.values())
    return [p for p, v in bounded.items() if fmt.format(v) == fmt.format(target)], target


def _best_line(cells: Cells, fmt: str = "{:.3f}", lower: bool = False) -> str:
    """Which bounded policies are best in how many rows of the table (a tie counts for each).

    >>> _best_line({("a", 5): {"fifo": 0.5, "lru": 0.5}, ("b", 5): {"fifo": 0.1, "lru": 0.3}})
    'best bounded policy: lru in 2 of 2 rows; fifo in 1 (ties count for each).'
    >>> _best_line({("a", 5): {"fifo": 0.5, "lru": 0.5, "unlimited": 0.9}})
    'best bounded policy here: fifo, lru (0.500).'
    """
    wins: Counter[str] = Counter()
    for row in cells.values():
        wins.update(_best(row, fmt, lower)[0])
    if not wins:
        return "no bounded policy in this table."
    if len(cells) == 1:
        names, value = _best(next(iter(cells.values())), fmt, lower)
        return f"best bounded policy here: {', '.join(names)} ({fmt.format(value)})."
    by_count: dict[int, list[str]] = {}
    for policy, count in wins.most_common():
        by_count.setdefault(count, []).append(policy)
    groups = [f"{', '.join(names)} in {count}" for count, names in by_count.items()]
    groups[0] += f" of {len(cells)} rows"
    ties = " (ties count for each)" if sum(wins.values()) > len(cells) else ""
    return f"best bounded policy: {'; '.join(groups)}{ties}."


def _span(values: Sequence[float]) -> str:
    low, high = min(values), max(values)
    return f"{low:.3f}" if f"{low:.3f}" == f"{high:.3f}" else f"{low:.3f}-{high:.3f}"


def _policy_values(cells: Cells, policy: str) -> list[float]:
    return [row[policy] for row in cells.values() if policy in row]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _cycling(rows: list[Row], cells: Cells) -> list[str]:
    out = [_best_line(cells)]
    ratio = {c: float(str(c[0]).split("=")[-1]) for c in cells if str(c[0]).startswith("m/K=")}
    over = [c for c in cells if ratio.get(c, 0.0) > 1]
    fifo = [cells[c]["fifo"] for c in over if "fifo" in cells[c]]
    if fifo:
        widest = max(over, key=lambda c: ratio[c])
        names, value = _best(cells[widest])
        fifo_text = (
            "FIFO has evicted each topic before it comes back"
            if max(fifo) == 0
            else f"FIFO drops to {max(fifo):.3f} at most"
        )
        out.append(
            f"Once the cycle outgrows the memory (m/K > 1), {fifo_text}; keeping some older "
            f"items instead of the newest pays off ({widest[0]}: {', '.join(names)} "
            f"{value:.3f})."
        )
    return out


def _working_set(rows: list[Row], cells: Cells) -> list[str]:
    out = [_best_line(cells)]
    leads: dict[Any, tuple[float, str, str, float]] = {}
    for (setting, k), row in cells.items():
        if "fifo" not in row:
            continue
        names, value = _best(row)
        lead = (value - row["fifo"], str(setting), ", ".join(names), value)
        leads[k] = max(leads.get(k, lead), lead)
    if leads:
        k_top = max(leads, key=lambda k: leads[k][0])
        k_max = max(leads)
        top_lead, top_setting, top_names, top_value = leads[k_top]
        if top_lead > 0:
            text = (
                f"Curating pays most at K = {k_top}: {top_names} {top_value:.3f} against FIFO's "
                f"{top_value - top_lead:.3f} ({top_setting}); {leads[k_max][0]:+.3f} at K = "
                f"{k_max}"
            )
        else:
            text = "No bounded policy beats FIFO here"
        gaps = [
            row["unlimited"] - min(v for p, v in row.items() if p not in REFERENCES)
            for (_, k), row in cells.items()
            if k == k_max and "unlimited" in row and len(row) > 1
        ]
        if gaps:
            text += f", where every policy is within {max(gaps):.3f} of unlimited"
        text += "."
        out.append(text)
    return out


def _drift(rows: list[Row], cells: Cells) -> list[str]:
    out = [_best_line(cells)]
    means = {
        p: _mean(_policy_values(cells, p))
        for p in dict.fromkeys(p for row in cells.values() for p in row)
        if p not in REFERENCES
    }
    if "fifo" in means and len(means) > 1:
        worst = min(means, key=lambda p: means[p])
        fifo = _span(_policy_values(cells, "fifo"))
        if means["fifo"] >= _mean(list(means.values())):
            text = f"When topics move on, recency pays: FIFO {fifo}"
        else:
            text = f"When topics move on: FIFO {fifo}"
        if "solar" in means and worst != "solar":
            text += f", the paper's solar {_span(_policy_values(cells, 'solar'))}"
        text += f"; lowest here: {worst} ({_span(_policy_values(cells, worst))})."
        out.append(text)
    return out


def _noise_static(rows: list[Row], cells: Cells) -> list[str]:
    out = [_best_line(cells)]
    best = {k: _best(row)[1] for (_, k), row in cells.items() if _best(row)[0]}
    if len(best) > 1:
        peak, k_max = max(best, key=lambda k: best[k]), max(best)
        if peak != k_max:
            text = (
                "Nothing streams: a bigger pool is also more distractors, so the best hit rate "
                f"peaks at K = {peak} ({best[peak]:.3f}) and is {best[k_max]:.3f} at K = {k_max}"
            )
        else:
            text = (
                f"The best hit rate grows with the pool: {best[min(best)]:.3f} to {best[k_max]:.3f}"
            )
        gated = sorted(
            {r["policy"] for r in rows if r.get("store_rate", 1.0) < 1 and r["capacity"] == k_max}
        )
        text += f"; {', '.join(gated)} admit only part of the pool." if gated else "."
        out.append(text)
    return out


def _noise_stream(rows: list[Row], cells: Cells) -> list[str]:
    out = [_best_line(cells)]
    k_max = max(k for _, k in cells)
    for (_, k), row in cells.items():
        names, value = _best(row)
        if k == k_max and names and "unlimited" in row:
            keep = row["unlimited"]
            same = f"{value:.3f}" == f"{keep:.3f}"
            verb = "matches" if same else "beats" if value > keep else "trails"
            text = (
                f"At K = {k} the best bounded policy ({', '.join(names)}, {value:.3f}) {verb} "
                f"keeping all 5,000 items ({keep:.3f})"
            )
            out.append(
                text
                + (": fewer distractors make up for fewer items." if same or value > keep else ".")
            )
    return out


def _locomo(rows: list[Row], cells: Cells) -> list[str]:
    out = [_best_line(cells)]
    k_max = max(k for _, k in cells)
    tops = [
        (_best(row)[1], ", ".join(_best(row)[0]), str(setting), row.get("unlimited"))
        for (setting, k), row in cells.items()
        if k == k_max and _best(row)[0]
    ]
    if tops:
        value, names, setting, keep = max(tops)
        text = f"Best at K = {k_max}: {names} {value:.3f} ({setting})"
        if keep is not None and keep > value:
            text += (
                f"; keeping every experience recalls more ({keep:.3f}): a bounded memory "
                "trades recall for a fixed size"
            )
        out.append(
            f"{text}. {_units(rows)}: gaps of a few hundredths are noise (the full run: "
            "docs/benchmarks/locomo.md)."
        )
    return out


def _units(rows: list[Row]) -> str:
    units = max((int(r.get("units", 1)) for r in rows), default=1)
    return f"{units} conversation{'s' if units != 1 else ''}, 1 seed"


def _dialogue(rows: list[Row], cells: Cells) -> list[str]:
    out = []
    for (_, k), row in cells.items():
        if "solar-dialogue" not in row:
            out.append(_best_line({c: r for c, r in cells.items() if c[1] == k}))
            continue
        mine = row["solar-dialogue"]
        text = f"At K = {k} solar-dialogue, the chat memories' default, recalls {mine:.3f}"
        if row.get("fifo"):
            text += f" (FIFO {row['fifo']:.3f}, {mine / row['fifo']:.1f}x)"
        if "solar-adaptive" in row:
            text += f", solar-adaptive {row['solar-adaptive']:.3f}"
        if "unlimited" in row:
            text += f"; keeping every turn {row['unlimited']:.3f}"
        if "oracle" in row:
            text += f"; the oracle bound {row['oracle']:.3f}"
        out.append(text + ".")
        if _best(row)[0] == ["solar-dialogue"]:
            out.append(
                "For a chat history (every turn offered) use solar-dialogue; for "
                "question/answer experiences, notes or tool results, solar-adaptive."
            )
    return out


def _latency(rows: list[Row], cells: Cells) -> list[str]:
    out = []
    for (_, k), row in cells.items():
        names, value = _best(row, "{:.1f}", lower=True)
        if not names:
            continue
        text = f"Cheapest step at K = {k}: {', '.join(names)} ({value:.1f} us)"
        fifo = row.get("fifo")
        if fifo:
            defaults = ("solar-adaptive", "solar-dialogue")
            shown = [f"{p} {row[p] / fifo:.1f}x" for p in defaults if p in row]
            slowest = max((p for p in row if p not in REFERENCES), key=lambda p: row[p])
            if slowest not in defaults:
                shown.append(f"slowest {slowest} {row[slowest] / fifo:.1f}x")
            if shown:
                text += "; against FIFO's time: " + ", ".join(shown)
        out.append(text + ".")
    out.append(
        "Timings vary between runs and machines (every other table is seeded): read the "
        "ratios, not the microseconds."
    )
    return out


GUIDES: dict[str, Guide] = {
    "cycling": Guide(
        "Cycling: m topics asked in a fixed cycle, memory of K = 10 items",
        "hit_rate",
        "step t asks about topic t mod m and streams one new item of it; m/K > 1: the cycle "
        "is longer than the memory. Cell: hit rate, the share of steps whose top 3 holds an "
        "item of the asked topic.",
        "higher; unlimited (keeps every item) is the ceiling.",
        _cycling,
    ),
    "working-set": Guide(
        "Working set: a steady mix of 15 topics x 10 items, capacity swept",
        "hit_rate",
        "500 steps, each on a topic drawn uniformly or by Zipf(1.2) (a few topics most of the "
        "time); K = {ks}. Cell: hit rate (top 3 holds an item of the asked topic).",
        "higher; unlimited is the ceiling.",
        _working_set,
    ),
    "drift": Guide(
        "Topic drift: 5 of 30 topics active at a time, memory of K = 20",
        "hit_rate",
        "every phase (50 to 500 steps) the active topics slide by 4, so old topics stop "
        "coming back. Cell: hit rate (top 3 holds an item of the asked topic).",
        "higher; unlimited is the ceiling.",
        _drift,
    ),
    "noise-static": Guide(
        "Retrieval noise, static pool: K of 5,000 items stored, then probed",
        "hit_rate",
        "no stream: a pool of K = {ks} items (the relevant ones first, then distractors) is "
        "offered, then 1,000 queries with 3 relevant items each. Cell: hit rate.",
        "higher.",
        _noise_static,
    ),
    "noise-stream": Guide(
        "Retrieval noise, stream: the 5,000 items streamed, then 1,000 queries",
        "hit_rate",
        "every item streams through a memory of K = {ks} (each with a query on its topic), "
        "then 1,000 scored queries. Cell: hit rate.",
        "higher; unlimited keeps all 5,000.",
        _noise_stream,
    ),
    "locomo": Guide(
        "LoCoMo: question/answer pairs kept as experiences",
        "score",
        "each question retrieves the top 3 experiences, scored by its soft hit s (the share of "
        "its evidence turns the retrieved ones cover), then is offered as an experience; "
        "feedback: each recall rated with s, no feedback: unrated. Cell: mean s.",
        "higher; unlimited (keeps every experience) is the ceiling.",
        _locomo,
    ),
    "dialogue": Guide(
        "Dialogue turns: a bounded chat history (the chat memories' job)",
        "score",
        "every turn of the file's conversations streams into a memory of K = {ks} turns; each "
        "question is asked once at the end (solar-dialogue's prior for a conversation is "
        "trained without it). Cell: evidence recall@5, the share of a question's evidence "
        "turns among the 5 turns retrieved. oracle: the K turns the questions cite most, "
        "picked knowing the questions (a bound, not a policy).",
        "higher; unlimited keeps every turn.",
        _dialogue,
    ),
    "latency": Guide(
        "Latency: the time of one memory step, embedding excluded",
        "us_per_step",
        "one step = retrieve top 3 + feedback + add on a full memory of K = {ks}, its vectors "
        "precomputed ({setting}: the default static embedder's size); unlimited grows by one "
        "item a step. Cell: median microseconds per step over the timed steps.",
        "lower.",
        _latency,
        fmt="{:.1f}",
        lower=True,
    ),
}


def _wrap(label: str, text: str, indent: int = 10) -> str:
    return textwrap.fill(
        text,
        WIDTH,
        initial_indent=f"{label:<{indent}}",
        subsequent_indent=" " * indent,
        break_on_hyphens=False,
    )


def _table(number: int, workload: str, rows: list[Row]) -> str:
    guide = GUIDES.get(workload)
    if guide is None:  # a workload without a guide: its compact table alone
        value = "hit_rate" if "hit_rate" in rows[0] else "score"
        return f"== {number}. {workload} ==\n{report.pivot(rows, value)}"
    ks = ", ".join(str(k) for k in dict.fromkeys(r["capacity"] for r in rows))
    setting = ", ".join(str(s) for s in dict.fromkeys(r["setting"] for r in rows))
    cells = _cells(rows, guide.value)
    parts = [
        f"== {number}. {guide.title} ==",
        _wrap("measures", guide.measures.format(ks=ks, setting=setting)),
        _wrap("better", guide.better),
        "",
        report.pivot(rows, guide.value, guide.fmt),
        "",
        *(
            _wrap("takeaway" if i == 0 else "", line)
            for i, line in enumerate(guide.takeaway(rows, cells))
        ),
    ]
    return "\n".join(parts)


def solar_demo_command() -> str:
    """How to run ``solar-demo`` from here: the script beside this Python (relative to the
    working directory when inside it), else ``python -m solar_bench.demo``."""
    script = Path(sys.executable).parent / "solar-demo"
    if not script.exists():
        return "python -m solar_bench.demo"
    try:
        return str(script.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(script)


def intro(rows: Sequence[Row]) -> str:
    """What the demo is and how to read its tables."""
    seeds = sorted({s for r in rows for s in r.get("seeds", ())})
    seed = f"seed {', '.join(map(str, seeds))} only" if len(seeds) == 1 else "one seed"
    locomo = [r for r in rows if r["workload"] == "locomo"]
    chat = sorted({r["workload"] for r in rows if r["policy"] == "solar-dialogue"})
    what = (
        f"solar-bench demo: every experiment in a quick version ({seed}, fewer capacities"
        + (f", LoCoMo's question/answer table on {_units(locomo).split(',')[0]}" if locomo else "")
        + "), to check that every policy runs and to get a first look. Not a ranking: small runs "
        "can order the policies differently from the full tables (docs/BENCHMARKS.md)."
    )
    legend = (
        "Each table: one row per setting and capacity K (how many items the memory may hold), "
        "one column per policy. fifo, lru, lfu, arc: classic caches (they store every item and "
        "differ in what they evict); solar, solar-a, solar-e: the SOLAR paper's; "
        "solar-adaptive: the library's default; "
        + (
            f"solar-dialogue: the chat memories' default (in the {' and '.join(chat)} "
            f"table{'s' if len(chat) > 1 else ''}); "
            if chat
            else ""
        )
        + "unlimited: keeps every item, a reference, not a bounded memory (never called 'best')."
    )
    return "\n\n".join(_wrap("", text, 0) for text in (what, legend))


def next_steps(solar_demo: str) -> str:
    """Where a new user goes after the tables."""
    steps = [
        (solar_demo, "each decision of a memory and its reason, on one scripted chat (~1 s)"),
        (
            "README.md",
            'the quick starts (LangChain, LangGraph, LlamaIndex, plain Python) and "Which policy?"',
        ),
        ("docs/BENCHMARKS.md", "every experiment in full: protocols, tables, what they mean"),
        (
            "make bench",
            "reproduce those tables: 9 policies, 3 seeds, every K (installs MiniLM, ~1.6 GB, once)",
        ),
    ]
    width = max(len(cmd) for cmd, _ in steps)
    lines = ["== Next steps =="]
    for cmd, what in steps:
        lines.append(
            textwrap.fill(
                what,
                WIDTH,
                initial_indent=f"  {cmd:<{width}}  ",
                subsequent_indent=" " * (width + 4),
                break_on_hyphens=False,
            )
        )
    return "\n".join(lines)


def bench_report(
    rows: Sequence[Row], notes: Sequence[str] = (), solar_demo: str | None = None
) -> str:
    """``solar-bench demo``'s text: the intro, each table with its title, legend and takeaway
    (``notes``, such as a skipped table's reason, after the tables), then the next steps."""
    parts = [intro(rows)]
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    for number, workload in enumerate(workloads, start=1):
        parts.append(_table(number, workload, [dict(r) for r in rows if r["workload"] == workload]))
    if notes:
        parts.append("\n".join(["== Skipped ==", *(_wrap("", note, 0) for note in notes)]))
    parts.append(next_steps(solar_demo or solar_demo_command()))
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    sys.exit(main())
