"""Should the response cache's tier 2 score paraphrases by words too? Its false-hit rate, with
and without them, at equal paraphrase-hit rates.

The pairs are ``solar-bench response-cache``'s: two questions of one LoCoMo conversation are a
*paraphrase pair* when the same turns answer both, a *different pair* when no turn answers
both. Tier 2 serves a cached answer when a stored question scores above the threshold. Scored
by cosine (what the cache does), and by the hybrid score a memory ranks with (cosine + 3 x the
lexical share, the BM25 index holding the conversation's questions, as a cache of them would):
for each cosine threshold, the hybrid threshold that keeps the same share of paraphrase pairs,
and the share of different pairs each lets through.

Same-evidence questions share names and key words by construction, so that proxy favours
words. What a cache must never do is answer a question with one word changed: the second table
scores hand-made minimal pairs (a paraphrase, and the same question about another thing), the
stored question in a cache of three.

    python benchmarks/cache_lexical.py --data locomo-dev.json
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np

from solar_bench.embed_cache import EmbeddingCache
from solar_bench.locomo import load_locomo
from solar_bench.response_cache import THRESHOLDS
from solar_core.retrieval.lexical import LexicalIndex, words
from solar_core.retrieval.ranking import LEXICAL_WEIGHT


def pairs(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cosine and hybrid scores of the paraphrase pairs and of the different pairs."""
    from solar_core.embedders.minilm import MiniLMEmbedder

    conversations = load_locomo(path)
    cache = EmbeddingCache(MiniLMEmbedder, "all-MiniLM-L6-v2")
    vectors = cache.vectors([qa.question for c in conversations for qa in c.qa])
    cos: dict[bool, list[float]] = {True: [], False: []}
    hybrid: dict[bool, list[float]] = {True: [], False: []}
    for conv in conversations:
        qs = list({qa.question: qa for qa in conv.qa}.values())
        index = LexicalIndex()
        for slot, qa in enumerate(qs):
            index.add(slot, qa.question)
        slot_of = {qa.question: slot for slot, qa in enumerate(qs)}
        shares = {}  # the asked question against every stored one
        for qa in qs:
            share = np.zeros(len(qs))
            found = index.scores(words(qa.question))
            if found is not None:
                share[found[0]] = found[1]
            shares[qa.question] = share
        for a, b in combinations(qs, 2):
            same = a.evidence == b.evidence
            if not same and a.evidence & b.evidence:
                continue  # neither kind
            c = float(vectors[a.question] @ vectors[b.question])
            share = float(shares[a.question][slot_of[b.question]])
            cos[same].append(c)
            hybrid[same].append(c + LEXICAL_WEIGHT * share)
    return (
        np.asarray(cos[True]),
        np.asarray(cos[False]),
        np.asarray(hybrid[True]),
        np.asarray(hybrid[False]),
    )


#: (asked, cached, whether the cached answer is right for the asked question)
MINIMAL_PAIRS = (
    ("What's my dog called?", "What is the name of my dog?", True),
    ("How can I change my password?", "How do I reset my password?", True),
    ("When does my flight to Paris leave?", "What time is my Paris flight?", True),
    ("What's my dog's name?", "What's my cat's name?", False),
    ("How do I reset my password?", "How do I reset my router?", False),
    ("When does my flight to Paris leave?", "When does my flight to Rome leave?", False),
    ("What is the capital of Australia?", "What is the capital of Austria?", False),
)


def minimal_pairs() -> list[tuple[str, str, bool, float, float]]:
    """Cosine and hybrid score of each of :data:`MINIMAL_PAIRS`."""
    from solar_core.embedders.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    out = []
    for asked, cached, right in MINIMAL_PAIRS:
        a, b = embedder.embed([asked, cached])
        cosine = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
        index = LexicalIndex()
        for slot, text in enumerate(
            [cached, "a note on something else", "another stored question"]
        ):
            index.add(slot, text)
        found = index.scores(words(asked))
        share = dict(zip(*found, strict=True)).get(0, 0.0) if found is not None else 0.0
        out.append((asked, cached, right, cosine, cosine + LEXICAL_WEIGHT * share))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    args = p.parse_args(argv)
    same_cos, diff_cos, same_hyb, diff_hyb = pairs(args.data)
    print(f"paraphrase pairs {len(same_cos)}, different pairs {len(diff_cos)}")
    print("cosine threshold  paraphrase hit  false hit (cosine)  false hit (hybrid, same hits)")
    for t in THRESHOLDS:
        hit = float((same_cos > t).mean())
        # the hybrid threshold letting the same share of paraphrase pairs through
        at = float(np.quantile(same_hyb, 1.0 - hit)) if 0.0 < hit < 1.0 else float("inf")
        print(
            f"{t:16.2f}  {hit:14.3f}  {float((diff_cos > t).mean()):18.4f}  "
            f"{float((diff_hyb > at).mean()):29.4f}"
        )
    print("\nminimal pairs: cosine  hybrid  right answer?  asked | cached")
    for asked, cached, right, cosine, hybrid in minimal_pairs():
        print(f"{cosine:21.3f}  {hybrid:6.3f}  {str(right):>13}  {asked} | {cached}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
