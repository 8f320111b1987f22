"""What one chat turn costs through ``SolarConversationMemory``, embedding included.

A turn is what a ``ConversationChain`` does around its LLM call: ``load_memory_variables`` with
the new input (a retrieval), then ``save_context`` with the input and the answer (an offer).
The inputs and answers are consecutive turns of the LoCoMo dev conversations (or a fixed
script without ``--data``). Every variant runs the same turns, interleaved in rounds so that a
busy moment of the machine hits all of them alike; the table gives the median and the 90th
percentile of a turn, and one turn whose input is a 1 MB text. Then the ratio of the medians of
``solar, SQLite`` and ``solar`` (what persisting a turn costs), and the SQL statements and
transactions of a ``solar, SQLite`` turn, counted over ``--traced`` more turns run after the
timed ones (traced, so untimed).

- ``window``: LangChain's ``ConversationBufferWindowMemory(k=3)``, the baseline.
- ``solar``: ``SolarConversationMemory()``, every default (the built-in static embedder).
- ``solar, SQLite``: the same over ``MemoryStore`` on a SQLite file (``memory=store.scope()``).
- ``solar, MiniLM``: ``embedder="minilm"`` (when the ``minilm`` extra is installed).

    OPENBLAS_NUM_THREADS=1 python benchmarks/chat_turn.py [--data locomo-dev.json] [--turns 600]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from solar_core.embedders.minilm import minilm_installed

SCRIPT = [
    "I adopted a beagle named Max last week.",
    "What breed is your dog?",
    "My sister moved to Lisbon in March.",
    "Where does your sister live now?",
    "I ran a 10k race on Sunday in 52 minutes.",
    "How long did the race take you?",
]


def turns(data: Path | None, count: int) -> list[tuple[str, str]]:
    """``count`` (input, answer) pairs: consecutive LoCoMo turns, or the script repeated."""
    if data is None:
        texts = [f"{t} ({i})" for i in range(count) for t in SCRIPT[:2]]
    else:
        from solar_bench.dialogue import load_dialogues

        texts = [t.text for d in load_dialogues(data) for t in d.turns]
    return [(texts[2 * i], texts[2 * i + 1]) for i in range(min(count, len(texts) // 2))]


def variants(folder: Path) -> dict[str, Callable[[], Any]]:
    from langchain_classic.memory import ConversationBufferWindowMemory

    from langchain_solar import SolarConversationMemory
    from solar_core.persistence import MemoryStore

    made: dict[str, Callable[[], Any]] = {
        "window": lambda: ConversationBufferWindowMemory(k=3),
        "solar": lambda: SolarConversationMemory(seed=0),
        "solar, SQLite": lambda: SolarConversationMemory(
            memory=MemoryStore(folder / "chat.db", policy="solar-dialogue", seed=0).scope("u")
        ),
    }
    if minilm_installed():
        made["solar, MiniLM"] = lambda: SolarConversationMemory(embedder="minilm", seed=0)
    return made


def traced(memory: Any, pairs: Sequence[tuple[str, str]]) -> tuple[int, int]:
    """The SQL statements and transactions of ``pairs``' turns through ``memory``, an adapter
    over a ``MemoryStore`` on SQLite."""
    statements: list[str] = []
    connection = memory.memory.runner.backend._conn  # (the benchmark may look inside)
    connection.set_trace_callback(statements.append)
    try:
        for said, answer in pairs:
            one_turn(memory, said, answer)
    finally:
        connection.set_trace_callback(None)
    return len(statements), sum(s.startswith("BEGIN") for s in statements)


def one_turn(memory: Any, said: str, answer: str) -> int:
    start = time.perf_counter_ns()
    memory.load_memory_variables({"input": said})
    memory.save_context({"input": said}, {"output": answer})
    return time.perf_counter_ns() - start


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, help="LoCoMo-format JSON file (default: a script)")
    p.add_argument("--turns", type=int, default=600, help="turns per variant")
    p.add_argument("--warmup", type=int, default=20, help="untimed turns first (loads models)")
    p.add_argument("--traced", type=int, default=50, help="SQLite turns whose SQL is counted")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    pairs = turns(args.data, args.turns + args.warmup + args.traced)
    pairs, more = pairs[: args.turns + args.warmup], pairs[args.turns + args.warmup :]
    big = ("a long pasted document about beagles, Lisbon and races. " * 20_000)[:1_000_000]
    with tempfile.TemporaryDirectory() as tmp:
        made = variants(Path(tmp))
        memories = {name: make() for name, make in made.items()}
        times: dict[str, list[int]] = {name: [] for name in memories}
        for i, (said, answer) in enumerate(pairs):
            for name, memory in memories.items():
                spent = one_turn(memory, said, answer)
                if i >= args.warmup:
                    times[name].append(spent)
        # (before the 1 MB turn, which the memory may keep)
        counted = traced(memories["solar, SQLite"], more) if more else None
        print(f"{'variant':<16} {'median ms':>10} {'p90 ms':>8} {'1 MB input ms':>14}")
        for name, memory in memories.items():
            ns = sorted(times[name])
            median = statistics.median(ns) / 1e6
            p90 = ns[int(0.9 * (len(ns) - 1))] / 1e6
            huge = one_turn(memory, big, "noted.") / 1e6
            print(f"{name:<16} {median:>10.3f} {p90:>8.3f} {huge:>14.0f}", flush=True)
        ratio = statistics.median(times["solar, SQLite"]) / statistics.median(times["solar"])
        print(f"solar, SQLite / solar (median): {ratio:.2f}x")
        if counted is not None:
            statements, transactions = counted
            print(
                f"solar, SQLite per turn: {statements / len(more):.1f} SQL statements, "
                f"{transactions / len(more):.1f} transactions ({len(more)} turns traced)"
            )
        for memory in memories.values():
            close = getattr(getattr(memory, "memory", None), "close", None)
            if callable(close):
                close()
    print(f"({len(pairs) - args.warmup} turns each, {args.warmup} untimed first)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
