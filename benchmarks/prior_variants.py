"""How far a better salience prior could take a bounded chat memory under hybrid ranking.

In ``end`` mode ``solar-dialogue`` keeps the K turns its salience prior scores highest (no
retrieval rates anything before the questions), so a prior can be judged without the policy:
keep each conversation's K best-scored turns, rank them hybrid, and measure evidence recall@5
as ``solar-bench dialogue`` does. Every prior here is fitted leave-one-conversation-out (on the
other dev conversations), so every figure is out of sample; the oracles keep the turns the
questions cite (any of them, or the most-cited first) and bound what any prior could reach.

Variants: the shipped model (text, context and MiniLM features, logistic, C = 1) refitted;
other penalties; labels weighted by how many questions cite a turn; text and context features
only; and three features of lexical novelty added (content words the conversation has not used
yet, distinct content words, their rarity so far).

    python benchmarks/prior_variants.py --data locomo-dev.json
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from solar_bench.dialogue import Dialogue, distinct_texts, load_dialogues, recall
from solar_bench.embed_cache import EmbeddingCache
from solar_bench.salience_training import cited, features, fit_logistic
from solar_core import SolarMemory
from solar_core.policies.salience import body
from solar_core.retrieval.lexical import words

F64 = npt.NDArray[np.float64]
#: how many text + context features lead a MiniLM feature row (the embedding follows)
TEXT_AND_CONTEXT = 12
TOP = 5
Scorer = Callable[[list[str], str], F64]


def novelty(dialogue: Dialogue) -> F64:
    """Per turn: content words new to the conversation / 10, distinct content words / 10, and
    the summed log-rarity of its words in the conversation so far / 30 (known when offered)."""
    seen: set[str] = set()
    df: Counter[str] = Counter()
    rows = []
    for i, turn in enumerate(dialogue.turns):
        mine = {w for w in words(body(turn.text)) if w.isalpha()}
        rarity = sum(math.log((i + 2) / (df[w] + 1)) for w in mine)
        rows.append([len(mine - seen) / 10, len(mine) / 10, rarity / 30])
        seen |= mine
        df.update(mine)
    return np.array(rows, dtype=np.float64)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--k", type=int, nargs="+", default=[100, 200])
    args = p.parse_args(argv)
    from solar_core.embedders.minilm import MiniLMEmbedder

    dialogues = [d for d in load_dialogues(args.data) if d.questions]
    vectors = EmbeddingCache(MiniLMEmbedder, "all-MiniLM-L6-v2").vectors(distinct_texts(dialogues))
    by_id = {d.sample_id: d for d in dialogues}
    x = {d.sample_id: features(d, vectors.__getitem__, "minilm") for d in dialogues}
    y = {d.sample_id: cited(d) for d in dialogues}
    lexical = {d.sample_id: novelty(d) for d in dialogues}
    counts = {}
    for d in dialogues:
        times = Counter(e for q in d.questions for e in q.evidence)
        counts[d.sample_id] = np.array([times[t.dia_id] for t in d.turns], dtype=np.float64)

    def logistic(rows: Callable[[str], F64], c: float = 1.0, weighted: bool = False) -> Scorer:
        def score(train: list[str], test: str) -> F64:
            a = np.vstack([rows(s) for s in train])
            b = np.concatenate([y[s] for s in train])
            if weighted:
                n = np.concatenate([counts[s] for s in train])
                w = fit_logistic(a, b, c, weights=np.where(n > 0, n, 1.0))
            else:
                w = fit_logistic(a, b, c)
            return rows(test) @ w[:-1] + w[-1]

        return score

    def later_first(values: F64) -> F64:  # among equals the policy keeps the later turn
        return values + 1e-9 * np.arange(len(values))

    variants: list[tuple[str, Scorer]] = [
        ("shipped model, refitted (C = 1)", logistic(x.__getitem__)),
        ("C = 0.3", logistic(x.__getitem__, 0.3)),
        ("C = 3", logistic(x.__getitem__, 3.0)),
        ("labels weighted by citations", logistic(x.__getitem__, weighted=True)),
        ("text and context features only", logistic(lambda s: x[s][:, :TEXT_AND_CONTEXT])),
        (
            "+ lexical novelty",
            logistic(
                lambda s: np.hstack(
                    [x[s][:, :TEXT_AND_CONTEXT], lexical[s], x[s][:, TEXT_AND_CONTEXT:]]
                )
            ),
        ),
        ("oracle: cited turns", lambda _, s: later_first(y[s])),
        ("oracle: most-cited turns first", lambda _, s: later_first(counts[s])),
    ]

    def auc(score: F64, label: F64) -> float:
        """How often a cited turn outscores an uncited one (Mann-Whitney, ties count half)."""
        order = np.argsort(score, kind="stable")
        ranks = np.empty(len(score))
        ranks[order] = np.arange(1, len(score) + 1)
        for value in np.unique(score):  # tied scores share their mean rank
            tied = score == value
            ranks[tied] = ranks[tied].mean()
        hit = label > 0
        n1, n0 = int(hit.sum()), int((~hit).sum())
        return float((ranks[hit].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))

    def kept_recall(d: Dialogue, keep: npt.NDArray[np.int64]) -> float:
        memory = SolarMemory("unlimited", None, dim=384, seed=0)
        for i in sorted(keep.tolist()):
            turn = d.turns[i]
            memory.add(turn.text, embedding=vectors[turn.text], metadata={"dia_id": turn.dia_id})
        found = [
            recall(q, memory.retrieve(q.text, embedding=vectors[q.text], k=TOP, record=False))
            for q in d.questions
        ]
        return float(np.mean(found))

    everything = np.mean(
        [kept_recall(d, np.arange(len(d.turns), dtype=np.int64)) for d in dialogues]
    )
    print("== the K turns a prior scores highest, ranked hybrid (end mode, recall@5) ==")
    print(f"keep everything: {everything:.3f}")
    head = "".join(f"  K = {k:<4}  x every" for k in args.k)
    print(f"{'prior (fitted leave-one-conversation-out)':<44}   AUC{head}")
    for name, score in variants:
        scores = {s: score([t for t in by_id if t != s], s) for s in by_id}
        cells = []
        for k in args.k:
            found = []
            for s, d in by_id.items():
                order = np.argsort(-scores[s], kind="stable")
                found.append(kept_recall(d, order[:k].astype(np.int64)))
            value = float(np.mean(found))
            cells.append(f"  {value:8.3f}  {value / everything:7.2f}")
        area = np.mean([auc(scores[s], y[s]) for s in by_id])
        print(f"{name:<44}  {area:.2f}" + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
