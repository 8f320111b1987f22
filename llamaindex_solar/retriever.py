"""``SolarRetriever``: a LlamaIndex retriever over a self-curating SOLAR memory."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle, TextNode

from solar_core import Decision, Hit, Hits, SolarMemory
from solar_core.fusion import DEFAULT_RETRIEVAL
from solar_core.integrations.batch import offer_batch
from solar_core.integrations.params import build_params, check_not_both
from solar_core.integrations.shown import RETRIEVAL_ID, retrieval_of
from solar_core.persistence import DEFAULT_CAPACITY

from ._params import SolarParams


class SolarRetriever(BaseRetriever):
    """Retrieves the ``similarity_top_k`` stored experiences most similar to the query.

    Every call is a SOLAR retrieval event (the returned items gain evidence of usefulness, the
    others age), and ``feedback(like=...)`` rates it, so the memory learns which experiences to
    keep. ``add_texts`` / ``add_nodes`` offer new experiences: the policy decides whether each is
    stored and what it evicts, and says why in the returned :class:`~solar_core.Decision`.

    Each ``NodeWithScore`` has the cosine similarity as ``score``, the item id as ``node.id_``,
    and the item's metadata plus ``retrieval_id`` (kept out of the LLM's and the embedder's view)
    in ``node.metadata``; pass the nodes back to ``feedback`` to rate that very retrieval when
    several callers share the retriever. The ``retrieval_id`` is a
    :class:`~solar_core.types.RetrievalId`: an ``int`` that remembers its memory, so another
    retriever's ``feedback`` refuses these nodes instead of rating its own retrieval of the same
    number (once serialised it is a plain int, and unchecked). ``record=False`` makes calls
    look only.

    Args:
        memory: a ready :class:`~solar_core.SolarMemory`, or ``policy``, ``capacity``,
            ``embedder`` (any LlamaIndex ``BaseEmbedding`` too), ``seed``, ``retrieval`` and
            ``min_score`` (:mod:`solar_core.fusion`) to build one.
        similarity_top_k: nodes returned per query.
        record: whether queries are retrieval events the memory learns from.

    Example:
        >>> retriever = SolarRetriever(similarity_top_k=1, embedder="hash", seed=0)
        >>> _ = retriever.add_texts(["retry HTTP 429 with exponential backoff",
        ...                          "pin the numpy seed in flaky tests"])
        >>> (result,) = retriever.retrieve("what to do on HTTP 429")
        >>> result.node.get_content()
        'retry HTTP 429 with exponential backoff'
        >>> retriever.feedback(like=True)  # the 429 item helped: the policy learns from it
        >>> retriever.memory.policy, retriever.memory.stats()["feedbacks"]
        ('solar-adaptive', 1)
    """

    def __init__(
        self,
        memory: SolarMemory | None = None,
        *,
        similarity_top_k: int = 4,
        record: bool = True,
        policy: str | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        embedder: object = None,
        seed: int | None = None,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        build = build_params(policy, capacity, embedder, seed, retrieval, min_score)
        check_not_both(memory, build)
        if memory is not None and not isinstance(memory, SolarMemory):
            raise TypeError(f"memory must be a SolarMemory, got {type(memory).__name__}")
        if isinstance(similarity_top_k, bool) or not isinstance(similarity_top_k, int):
            raise TypeError(f"similarity_top_k must be an int, got {similarity_top_k!r}")
        if similarity_top_k < 1:
            raise ValueError(f"similarity_top_k must be >= 1, got {similarity_top_k}")
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        # `is None`, not `or`: an empty memory is falsy (it has a length) and must be kept
        self.memory = memory if memory is not None else SolarParams.build_memory(**build)
        self.similarity_top_k = similarity_top_k
        self.record = record
        self._last: Hits | None = None

    # -- retrieval ----------------------------------------------------------------------------
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query: str | None = query_bundle.query_str
        embedding = query_bundle.embedding
        if embedding is not None and not query:
            query = None  # a precomputed query vector alone
        hits = self.memory.retrieve(
            query, embedding=embedding, k=self.similarity_top_k, record=self.record
        )
        if hits.retrieval_id is not None:
            self._last = hits
        return [_node(hit, hits.handle) for hit in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # Embedding is CPU-bound: keep it off the event loop.
        return await asyncio.to_thread(self._retrieve, query_bundle)

    # -- feedback -----------------------------------------------------------------------------
    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        nodes: Sequence[NodeWithScore | BaseNode] | None = None,
    ) -> None:
        """Rate a retrieval: ``like=True/False`` or ``score`` in [0, 1].

        By default the latest one; pass the ``nodes`` it returned to rate that one. Its items are
        credited as the memory's policy does it (the default ``solar-adaptive``: a dislike of the
        latest retrieval takes from its best item the value it earned for that query; the
        paper's ``solar``: Thompson posteriors, ``alpha += 1`` on a like, ``beta += 1`` on a
        dislike, for any recent retrieval).
        """
        retrieval: Hits | int | None = self._last
        if nodes is not None:
            retrieval = retrieval_of((_base(n).metadata for n in nodes), "nodes")
        elif retrieval is None:
            raise ValueError("nothing to rate yet: retrieve first")
        self.memory.feedback(like=like, score=score, retrieval=retrieval)

    # -- adding experiences -------------------------------------------------------------------
    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: Sequence[Mapping[str, Any] | None] | None = None,
        *,
        ids: Sequence[str | None] | None = None,
    ) -> list[Decision]:
        """Offer each text as one step's experience; returns one ``Decision`` per text.

        With a gating policy (the default ``solar-adaptive`` once the memory is full, ``solar``,
        ``solar-a``) not every text is stored: ``d.admitted`` and
        ``d.item_id`` say which were. Everything is checked before anything is stored, and the
        texts are embedded in one batch; re-offering a stored id with the same text stores
        nothing. Metadata may not use the key ``retrieval_id``.
        """
        return offer_batch(self.memory, texts, metadatas, ids, reserved=frozenset({RETRIEVAL_ID}))

    def add_nodes(self, nodes: Sequence[BaseNode]) -> list[Decision]:
        """``add_texts`` for nodes: their content, metadata and ``id_``."""
        return self.add_texts(
            [n.get_content(metadata_mode=MetadataMode.NONE) for n in nodes],
            [n.metadata for n in nodes],
            ids=[n.id_ for n in nodes],
        )


def _node(hit: Hit, retrieval_id: int | None) -> NodeWithScore:
    metadata = dict(hit.metadata)
    hidden: list[str] = []
    if retrieval_id is not None:
        metadata[RETRIEVAL_ID] = retrieval_id
        hidden = [RETRIEVAL_ID]
    node = TextNode(
        id_=hit.id,
        text=hit.text,
        metadata=metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )
    return NodeWithScore(node=node, score=hit.score)


def _base(node: NodeWithScore | BaseNode) -> BaseNode:
    return node.node if isinstance(node, NodeWithScore) else node
