"""Train the shipped salience priors of dialogue turns (``solar_core/priors/*.json``).

The priors are fitted on every conversation of the given LoCoMo file (the dev conversations:
never anything that is used to judge them) with the label "some question cites this turn as
evidence": ``dialogue-static`` on the text features, two context features and the built-in
static embedder's vector (the default prior, whatever embedder a memory retrieves with);
``dialogue-minilm`` the same with the all-MiniLM-L6-v2 embedding; ``dialogue-text`` on the
text features alone. The fit is deterministic: rerunning it rewrites the same files.

    python benchmarks/train_salience.py --data locomo-dev.json [--out solar_core/priors]

Benchmarks never score a conversation with a prior trained on it: see
``solar_bench.salience_training.priors_for``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from solar_bench.dialogue import distinct_texts, load_dialogues
from solar_bench.embed_cache import EmbeddingCache
from solar_bench.embedders import embedder_for
from solar_bench.salience_training import KINDS, train

OUT = Path(__file__).resolve().parent.parent / "solar_core" / "priors"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--out", type=Path, default=OUT, help="folder of the prior files")
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    p.add_argument(
        "--kinds",
        nargs="+",
        choices=KINDS,
        default=list(KINDS),
        help="which priors to train (default all; minilm needs the minilm extra)",
    )
    args = p.parse_args(argv)
    dialogues = [d for d in load_dialogues(args.data) if d.questions]
    texts = distinct_texts(dialogues)
    args.out.mkdir(parents=True, exist_ok=True)
    for kind in args.kinds:
        # the text kind reads no vector: any lookup does
        make, name = embedder_for("static" if kind != "minilm" else "minilm")
        vectors = EmbeddingCache(make, name, args.cache_dir).vectors(texts)
        prior = train(dialogues, vectors.__getitem__, kind)
        path = args.out / f"{prior.name}.json"
        prior.save(path)
        print(f"{path}: {len(prior.trained_on)} conversations ({', '.join(prior.trained_on)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
