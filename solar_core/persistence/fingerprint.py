"""Embedder fingerprints: which embedder made a scope's vectors.

A scope's items are vectors of the embedder that stored them; a query embedded by another model
lands in an unrelated space and retrieval silently returns noise, even when the dimensions agree.
So every scope records the fingerprint of its embedder when it is created, and a store whose
embedder does not match refuses to open it (:meth:`MemoryStore.reembed` migrates it).

A fingerprint is the embedder's name (for messages), its dimension and ``probe``: the signs of
64 fixed random projections of its vector for a fixed text (a SimHash), as 16 hex digits. Two
embedders *match* when their dimensions are equal and at most :data:`TOLERANCE` signs differ.
Signs of projections rather than a digest of the rounded vector: a digest flips on float noise
between machines or BLAS builds, a sign only when the angle moves (a quantised copy of a model
flips a few, an unrelated model about half); projecting also makes sparse embedders
(feature hashing) as distinguishable as dense ones.

>>> from solar_core.embedders.hash_embedder import HashEmbedder
>>> mine = fingerprint(HashEmbedder(dim=64))
>>> sorted(mine), mine["name"], mine["dim"], len(mine["probe"])
(['dim', 'name', 'probe'], 'HashEmbedder', 64, 16)
>>> same_embedder(mine, fingerprint(HashEmbedder(dim=64)))
True
>>> same_embedder(mine, {**mine, "probe": f"{int(mine['probe'], 16) ^ 0xFFFF:016x}"})
False
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from solar_core.embedders.embedder import Embedder

#: the text every fingerprint embeds (fixed forever: changing it changes every fingerprint)
PROBE_TEXT = (
    "solar-memory embedder fingerprint. Q: how do I rotate the API key of the billing "
    "service? A: open the admin console, revoke the old key, then deploy the new one."
)
#: signs in a probe (16 hex digits)
BITS = 64
#: most signs two fingerprints of one embedder may disagree on (unrelated ones: ~32 of 64;
#: at most 10 happens by chance once in ~10^8)
TOLERANCE = 10
#: seed of the projections; the legacy ``RandomState`` stream is frozen across numpy versions
_SEED = 0x534F4C52


@functools.cache
def _projections(dim: int) -> np.ndarray:
    return np.random.RandomState(_SEED).standard_normal((BITS, dim))


def embedder_name(embedder: object) -> str:
    """The embedder's class name, with the model's name when it exposes one, and what it wraps
    (``CachedEmbedder > MiniLMEmbedder``, ``LangChainEmbedder > OpenAIEmbeddings(text-...)``).
    Only for messages: fingerprints are compared by their vectors, not their names.

    >>> from solar_core.embedders.cached_embedder import CachedEmbedder
    >>> from solar_core.embedders.hash_embedder import HashEmbedder
    >>> embedder_name(CachedEmbedder(HashEmbedder()))
    'CachedEmbedder > HashEmbedder'
    """
    names = []
    current: object = embedder
    for _ in range(4):  # wrappers of wrappers, but never a cycle
        name = type(current).__name__
        fields = getattr(current, "__dict__", {})  # plain attributes only: no property runs
        names_of_model = ("model_name", "model", "model_id")
        model = next((fields[a] for a in names_of_model if isinstance(fields.get(a), str)), None)
        names.append(f"{name}({model})" if model else name)
        inner = next(
            (
                fields[a]
                for a in ("inner", "model", "embeddings", "embed_model")
                if fields.get(a) is not None and not isinstance(fields[a], str | int | float)
            ),
            None,
        )
        if inner is None:
            break
        current = inner
    return " > ".join(names)


def fingerprint(embedder: Embedder) -> dict[str, Any]:
    """``{"name", "dim", "probe"}`` of ``embedder`` (one ``embed`` call)."""
    dim = int(embedder.dim)
    try:
        vector = np.asarray(embedder.embed([PROBE_TEXT]), dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"the embedder cannot embed a probe text: {err}") from err
    if vector.shape != (1, dim) or not np.isfinite(vector).all() or not vector.any():
        raise ValueError(
            f"the embedder returned {vector.shape} for one text (expected (1, {dim}), finite, "
            "not zero)"
        )
    signs = _projections(dim) @ vector[0] > 0
    probe = int("".join("1" if s else "0" for s in signs.tolist()), 2)
    return {"name": embedder_name(embedder), "dim": dim, "probe": f"{probe:0{BITS // 4}x}"}


def same_embedder(a: object, b: object) -> bool:
    """Whether two recorded fingerprints are of one embedder (a malformed one matches nothing)."""
    if not isinstance(a, dict) or not isinstance(b, dict) or a.get("dim") != b.get("dim"):
        return False
    try:
        differ = int(str(a["probe"]), 16) ^ int(str(b["probe"]), 16)
    except (KeyError, ValueError):
        return False
    return differ.bit_count() <= TOLERANCE


def describe(recorded: object) -> str:
    """A fingerprint for a message: ``HashEmbedder (dim 384, probe 1f2e...)``."""
    if not isinstance(recorded, dict):
        return "an unrecorded embedder"
    name, dim, probe = (recorded.get(k) for k in ("name", "dim", "probe"))
    return f"{name} (dim {dim}, probe {probe})"
