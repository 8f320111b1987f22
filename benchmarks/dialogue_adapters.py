"""The dialogue-turn protocol through LangChain's chain-memory API, at an equal prompt budget.

What a LangChain user gets from each memory when a chain's history is a long conversation.
The turns of each LoCoMo conversation (``"Speaker: text"``, in session order, as in
``solar-bench dialogue``) are paired into exchanges: turn 1 is the input, turn 2 the output,
turn 3 the next input, and so on. For every exchange the chain first loads its history for the
input (``load_memory_variables``), then saves the exchange (``save_context``). After the last
one every question is asked once (``load_memory_variables({"input": question})``) and scored by
**evidence recall**: the share of its evidence turns among the turns the history shows.

Every memory shows at most ``B`` exchanges (``B = 8``, the size of ``SolarConversationMemory``'s
default prompt: a window of 5 plus 3 recalled):

- ``ConversationBufferWindowMemory(k=8)``: the last 8 exchanges;
- ``VectorStoreRetrieverMemory`` over LangChain's ``InMemoryVectorStore`` (``k=8``): every
  exchange stored, the 8 most similar shown;
- ``SolarConversationMemory`` with its defaults (``k=5``, ``top_k=3``, ``solar-adaptive``) at
  100 stored exchanges, and over ``fifo`` (100) and ``unlimited``, which separate "recall helps"
  from "curation helps".

Every memory embeds with the same MiniLM vectors (from the benchmark's on-disk cache; the
vector store through a LangChain ``Embeddings`` that serves them). The SOLAR memories run with
each seed; the two LangChain memories are deterministic and run once.

    python benchmarks/dialogue_adapters.py --data locomo-dev.json [--seeds 42 1337 2024]
        [--out-dir docs/results] [--conversations N] [--embedder minilm|hash]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from langchain_classic.base_memory import BaseMemory
from langchain_core.embeddings import Embeddings

from langchain_solar import SolarConversationMemory
from solar_bench.dialogue import Dialogue, Turn, load_dialogues
from solar_bench.embed_cache import EmbeddingCache, LookupEmbedder
from solar_core.integrations.turns import turn_text

F32 = npt.NDArray[np.float32]
BUDGET = 8  # exchanges shown per prompt: SolarConversationMemory's default 5 + 3
CAPACITY = 100
SEEDS = (42, 1337, 2024)
_HEADS = ("Human: ", "input: ")  # the first line of a shown exchange


def exchanges(dialogue: Dialogue) -> list[tuple[Turn, Turn | None]]:
    """Consecutive turns as (input, output) pairs; an odd last turn has no output."""
    turns = dialogue.turns
    return [
        (turns[i], turns[i + 1] if i + 1 < len(turns) else None) for i in range(0, len(turns), 2)
    ]


def line_ids(dialogue: Dialogue) -> dict[str, frozenset[str]]:
    """A shown line -> the turns it is: the window's ``Human:``/``AI:`` lines and the vector
    memory's ``input:``/``output:`` lines (a text said twice names both turns). A line may
    span several lines of the history: 17 LoCoMo turns hold a newline."""
    out: dict[str, frozenset[str]] = {}
    for a, b in exchanges(dialogue):
        forms = [(f"Human: {a.text}", a), (f"input: {a.text}", a)]
        if b is not None:
            forms += [(f"AI: {b.text}", b), (f"output: {b.text}", b)]
        for line, turn in forms:
            out[line] = out.get(line, frozenset()) | {turn.dia_id}
    return out


def shown(history: str, names: dict[str, frozenset[str]]) -> frozenset[str]:
    """The turns whose whole line is in ``history`` (from a line start to a line end)."""
    framed = f"\n{history}\n"
    return frozenset().union(*(ids for line, ids in names.items() if f"\n{line}\n" in framed))


def texts(dialogue: Dialogue) -> list[str]:
    """Every text a memory embeds: inputs and questions (queries), stored exchanges."""
    out = [t.text for t in dialogue.turns] + [q.text for q in dialogue.questions]
    for a, b in exchanges(dialogue):
        out.append(turn_text(a.text, "" if b is None else b.text))
        out.append(f"input: {a.text}\noutput: {'' if b is None else b.text}")
    return out


class Lookup(LookupEmbedder):
    """The precomputed vectors, as a SOLAR embedder and as LangChain ``Embeddings``."""

    def langchain(self) -> Embeddings:
        vectors = self.vectors

        class Served(Embeddings):
            def embed_documents(self, batch: list[str]) -> list[list[float]]:
                return [vectors[t].tolist() for t in batch]

            def embed_query(self, text: str) -> list[float]:
                return vectors[text].tolist()

        return Served()


@dataclass(frozen=True)
class Variant:
    label: str
    build: Callable[[Lookup, int], BaseMemory]
    seeded: bool


def _quiet(make: Callable[[], BaseMemory]) -> BaseMemory:
    with warnings.catch_warnings():  # LangChain's classic memories warn that they are legacy
        warnings.simplefilter("ignore", DeprecationWarning)
        return make()


def _window(lookup: Lookup, seed: int) -> BaseMemory:
    from langchain_classic.memory import ConversationBufferWindowMemory

    return _quiet(lambda: ConversationBufferWindowMemory(k=BUDGET))


def _vectors(lookup: Lookup, seed: int) -> BaseMemory:
    from langchain_classic.memory import VectorStoreRetrieverMemory
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(embedding=lookup.langchain())
    retriever = store.as_retriever(search_kwargs={"k": BUDGET})
    return _quiet(lambda: VectorStoreRetrieverMemory(retriever=retriever))


def _solar(policy: str, capacity: int | None) -> Callable[[Lookup, int], BaseMemory]:
    def build(lookup: Lookup, seed: int) -> BaseMemory:
        extra = {} if policy == "solar-adaptive" else {"policy": policy}
        return SolarConversationMemory(capacity=capacity, seed=seed, embedder=lookup, **extra)

    return build


VARIANTS = (
    Variant(f"ConversationBufferWindowMemory k={BUDGET}", _window, False),
    Variant(f"VectorStoreRetrieverMemory k={BUDGET}, every exchange", _vectors, False),
    Variant(
        f"SolarConversationMemory defaults, C={CAPACITY}", _solar("solar-adaptive", CAPACITY), True
    ),
    Variant(f"SolarConversationMemory fifo, C={CAPACITY}", _solar("fifo", CAPACITY), True),
    Variant("SolarConversationMemory unlimited", _solar("unlimited", None), True),
)


def run(dialogue: Dialogue, variant: Variant, lookup: Lookup, seed: int) -> dict[str, float]:
    """The protocol on one conversation: mean evidence recall of its questions at the end."""
    names = line_ids(dialogue)
    memory = variant.build(lookup, seed)
    for a, b in exchanges(dialogue):
        memory.load_memory_variables({"input": a.text})
        memory.save_context({"input": a.text}, {"output": "" if b is None else b.text})
    heads_known = {line.split("\n", 1)[0] for line in names if line.startswith(_HEADS)}
    recalls, counts = [], []
    for q in dialogue.questions:
        history = memory.load_memory_variables({"input": q.text})["history"]
        heads = [line for line in history.split("\n") if line.startswith(_HEADS)]
        if len(heads) > BUDGET:
            raise AssertionError(f"{variant.label} showed {len(heads)} exchanges, budget {BUDGET}")
        if not set(heads) <= heads_known:  # a memory rendered an exchange some other way
            raise KeyError(f"{variant.label} showed an exchange the chain never saved")
        recalls.append(len(q.evidence & shown(history, names)) / len(q.evidence))
        counts.append(len(heads))
    out = {"recall": float(np.mean(recalls)), "shown": float(np.mean(counts))}
    if isinstance(memory, SolarConversationMemory):
        out["stored"] = float(len(memory.memory))
    return out


def rows(
    dialogues: Sequence[Dialogue],
    lookup: Lookup,
    seeds: Sequence[int],
    progress: Callable[[], None],
) -> list[dict[str, Any]]:
    """One row per variant: recall averaged over (conversation, seed) units, its standard
    error, and the paired difference to the window memory."""
    per: dict[str, dict[tuple[str, int], dict[str, float]]] = {}
    for variant in VARIANTS:
        for d in dialogues:
            once: dict[str, float] | None = None
            for seed in seeds:
                if variant.seeded or once is None:
                    once = run(d, variant, lookup, seed)
                per.setdefault(variant.label, {})[(d.sample_id, seed)] = once
                progress()
    base = per[VARIANTS[0].label]
    out = []
    for label, units in per.items():
        values = [u["recall"] for u in units.values()]
        diffs = [units[k]["recall"] - base[k]["recall"] for k in units]
        row = {
            "workload": "dialogue-adapters",
            "memory": label,
            "budget": BUDGET,
            "units": len(units),
            "recall": float(np.mean(values)),
            "recall_se": _se(values),
            "d_window": float(np.mean(diffs)),
            "d_window_se": _se(diffs),
            "shown": float(np.mean([u["shown"] for u in units.values()])),
        }
        stored = [u["stored"] for u in units.values() if "stored" in u]
        if stored:
            row["stored"] = float(np.mean(stored))
        out.append(row)
    return out


def _se(values: Sequence[float]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def table(result: Sequence[dict[str, Any]]) -> str:
    head = ["memory", "recall", "±se", "Δ vs window", "±se", "shown", "stored"]
    body = [
        [
            r["memory"],
            f"{r['recall']:.3f}",
            f"{r['recall_se']:.3f}",
            f"{r['d_window']:+.3f}",
            f"{r['d_window_se']:.3f}",
            f"{r['shown']:.1f}",
            f"{r['stored']:.0f}" if "stored" in r else "all",
        ]
        for r in result
    ]
    widths = [max(len(line[c]) for line in [head, *body]) for c in range(len(head))]
    return "\n".join(
        "  ".join(
            cell.ljust(widths[c]) if c == 0 else cell.rjust(widths[c])
            for c, cell in enumerate(line)
        )
        for line in [head, *body]
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    p.add_argument("--out-dir", type=Path, default=None, help="write dialogue-adapters.jsonl/.txt")
    p.add_argument("--conversations", type=int, default=None, help="the first N only")
    p.add_argument("--embedder", choices=("minilm", "hash"), default="minilm")
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    args = p.parse_args(argv)
    dialogues = [d for d in load_dialogues(args.data) if d.questions][: args.conversations]
    if args.embedder == "hash":
        from solar_core.hash_embedder import HashEmbedder

        cache = EmbeddingCache(lambda: HashEmbedder(dim=384), "hash-384", args.cache_dir)
    else:
        from solar_core.minilm import MiniLMEmbedder

        cache = EmbeddingCache(MiniLMEmbedder, "all-MiniLM-L6-v2", args.cache_dir)
    lookup = Lookup(cache.vectors([t for d in dialogues for t in texts(d)]))
    done = [0]

    def tick() -> None:
        done[0] += 1
        print(f"\rdialogue-adapters: {done[0]} runs", end="", file=sys.stderr)

    result = rows(dialogues, lookup, args.seeds, tick)
    print(file=sys.stderr)
    text = table(result)
    print(text)
    if args.out_dir is not None:
        args.out_dir.mkdir(parents=True, exist_ok=True)
        lines = "".join(json.dumps(r) + "\n" for r in result)
        (args.out_dir / "dialogue-adapters.jsonl").write_text(lines, encoding="utf-8")
        (args.out_dir / "dialogue-adapters.txt").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
