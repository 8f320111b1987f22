"""The demo: one scripted conversation through a FIFO memory and a SOLAR memory, side by side.

Run ``python -m solar_bench.demo`` (or ``solar-demo``). Two scenarios use the same 52 turns in two
orders (:data:`~solar_bench.demo_script.SCENARIOS`): topics that come back after more turns than
the memory holds, and topics that emerge one by one and come back quickly. Each turn the
assistant recalls the top-3
past experiences for Maya's question; a recall is *useful* when one of them is about the same
topic, and Maya then likes the answer (``feedback(like=True)``), else dislikes it; small talk
gets no rating. The turn's Q/A is then offered to the memory, which decides what to keep and what
to evict.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from solar_core.basics.types import Decision
from solar_core.embedders.cached_embedder import CachedEmbedder
from solar_core.embedders.embedder import Embedder, resolve_embedder
from solar_core.engine.memory import SolarMemory
from solar_core.policies.presets import PRESETS

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


if __name__ == "__main__":
    sys.exit(main())
