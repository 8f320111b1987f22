"""``offer_batch``: offer many experiences at once, all checked before any is stored."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .memory import SolarMemory
from .types import Decision
from .validation import check_metadata, check_text


def offer_batch(
    memory: SolarMemory,
    texts: Iterable[str],
    metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ids: Sequence[str | None] | None = None,
    *,
    reserved: frozenset[str] = frozenset(),
) -> list[Decision]:
    """Offer each text as one step's experience (what retrievers' ``add_texts`` do).

    Every text, metadata and id is checked before anything is stored, so bad input leaves the
    memory as it was; the texts are embedded in one batch (a neural model encodes 64 texts far
    faster than 64 times one). Re-offering a stored id with the same text stores nothing, so
    seeding twice is harmless. In a batch that names some items the unnamed get a UUID, as the
    frameworks' vector stores do, so an automatic id can never take a name used later in the
    batch. ``reserved`` metadata keys are refused (an adapter's own keys on retrieved items).

    >>> memory = SolarMemory("fifo", capacity=5, embedder="hash")
    >>> [d.item_id for d in offer_batch(memory, ["a", "b"], ids=["x", None])][0]
    'x'
    >>> offer_batch(memory, ["c", ""])
    Traceback (most recent call last):
    ...
    ValueError: text must not be empty or blank
    >>> len(memory)
    2
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not a single string")
    texts = list(texts)
    metas: list[Mapping[str, Any] | None] = (
        [None] * len(texts) if metadatas is None else list(metadatas)
    )
    item_ids: list[str | None] = [None] * len(texts) if ids is None else list(ids)
    for name, values in (("metadatas", metas), ("ids", item_ids)):
        if len(values) != len(texts):
            raise ValueError(f"got {len(texts)} texts but {len(values)} {name}")
    clean = [check_metadata(m) for m in metas]
    for meta in clean:
        taken = reserved.intersection(meta)
        if taken:
            raise ValueError(
                f"metadata key {sorted(taken)[0]!r} is reserved: retrieved items carry "
                f"{', '.join(repr(k) for k in sorted(reserved))} of their own"
            )
    for text in texts:
        check_text(text)
    _check_ids(memory, texts, item_ids)
    if any(i is not None for i in item_ids):
        item_ids = [str(uuid.uuid4()) if i is None else i for i in item_ids]
    embedder = memory.embedder
    if embedder is None:
        raise ValueError("this memory has no embedder; offer vectors through memory.add")
    vectors = list(embedder.embed(texts)) if texts else []
    return [
        memory.add(text, embedding=vector, metadata=meta, item_id=item_id)
        for text, vector, meta, item_id in zip(texts, vectors, clean, item_ids, strict=True)
    ]


def _check_ids(memory: SolarMemory, texts: list[str], ids: list[str | None]) -> None:
    seen: set[str] = set()
    for text, item_id in zip(texts, ids, strict=True):
        if item_id is None:
            continue
        check_text(item_id, "id")
        if item_id in seen:
            raise ValueError(f"id {item_id!r} appears twice")
        seen.add(item_id)
        if item_id in memory and memory.get(item_id).text != text:
            raise ValueError(f"an item with id {item_id!r} is already stored, with another text")
