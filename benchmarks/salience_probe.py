"""Which dialogue turns will questions ask about? A salience probe, measured out of sample.

For the dialogue-turn protocol (``solar-bench dialogue``): a linear probe says, from a turn alone,
how likely a later question cites it as evidence. It is trained with leave-one-conversation-out
over the LoCoMo file given: every conversation is scored by a probe that never saw it. A
K-turn memory that keeps the K most salient turns (what keeping the most salient on every offer
ends with) is then scored as the protocol's ``end`` mode does (evidence recall@5 of every
question), beside a window of the last K turns (FIFO), every turn (``unlimited``) and signals
without learning:

- ``embedding``: logistic regression on the turn's MiniLM embedding;
- ``embedding+surface``: plus five surface features of the text (length, a digit, a question
  mark, capitalised words, exclamation marks);
- ``length``: the longest K turns;
- ``embedding+surface, near-duplicates skipped``: the same ranking, but a turn within cosine
  0.8 of a better-scored kept turn is skipped (redundancy);
- ``embedding+surface, later retrievals``: the probe's score plus ``log(1 + n)``, ``n`` the
  later turns whose top 5 (among the turns before them) holds the turn: what a memory that
  credits retrievals by the incoming turns learns;
- ``cited or not, known``: a bound for any such classifier, not a probe: the memory keeps K
  turns that some question cites (every one of them if K allows), in random order among
  themselves; it does not know *how many* questions cite each (the oracle of
  ``solar-bench dialogue`` does).

    python benchmarks/salience_probe.py --data locomo-dev.json [--k 25 50 100 200]

The probe is fitted by Newton's method on the L2-penalised log loss (``C * sum(loss) +
|w|^2 / 2``, the intercept unpenalised; numpy only). Nothing here is tuned on the file's
conversations beyond that fit.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from solar_bench.dialogue import Dialogue, distinct_texts, load_dialogues
from solar_bench.embed_cache import EmbeddingCache
from solar_bench.salience_training import fit_logistic

F64 = npt.NDArray[np.float64]
TOP = 5
DUPLICATE = 0.8  # cosine above which a turn counts as a near-duplicate of a better one


def surface(text: str) -> list[float]:
    """Five features of a turn's words (after ``"Speaker: "``).

    >>> surface("Ann: I ran 5 km with Bo and Cy today!")
    [0.3, 1.0, 0.0, 0.2, 0.3333333333333333]
    """
    body = text.split(": ", 1)[-1]
    words = body.split()
    return [
        len(words) / 30,
        float(bool(re.search(r"\d", body))),
        float(body.rstrip().endswith("?")),
        sum(w[:1].isupper() for w in words[1:]) / 10,
        body.count("!") / 3,
    ]


def later_retrievals(vectors: F64) -> F64:
    """For each turn, how many later turns hold it in their top 5 among the turns before them."""
    counts = np.zeros(len(vectors))
    for i in range(1, len(vectors)):
        sims = vectors[:i] @ vectors[i]
        counts[np.argsort(-sims, kind="stable")[:TOP]] += 1  # earlier first on ties
    return counts


def end_recall(
    d: Dialogue, vectors: dict[str, npt.NDArray[np.float32]], keep: Sequence[int]
) -> float:
    """The protocol's ``end`` score of a memory holding the turns ``keep``."""
    kept = np.stack([vectors[d.turns[i].text] for i in keep])
    ids = [d.turns[i].dia_id for i in keep]
    out = []
    for q in d.questions:
        top = np.argsort(-(kept @ vectors[q.text]), kind="stable")[:TOP]
        out.append(len(q.evidence & {ids[j] for j in top}) / len(q.evidence))
    return float(np.mean(out))


def best(score: F64, k: int) -> list[int]:
    return sorted(np.argsort(-score, kind="stable")[:k].tolist())


def best_distinct(score: F64, vectors: F64, k: int, threshold: float = DUPLICATE) -> list[int]:
    """The ``k`` best-scored turns, skipping one within cosine ``threshold`` of a better one
    kept (a near-duplicate)."""
    kept: list[int] = []
    for i in np.argsort(-score, kind="stable").tolist():
        if not kept or float((vectors[kept] @ vectors[i]).max()) < threshold:
            kept.append(i)
            if len(kept) == k:
                break
    return sorted(kept)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--k", type=int, nargs="+", default=[25, 50, 100, 200])
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    args = p.parse_args(argv)
    dialogues = [d for d in load_dialogues(args.data) if d.questions]
    if len(dialogues) < 2:
        raise SystemExit("salience_probe: leave-one-out needs at least 2 conversations")
    from solar_core.embedders.minilm import MiniLMEmbedder

    cache = EmbeddingCache(MiniLMEmbedder, "all-MiniLM-L6-v2", args.cache_dir)
    vectors = cache.vectors(distinct_texts(dialogues))
    emb = [np.stack([vectors[t.text] for t in d.turns]).astype(np.float64) for d in dialogues]
    surf = [np.array([surface(t.text) for t in d.turns]) for d in dialogues]
    cited = [
        np.array([any(t.dia_id in q.evidence for q in d.questions) for t in d.turns], float)
        for d in dialogues
    ]
    rows: dict[str, list[list[float]]] = {}

    def add(name: str, i: int, score: F64 | None) -> None:
        d, n = dialogues[i], len(dialogues[i].turns)
        keep = [
            best(score, k) if score is not None else list(range(max(0, n - k), n)) for k in args.k
        ]
        rows.setdefault(name, []).append([end_recall(d, vectors, kept) for kept in keep])

    for i, d in enumerate(dialogues):
        train = [j for j in range(len(dialogues)) if j != i]
        y = np.concatenate([cited[j] for j in train])
        probes = {}
        for name, feats in (
            ("embedding", emb),
            ("embedding+surface", [np.hstack(f) for f in zip(emb, surf, strict=True)]),
        ):
            w = fit_logistic(np.vstack([feats[j] for j in train]), y)
            probes[name] = feats[i] @ w[:-1] + w[-1]
        add("fifo (window of K)", i, None)
        add("length", i, np.array([len(t.text.split()) for t in d.turns], float))
        for name, score in probes.items():
            add(name, i, score)
        rows.setdefault("embedding+surface, near-duplicates skipped", []).append(
            [
                end_recall(d, vectors, best_distinct(probes["embedding+surface"], emb[i], k))
                for k in args.k
            ]
        )
        add(
            "embedding+surface, later retrievals",
            i,
            probes["embedding+surface"] + np.log1p(later_retrievals(emb[i])),
        )
        # The best any "will a question cite it?" classifier can do: every cited turn known
        # (in random order among themselves, averaged over three orders), nothing else.
        known = [
            [
                end_recall(d, vectors, best(cited[i] + rng.random(len(cited[i])) * 0.5, k))
                for k in args.k
            ]
            for rng in (np.random.default_rng(seed) for seed in (42, 1337, 2024))
        ]
        rows.setdefault("cited or not, known (a bound)", []).append(np.mean(known, axis=0).tolist())
        rows.setdefault("unlimited", []).append(
            [end_recall(d, vectors, range(len(d.turns)))] * len(args.k)
        )
        print(f"{d.sample_id}: done", file=sys.stderr)
    head = ["keep", *(f"K={k}" for k in args.k)]
    body = [[name, *(f"{v:.3f}" for v in np.mean(vals, axis=0))] for name, vals in rows.items()]
    widths = [max(len(r[c]) for r in [head, *body]) for c in range(len(head))]
    for r in [head, *body]:
        print(
            "  ".join(
                r[0].ljust(widths[0]) if c == 0 else r[c].rjust(widths[c]) for c in range(len(r))
            )
        )
    print(
        f"(end-mode evidence recall@5; {len(dialogues)} conversations, each scored by a probe "
        "trained on the others)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
