"""``offer_batch``: many experiences offered at once, all checked before any is stored."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from solar_core.basics.types import Decision
from solar_core.basics.validation import (
    FloatVector,
    check_key,
    check_metadata,
    check_text,
    unit_vector,
)
from solar_core.engine.memory import SolarMemory
from solar_core.persistence.journal import Journal
from solar_core.persistence.logged_steps import storable


def offer_batch(
    memory: SolarMemory,
    texts: Iterable[str],
    metadatas: Sequence[Mapping[str, Any] | None] | None = None,
    ids: Sequence[str | None] | None = None,
    *,
    reserved: frozenset[str] = frozenset(),
) -> list[Decision]:
    """Offer each text as one step's experience (what retrievers' ``add_texts`` do), embedded
    in one batch. All or nothing: every element is checked (as a database behind the memory
    would store it) before the first is offered; the error names it (``texts[1]: ...``).
    Re-offering a stored id with the same text stores nothing. A ``"key"`` in an element's
    metadata makes it a keyed fact (``memory.add(..., metadata={"key": ...})``): it supersedes
    the stored fact of that key, and a later element of the batch with the key supersedes it.
    In a batch that names some items
    the unnamed get a UUID (never a name used later in the batch). ``reserved`` metadata keys
    (an adapter's own on retrieved items) are refused."""
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
    persisted = isinstance(memory.runner, Journal)  # a database behind it: what it cannot store
    clean: list[dict[str, Any]] = []
    for index, (text, meta) in enumerate(zip(texts, metas, strict=True)):
        with _element(index):
            check_text(text)
            if persisted:
                _storable(text, "text")
            checked = check_metadata(meta)
            check_key(checked.get("key"))  # a "key" names the fact the text states
            if taken := reserved.intersection(checked):
                raise ValueError(
                    f"metadata key {sorted(taken)[0]!r} is reserved: retrieved items carry "
                    f"{', '.join(repr(k) for k in sorted(reserved))} of their own"
                )
            if persisted:
                try:
                    checked = Journal.plain_metadata(checked)  # JSON, as the log stores it
                except (TypeError, ValueError) as err:
                    raise TypeError(
                        f"{err}; convert its values to str, numbers, bools, None, lists or dicts"
                    ) from None
            clean.append(checked)
    _check_ids(memory, texts, item_ids, persisted)
    if any(i is not None for i in item_ids):
        item_ids = [str(uuid.uuid4()) if i is None else i for i in item_ids]
    if memory.embedder is None:
        raise ValueError("this memory has no embedder; offer vectors through memory.add")
    vectors = _unit_vectors(memory.embedder.embed(texts), memory.dim, len(texts)) if texts else []
    return [
        memory.add(text, embedding=vector, metadata=meta, item_id=item_id)
        for text, vector, meta, item_id in zip(texts, vectors, clean, item_ids, strict=True)
    ]


@contextmanager
def _element(index: int) -> Iterator[None]:
    """Reword a check's error to name the batch element it is about (same exception type)."""
    try:
        yield
    except (TypeError, ValueError) as err:
        kind = TypeError if isinstance(err, TypeError) else ValueError
        raise kind(f"texts[{index}]: {err} (nothing was added)") from None


def _storable(text: str, what: str) -> None:
    """What a database cannot store (the memory checks it too, but only when its turn comes)."""
    if "\x00" in text:
        raise ValueError(
            f"{what} contains a NUL character, which cannot be persisted: remove it "
            "(e.g. text.replace('\\x00', ''))"
        )
    storable(text, what)


def _unit_vectors(embedded: object, dim: int, count: int) -> list[FloatVector]:
    """The embedder's rows, each checked (right dimension, finite, not zero) and made unit."""
    rows = np.asarray(embedded)
    if rows.ndim != 2 or rows.shape[0] != count:
        got = rows.shape[0] if rows.ndim >= 1 else 0
        raise ValueError(
            f"the embedder returned {got} vectors for {count} texts (shape {rows.shape}); "
            "it must return one row per text (nothing was added)"
        )
    out = []
    for index, row in enumerate(rows):
        with _element(index):
            out.append(unit_vector(row, dim, "its embedding"))
    return out


def _check_ids(
    memory: SolarMemory, texts: list[str], ids: list[str | None], persisted: bool
) -> None:
    seen: set[str] = set()
    for index, (text, item_id) in enumerate(zip(texts, ids, strict=True)):
        if item_id is None:
            continue
        with _element(index):
            check_text(item_id, "id")
            if persisted:
                _storable(item_id, "id")
            if item_id in seen:
                raise ValueError(f"id {item_id!r} appears twice in the batch")
            seen.add(item_id)
            held = memory.get(item_id) if item_id in memory else None
            if held is not None and held.superseded_at is not None:
                raise ValueError(
                    f"{item_id!r} is the id of a superseded value: offer this one under "
                    "another id, or remove() that value first"
                )
            if held is not None and held.text != text:
                raise ValueError(
                    f"an item with id {item_id!r} is already stored, with another text: "
                    "offer it under another id, or remove() the stored one first"
                )


class OffersTexts:
    """A retriever's ``add_texts`` over its ``memory`` (both frameworks' ``SolarRetriever``)."""

    #: metadata keys the retriever puts on what it returns: an added item may not use them
    reserved_keys: ClassVar[frozenset[str]] = frozenset()
    if TYPE_CHECKING:  # (the adapter's field: a pydantic model declares its own)
        memory: SolarMemory

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        *,
        ids: Sequence[str | None] | None = None,
    ) -> list[Decision]:
        """Offer each text as one step's experience (all checked first: :func:`offer_batch`)."""
        return offer_batch(self.memory, texts, metadatas, ids, reserved=self.reserved_keys)
