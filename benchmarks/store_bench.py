"""LangGraph stores on the dialogue-turn protocol: ``SolarStore`` against ``InMemoryStore``.

What an agent that writes every turn of a conversation into LangGraph's long-term memory gets
back. Each LoCoMo conversation's turns (``"Speaker: text"``, in session order, as in
``solar-bench dialogue``) are ``put`` into one namespace (key: the turn's ``dia_id``, value
``{"text": turn}``); after the last, every question is asked once with
``search(namespace, query=question, limit=5)`` and scored by evidence recall@5 (the share of its
evidence turns among the 5 items returned).

- ``InMemoryStore(index=...)`` keeps every turn;
- ``SolarStore(capacity=100)`` over the default policy, ``solar-dialogue`` (its salience prior
  trained without the conversation scored: out of sample) and ``fifo``, and with
  ``capacity=None`` (every turn, the same as ``InMemoryStore``).

Both embed with the same MiniLM vectors (the benchmark's on-disk cache, served through one
LangChain ``Embeddings``), ``fields=["text"]``. Latency: median microseconds of a ``put`` and of
a ``search``, the stores run one after the other on the same conversation (embedding included:
a cache lookup).

    python benchmarks/store_bench.py --data locomo-dev.json [--seeds 42 1337 2024]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from langchain_solar import SolarStore
from solar_bench.dialogue import Dialogue, distinct_texts, load_dialogues
from solar_bench.embed_cache import EmbeddingCache
from solar_bench.salience_training import priors_for
from solar_core.persistence import MemoryStore
from solar_core.persistence.fingerprint import PROBE_TEXT

DIM = 384
CAPACITY = 100
TOP = 5
KINDS = ("InMemoryStore", "solar-adaptive", "solar-dialogue", "fifo", "unbounded")


class Served(Embeddings):
    """Precomputed vectors as LangChain ``Embeddings``."""

    def __init__(self, vectors: dict[str, Any]) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[t].tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return list(self.vectors[text].tolist())


def build(kind: str, embed: Served, seed: int, prior: Path | None) -> BaseStore:
    index: Any = {"dims": DIM, "embed": embed, "fields": ["text"]}
    if kind == "InMemoryStore":
        return InMemoryStore(index=index)
    if kind == "unbounded":
        return SolarStore(index=index, capacity=None, seed=seed)
    if kind == "solar-dialogue":
        from langchain_solar.embeddings import LangChainEmbedder

        inner = MemoryStore(
            ":memory:",
            policy=kind,
            capacity=CAPACITY,
            embedder=LangChainEmbedder(embed, dim=DIM),
            seed=seed,
            prior=None if prior is None else str(prior),  # a file: scope settings are JSON
        )
        return SolarStore(inner, index=index)
    policy = None if kind == "solar-adaptive" else kind
    return SolarStore(index=index, capacity=CAPACITY, policy=policy, seed=seed)


def run(d: Dialogue, kind: str, embed: Served, seed: int, prior: Path | None) -> dict[str, float]:
    store = build(kind, embed, seed, prior)
    namespace = ("conversations", d.sample_id)
    clock = time.perf_counter_ns
    puts, searches, recalls = [], [], []
    for turn in d.turns:
        start = clock()
        store.put(namespace, turn.dia_id, {"text": turn.text})
        puts.append(clock() - start)
    for q in d.questions:
        start = clock()
        hits = store.search(namespace, query=q.text, limit=TOP)
        searches.append(clock() - start)
        recalls.append(len(q.evidence & {h.key for h in hits}) / len(q.evidence))
    if isinstance(store, SolarStore):
        store.close()
    return {
        "recall": float(np.mean(recalls)),
        "put_us": float(np.median(puts)) / 1000,
        "search_us": float(np.median(searches)) / 1000,
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--seeds", type=int, nargs="+", default=[42, 1337, 2024])
    p.add_argument("--conversations", type=int, default=None, help="the first N only")
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    args = p.parse_args(argv)
    every = [d for d in load_dialogues(args.data) if d.questions]
    dialogues = every[: args.conversations]
    from solar_core.embedders.minilm import MiniLMEmbedder

    cache = EmbeddingCache(MiniLMEmbedder, "all-MiniLM-L6-v2", args.cache_dir)
    # (a MemoryStore embeds a fixed probe text to fingerprint its embedder)
    vectors = cache.vectors([*distinct_texts(every), PROBE_TEXT])
    embed = Served(vectors)
    folder = Path(tempfile.mkdtemp(prefix="store-bench-"))
    prior_files: dict[str, Path] = {}
    for sample_id, prior in priors_for(every, vectors.__getitem__, "minilm").items():
        prior_files[sample_id] = folder / f"{sample_id}.json"  # out of sample for it
        prior.save(prior_files[sample_id])
    rows: dict[str, list[dict[str, float]]] = {k: [] for k in KINDS}
    for d in dialogues:
        for seed in args.seeds:
            for kind in KINDS:  # side by side: every store on this conversation in turn
                if kind == "InMemoryStore" and seed != args.seeds[0]:
                    continue  # deterministic: once per conversation
                rows[kind].append(run(d, kind, embed, seed, prior_files[d.sample_id]))
    print(f"{'store':<34} {'recall@5':>8} {'put us':>8} {'search us':>10}")
    for kind, runs in rows.items():
        label = {
            "InMemoryStore": "InMemoryStore (every turn)",
            "unbounded": "SolarStore capacity=None",
        }.get(kind, f"SolarStore {kind}, C={CAPACITY}")
        print(
            f"{label:<34} {statistics.mean(r['recall'] for r in runs):8.3f} "
            f"{statistics.median(r['put_us'] for r in runs):8.0f} "
            f"{statistics.median(r['search_us'] for r in runs):10.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
