"""What a relevance floor (``min_score``) costs and buys on LoCoMo's dialogue turns.

Each conversation's turns are stored in a memory that keeps everything (``unlimited``, hybrid
ranking unless ``--retrieval`` says otherwise). Its own questions are asked with a floor:
**recall** is the evidence recall@5 of ``solar-bench dialogue`` (``end`` mode). Then every
question is asked of every *other* conversation's memory, where nothing relevant is stored:
**foreign** is the share of those prompts that still get a recalled turn. A floor is worth its
cost when foreign falls much faster than recall.

Then the relevance gate of ``min_score="strict"`` (:func:`solar_core.retrieval.ranking.relevant`):
its three thresholds chosen leave-one-conversation-out (on the other conversations: the fewest
foreign prompts with a turn while recall drops by at most 0.01), each choice scored on the
conversation left out; and the shipped thresholds, as ``min_score="strict"`` retrieves.

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
from solar_core.retrieval.lexical import words
from solar_core.retrieval.ranking import DEFAULT_FLOORS, STRICT_GATE

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
    dialogues: Sequence[Dialogue],
    vectors: dict[str, np.ndarray],
    retrieval: str,
    floors: Sequence[float | str | None] = FLOORS,
) -> list[tuple[float | str | None, float, float]]:
    """``(floor, recall on the conversation's own questions, share of foreign prompts with a
    recalled turn)`` per floor; recall averaged per conversation, then over conversations."""
    held = memories(dialogues, vectors, retrieval)
    out = []
    for floor in floors:
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


Gate = tuple[float, float, float]
#: the gates tried: (cosine, coverage, cosine when covered)
GATES: list[Gate] = [
    (round(float(a), 2), round(float(c), 2), 0.3)
    for a in np.arange(0.40, 0.70, 0.02)
    for c in np.arange(0.30, 1.00, 0.05)
]


def gate_inputs(
    dialogues: Sequence[Dialogue], vectors: dict[str, np.ndarray], retrieval: str
) -> tuple[dict[str, list[tuple[float, float, float]]], dict[str, list[tuple[float, float]]]]:
    """Per conversation: its own questions' ``(recall, best cosine, coverage)`` (recall with
    no floor) and, asked of the other memories, ``(best cosine, coverage)``."""
    held = memories(dialogues, vectors, retrieval)

    def seen(memory: SolarMemory, text: str) -> tuple[float, float]:
        store = memory.core._store
        best = float(store.similarities(vectors[text]).max())
        return best, store.lexical.coverage(words(text))

    own, foreign = {}, {}
    for d in dialogues:
        memory = held[d.sample_id]
        own[d.sample_id] = [
            (
                recall(
                    q,
                    memory.retrieve(
                        q.text, embedding=vectors[q.text], k=TOP, record=False, min_score=None
                    ),
                ),
                *seen(memory, q.text),
            )
            for q in d.questions
        ]
        foreign[d.sample_id] = [
            seen(held[o.sample_id], q.text) for o in dialogues if o is not d for q in d.questions
        ]
    return own, foreign


def passes(gate: Gate, best: float, coverage: float) -> bool:
    return best >= gate[0] or (best >= gate[2] and coverage >= gate[1])


def gate_score(
    gate: Gate | None,
    own: dict[str, list[tuple[float, float, float]]],
    foreign: dict[str, list[tuple[float, float]]],
    ids: Sequence[str],
) -> tuple[float, float]:
    """``(recall, foreign share with a turn)`` of ``ids`` under ``gate`` (``None``: none)."""
    recalls = [
        np.mean([r if gate is None or passes(gate, b, c) else 0.0 for r, b, c in own[i]])
        for i in ids
    ]
    shares = [np.mean([gate is None or passes(gate, b, c) for b, c in foreign[i]]) for i in ids]
    return float(np.mean(recalls)), float(np.mean(shares))


def chosen_gate(
    own: dict[str, list[tuple[float, float, float]]],
    foreign: dict[str, list[tuple[float, float]]],
    ids: Sequence[str],
) -> Gate:
    """The gate with the fewest foreign prompts given a turn, recall dropping <= 0.01."""
    base, _ = gate_score(None, own, foreign, ids)
    best: tuple[float, Gate] | None = None
    for gate in GATES:
        kept, share = gate_score(gate, own, foreign, ids)
        if kept >= base - 0.01 and (best is None or share < best[0]):
            best = (share, gate)
    assert best is not None, "no gate keeps recall: widen GATES"
    return best[1]


def strict_rows(
    dialogues: Sequence[Dialogue], vectors: dict[str, np.ndarray], retrieval: str
) -> None:
    own, foreign = gate_inputs(dialogues, vectors, retrieval)
    ids = list(own)
    print("\n== relevance gate, leave-one-conversation-out ==")
    print("left out     chosen (cosine, coverage, covered cosine)  recall  no gate  foreign")
    results = []
    for left in ids:
        gate = chosen_gate(own, foreign, [i for i in ids if i != left])
        kept, share = gate_score(gate, own, foreign, [left])
        base, _ = gate_score(None, own, foreign, [left])
        results.append((kept, base, share))
        print(f"{left:<12} {gate!s:<42} {kept:6.3f}  {base:7.3f}  {share:7.3f}")
    kept, base, share = (float(np.mean(x)) for x in zip(*results, strict=True))
    print(f"{'mean':<12} {'':<42} {kept:6.3f}  {base:7.3f}  {share:7.3f}")
    print(f"recall drop {base - kept:.4f}, foreign prompts with a turn {share:.3f} (out of sample)")
    everything = chosen_gate(own, foreign, ids)
    print(f"chosen on every conversation: {everything}; shipped STRICT_GATE: {STRICT_GATE}")
    # and as the library runs it: min_score="strict" (the shipped thresholds, in sample)
    for floor, own_recall, share in rows(dialogues, vectors, retrieval, floors=("strict",)):
        print(f"min_score={floor!r}: recall@5 {own_recall:.3f}, foreign {share:.3f}")


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--retrieval", default="hybrid", choices=("hybrid", "vector", "lexical"))
    args = p.parse_args(argv)
    from solar_core.embedders.minilm import MiniLMEmbedder

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
    strict_rows(dialogues, vectors, args.retrieval)
    return 0


if __name__ == "__main__":
    sys.exit(main())
