"""What one agent turn costs through LlamaIndex's chat memories, by length of the history.

A turn is what a LlamaIndex agent does with its chat memory: ``put`` the user's message,
``get(input=...)`` the messages for the LLM, ``put`` the assistant's answer. Each memory is first
given a history of ``--turns`` turns (default 100 and 1,000; each side of a turn ~40 words,
drawn from a fixed vocabulary with a fixed seed), then runs ``--repeats`` more turns, timed;
the variants take their turns interleaved, so that a busy moment of the machine hits all alike.
The table gives the median and the slowest turn of each, and each median over
``ChatMemoryBuffer``'s at the first history length.

- ``ChatMemoryBuffer``: LlamaIndex's own, ``ChatMemoryBuffer.from_defaults(token_limit=T)``.
- ``SolarChatMemory``: ``SolarChatMemory.from_defaults(token_limit=T, embedder=...)``, every
  other setting its default (``top_k=3``, ``recall_token_ratio=0.3``, ``solar-dialogue``).

Both count tokens with LlamaIndex's default tokenizer. The embedder is the deterministic
``hash`` one by default (``--embedder static`` for the built-in static one): the turn's cost
without a model's. ``ChatMemoryBuffer.get`` re-tokenises every tail of the history while it
trims it, so at 1,000 turns its turn takes seconds: ``--slow-repeats`` (default 3) bounds its
timed turns there.

    PYTHONPATH=.:benchmarks OPENBLAS_NUM_THREADS=1 python benchmarks/llamaindex_turn.py
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy is first imported
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

WORDS_PER_MESSAGE = 40
TOPICS = (
    "dog beagle walk beach park leash bark puppy vet food "
    "sister Lisbon move flat March city tram river job visit "
    "race run Sunday minutes training shoes marathon pace knee coach "
    "python list sort bug test flaky seed CI deploy server "
    "book space Sagan stars planet moon rocket orbit telescope galaxy "
    "recipe pasta tomato garlic oven bread flour sugar salt cheese "
    "holiday train ticket hotel museum Paris Rome beach mountain lake"
).split()
GLUE = "the a and to of in my it is was we you I for on with at that this".split()


def message(rng: random.Random) -> str:
    """About :data:`WORDS_PER_MESSAGE` words: topic words among common ones."""
    words = [
        rng.choice(TOPICS) if rng.random() < 0.4 else rng.choice(GLUE)
        for _ in range(WORDS_PER_MESSAGE)
    ]
    return " ".join(words).capitalize() + "."


def script(count: int, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` (user message, answer) pairs."""
    rng = random.Random(seed)
    return [(message(rng), message(rng)) for _ in range(count)]


def chat_memory_buffer(token_limit: int, embedder: str) -> Any:
    from llama_index.core.memory import ChatMemoryBuffer

    return ChatMemoryBuffer.from_defaults(token_limit=token_limit)


def solar_chat_memory(token_limit: int, embedder: str) -> Any:
    from llamaindex_solar import SolarChatMemory

    return SolarChatMemory.from_defaults(token_limit=token_limit, embedder=embedder, seed=0)


def fill(memory: Any, pairs: Sequence[tuple[str, str]]) -> None:
    """Give ``memory`` a history (untimed): its turns as an agent puts them."""
    from llama_index.core.base.llms.types import ChatMessage

    for said, answer in pairs:
        memory.put(ChatMessage(role="user", content=said))
        memory.put(ChatMessage(role="assistant", content=answer))


def one_turn(memory: Any, said: str, answer: str) -> int:
    """One agent turn, in nanoseconds: put the user's message, get the prompt, put the answer."""
    from llama_index.core.base.llms.types import ChatMessage

    start = time.perf_counter_ns()
    memory.put(ChatMessage(role="user", content=said))
    memory.get(input=said)
    memory.put(ChatMessage(role="assistant", content=answer))
    return time.perf_counter_ns() - start


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--turns", type=int, nargs="+", default=[100, 1000], help="history lengths")
    p.add_argument("--repeats", type=int, default=15, help="timed turns per variant")
    p.add_argument(
        "--slow-repeats",
        type=int,
        default=3,
        help="timed turns of ChatMemoryBuffer beyond the first history length",
    )
    p.add_argument("--token-limit", type=int, default=1500)
    p.add_argument("--embedder", choices=["hash", "static"], default="hash")
    args = p.parse_args(argv)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    kinds: dict[str, Callable[[int, str], Any]] = {
        "ChatMemoryBuffer": chat_memory_buffer,
        "SolarChatMemory": solar_chat_memory,
    }
    longest = max(args.turns)
    pairs = script(longest + args.repeats)
    history, timed = pairs[:longest], pairs[longest:]
    memories: dict[tuple[str, int], Any] = {}
    for turns in args.turns:
        for name, make in kinds.items():
            memory = make(args.token_limit, args.embedder)
            fill(memory, history[-turns:])
            memories[(name, turns)] = memory
    times: dict[tuple[str, int], list[int]] = {key: [] for key in memories}
    base = min(args.turns)
    for i, (said, answer) in enumerate(timed):
        for key, memory in memories.items():
            name, turns = key
            if name == "ChatMemoryBuffer" and turns != base and i >= args.slow_repeats:
                continue
            times[key].append(one_turn(memory, said, answer))
    reference = statistics.median(times[("ChatMemoryBuffer", base)])
    print(
        f"# llamaindex_turn.py: token_limit={args.token_limit}, embedder={args.embedder}, "
        f"~{WORDS_PER_MESSAGE} words a message, BLAS threads "
        f"{os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    print(f"{'memory':<18} {'history':>8} {'turns':>6} {'median ms':>10} {'max ms':>9} {'x':>7}")
    for (name, turns), ns in times.items():
        median = statistics.median(ns)
        print(
            f"{name:<18} {turns:>8} {len(ns):>6} {median / 1e6:>10.2f} {max(ns) / 1e6:>9.2f} "
            f"{median / reference:>7.2f}"
        )
    print(f"(x: the median over ChatMemoryBuffer's at {base} turns)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
