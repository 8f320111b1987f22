"""How much could ratings lift the interleaved dialogue protocol? Probes that know more than a
rating says.

The interleaved protocol of ``solar-bench dialogue`` (each question asked once after its last
evidence turn; static embedder; ``solar-dialogue`` at capacity K with each conversation's
prior trained without it), unrated, with one of these in place of ratings:

- ``keep``: every evidence turn a question found gets a value bonus (default 100: kept for
  good);
- ``demote``: every hit of a question that is not one of its evidence turns loses that much
  value (default 2);
- ``rank``: the memory is left alone; a question's top 20 are re-ranked by their score plus
  ``bonus`` x (evidence hits - other hits) / (their count + 1) of the earlier questions that
  showed them, and the best 5 are scored;
- ``in-sample``: no probe; the shipped prior, trained on every dev conversation including the
  one scored (what a prior that knew the questions in advance would keep).

    python benchmarks/rating_ceiling.py --data locomo-dev.json keep [--bonus 100]
"""

from __future__ import annotations

import argparse
import collections
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from solar_bench import dialogue as bench
from solar_bench.embed_cache import EmbeddingCache
from solar_bench.embedders import embedder_for
from solar_bench.salience_training import priors_for
from solar_core import SolarMemory

SEEDS = (42, 1337, 2024)


def probe(
    d: bench.Dialogue, vector: Any, prior: Any, k: int, seed: int, how: str, bonus: float
) -> float:
    memory = SolarMemory("solar-dialogue", k, dim=256, k=bench.TOP, seed=seed, prior=prior)
    policy: Any = memory._core.eviction  # the probe writes values a rating never could
    credit: dict[str, float] = collections.defaultdict(float)
    seen: dict[str, int] = collections.defaultdict(int)
    asked = bench.schedule(d, seed)
    scores = []
    for i, turn in enumerate(d.turns):
        v = vector(turn.text)
        memory.retrieve(turn.text, embedding=v)
        memory.add(turn.text, embedding=v, metadata={"dia_id": turn.dia_id})
        for q in asked.get(i, ()):
            if how == "rank":
                pool = memory.retrieve(q.text, embedding=vector(q.text), k=20, record=False)
                ranked = sorted(
                    pool, key=lambda h: -(h.score + bonus * credit[h.id] / (seen[h.id] + 1))
                )
                hits = ranked[: bench.TOP]
            else:
                hits = memory.retrieve(q.text, embedding=vector(q.text))
            scores.append(bench.recall(q, hits))
            for h in hits:
                good = h.metadata["dia_id"] in q.evidence
                credit[h.id] += 1 if good else -1
                seen[h.id] += 1
                if (how == "keep" and good) or (how == "demote" and not good):
                    slot = policy.store.slot_of(h.id)
                    step = bonus if how == "keep" else -bonus
                    policy._value[slot] += step
                    policy._key[slot] += step
                    policy._version += 1
    return statistics.fmean(scores)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("how", choices=("keep", "demote", "rank", "in-sample"))
    p.add_argument("--bonus", type=float, default=None, help="keep 100, demote 2, rank 0.3")
    p.add_argument("--k", type=int, nargs="+", default=[50, 100, 200])
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    args = p.parse_args(argv)
    bonus = args.bonus if args.bonus is not None else {"keep": 100, "demote": 2}.get(args.how, 0.3)
    dialogues = [d for d in bench.load_dialogues(args.data) if d.questions]
    vectors = EmbeddingCache(*embedder_for("static"), args.cache_dir).vectors(
        bench.distinct_texts(dialogues)
    )
    vector = vectors.__getitem__
    priors = priors_for(dialogues, vector, "static")
    for k in args.k:
        if args.how == "in-sample":
            units = [
                bench.run_dialogue(d, vector, "solar-dialogue", k, s, "interleaved+none")["score"]
                for d in dialogues
                for s in SEEDS
            ]
        else:
            units = [
                probe(d, vector, priors[d.sample_id], k, s, args.how, bonus)
                for d in dialogues
                for s in SEEDS
            ]
        print(f"{args.how} bonus={bonus:g} K={k}: {statistics.fmean(units):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
