"""How to fuse the vector and keyword rankings: reciprocal ranks or calibrated scores.

Every turn of each LoCoMo conversation is a candidate (``solar-bench dialogue``'s store-everything
row, ``end`` mode): each question ranks them by cosine (MiniLM, or ``--embedder``), by the BM25
share of :class:`~solar_core.retrieval.lexical.LexicalIndex`, and by fusions of the two, and is
scored by evidence recall@5 (per conversation, then over conversations). Fusions:

- ``rrf k``: reciprocal-rank fusion, ``1 / (k + rank)`` summed over the two rankings (an item
  holding no query word is in the vector ranking only);
- ``sum w``: ``cosine + w x share``, what ``retrieval="hybrid"`` ranks by; ``w`` is also chosen
  leave-one-conversation-out (on the other five, then scored on the sixth).

    python benchmarks/fusion_choice.py --data locomo-dev.json
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from solar_bench.dialogue import Dialogue, load_dialogues
from solar_bench.embed_cache import EmbeddingCache
from solar_bench.embedders import embedder_for
from solar_core.retrieval.lexical import LexicalIndex, words

F64 = npt.NDArray[np.float64]
Scorer = Callable[[F64, F64], F64]
WEIGHTS = (1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0)
TOP = 5


def candidates(
    d: Dialogue, vectors: dict[str, np.ndarray]
) -> list[tuple[frozenset[str], F64, F64]]:
    """Per question: its evidence, the cosine of every turn, the BM25 share of every turn."""
    index = LexicalIndex()
    for slot, turn in enumerate(d.turns):
        index.add(slot, turn.text)
    matrix = np.stack([vectors[t.text] for t in d.turns]).astype(np.float64)
    out = []
    for q in d.questions:
        share = np.zeros(len(d.turns))
        found = index.scores(words(q.text))
        if found is not None:
            share[found[0]] = found[1]
        out.append((q.evidence, matrix @ vectors[q.text].astype(np.float64), share))
    return out


def rank_of(scores: F64) -> npt.NDArray[np.int64]:
    order = np.argsort(-scores, kind="stable")
    ranks = np.empty(len(scores), np.int64)
    ranks[order] = np.arange(len(scores))
    return ranks


def rrf(k: int) -> Scorer:
    def score(cosine: F64, share: F64) -> F64:
        fused = 1.0 / (k + 1 + rank_of(cosine))
        held = share > 0
        lexical = 1.0 / (k + 1 + rank_of(np.where(held, share, -1.0)))
        return fused + np.where(held, lexical, 0.0)

    return score


def per_conversation(
    dialogues: Sequence[Dialogue], data: dict[str, list[tuple[frozenset[str], F64, F64]]], s: Scorer
) -> dict[str, float]:
    out = {}
    for d in dialogues:
        ids = [t.dia_id for t in d.turns]
        recalls = []
        for evidence, cosine, share in data[d.sample_id]:
            top = np.argsort(-s(cosine, share), kind="stable")[:TOP]
            recalls.append(len(evidence & {ids[i] for i in top}) / len(evidence))
        out[d.sample_id] = float(np.mean(recalls))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--embedder", default="minilm", help="whose cosines (default minilm)")
    args = p.parse_args(argv)

    dialogues = [d for d in load_dialogues(args.data) if d.questions]
    texts = [t.text for d in dialogues for t in d.turns] + [
        q.text for d in dialogues for q in d.questions
    ]
    vectors = EmbeddingCache(*embedder_for(args.embedder)).vectors(texts)
    data = {d.sample_id: candidates(d, vectors) for d in dialogues}
    scorers: dict[str, Scorer] = {
        "cosine": lambda c, s: c,
        "bm25 share": lambda c, s: s + 1e-9 * c,  # ties by cosine
        **{f"rrf k={k}": rrf(k) for k in (5, 10, 20, 60)},
        **{f"sum w={w:g}": (lambda c, s, w=w: c + w * s) for w in WEIGHTS},
    }
    table = {name: per_conversation(dialogues, data, s) for name, s in scorers.items()}
    print("== fusion: evidence recall@5, every turn a candidate ==")
    for name, by_conv in table.items():
        print(f"{name:>12}  {np.mean(list(by_conv.values())):.3f}")
    held_out = []
    for d in dialogues:
        others = [e.sample_id for e in dialogues if e is not d]
        best = max(WEIGHTS, key=lambda w: np.mean([table[f"sum w={w:g}"][o] for o in others]))
        held_out.append(table[f"sum w={best:g}"][d.sample_id])
        print(f"  {d.sample_id}: w chosen on the other five = {best:g}")
    print(f"sum, w chosen leave-one-conversation-out: {np.mean(held_out):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
