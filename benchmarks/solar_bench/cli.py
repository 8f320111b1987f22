"""``solar-bench``: the SOLAR paper's offline experiments (also ``python -m solar_bench``).

    solar-bench <workload> [--policies fifo,lru,...] [--k 10 20 50 100] [--seeds 42 1337 2024]
                           [--format table|csv|json] [--out FILE] [--plot FILE.png] [--data PATH]

Workloads: cycling | working-set | drift | noise-static | noise-stream | locomo | dialogue |
latency | regagent | response-cache | persistence | growth | updates | demo.
``--data`` is a LoCoMo-format JSON file for ``locomo``, ``dialogue``, ``updates`` (and
``demo``), or the reference implementation's ``solar_synthetic`` folder to replay its workload
files for a synthetic workload.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

from solar_core.policies.presets import available_policies
from solar_core.policies.salience import SaliencePrior

from . import report
from .embed_cache import EmbeddingCache
from .embedders import NAMES, embedder_for
from .execute import default_workers, execute, limit_blas_threads
from .experiments import EXPERIMENTS, plan, run_job
from .generators import SEEDS
from .latency import embed_throughput, measure
from .locomo import DEFAULT_K, distinct_texts, load_locomo, records
from .policy_spec import parse_policy, split_policies
from .progress import Progress

WORKLOADS = (
    *EXPERIMENTS,
    "locomo",
    "dialogue",
    "latency",
    "regagent",
    "response-cache",
    "persistence",
    "growth",
    "updates",
    "demo",
)
#: the paper's order: baselines, then the learned policies, then the no-eviction reference
POLICY_ORDER = [
    "fifo",
    "lru",
    "lfu",
    "arc",
    "solar-e",
    "solar-a",
    "solar",
    "solar-adaptive",
    "unlimited",
]
#: the summary of the protocols and measured tables (docs/BENCHMARKS.md, linking each page)
BENCHMARKS_URL = "https://github.com/solar-agent-memory/solar-memory/blob/main/docs/BENCHMARKS.md"
LATENCY_K = (100, 1000, 10000)
LATENCY_STEPS = {100: 5000, 1000: 2000, 10000: 500}

SYNTHETIC_COLUMNS = [
    "setting",
    "policy",
    "capacity",
    "hit_rate",
    "hit_rate_se",
    "score",
    "first_half",
    "second_half",
    "store_rate",
    "modifications",
    "mean_size",
    "d_hit_rate",
    "d_hit_rate_se",
]
LOCOMO_COLUMNS = [
    "setting",
    "policy",
    "capacity",
    "score",
    "score_se",
    "hit_rate",
    "recall",
    "first_half",
    "second_half",
    "store_rate",
    "modifications",
    "cost",
    "d_score",
    "d_score_se",
]
DIALOGUE_COLUMNS = [
    "setting",
    "policy",
    "capacity",
    "score",
    "score_se",
    "d_score",
    "d_score_se",
    "store_rate",
    "mean_size",
    "us_per_turn",
]
LATENCY_COLUMNS = ["setting", "policy", "capacity", "us_per_step", "p99_us", "x_fifo"]
#: the one metric per workload that the compact (demo) view shows
COMPACT = {
    "locomo": ("score", "mean soft hit s", "{:.3f}"),
    "latency": ("us_per_step", "median us per step", "{:.1f}"),
}


def _policies(text: str) -> list[str]:
    names = split_policies(text)
    if not names:
        raise argparse.ArgumentTypeError(f"no policy; known: {', '.join(available_policies())}")
    for name in names:
        try:
            parse_policy(name)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return names


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _positives(text: str) -> list[int]:
    """A comma-separated list of positive ints: ``100,1000``."""
    try:
        values = [_positive(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers like 100,1000, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError(f"expected numbers like 100,1000, got {text!r}")
    return values


#: ``growth --history``'s memories (solar_bench.history_growth.PEERS, not imported at start)
HISTORY_PEERS = ("solar", "solar-sqlite", "lc-vector", "lc-window-ensemble", "li-vector", "mem0")


def _peers(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in HISTORY_PEERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown peer {', '.join(unknown) or text!r}; use of {', '.join(HISTORY_PEERS)}"
        )
    return names


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="solar-bench",
        description=__doc__.splitlines()[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"Protocols, constants and results: {BENCHMARKS_URL}",
    )
    p.add_argument("workload", choices=WORKLOADS)
    p.add_argument(
        "--policies",
        type=_policies,
        default=None,
        help="comma-separated presets, each optionally with parameters for an ablation: "
        "solar-adaptive[shift=0;hysteresis=0] (default: every preset; solar-dialogue only "
        "for dialogue)",
    )
    p.add_argument("--k", type=_positive, nargs="+", help="capacities (default: per workload)")
    p.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    p.add_argument("--format", choices=("table", "csv", "json"), default="table")
    p.add_argument("--out", type=Path, help="write the results here (the table still prints)")
    p.add_argument("--plot", type=Path, help="also draw the paper-style figure to this PNG")
    p.add_argument("--data", type=Path, help="LoCoMo JSON file, or the solar_synthetic folder")
    p.add_argument(
        "--jobs",
        type=_positive,
        default=default_workers(),
        help="worker processes for synthetic sweeps (default: one per core)",
    )
    p.add_argument(
        "--steps",
        type=_positive,
        help="latency: timed steps per policy and K; regagent: tasks per run (default 4,000); "
        "persistence: timed steps per process (default 500)",
    )
    p.add_argument(
        "--capacities",
        type=_positives,
        help="persistence: comma-separated capacities (default 100,1000)",
    )
    p.add_argument(
        "--repeats", type=_positive, default=3, help="persistence: repeats of each configuration"
    )
    p.add_argument(
        "--processes",
        type=_positive,
        default=4,
        help="persistence: processes of the multi-process rows (1: single-process rows only)",
    )
    p.add_argument(
        "--postgres",
        metavar="URL",
        help="persistence: a postgresql:// URL to use (each run in its own new schema; default: "
        "start a throwaway server, or skip PostgreSQL if none can be started)",
    )
    p.add_argument("--no-postgres", action="store_true", help="persistence: memory and SQLite only")
    p.add_argument(
        "--embedder",
        default="static",
        help="locomo, dialogue, response-cache: the text embedder, of "
        + ", ".join(NAMES)
        + " (default static, the library's; the published tables use minilm; hash: fast, "
        "meaningless, for smoke tests)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        help="embedding cache folder (default: $SOLAR_BENCH_CACHE or ~/.cache/solar-memory)",
    )
    p.add_argument(
        "--blas-threads",
        type=_positive,
        default=1,
        help="BLAS threads per process (default 1: the suite runs one process per "
        "core, and threaded BLAS on top oversubscribes a small machine)",
    )
    p.add_argument(
        "--users",
        type=_positives,
        help="growth: comma-separated numbers of distinct users, each run in a fresh process "
        "(default 1000,5000,20000)",
    )
    p.add_argument(
        "--history",
        action="store_true",
        help="growth: instead, the cost of one user's chat turn as the history grows, "
        "SolarConversationMemory against LangChain's, LlamaIndex's and mem0's memories",
    )
    p.add_argument(
        "--turns",
        type=_positives,
        help="growth --history: comma-separated numbers of stored exchanges, each run in a "
        "fresh process (default 1000,10000,100000)",
    )
    p.add_argument(
        "--peers",
        type=_peers,
        help="growth --history: comma-separated memories, of " + ", ".join(HISTORY_PEERS) + " "
        "(default all)",
    )
    p.add_argument(
        "--timed",
        type=_positive,
        default=100,
        help="growth --history: timed turns per run (at most: a run stops after 60 s of them)",
    )
    p.add_argument(
        "--mem0-python",
        metavar="PYTHON",
        help="growth --history: the interpreter that runs the mem0 peer (a venv with mem0ai and "
        "faiss-cpu; default: this one, which skips mem0 with a note where it is missing)",
    )
    p.add_argument(
        "--modes",
        type=_modes,
        default=("end", "interleaved"),
        help="dialogue: comma-separated question modes, of end and interleaved, each optionally "
        "with +RATINGS, of none, evidence, disliked, random and overlap (end+disliked: every "
        "recall disliked; default end,interleaved: end rates nothing, interleaved each question "
        "by its evidence)",
    )
    p.add_argument(
        "--retrieval",
        type=_retrievals,
        help="dialogue, locomo: comma-separated rankings, of hybrid, vector and lexical (default "
        "hybrid, the library's; rows of another are labelled SETTING/RANKING); latency: "
        "rankings timed beside vector-only, with texts (default: vector-only alone)",
    )
    p.add_argument(
        "--workload",
        dest="updates_workload",
        choices=("facts", "repeats"),
        default="facts",
        help="updates: facts (statements of facts that change, injected into the conversations; "
        "default) or repeats (30%% of the turns said again, reworded)",
    )
    p.add_argument(
        "--per-conversation",
        action="store_true",
        help="updates: also one row per conversation (over the seeds)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return p


def synthetic(args: argparse.Namespace, name: str) -> list[dict[str, Any]]:
    data = args.data
    if data is not None and not data.is_dir():
        raise FileNotFoundError(f"--data {data} is not the reference's solar_synthetic folder")
    jobs = plan(name, args.policies, args.k, args.seeds, data)
    results = execute(
        jobs,
        run_job,
        key=attrgetter("key"),
        workers=args.jobs,
        label=name,
        progress=not args.quiet,
        blas_threads=args.blas_threads,
    )
    recs = [
        dict(
            workload=j.workload,
            setting=j.setting,
            policy=j.policy,
            capacity=j.capacity,
            seed=j.seed,
            unit=j.seed,
            **r,
        )
        for j, r in zip(jobs, results, strict=True)
    ]
    return report.aggregate(recs)


def _vector_lookup(args: argparse.Namespace, texts: list[str], embedder: str | None = None) -> Any:
    make, name = embedder_for(embedder or args.embedder)
    cache = EmbeddingCache(make, name, args.cache_dir)
    # A first run embeds every distinct question and experience with the model: thousands of
    # texts, most of a minute on a laptop CPU. A progress line (a few lines off a terminal) shows
    # it is working; a cached run embeds nothing and prints nothing.
    missing = len(cache.missing(texts))
    bar = Progress(
        "embedding LoCoMo",
        missing,
        unit="texts",
        enabled=bool(missing) and not args.quiet,
        log_every=0.25,
    )
    bar.draw()  # before the model loads, which takes seconds of its own
    vectors = cache.vectors(texts, progress=bar.advance)
    bar.close()
    if cache.embedded and not args.quiet:
        print(f"embedded {cache.embedded} new texts; cached in {cache.path}", file=sys.stderr)
    return vectors.__getitem__


def locomo(args: argparse.Namespace, conversations: int | None = None) -> list[dict[str, Any]]:
    if args.data is None or not args.data.is_file():
        raise SystemExit("solar-bench locomo: --data must name a LoCoMo-format JSON file")
    convs = load_locomo(args.data)[:conversations]
    vector = _vector_lookup(args, distinct_texts(convs))
    ks = args.k or list(DEFAULT_K)
    runnable = sum(len(c.qa) >= 2 for c in convs)  # records() skips shorter conversations
    retrievals = args.retrieval or ("hybrid",)
    total = 2 * len(retrievals) * len(ks) * len(args.policies) * runnable * len(args.seeds)
    bar = Progress("locomo", total, enabled=not args.quiet)
    recs = records(
        convs, vector, args.policies, ks, args.seeds, progress=bar.advance, retrievals=retrievals
    )
    bar.close()
    return report.aggregate(recs)


def dialogue(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Dialogue turns streamed into a bounded memory; evidence recall@5 of the questions."""
    from . import dialogue as bench

    if args.data is None or not args.data.is_file():
        raise SystemExit("solar-bench dialogue: --data must name a LoCoMo-format JSON file")
    convs = bench.load_dialogues(args.data)
    vector = _vector_lookup(args, bench.distinct_texts(convs))
    ks = args.k or list(bench.DEFAULT_K)
    runnable = sum(bool(c.questions and c.turns) for c in convs)
    retrievals = args.retrieval or ("hybrid",)
    total = len(retrievals) * len(args.modes) * len(ks) * (len(args.policies) + 1)
    total *= runnable * len(args.seeds)
    bar = Progress("dialogue", total, enabled=not args.quiet)
    from .salience_training import default_kind, priors_for

    embedder_kind = default_kind(args.embedder)
    kinds = {bench.prior_kind(p, embedder_kind) for p in args.policies}

    def kind_vectors(kind: str) -> Any:
        wanted = {"minilm": "minilm", "static": "static"}.get(kind, args.embedder)
        if wanted == args.embedder:
            return vector
        return _vector_lookup(args, bench.distinct_texts(convs), wanted)

    # Every conversation is scored with priors trained without it (out of sample).
    trained = {
        kind: priors_for(convs, kind_vectors(kind), kind) for kind in kinds if kind is not None
    }

    def prior(policy: str, sample_id: str) -> SaliencePrior | None:
        kind = bench.prior_kind(policy, embedder_kind)
        return None if kind is None else trained[kind][sample_id]

    recs = bench.records(
        convs, vector, args.policies, ks, args.seeds, args.modes, bar.advance, prior, retrievals
    )
    bar.close()
    return report.aggregate(recs)


def updates(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Facts that change over time (``--workload facts``) or turns said again (``repeats``),
    streamed into the library's memories (``solar_bench.updates``)."""
    from . import updates as bench

    if args.data is None or not args.data.is_file():
        raise SystemExit("solar-bench updates: --data must name a LoCoMo-format JSON file")
    if args.embedder != "static":
        raise SystemExit(
            "solar-bench updates: the memories are the library's defaults, whose salience prior "
            "reads the static embedder's vectors: --embedder static only"
        )
    convs = bench.load_conversations(args.data)
    part = args.updates_workload
    if part == "facts":
        ks = args.k or list(bench.FACTS_K)
        streams = [bench.fact_stream(c, seed) for c in convs for seed in args.seeds]
        texts = bench.fact_texts(streams)
        texts += [t.text for c in convs for t in c.turns]
        vector = _vector_lookup(args, list(dict.fromkeys(texts)))
        bar = Progress("updates", bench.facts_total(convs, ks, args.seeds), enabled=not args.quiet)
        recs, notes = bench.fact_records(convs, vector, ks, args.seeds, bar.advance)
    else:
        ks = args.k or list(bench.REPEATS_K)
        dialogues = [c.dialogue for c in convs]
        repeated = [bench.repeat_stream(d, seed) for d in dialogues for seed in args.seeds]
        vector = _vector_lookup(args, bench.repeat_texts([*dialogues, *repeated]))
        total = bench.repeats_total(dialogues, ks, args.seeds)
        bar = Progress("updates repeats", total, enabled=not args.quiet)
        recs, notes = bench.repeat_records(dialogues, vector, ks, args.seeds, bar.advance)
    bar.close()
    return [*bench.aggregate(recs, args.per_conversation), *bench.skipped(notes, part)]


def latency(args: argparse.Namespace, quick: bool = False, dim: int = 384) -> list[dict[str, Any]]:
    """Per-step latency at each K on precomputed ``dim``-d vectors (the demo: the default
    embedder's 256; the published tables: MiniLM's 384)."""
    rows: list[dict[str, Any]] = []
    for k in args.k or LATENCY_K:
        steps = args.steps or LATENCY_STEPS.get(k, 1000)
        bar = Progress(f"latency K={k}", 200 + steps, unit="steps", enabled=not args.quiet)
        rows += measure(
            args.policies, k, dim, steps, progress=bar.advance, retrievals=_with_vector(args)
        )
        bar.close()
    if not quick and args.embedder == "minilm":
        from .demo_script import TURNS

        base = [f"Q: {q}\nA: {a}" for _, q, a in TURNS]
        texts = [f"{base[i % len(base)]} ({i})" for i in range(1000)]
        rows.append(embed_throughput(texts))
    return rows


def regagent(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The experience-following study's RegAgent (``benchmarks/solar_bench/regagent.py``)."""
    from . import regagent as env

    runs = len(env.ADDITION) * (len(env.DELETION) * 2 + 1) * len(args.seeds)
    bar = Progress("regagent", runs, enabled=not args.quiet)
    recs = env.records(args.seeds, tasks=args.steps or env.TASKS, progress=bar.advance)
    bar.close()
    return env.aggregate(recs)


def response_cache(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Tier-2 hit and false-hit rates on LoCoMo question pairs, and tier-2 vs tier-3 latency."""
    from . import response_cache as bench

    if args.data is None or not args.data.is_file():
        raise SystemExit("solar-bench response-cache: --data must name a LoCoMo-format JSON file")
    convs = [c for c in load_locomo(args.data) if len(c.qa) >= 2]
    lookup = _vector_lookup(args, distinct_texts(convs))
    return [
        *bench.pair_rows(convs, lookup),
        *bench.stream_rows(convs, lookup, args.seeds),
        *bench.latency_rows(convs, lookup),
    ]


def _modes(text: str) -> tuple[str, ...]:
    """``--modes``: ``end``, ``interleaved``, either with ``+RATINGS``, comma-separated, in the
    given order.

    >>> _modes("interleaved,end,end+disliked")
    ('interleaved', 'end', 'end+disliked')
    """
    from .dialogue import parse_mode

    modes = tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    if not modes:
        raise argparse.ArgumentTypeError(
            f"expected end, interleaved or end,interleaved, got {text!r}"
        )
    for mode in modes:
        try:
            parse_mode(mode)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return modes


def _with_vector(args: argparse.Namespace) -> tuple[str, ...]:
    """latency: the rankings asked for with ``--retrieval``, after vector-only (the baseline
    every ranking is timed against); only vector-only when none was asked for."""
    return tuple(dict.fromkeys(("vector", *(args.retrieval or ()))))


def _retrievals(text: str) -> tuple[str, ...]:
    """``--retrieval``: rankings of :data:`solar_core.retrieval.ranking.RETRIEVALS`,
    comma-separated.

    >>> _retrievals("vector,hybrid")
    ('vector', 'hybrid')
    """
    from solar_core.retrieval.ranking import RETRIEVALS

    names = tuple(dict.fromkeys(r.strip() for r in text.split(",") if r.strip()))
    if not names or not set(names) <= set(RETRIEVALS):
        raise argparse.ArgumentTypeError(
            f"expected rankings of {', '.join(RETRIEVALS)}, comma-separated, got {text!r}"
        )
    return names


def persistence(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Steps per second in memory, on SQLite and on PostgreSQL, in one and several processes."""
    from . import persistence as bench

    bar = Progress("persistence", 0, unit="runs", enabled=not args.quiet)

    def total(n: int) -> None:
        bar.total = n

    rows = bench.run(
        args.capacities or args.k or list(bench.CAPACITIES),
        steps=args.steps or bench.STEPS,
        repeats=args.repeats,
        processes=args.processes,
        postgres=args.postgres,
        use_postgres=not args.no_postgres,
        blas_threads=args.blas_threads,
        progress=bar.advance,
        total=total,
    )
    bar.close()
    return rows


def growth(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Resident memory of one process serving N distinct users (MemoryStore, ResponseCache);
    with ``--history``, the cost of one user's chat turn as the history grows."""
    from . import growth as bench

    bar = Progress("growth", 0, unit="runs", enabled=not args.quiet)

    def total(n: int) -> None:
        bar.total = n

    if args.history:
        from . import history_growth

        if args.data is not None and not args.data.is_file():
            raise FileNotFoundError(f"--data {args.data} is not a LoCoMo-format JSON file")
        rows = history_growth.run(
            args.turns or list(history_growth.TURNS),
            args.peers or list(history_growth.PEERS),
            timed=args.timed,
            data=args.data,
            blas_threads=args.blas_threads,
            pythons={} if args.mem0_python is None else {"mem0": args.mem0_python},
            progress=bar.advance,
            total=total,
        )
        bar.close()
        return rows
    rows = bench.run(
        args.users or list(bench.USERS),
        blas_threads=args.blas_threads,
        progress=bar.advance,
        total=total,
    )
    bar.close()
    return rows


def columns_for(workload: str) -> list[str]:
    if workload == "regagent":
        from .regagent import COLUMNS

        return list(COLUMNS)
    if workload == "locomo":
        return LOCOMO_COLUMNS
    if workload == "dialogue":
        return DIALOGUE_COLUMNS
    if workload == "latency":
        return LATENCY_COLUMNS
    return SYNTHETIC_COLUMNS


def render(rows: Sequence[dict[str, Any]], fmt: str, compact: bool = False) -> str:
    """``rows`` as JSON Lines, CSV, or one text table per workload (``compact``: one metric,
    policies as columns)."""
    if fmt == "json":
        return report.jsonl(rows)
    if fmt == "csv":
        return report.to_csv(rows)
    parts = []
    for workload in dict.fromkeys(r["workload"] for r in rows):
        mine = [r for r in rows if r["workload"] == workload]
        if workload == "response-cache":
            from .response_cache import render as render_cache

            parts.append(render_cache(mine).rstrip("\n"))
            continue
        if workload == "updates":
            from .updates import render as render_updates

            parts.append(render_updates(mine).rstrip("\n"))
            continue
        if workload == "persistence":
            from .persistence import render as render_persistence

            parts.append(render_persistence(mine).rstrip("\n"))
            continue
        if workload == "growth":
            from .growth import render as render_growth
            from .history_growth import render as render_history

            users = [r for r in mine if r["setting"] != "history"]
            history = [r for r in mine if r["setting"] == "history"]
            if users:
                parts.append(render_growth(users).rstrip("\n"))
            if history:
                parts.append(render_history(history).rstrip("\n"))
            continue
        timed = [r for r in mine if "sentences_per_s" in r]
        mine = [r for r in mine if r not in timed]
        if compact:
            value, what, fmt = COMPACT.get(workload, ("hit_rate", "hit rate", "{:.3f}"))
            body = report.pivot(mine, value, fmt)
            parts.append(f"== {workload}: {what} ==\n{body}")
        else:
            columns = columns_for(workload)
            if any("x_vector" in r for r in mine):  # latency with rankings beside vector-only
                columns = [*columns, "x_vector"]
            body = report.table(mine, columns)
            parts.append(f"== {workload} ==\n{body}")
        parts += [
            f"MiniLM embedding, batch 64: {r['sentences_per_s']:.0f} sentences/s" for r in timed
        ]
    return "\n\n".join(parts) + "\n"


#: the dialogue-turn table of the demo: the chat memories' policy beside the baselines it is
#: measured against (of those ``--policies`` names; ``solar-dialogue`` always)
DEMO_DIALOGUE = ("fifo", "solar-adaptive", "solar-dialogue", "unlimited")


def demo(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[str]]:
    """A small version of everything: one seed, fewer capacities, LoCoMo if data is given.

    Returns the rows and the notes to print after the tables (why a table is missing)."""
    from solar_core.embedders.static_embedder import StaticEmbedder

    small = argparse.Namespace(**{**vars(args), "seeds": args.seeds[:1]})
    rows: list[dict[str, Any]] = []
    notes: list[str] = []
    sweeps = {
        "cycling": [10],
        "working-set": [5, 15, 30, 100],
        "drift": [20],
        "noise-static": [100, 1000, 5000],
        "noise-stream": [100, 1000],
    }
    for name, ks in sweeps.items():
        small.k, small.data = ks, None  # generated workloads; --data is LoCoMo's here
        rows += synthetic(small, name)
    skipped = locomo_skipped(args.data)
    if skipped is None:
        small.k, small.data = [10, 50], args.data
        rows += locomo(small, conversations=2)
        # Dialogue turns, the chat memories' job: every conversation of the file (each scored
        # with a prior trained without it), K = 100, the questions asked at the end: ~5 s.
        turns = argparse.Namespace(**vars(small))
        turns.k, turns.modes = [100], ("end",)
        turns.policies = [p for p in DEMO_DIALOGUE if p in args.policies or p == "solar-dialogue"]
        try:
            rows += dialogue(turns)
        except ValueError as err:  # a file too small to train the prior out of sample
            notes.append(f"Dialogue turns: skipped ({err}).")
    else:
        notes.append(skipped)
    # Timed on the default (static) embedder's dimension, with the chat memories' policy too.
    small.k, small.steps = [100], args.steps or 1000
    small.policies = list(dict.fromkeys([*args.policies, "solar-dialogue"]))
    rows += latency(small, quick=True, dim=StaticEmbedder.DIM)
    return rows, notes


def locomo_skipped(data: Path | None) -> str | None:
    """Why the demo leaves LoCoMo out, and how to put it in; ``None`` if ``data`` is a file.

    The demo runs without data, so a missing table must be explained, or it looks like a bug.

    >>> print(locomo_skipped(None))
    demo: LoCoMo skipped (no --data given): its question/answer and dialogue-turn tables
    (solar-dialogue, the chat memories' policy) need it. To include them: solar-bench demo --data
    path/to/locomo.json, or make demo LOCOMO=path/to/locomo.json (or SOLAR_DATA=folder, the
    folder that holds locomo/locomo-dev.json)
    """
    if data is not None and data.is_file():
        return None
    why = "no --data given" if data is None else f"--data {data} is not a file"
    return (
        f"demo: LoCoMo skipped ({why}): its question/answer and dialogue-turn tables "
        "(solar-dialogue, the chat memories' policy) need it. To include them: solar-bench demo "
        "--data path/to/locomo.json, or make demo LOCOMO=path/to/locomo.json (or "
        "SOLAR_DATA=folder, the folder that holds locomo/locomo-dev.json)"
    )


def default_policies(workload: str) -> list[str]:
    """The presets a workload runs when ``--policies`` is not given: every one of
    :data:`POLICY_ORDER`, and for ``dialogue`` also ``solar-dialogue`` (a prior for
    conversation turns: meaningless for the other workloads' items).

    >>> default_policies("dialogue")[-2:], "solar-dialogue" in default_policies("drift")
    (['solar-dialogue', 'unlimited'], False)
    """
    order = [p for p in POLICY_ORDER if p in available_policies()]
    if workload == "dialogue":
        order.insert(order.index("unlimited"), "solar-dialogue")
    return order


def demo_text(rows: Sequence[dict[str, Any]], notes: Sequence[str]) -> str:
    """The demo's tables, each with its title, legend and takeaway, then the next steps."""
    from .demo import bench_report

    return bench_report(rows, notes)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.policies is None:
        args.policies = default_policies(args.workload)
    if not limit_blas_threads(args.blas_threads) and not args.quiet:
        print(
            "solar-bench: threadpoolctl is not installed (pip install 'solar-memory[bench]'): "
            "BLAS threads are not limited",
            file=sys.stderr,
        )
    try:
        return _main(args)
    except (FileNotFoundError, ValueError) as err:  # bad --data and the like: say what, no trace
        raise SystemExit(f"solar-bench {args.workload}: {err}") from None


def _main(args: argparse.Namespace) -> int:
    start = time.perf_counter()
    name = args.workload
    notes: list[str] = []
    if name == "demo":
        rows, notes = demo(args)
    elif name == "locomo":
        rows = locomo(args)
    elif name == "dialogue":
        rows = dialogue(args)
    elif name == "latency":
        rows = latency(args)
    elif name == "regagent":
        rows = regagent(args)
    elif name == "response-cache":
        rows = response_cache(args)
    elif name == "persistence":
        rows = persistence(args)
    elif name == "growth":
        rows = growth(args)
    elif name == "updates":
        rows = updates(args)
    else:
        rows = synthetic(args, name)
    # the demo's tables each with a title, a legend and a takeaway
    guided = name == "demo" and args.format == "table"
    text = demo_text(rows, notes) if guided else render(rows, args.format)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        if args.format != "table" and not args.quiet:
            sys.stdout.write(
                demo_text(rows, notes) if name == "demo" else render(rows, "table")
            )  # the file has the data, the terminal a view
    else:
        sys.stdout.write(text)
    if args.plot is not None:
        from .plot import plot

        plot(rows, args.plot)
    # The demo's table text says why a table is missing; when the terminal shows no such text
    # (CSV or JSON on stdout) the reason goes to stderr, even with --quiet, which silences
    # progress, not the explanation of a result that is not there.
    on_screen = (
        guided
        and args.out is None
        or (name == "demo" and args.out is not None and args.format != "table" and not args.quiet)
    )
    if notes and not on_screen:
        print("\n".join(notes), file=sys.stderr)
    if not args.quiet:
        print(f"{name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return 0
