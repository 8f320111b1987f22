"""``record_shown``: make a retrieval event of exactly the hits a prompt ended up showing."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from solar_core.basics.types import Hit, Hits
from solar_core.basics.validation import FloatVector
from solar_core.engine.memory import SolarMemory
from solar_core.retrieval.filters import Filter

RETRIEVAL_ID = "retrieval_id"  # the metadata key of retrieved items that names their retrieval


def retrieval_of(metadatas: Iterable[Mapping[str, Any]], what: str) -> int:
    """The retrieval that returned items, from their metadata: retrievers' ``feedback(items)``.

    >>> retrieval_of([{"retrieval_id": 7}, {"retrieval_id": 7}], "documents")
    7
    >>> retrieval_of([{"retrieval_id": 7}, {}], "documents")
    Traceback (most recent call last):
    ...
    ValueError: documents must all come from one recorded retrieval of a SolarRetriever ...
    """
    ids = {metadata.get(RETRIEVAL_ID) for metadata in metadatas}
    found = next(iter(ids)) if len(ids) == 1 else None
    if not isinstance(found, int):
        raise ValueError(
            f"{what} must all come from one recorded retrieval of a SolarRetriever "
            f"(their metadata[{RETRIEVAL_ID!r}])"
        )
    return found


def rate_retrieval(
    memory: SolarMemory,
    latest: Hits | None,
    returned: Iterable[Mapping[str, Any]] | None,
    what: str,
    call: str,
    *,
    like: bool | None,
    score: float | None,
) -> None:
    """A retriever's ``feedback``: rate the retrieval that returned items with these metadata
    (``returned``; ``None``: the ``latest``, made by ``call``); ``what`` names the items.

    >>> from solar_core import SolarMemory
    >>> memory = SolarMemory(embedder="hash")
    >>> rate_retrieval(memory, None, None, "documents", "retrieve", like=True, score=None)
    Traceback (most recent call last):
    ...
    ValueError: nothing to rate yet: retrieve first
    """
    retrieval: Hits | int | None = latest
    if returned is not None:
        retrieval = retrieval_of(returned, what)
    elif retrieval is None:
        raise ValueError(f"nothing to rate yet: {call} first")
    memory.feedback(like=like, score=score, retrieval=retrieval)


class CallableHits(Hits):
    """:class:`~solar_core.basics.types.Hits` that can also be called, returning themselves: what an
    attribute that became a method returns, so ``obj.recalled()`` (the method, as the other
    adapters have it) and ``obj.recalled`` (the older attribute) give the same hits.

    >>> hits = CallableHits([Hit("a", "x", 0.9)], 3)
    >>> hits() is hits, [h.id for h in hits()], hits.retrieval_id
    (True, ['a'], 3)
    """

    def __call__(self) -> Hits:
        return self


def record_shown(
    memory: SolarMemory,
    embedding: FloatVector,
    preview: Sequence[Hit],
    shown: Collection[str],
    exclude: Collection[str] = (),
    query: str | None = None,
    filter: Filter | None = None,
) -> Hits:
    """Record the retrieval of the ``shown`` hits of a ``record=False`` ``preview``.

    Adapters fit recalled experiences into a token budget after looking at them; only what the
    prompt actually showed should gain the retrieval's credit, and only that should a like or a
    dislike rate. The preview's other hits are excluded, so the ``len(shown)`` best of the rest
    are exactly the shown ones. ``query``: the preview's text, if it had one (its words rank
    too); ``filter``: the preview's (the items it refused must not stand in for the shown
    ones). Returns the recorded ``Hits`` (empty and unrecorded when nothing was shown).

    >>> import numpy as np
    >>> memory = SolarMemory("solar-e", capacity=5, dim=2)
    >>> for i, v in enumerate([(1, 0), (0.9, 0.4), (0.5, 0.9)]):
    ...     _ = memory.add(f"item {i}", embedding=np.array(v), item_id=f"i{i}")
    >>> vector = np.array([1.0, 0.0], dtype=np.float32)
    >>> preview = memory.retrieve(embedding=vector, k=3, record=False)
    >>> hits = record_shown(memory, vector, preview, shown={"i0", "i2"})
    >>> [h.id for h in hits], memory.get("i1").policy["alpha"]   # i1 was not shown: no credit
    (['i0', 'i2'], 2.0)
    """
    shown_ids = [hit.id for hit in preview if hit.id in shown]
    if not shown_ids:
        return Hits([], None)
    hidden = [hit.id for hit in preview if hit.id not in shown]
    # No floor: every shown hit passed the preview's, and scores the same again.
    return memory.retrieve(
        query,
        embedding=embedding,
        k=len(shown_ids),
        exclude=[*exclude, *hidden],
        filter=filter,
        min_score=None,
    )
