"""Rating a retrieval and recording what a prompt showed: what retrievers and chat adapters use."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from solar_core.basics.types import Hit, Hits
from solar_core.basics.validation import FloatVector
from solar_core.engine.memory import SolarMemory
from solar_core.retrieval.filters import Filter

RETRIEVAL_ID = "retrieval_id"  # the metadata key of retrieved items that names their retrieval


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
    (``returned``, which must all name one; ``None``: the ``latest``, made by ``call``);
    ``what`` names the items.

    >>> rate_retrieval(SolarMemory(dim=2), None, None, "items", "recall", like=True, score=None)
    Traceback (most recent call last):
    ...
    ValueError: nothing to rate yet: recall first
    """
    retrieval: Hits | int | None = latest
    if returned is not None:
        ids = {metadata.get(RETRIEVAL_ID) for metadata in returned}
        retrieval = next(iter(ids)) if len(ids) == 1 else None
        if not isinstance(retrieval, int):
            raise ValueError(
                f"{what} must all come from one recorded retrieval of a SolarRetriever "
                f"(their metadata[{RETRIEVAL_ID!r}])"
            )
    elif retrieval is None:
        raise ValueError(f"nothing to rate yet: {call} first")
    memory.feedback(like=like, score=score, retrieval=retrieval)


class CallableHits(Hits):
    """Hits that return themselves when called: ``obj.recalled()`` is ``obj.recalled``."""

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
    """Record the retrieval of the ``shown`` hits of a ``record=False`` ``preview`` (of ``query``
    and ``filter``), so only what the prompt showed is credited: the preview's other hits are
    excluded, so the ``len(shown)`` best of the rest are the shown ones. Empty if none."""
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
