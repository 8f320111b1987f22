"""A memory's inputs: the embedder it is built with, and the checked vector of a text or of a
given embedding."""

from __future__ import annotations

from solar_core.basics.validation import FloatVector, check_k, check_text, unit_rows, unit_scale
from solar_core.embedders.embedder import Embedder, resolve_embedder
from solar_core.embedders.hash_embedder import HashEmbedder


def resolve_for_memory(embedder: object, dim: int | None) -> tuple[Embedder | None, int]:
    """The embedder and dimension of a memory built with ``embedder=`` and ``dim=`` (with
    ``dim`` and no embedder: none, vectors only).

    >>> resolve_for_memory(None, 4)
    (None, 4)
    >>> resolve_for_memory("hash", 8)[1]
    8
    """
    if dim is not None:
        dim = check_k(dim, "dim")
        if embedder is None:
            return None, dim  # vectors only
        if embedder == "hash":
            return HashEmbedder(dim=dim), dim
    resolved = resolve_embedder(embedder)
    if dim is not None and dim != resolved.dim:
        raise ValueError(f"dim={dim} disagrees with the embedder's dim {resolved.dim}")
    return resolved, resolved.dim


def input_vector(
    embedder: Embedder | None, dim: int, text: object, embedding: object, what: str
) -> tuple[FloatVector, float | None]:
    """The checked input vector as ``(row, scale)``: ``scaled(row, scale)`` is its unit vector
    (every check runs here, before the memory is touched; only the product is left for later).

    >>> input_vector(None, 2, None, [3.0, 4.0], "query")[1]
    0.2
    >>> input_vector(None, 2, "hello", None, "text")
    Traceback (most recent call last):
    ...
    ValueError: this memory has no embedder (it was built with dim=); pass embedding=
    """
    if embedding is not None:
        if text is not None:
            check_text(text, what)
        return unit_scale(embedding, dim)
    if text is None:
        raise ValueError(f"pass a {what} text or embedding=")
    check_text(text, what)
    if embedder is None:
        raise ValueError("this memory has no embedder (it was built with dim=); pass embedding=")
    embed = embedder.embed
    if what == "query":  # asymmetric models embed queries and documents differently
        embed = getattr(embedder, "embed_queries", embed)
    row: FloatVector = unit_rows(embed([str(text)]), dim, 1)[0]
    return row, None
