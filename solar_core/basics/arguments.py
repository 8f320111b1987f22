"""SolarMemory's keyword arguments under other libraries' names, refused with the right name."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

#: Names other memory libraries use for SolarMemory's arguments.
ALIASES = {
    **dict.fromkeys(("size", "max_size", "maxsize", "max_items", "maxlen", "limit"), "capacity"),
    **dict.fromkeys(("top_k", "n_results", "similarity_top_k"), "k"),
    **dict.fromkeys(("embeddings", "embed_model", "embedding_model", "model"), "embedder"),
    "random_state": "seed",
}


def check_misnamed(params: Mapping[str, Any], own: Sequence[str]) -> None:
    """Refuse a keyword that is one of the constructor's ``own`` arguments under another name
    (``size=10``): it would otherwise reach the policy and be blamed on it.

    >>> check_misnamed({"size": 10}, ["capacity"])
    Traceback (most recent call last):
    ...
    TypeError: SolarMemory() has no argument 'size': did you mean capacity=10?
    """
    for name, value in params.items():
        known = ALIASES.get(name) or next(
            iter(difflib.get_close_matches(name, own, n=1, cutoff=0.8)), None
        )
        if known is not None:
            raise TypeError(
                f"SolarMemory() has no argument {name!r}: did you mean {known}={value!r}?"
            )
