"""``SolarRetriever``: a LangChain retriever over a self-curating SOLAR memory."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, PrivateAttr, field_validator

from solar_core import Decision, Hit, Hits, SolarMemory
from solar_core.basics.validation import check_k
from solar_core.engine.async_calls import in_worker
from solar_core.integrations.batch import OffersTexts
from solar_core.integrations.params import build_params
from solar_core.integrations.shown import RETRIEVAL_ID, rate_retrieval
from solar_core.persistence import DEFAULT_CAPACITY
from solar_core.retrieval.filters import Filter, check_filter
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

from ._params import SolarParams

RESERVED = frozenset({"id", "score", RETRIEVAL_ID})  # metadata keys of retrieved documents
SEARCH_KWARGS = ("k", "filter")  # the VectorStoreRetriever search_kwargs a retriever takes


class SolarRetriever(OffersTexts, SolarParams, BaseRetriever):
    """Retrieves the ``k`` stored experiences most similar to the query, best first.

    Every call is a SOLAR retrieval event (the returned items gain evidence of usefulness, the
    others age), and ``feedback(like=...)`` rates it, so the memory learns which experiences to
    keep. ``add_texts`` / ``add_documents`` offer new experiences: the policy decides whether each
    is stored and what it evicts, and says why in the returned :class:`~solar_core.Decision`.

    Each ``Document`` carries the item's metadata plus ``id`` (the item id, also ``Document.id``),
    ``score`` (cosine similarity to the query) and ``retrieval_id`` (pass the documents back to
    ``feedback`` to rate that very retrieval when several callers share the retriever). The
    ``retrieval_id`` is a :class:`~solar_core.basics.types.RetrievalId`: an ``int`` that remembers
    its memory, so another retriever's ``feedback`` refuses these documents instead of rating its
    own retrieval of the same number (once serialised it is a plain int, and unchecked).

    A ``"key"`` in a document's metadata names the fact it states (``"ana/home"``): a newer
    document with the same key supersedes the older one, which retrievals then leave out (see
    "Facts that stay current" in the guide); ``filter={"key": "ana/home"}`` finds it.

    ``k`` is a field and also an ``invoke`` argument: ``retriever.invoke(query, k=1)``.
    ``record=False`` makes calls look only (no learning, nothing to rate).

    ``filter`` keeps to the items whose metadata match it, the filters of LangGraph's stores
    (:mod:`solar_core.retrieval.filters`: ``{"topic": "billing"}``, ``{"n": {"$gte": 2}}``, nested
    dicts; or a predicate of the metadata): a field, an ``invoke`` argument
    (``retriever.invoke(query, filter={...})``), or, as for a ``VectorStoreRetriever``,
    ``search_kwargs={"k": 2, "filter": {...}}``. An ``invoke`` argument overrides
    ``search_kwargs``, which overrides the fields. A bad filter is refused when given.

    Example:
        >>> retriever = SolarRetriever(k=1, embedder="hash", seed=0)
        >>> _ = retriever.add_texts(["retry HTTP 429 with exponential backoff",
        ...                          "pin the numpy seed in flaky tests"])
        >>> docs = retriever.invoke("what to do on HTTP 429")
        >>> docs[0].page_content
        'retry HTTP 429 with exponential backoff'
        >>> retriever.feedback(like=True)  # the 429 item helped: the policy learns from it
        >>> retriever.policy, retriever.memory.stats()["feedbacks"]
        ('solar-adaptive', 1)

        Filtered by metadata, as a ``VectorStoreRetriever`` is:

        >>> _ = retriever.add_texts(["retry a declined card payment after a day"],
        ...                         [{"topic": "billing"}])
        >>> docs = retriever.invoke("retry a payment", k=2, filter={"topic": "billing"})
        >>> [d.page_content for d in docs]
        ['retry a declined card payment after a day']
    """

    model_config = ConfigDict(extra="forbid")  # the LangChain base would drop typos silently
    reserved_keys: ClassVar[frozenset[str]] = RESERVED

    k: int = Field(default=4, ge=1)
    """Documents returned per query."""
    record: bool = True
    """Whether queries are retrieval events the memory learns from (and that can be rated)."""
    filter: dict[str, Any] | Callable[[Mapping[str, Any]], bool] | None = None
    """Only items whose metadata match it are returned (:mod:`solar_core.retrieval.filters`)."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """``k`` and ``filter`` as a ``VectorStoreRetriever`` takes them (over the fields)."""

    @field_validator("filter", mode="before")
    @classmethod
    def _check_filter(cls, wanted: object) -> object:
        return None if wanted is None else check_filter(wanted)

    @field_validator("search_kwargs")
    @classmethod
    def _check_search_kwargs(cls, given: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(given) - set(SEARCH_KWARGS))
        if unknown:
            raise ValueError(
                f"search_kwargs takes {' and '.join(SEARCH_KWARGS)}, got {', '.join(unknown)}: "
                "a SolarRetriever ranks by its memory's retrieval= and min_score="
            )
        if "k" in given:
            check_k(given["k"], "search_kwargs['k']")
        if given.get("filter") is not None:
            given["filter"] = check_filter(given["filter"])
        return given

    _last: Hits | None = PrivateAttr(default=None)

    def __init__(
        self,
        *,
        memory: SolarMemory | None = None,
        policy: str | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        embedder: object = None,
        seed: int | None = None,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
        **data: Any,
    ) -> None:
        """``memory=`` a ready SOLAR memory, or the parameters to build one (not fields: a
        retriever rebuilt from its fields keeps its memory); ``data``: the fields (``k``,
        ``filter``, ...). Typed here, so IDEs and type checkers see them."""
        build = build_params(policy, capacity, embedder, seed, retrieval, min_score)
        if memory is not None:
            data["memory"] = memory
        super().__init__(**build, **data)

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        *,
        ids: Sequence[str | None] | None = None,
        **kwargs: Any,
    ) -> SolarRetriever:
        """A retriever over a new memory, offered ``texts`` first (``kwargs``: the fields)."""
        retriever = cls(**kwargs)
        retriever.add_texts(texts, metadatas, ids=ids)
        return retriever

    # -- retrieval ----------------------------------------------------------------------------
    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun | None = None,
        k: int | None = None,
        filter: Filter | None = None,
    ) -> list[Document]:
        given = self.search_kwargs
        if k is None:
            k = given.get("k", self.k)
        if filter is None:
            filter = given.get("filter", self.filter)
        hits = self.memory.retrieve(query, k=k, record=self.record, filter=filter)
        if hits.retrieval_id is not None:
            self._last = hits
        return [_document(hit, hits.handle) for hit in hits]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun | None = None,
        k: int | None = None,
        filter: Filter | None = None,
    ) -> list[Document]:
        # Embedding is CPU-bound: keep it off the event loop.
        return await in_worker(self._get_relevant_documents, query, k=k, filter=filter)

    # -- feedback -----------------------------------------------------------------------------
    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        documents: Sequence[Document] | None = None,
    ) -> None:
        """Rate a retrieval: ``like=True/False`` or ``score`` in [0, 1].

        By default the latest one; pass the ``documents`` it returned to rate that one. Its items
        are credited as the memory's policy does it (the default ``solar-adaptive``: a dislike
        of the latest retrieval takes from its best item the value it earned for that query; the
        paper's ``solar``: Thompson posteriors, ``alpha += 1`` on a like, ``beta += 1`` on a
        dislike, for any recent retrieval).
        """
        returned = None if documents is None else (d.metadata for d in documents)
        rate_retrieval(
            self.memory,
            self._last,
            returned,
            "documents",
            "invoke the retriever",
            like=like,
            score=score,
        )

    # -- adding experiences -------------------------------------------------------------------
    def add_documents(
        self, documents: Sequence[Document], *, ids: Sequence[str | None] | None = None
    ) -> list[Decision]:
        """``add_texts`` for ``Document`` objects; ``Document.id`` (or ``ids``) names the items."""
        if ids is None:
            ids = [d.id for d in documents]
        return self.add_texts(
            [d.page_content for d in documents], [d.metadata for d in documents], ids=ids
        )


def _document(hit: Hit, retrieval_id: int | None) -> Document:
    metadata = {**hit.metadata, "id": hit.id, "score": hit.score}
    if retrieval_id is not None:
        metadata[RETRIEVAL_ID] = retrieval_id
    return Document(page_content=hit.text, metadata=metadata, id=hit.id)
