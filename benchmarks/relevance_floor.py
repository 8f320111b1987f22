"""What a relevance floor (``min_score``) costs and buys on LoCoMo's dialogue turns.

Each conversation's turns are stored in a memory that keeps everything (``unlimited``, hybrid
ranking unless ``--retrieval`` says otherwise). Its own questions are asked with a floor:
**recall** is the evidence recall@5 of ``solar-bench dialogue`` (``end`` mode). Then every
question is asked of every *other* conversation's memory, where nothing relevant is stored:
**foreign** is the share of those prompts that still get a recalled turn. A floor is worth its
cost when foreign falls much faster than recall.

    python benchmarks/relevance_floor.py --data locomo-dev.json [--retrieval hybrid]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from solar_bench.dialogue import Dialogue, load_dialogues, recall
from solar_bench.embed_cache import EmbeddingCache
from solar_core import SolarMemory
from solar_core.fusion import DEFAULT_FLOORS

FLOORS = (None, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
TOP = 5


def memories(
    dialogues: Sequence[Dialogue], vectors: dict[str, np.ndarray], retrieval: str
) -> dict[str, SolarMemory]:
    out = {}
    for d in dialogues:
        memory = SolarMemory("unlimited", None, dim=384, seed=0, retrieval=retrieval)
        for turn in d.turns:
            memory.add(turn.text, embedding=vectors[turn.text], metadata={"dia_id": turn.dia_id})
        out[d.sample_id] = memory
    return out


def rows(
    dialogues: Sequence[Dialogue], vectors: dict[str, np.ndarray], retrieval: str
) -> list[tuple[float | None, float, float]]:
    """``(floor, recall on the conversation's own questions, share of foreign prompts with a
    recalled turn)`` per floor; recall averaged per conversation, then over conversations."""
    held = memories(dialogues, vectors, retrieval)
    out = []
    for floor in FLOORS:
        own, foreign = [], []
        for d in dialogues:
            scores = [
                recall(
                    q,
                    held[d.sample_id].retrieve(
                        q.text, embedding=vectors[q.text], k=TOP, record=False, min_score=floor
                    ),
                )
                for q in d.questions
            ]
            own.append(float(np.mean(scores)))
            for other in dialogues:
                if other is d:
                    continue
                memory = held[other.sample_id]
                found = [
                    bool(
                        memory.retrieve(
                            q.text, embedding=vectors[q.text], k=TOP, record=False, min_score=floor
                        )
                    )
                    for q in d.questions
                ]
                foreign.append(float(np.mean(found)))
        out.append((floor, float(np.mean(own)), float(np.mean(foreign))))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--retrieval", default="hybrid", choices=("hybrid", "vector", "lexical"))
    args = p.parse_args(argv)
    from solar_core.minilm import MiniLMEmbedder

    dialogues = [d for d in load_dialogues(args.data) if d.questions]
    texts = [t.text for d in dialogues for t in d.turns] + [
        q.text for d in dialogues for q in d.questions
    ]
    vectors = EmbeddingCache(MiniLMEmbedder, "all-MiniLM-L6-v2").vectors(texts)
    auto = DEFAULT_FLOORS[args.retrieval]
    print(f"== relevance floor ({args.retrieval} ranking; the default floor is {auto}) ==")
    print("min_score  recall@5  foreign prompts with a recalled turn")
    for floor, own, foreign in rows(dialogues, vectors, args.retrieval):
        label = "none" if floor is None else f"{floor:.2f}"
        print(f"{label:>9}  {own:8.3f}  {foreign:36.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
