"""Round trips of ``solar-memory mcp`` through the official MCP Python SDK, over stdio.

What an agent pays per tool call, transport included: the client (``mcp.ClientSession`` over
``stdio_client``) starts ``python -m solar_core.cli mcp STORE --scope user=bench --capacity N``
on a fresh SQLite file in a temporary folder, and the script measures

- start: from spawning the server to the answer of its first tool call (``stats``, which opens
  the store and loads the embedder), with the ``initialize`` handshake's share;
- fill: ``remember`` of ``--items`` distinct texts, one call each, until the scope is full
  (generated facts such as "Maya prefers oat milk for coffee." over a varied vocabulary, or
  LoCoMo turns with ``--data locomo.json``; read at run time, never copied);
- then, after a warm-up of 20 rounds, ``--calls`` rounds, INTERLEAVED as an agent calls them:
  ``recall`` (a varied question, k=5), ``rate`` of that recall's handle (like or dislike,
  alternating), and ``remember`` of a new text (at capacity: every call is an admission decision,
  with an eviction when admitted).

Each call is timed on the client (``time.perf_counter`` around ``await session.call_tool``):
p50, p95, p99 and max in milliseconds per tool. The target: recall and remember p50
<= 5 ms, p95 <= 20 ms.

``--reference`` runs the same protocol against the reference MCP memory server
(``npx -y @modelcontextprotocol/server-memory``, a JSONL knowledge graph at
``MEMORY_FILE_PATH`` in the temporary folder): filled with one ``create_entities`` call per
text (an entity ``fact-NNNN`` of type ``fact`` whose one observation is the text), then
``search_nodes`` (its recall: a case-insensitive substring match, so it gets a keyword of the
question, not the question) and ``create_entities`` of a new text (its remember: it keeps
everything, so nothing is decided or evicted). It has no rating tool. It needs node and npx.

From the repository root (the server runs from this checkout)::

    PYTHONPATH=$PWD:$PWD/benchmarks OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/mcp_round_trip.py [--items 1000] [--calls 300] \\
        [--embedder static|minilm|hash] [--data locomo-dev.json] [--reference] [--json out.json]

The server gets PYTHONPATH, HOME, OPENBLAS_NUM_THREADS=1 and HF_HUB_OFFLINE=1 (and
OMP_NUM_THREADS when it is set here: with minilm on a 2-core machine, torch's default of one
thread per core stalls ~500 ms on 5-10% of the calls; OMP_NUM_THREADS=1 avoids it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

WARMUP = 20
K = 5
ROOT = Path(__file__).resolve().parent.parent
REFERENCE_PACKAGE = "@modelcontextprotocol/server-memory"

# -- the texts ------------------------------------------------------------------------------------

_SLOTS: dict[str, tuple[str, ...]] = {
    "person": ("The user", "Maya", "Tom", "Priya", "Jonas", "Aiko", "Carlos", "Fatima", "Liam",
               "Sofia", "Ravi", "Elena", "Kwame", "Hannah", "Mateo", "Yuki"),
    "thing": ("oat milk", "dark mode", "vim keybindings", "a standing desk", "Python 3.12",
              "tabs over spaces", "green tea", "noise-cancelling headphones", "the metric system",
              "a paper notebook", "short emails", "morning meetings", "Firefox", "espresso",
              "a mechanical keyboard", "bullet points", "PostgreSQL", "audiobooks"),
    "activity": ("coffee", "coding", "long flights", "code review", "writing reports",
                 "the weekly standup", "reading at night", "running", "note taking",
                 "data analysis", "travel planning", "cooking dinner", "debugging", "studying"),
    "allergen": ("peanuts", "shellfish", "gluten", "lactose", "cat hair", "penicillin",
                 "pollen", "sesame", "soy", "eggs"),
    "dish": ("pad thai", "lasagna", "sushi", "croissants", "ramen", "ice cream", "curry",
             "pizza", "tiramisu", "dumplings"),
    "relative": ("sister", "brother", "mother", "father", "cousin", "grandmother", "uncle",
                 "aunt", "best friend", "daughter", "son"),
    "city": ("Lisbon", "Nairobi", "Osaka", "Toronto", "Krakow", "Austin", "Melbourne", "Bogota",
             "Edinburgh", "Hanoi", "Marseille", "Reykjavik", "Seoul", "Cape Town", "Denver"),
    "job": ("nurse", "carpenter", "data engineer", "teacher", "pilot", "architect", "chef",
            "lawyer", "physiotherapist", "journalist", "veterinarian", "electrician"),
    "project": ("Atlas", "Nimbus", "Orion", "Harbor", "Quartz", "Falcon", "Juniper", "Beacon",
                "Mosaic", "Tundra"),
    "tech": ("Kafka", "Redis", "SQLite", "Terraform", "React", "Rust", "GraphQL", "Airflow",
             "Kubernetes", "DuckDB", "FastAPI", "Celery"),
    "purpose": ("caching", "the job queue", "analytics", "authentication", "search",
                "deployments", "the billing pipeline", "the mobile app", "logging", "scheduling"),
    "meeting": ("one-on-one", "design review", "guitar lesson", "yoga class", "therapy session",
                "book club", "sprint planning", "dentist appointment", "team lunch"),
    "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "time": ("8 am", "9:30 am", "noon", "2 pm", "4:15 pm", "6 pm", "7:45 pm"),
    "skill": ("Spanish", "the piano", "woodworking", "calligraphy", "Japanese", "salsa dancing",
              "rock climbing", "watercolour painting", "chess", "sourdough baking"),
    "month": ("January", "March", "April", "June", "August", "September", "October",
              "December"),
    "sight": ("the old town", "the aurora", "the cherry blossoms", "a football match",
              "the night market", "the national museum", "the harbour", "a jazz festival"),
    "problem": ("the tests hang on CI", "the build runs out of memory",
                "a migration locks the table", "the VPN drops", "the laptop overheats",
                "a deploy fails halfway",
                "the API returns 429", "the printer jams", "the cache serves stale pages"),
    "fix": ("restart the runner with a clean cache", "lower the worker count to two",
            "run it in batches at night", "switch to the backup gateway",
            "close the browser tabs first", "roll back and redeploy from the last tag",
            "back off exponentially and retry", "ask facilities for the spare one",
            "purge the CDN before blaming the app"),
    "car": ("a red Golf", "an electric Kia", "a Vespa scooter", "an old Volvo estate",
            "a Tesla Model 3", "a cargo bike", "a blue Corolla"),
    "place": ("the north garage", "the station car park", "the office basement",
              "the street behind the bakery", "level 3 of the mall"),
    "category": ("film", "book", "band", "board game", "hiking trail", "restaurant", "podcast",
                 "season", "museum", "font"),
    "item": ("Spirited Away", "Dune", "Radiohead", "Catan", "the ridge loop", "the Thai place on "
             "Elm Street", "Hardcore History", "autumn", "the Tate Modern", "Inter"),
}  # fmt: skip

#: (fact, the question a later task asks about it, the slot whose value is its keyword)
_TEMPLATES: tuple[tuple[str, str, str], ...] = (
    ("{person} prefers {thing} for {activity}.",
     "What does {person} prefer for {activity}?", "activity"),
    ("{person} is allergic to {allergen}, so no {dish} with it.",
     "Which foods must {person} avoid?", "allergen"),
    ("{person}'s {relative} lives in {city} and works as a {job}.",
     "Where does {person}'s {relative} live?", "city"),
    ("The {project} project uses {tech} for {purpose}.",
     "What does the {project} project use for {purpose}?", "project"),
    ("{person} has a {meeting} every {day} at {time}.",
     "When is {person}'s {meeting}?", "meeting"),
    ("{person} is learning {skill} and practises on {day}s.",
     "What is {person} learning these days?", "skill"),
    ("{person} wants to visit {city} in {month} to see {sight}.",
     "Which trip is {person} planning?", "city"),
    ("Lesson learned: when {problem}, {fix}.",
     "What should we do when {problem}?", "problem"),
    ("{person} drives {car} and usually parks at {place}.",
     "Where does {person} park?", "place"),
    ("{person}'s favourite {category} is {item}.",
     "What is {person}'s favourite {category}?", "category"),
)  # fmt: skip


@dataclass(frozen=True)
class Query:
    question: str  # what solar-memory's recall gets
    keyword: str  # what the reference's substring search gets


def _filled(rng: random.Random) -> tuple[str, Query]:
    fact, question, slot = rng.choice(_TEMPLATES)
    values = {name: rng.choice(options) for name, options in _SLOTS.items()}
    text = fact.format(**values)
    text = text[0].upper() + text[1:]
    return text, Query(question.format(**values), values[slot].lower())


def generated(n_texts: int, n_queries: int, seed: int) -> tuple[list[str], list[Query]]:
    """``n_texts`` distinct facts and ``n_queries`` questions about facts like them."""
    rng = random.Random(seed)
    texts: dict[str, None] = {}
    while len(texts) < n_texts:
        texts.setdefault(_filled(rng)[0])
    queries = [_filled(rng)[1] for _ in range(n_queries)]
    return list(texts), queries


def from_locomo(
    path: str, n_texts: int, n_queries: int, seed: int
) -> tuple[list[str], list[Query]]:
    """LoCoMo turns ("Speaker: text", distinct, in order) and questions, cycled if too few."""
    from solar_bench.dialogue import load_dialogues

    dialogues = load_dialogues(path)
    turns = list(dict.fromkeys(t.text for d in dialogues for t in d.turns))
    if len(turns) < n_texts:
        raise SystemExit(f"{path} has {len(turns)} distinct turns; --items etc. need {n_texts}")
    questions = [q.text for d in dialogues for q in d.questions]
    random.Random(seed).shuffle(questions)
    queries = []
    for i in range(n_queries):
        question = questions[i % len(questions)]
        words = [w.strip("?,.!'\"").lower() for w in question.split()]
        queries.append(Query(question, max(words, key=len)))
    return turns[:n_texts], queries


# -- measuring ------------------------------------------------------------------------------------


def summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50, p95, p99 and max of ``seconds``, in milliseconds."""
    ms = np.asarray(seconds, dtype=float) * 1000.0
    p50, p95, p99 = np.percentile(ms, [50, 95, 99])
    return {"n": float(len(ms)), "p50": float(p50), "p95": float(p95), "p99": float(p99),
            "max": float(ms.max()), "mean": float(ms.mean())}  # fmt: skip


class Timed:
    """One client session: each call timed, its errors counted."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.errors: Counter[str] = Counter()
        self.first_error: dict[str, str] = {}

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, CallToolResult]:
        start = time.perf_counter()
        result = await self.session.call_tool(tool, arguments)
        elapsed = time.perf_counter() - start
        if result.isError:
            self.errors[tool] += 1
            text = " ".join(getattr(c, "text", "") for c in result.content)
            self.first_error.setdefault(tool, text[:300])
        return elapsed, result


def _structured(result: CallToolResult) -> dict[str, Any]:
    return result.structuredContent or {}


def _log_lines(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return [line for line in text.splitlines() if line.strip()]


async def run_solar(
    args: argparse.Namespace, texts: list[str], queries: list[Query], folder: Path
) -> dict[str, Any]:
    """Fill a fresh store to capacity through the server, then time the interleaved rounds."""
    db = folder / "bench.db"
    errlog_path = folder / "solar-server.log"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "solar_core.cli", "mcp", str(db), "--scope", "user=bench",
              "--capacity", str(args.items), "--embedder", args.embedder],
        env={"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1",
             "HOME": os.environ["HOME"]},
    )  # fmt: skip
    if os.environ.get("OMP_NUM_THREADS"):  # torch's threads (minilm): 2 on 2 busy cores stall
        assert params.env is not None
        params.env["OMP_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"]
    fill_texts, fresh = texts[: args.items], texts[args.items :]
    out: dict[str, Any] = {"server": "solar-memory", "embedder": args.embedder}
    with errlog_path.open("w", encoding="utf-8") as errlog:
        spawned = time.perf_counter()
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                initialized = time.perf_counter()
                timed = Timed(session)
                _, first = await timed.call("stats", {})
                answered = time.perf_counter()
                out["start_ms"] = (answered - spawned) * 1000
                out["initialize_ms"] = (initialized - spawned) * 1000
                out["first_call_ms"] = (answered - initialized) * 1000
                if first.isError:
                    raise SystemExit(f"solar-memory mcp: stats failed: {timed.first_error}")

                fill: list[float] = []
                fill_start = time.perf_counter()
                for text in fill_texts:
                    fill.append((await timed.call("remember", {"text": text}))[0])
                out["fill_s"] = time.perf_counter() - fill_start
                out["fill_call_ms"] = summary(fill)
                stats = _structured((await timed.call("stats", {}))[1])
                out["filled"] = stats.get("capacity")

                times: dict[str, list[float]] = {"recall": [], "rate": [], "remember": []}
                reasons: Counter[str] = Counter()
                evicted = 0
                for i in range(WARMUP + args.calls):
                    query = queries[i % len(queries)]
                    t_recall, found = await timed.call("recall", {"query": query.question, "k": K})
                    handle = _structured(found).get("handle")
                    rating = "like" if i % 2 == 0 else "dislike"
                    t_rate, _ = await timed.call("rate", {"handle": handle, "rating": rating})
                    t_remember, verdict = await timed.call("remember", {"text": fresh[i]})
                    decided = _structured(verdict)
                    if i >= WARMUP:
                        times["recall"].append(t_recall)
                        times["rate"].append(t_rate)
                        times["remember"].append(t_remember)
                        reasons[str(decided.get("reason"))] += 1
                        evicted += len(decided.get("evicted") or [])
                out["tools"] = {tool: summary(values) for tool, values in times.items()}
                out["slowest"] = {
                    tool: sorted(((v * 1000, n) for n, v in enumerate(values)), reverse=True)[:5]
                    for tool, values in times.items()
                }  # (ms, round index after the warm-up)
                out["remember_reasons"] = dict(reasons)
                out["evicted"] = evicted
                out["errors"] = dict(timed.errors)
                out["first_errors"] = timed.first_error
    out["server_log"] = _log_lines(errlog_path)[:20]
    out["store_bytes"] = sum(p.stat().st_size for p in folder.glob("bench.db*"))
    return out


def _entity(n: int, text: str) -> dict[str, Any]:
    return {"name": f"fact-{n:04d}", "entityType": "fact", "observations": [text]}


async def run_reference(
    args: argparse.Namespace, texts: list[str], queries: list[Query], folder: Path
) -> dict[str, Any]:
    """The same rounds against the reference memory server (no rate: it has none)."""
    npx = shutil.which("npx")
    if npx is None:
        return {"server": REFERENCE_PACKAGE, "error": "npx is not on PATH (install node)"}
    errlog_path = folder / "reference-server.log"
    graph = folder / "memory.jsonl"
    params = StdioServerParameters(
        command=npx,
        args=["-y", REFERENCE_PACKAGE],
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ["HOME"],
             "MEMORY_FILE_PATH": str(graph)},
    )  # fmt: skip
    fill_texts, fresh = texts[: args.items], texts[args.items :]
    out: dict[str, Any] = {"server": REFERENCE_PACKAGE}
    try:
        with errlog_path.open("w", encoding="utf-8") as errlog:
            spawned = time.perf_counter()
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    initialized = time.perf_counter()
                    timed = Timed(session)
                    await timed.call("read_graph", {})
                    answered = time.perf_counter()
                    out["start_ms"] = (answered - spawned) * 1000
                    out["initialize_ms"] = (initialized - spawned) * 1000
                    out["first_call_ms"] = (answered - initialized) * 1000

                    fill: list[float] = []
                    fill_start = time.perf_counter()
                    for n, text in enumerate(fill_texts):
                        entities = [_entity(n, text)]
                        fill.append(
                            (await timed.call("create_entities", {"entities": entities}))[0]
                        )
                    out["fill_s"] = time.perf_counter() - fill_start
                    out["fill_call_ms"] = summary(fill)

                    times: dict[str, list[float]] = {"search_nodes": [], "create_entities": []}
                    found_sizes: list[int] = []
                    for i in range(WARMUP + args.calls):
                        query = queries[i % len(queries)]
                        t_search, found = await timed.call("search_nodes", {"query": query.keyword})
                        entities = [_entity(args.items + i, fresh[i])]
                        t_create, _ = await timed.call("create_entities", {"entities": entities})
                        if i >= WARMUP:
                            times["search_nodes"].append(t_search)
                            times["create_entities"].append(t_create)
                            found_sizes.append(len(_structured(found).get("entities") or []))
                    out["tools"] = {tool: summary(values) for tool, values in times.items()}
                    out["search_hits_median"] = float(np.median(found_sizes))
                    out["search_hits_max"] = max(found_sizes)
                    out["errors"] = dict(timed.errors)
                    out["first_errors"] = timed.first_error
    except Exception as err:  # any failure to run it is reported, not raised
        out["error"] = f"{type(err).__name__}: {err}"
    out["server_log"] = _log_lines(errlog_path)[:20]
    out["graph_bytes"] = graph.stat().st_size if graph.exists() else 0
    return out


# -- the report -----------------------------------------------------------------------------------


def table(result: dict[str, Any]) -> str:
    lines = [f"{result['server']}" + (f" ({result['embedder']})" if "embedder" in result else "")]
    if "error" in result:
        return "\n".join([*lines, f"  could not run: {result['error']}", *result["server_log"]])
    lines.append(
        f"  start to first call {result['start_ms']:.0f} ms (initialize "
        f"{result['initialize_ms']:.0f} ms, first call {result['first_call_ms']:.0f} ms); fill of "
        f"{result['fill_call_ms']['n']:.0f} calls {result['fill_s']:.2f} s "
        f"(p50 {result['fill_call_ms']['p50']:.2f} ms, max {result['fill_call_ms']['max']:.1f} ms)"
    )
    lines.append(f"  {'tool':<16}{'p50':>9}{'p95':>9}{'p99':>9}{'max':>9}  (ms)")
    for tool, s in result["tools"].items():
        lines.append(
            f"  {tool:<16}{s['p50']:>9.2f}{s['p95']:>9.2f}{s['p99']:>9.2f}{s['max']:>9.2f}"
        )
    if result.get("errors"):
        lines.append(f"  errors: {result['errors']} first: {result['first_errors']}")
    if result.get("server_log"):
        lines.append(f"  server log ({len(result['server_log'])} lines shown):")
        lines.extend(f"    {line}" for line in result["server_log"])
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--items", type=int, default=1000, help="capacity, and texts to fill it")
    parser.add_argument("--calls", type=int, default=300, help="measured rounds per tool")
    parser.add_argument("--embedder", choices=("static", "minilm", "hash"), default="static")
    parser.add_argument("--data", help="a LoCoMo JSON file: its turns as the texts")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--reference", action="store_true", help=f"also time {REFERENCE_PACKAGE}")
    parser.add_argument("--json", metavar="OUT", help="write the figures as JSON")
    args = parser.parse_args(argv)
    if args.items < 1 or args.calls < 1:
        parser.error("--items and --calls must be at least 1")
    n_texts, n_queries = args.items + WARMUP + args.calls, WARMUP + args.calls
    if args.data:
        texts, queries = from_locomo(args.data, n_texts, n_queries, args.seed)
    else:
        texts, queries = generated(n_texts, n_queries, args.seed)

    results: dict[str, Any] = {
        "settings": {"items": args.items, "calls": args.calls, "warmup": WARMUP, "k": K,
                     "embedder": args.embedder, "data": args.data or "generated",
                     "order": "interleaved: recall, rate its handle, remember a new text",
                     "python": sys.version.split()[0]},
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="mcp-bench-") as tmp:
        results["solar"] = asyncio.run(run_solar(args, texts, queries, Path(tmp)))
        print(table(results["solar"]))
        if args.reference:
            results["reference"] = asyncio.run(run_reference(args, texts, queries, Path(tmp)))
            print(table(results["reference"]))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
