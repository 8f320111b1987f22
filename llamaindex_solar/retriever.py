"""``SolarRetriever``: a LlamaIndex retriever over a self-curating SOLAR memory."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Annotated, Any, ClassVar

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from pydantic import BeforeValidator

from solar_core import Decision, Hit, Hits, SolarMemory
from solar_core.engine.async_calls import in_worker
from solar_core.integrations.batch import OffersTexts
from solar_core.integrations.params import build_params, check_not_both
from solar_core.integrations.shown import RETRIEVAL_ID, rate_retrieval
from solar_core.persistence import DEFAULT_CAPACITY
from solar_core.retrieval.filters import (
    MAX_DEPTH,
    MAX_VALUES,
    Filter,
    Matcher,
    check_filter,
    equality,
    number,
    ordering,
    plain,
    shown,
)
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

from ._params import SolarParams


class SolarRetriever(OffersTexts, BaseRetriever):
    """Retrieves the ``similarity_top_k`` stored experiences most similar to the query.

    Every call is a SOLAR retrieval event (the returned items gain evidence of usefulness, the
    others age), and ``feedback(like=...)`` rates it, so the memory learns which experiences to
    keep. ``add_texts`` / ``add_nodes`` offer new experiences: the policy decides whether each is
    stored and what it evicts, and says why in the returned :class:`~solar_core.Decision`.

    Each ``NodeWithScore`` has the cosine similarity as ``score``, the item id as ``node.id_``,
    and the item's metadata plus ``retrieval_id`` (kept out of the LLM's and the embedder's view)
    in ``node.metadata``; pass the nodes back to ``feedback`` to rate that very retrieval when
    several callers share the retriever. The ``retrieval_id`` is a
    :class:`~solar_core.basics.types.RetrievalId`: an ``int`` that remembers its memory, so another
    retriever's ``feedback`` refuses these nodes instead of rating its own retrieval of the same
    number (once serialised it is a plain int, and unchecked). ``record=False`` makes calls
    look only. A ``"key"`` in a node's metadata names the fact it states (``"ana/home"``): a
    newer node with the same key supersedes the older one, which retrievals then leave out (see
    "Facts that stay current" in the guide).

    Args:
        memory: a ready :class:`~solar_core.SolarMemory`, or ``policy``, ``capacity``,
            ``embedder`` (any LlamaIndex ``BaseEmbedding`` too), ``seed``, ``retrieval`` and
            ``min_score`` (:mod:`solar_core.retrieval.ranking`) to build one.
        similarity_top_k: nodes returned per query.
        record: whether queries are retrieval events the memory learns from.
        filters: only items whose metadata match are returned: LlamaIndex ``MetadataFilters``
            (operators ``==``, ``!=``, ``>``, ``>=``, ``<``, ``<=``, ``in``, ``nin``,
            ``contains``, ``any``, ``all``, ``text_match``, ``text_match_insensitive``,
            ``is_empty``; conditions ``and``, ``or``, ``not``; nested filters too), as a vector
            store retriever's ``filters=``; or a filter of :mod:`solar_core.retrieval.filters`. Also
            an attribute (``retriever.filters = ...``), checked when set.

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

        Filtered by metadata, as a vector index's retriever is:

        >>> from llama_index.core.vector_stores import MetadataFilter, MetadataFilters
        >>> _ = retriever.add_texts(["retry a declined card payment after a day"],
        ...                         [{"topic": "billing"}])
        >>> retriever.filters = MetadataFilters(filters=[MetadataFilter(key="topic",
        ...                                                             value="billing")])
        >>> [r.node.get_content() for r in retriever.retrieve("retry a payment")]
        ['retry a declined card payment after a day']
    """

    reserved_keys: ClassVar[frozenset[str]] = frozenset({RETRIEVAL_ID})  # (on returned nodes)

    def __init__(
        self,
        memory: SolarMemory | None = None,
        *,
        similarity_top_k: int = 4,
        record: bool = True,
        filters: MetadataFilters | Filter | None = None,
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
        self.filters = filters  # checked (a property)
        super().__init__(callback_manager=callback_manager, verbose=verbose)
        # `is None`, not `or`: an empty memory is falsy (it has a length) and must be kept
        self.memory = memory if memory is not None else SolarParams.build_memory(**build)
        self.similarity_top_k = similarity_top_k
        self.record = record
        self._last: Hits | None = None

    @property
    def filters(self) -> MetadataFilters | Filter | None:
        """What items may be returned (``None``: any)."""
        return self._filters

    @filters.setter
    def filters(self, filters: MetadataFilters | Filter | None) -> None:
        self._filter = solar_filter(filters)  # first: a bad filter leaves the old one
        self._filters = filters

    # -- retrieval ----------------------------------------------------------------------------
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        query: str | None = query_bundle.query_str
        embedding = query_bundle.embedding
        if embedding is not None and not query:
            query = None  # a precomputed query vector alone
        hits = self.memory.retrieve(
            query,
            embedding=embedding,
            k=self.similarity_top_k,
            record=self.record,
            filter=self._filter,
        )
        if hits.retrieval_id is not None:
            self._last = hits
        return [_node(hit, hits.handle) for hit in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        # Embedding is CPU-bound: keep it off the event loop.
        return await in_worker(self._retrieve, query_bundle)

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
        returned = None if nodes is None else (_base(n).metadata for n in nodes)
        rate_retrieval(
            self.memory, self._last, returned, "nodes", "retrieve", like=like, score=score
        )

    # -- adding experiences -------------------------------------------------------------------
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


# -- LlamaIndex's metadata filters --------------------------------------------------------------
#: operators whose value is a list of values
_LISTED = {FilterOperator.IN, FilterOperator.NIN, FilterOperator.ANY, FilterOperator.ALL}
_TEXT = {FilterOperator.TEXT_MATCH, FilterOperator.TEXT_MATCH_INSENSITIVE}
_ORDER = {
    FilterOperator.GT: "$gt",
    FilterOperator.GTE: "$gte",
    FilterOperator.LT: "$lt",
    FilterOperator.LTE: "$lte",
}


def _checked_filters(filters: Any) -> Any:
    solar_filter(filters)  # a bad filter is refused when it is set, not at the first recall
    return filters


#: the ``filters`` setting of the chat memory and the memory block: LlamaIndex
#: ``MetadataFilters`` or a filter of :mod:`solar_core.retrieval.filters`, checked when set
FiltersSetting = Annotated[
    MetadataFilters | dict[str, Any] | Callable[[Mapping[str, Any]], bool] | None,
    BeforeValidator(_checked_filters),
]


def solar_filter(filters: MetadataFilters | Filter | None) -> Filter | None:
    """What ``SolarMemory.retrieve(filter=...)`` takes for a retriever's ``filters``: a
    predicate of an item's metadata for LlamaIndex ``MetadataFilters`` (checked first: a bad
    filter fails here, never midway through a retrieval), a :mod:`solar_core.retrieval.filters`
    filter as it is.

    The operators mean what they mean for LlamaIndex's in-memory vector store: a missing (or
    ``None``) value matches only ``!=`` and ``nin`` (and ``is_empty``). Beyond it, filters may
    nest (up to :data:`~solar_core.retrieval.filters.MAX_DEPTH` levels), and values compare kind by
    kind as :mod:`solar_core.retrieval.filters` says: a value of another kind (``"5" > 1``, ``True
    ==
    1``) does not match rather than fail. ``in``, ``nin``, ``any`` and ``all`` look values up in a
    set built once per filter, so a long list costs no more per item than a short one.

    >>> from llama_index.core.vector_stores import FilterCondition, MetadataFilter as F
    >>> wanted = solar_filter(MetadataFilters(
    ...     filters=[F(key="topic", value=["billing", "refunds"], operator="in"),
    ...              F(key="year", value=2024, operator=">=")],
    ...     condition=FilterCondition.AND))
    >>> wanted({"topic": "billing", "year": 2025}), wanted({"topic": "billing", "year": "?"})
    (True, False)
    >>> solar_filter(MetadataFilters(filters=[F(key="topic", value="x", operator="in")]))
    Traceback (most recent call last):
    ...
    ValueError: filter 'topic' in: pass a list of values, e.g. value=['a', 'b']
    """
    if filters is None:
        return None
    if not isinstance(filters, MetadataFilters):
        return check_filter(filters)
    return Matcher(_Compiler().group(filters, 1), filters)


#: a test of an item's metadata, or of one stored value
_Test = Callable[[Any], bool]


#: the kind of each plain value, as :func:`_key` spells it
_KINDS = {str: "s", bool: "b", int: "n", float: "n"}


def _key(value: Any) -> tuple[str, Any] | None:
    """A stored scalar as a hashable key that keeps to its kind (see
    :mod:`solar_core.retrieval.filters`: ``True`` is not ``1``, ``"1"`` not ``1``); ``None`` for a
    value
    that equals no listed value (NaN, a list, an object)."""
    if isinstance(value, str):
        return ("s", str.__str__(value))
    if value is True or value is False:
        return ("b", value)
    n = number(value)
    if n is None or n != n:  # NaN equals nothing
        return None
    return ("n", n)


class _Compiler:
    """``MetadataFilters`` checked and compiled once into tests: a bad filter fails here,
    never midway through a retrieval, and matching an item never raises. Listed values are
    kept as sets: ``in``/``nin`` cost one look-up per item, whatever the list's length."""

    __slots__ = ("open", "count")

    def __init__(self) -> None:
        self.open: set[int] = set()
        self.count = 0

    def group(self, filters: MetadataFilters, depth: int) -> _Test:
        if id(filters) in self.open:
            raise ValueError("the filters hold themselves: MetadataFilters are a tree")
        if depth > MAX_DEPTH:
            raise ValueError(
                f"the filters nest deeper than {MAX_DEPTH} levels: flatten the conditions"
            )
        self.count += 1
        if self.count > MAX_VALUES:
            raise ValueError(f"the filters hold more than {MAX_VALUES} filters: pass fewer")
        condition = filters.condition or FilterCondition.AND
        if condition not in (FilterCondition.AND, FilterCondition.OR, FilterCondition.NOT):
            raise ValueError(f"unsupported filter condition {condition!r}: use and, or, not")
        self.open.add(id(filters))
        tests: list[_Test] = []
        for one in filters.filters:
            if isinstance(one, MetadataFilters):
                tests.append(self.group(one, depth + 1))
            elif isinstance(one, MetadataFilter):
                self.count += 1
                tests.append(_one(one))
            else:
                raise TypeError(
                    "MetadataFilters hold MetadataFilter and MetadataFilters, got "
                    f"{type(one).__name__}"
                )
        self.open.discard(id(filters))
        if condition == FilterCondition.OR:
            return lambda metadata: any(test(metadata) for test in tests)
        if condition == FilterCondition.NOT:
            return lambda metadata: not any(test(metadata) for test in tests)
        return lambda metadata: all(test(metadata) for test in tests)


def _one(one: MetadataFilter) -> _Test:
    """One ``MetadataFilter`` as a test of an item's metadata."""
    op, wanted, key = FilterOperator(one.operator), one.value, one.key
    if not isinstance(key, str):
        raise TypeError(f"a filter's key is a metadata key (str), got {type(key).__name__}")
    if op in _LISTED and not isinstance(wanted, list):
        raise ValueError(f"filter {key!r} {op.value}: pass a list of values, e.g. value=['a', 'b']")
    if op in _TEXT and not isinstance(wanted, str):
        raise ValueError(f"filter {key!r} {op.value}: pass the text to find, a str")
    if op in _LISTED:  # read once into sets (a value of no kind there is held by nothing)
        value_test = _value_test(op, wanted, key)
    else:
        value_test = _value_test(op, plain(wanted, key), key)
    if op == FilterOperator.IS_EMPTY:
        return lambda metadata: value_test(metadata.get(key))
    missing = op in (FilterOperator.NE, FilterOperator.NIN)  # None matches only these

    def test(metadata: Mapping[str, Any]) -> bool:
        value = metadata.get(key)
        return missing if value is None else value_test(value)

    return test


class _Listed:
    """The values of an ``in``/``nin``/``any``/``all`` filter as a set per kind, built once
    (a long list costs one look-up per stored value, whatever its length)."""

    __slots__ = ("texts", "numbers", "bools", "every", "only_texts", "_lengths")

    def __init__(self, wanted: list[Any]) -> None:
        #: whether each listed value can be held (a NaN or a list is held by no value)
        self.every = True
        #: whether every listed value is a text
        kinds = set(map(type, wanted))  # (at C speed: a list may hold 100,000s of values)
        self.only_texts = kinds <= {str}
        if self.only_texts:  # the usual list: one kind, built at C speed
            self.texts: set[str] = set(wanted)
            self.numbers: set[Any] = set()
            self.bools: set[bool] = set()
        else:
            self.texts = {w for w in wanted if type(w) is str}
            self.numbers = {w for w in wanted if type(w) is int or (type(w) is float and w == w)}
            self.bools = {w for w in wanted if type(w) is bool}
            self.every = all(type(w) in _KINDS and w == w for w in wanted)
        self._lengths: list[int] | None = None

    @property
    def lengths(self) -> list[int]:
        """The listed texts' lengths (for looking a stored text's parts up)."""
        if self._lengths is None:
            self._lengths = sorted(set(map(len, self.texts)))
        return self._lengths

    def __call__(self, value: Any) -> bool:
        """Whether the stored ``value`` is one of them."""
        if isinstance(value, str):
            return str.__str__(value) in self.texts
        if value is True or value is False:
            return value in self.bools
        n = number(value)
        return n is not None and n in self.numbers

    def keys(self) -> list[tuple[str, Any]]:
        return (
            [("s", t) for t in self.texts]
            + [("n", n) for n in self.numbers]
            + [("b", b) for b in self.bools]
        )


#: what looking one part of a stored text up costs, in characters of a scan of it (~80 ns
#: against ~0.5 ns): above it, a listed text's scan of the stored text is the cheaper way
_PART_COST = 160


def _any_or_all(some: bool, listed: _Listed, every_text: bool) -> _Test:
    """``any``/``all``: whether a stored list holds some/every listed value, or a stored text
    some/every listed text as a part of it. Each item costs what it holds (its list, or its
    text's parts of the listed texts' lengths), not the list's length times it."""
    texts = listed.texts
    size = len(texts) + len(listed.numbers) + len(listed.bools)

    def parts(text: str) -> int:
        return sum(len(text) - n + 1 for n in listed.lengths if n <= len(text))

    def held_texts(text: str) -> Iterator[str]:
        """The listed texts ``text`` holds, one per part of it that is one (repeats kept)."""
        for n in listed.lengths:
            if n <= len(text):
                for i in range(len(text) - n + 1):
                    if text[i : i + n] in texts:
                        yield text[i : i + n]

    def by_parts(text: str, count: int) -> bool:
        # Scanning the text once per listed text costs their number times its length (in C,
        # ~0.5 ns a character); looking each of its parts up costs ~80 ns a part. The cheaper
        # of the two, so neither a long list nor a long stored text costs their product.
        return count * _PART_COST < len(texts) * len(text)

    def found(value: Any) -> bool:
        if isinstance(value, str):  # a text holds a listed one as a part of it
            text = str.__str__(value)
            count = parts(text)
            if some:
                if by_parts(text, count):  # look its parts up rather than scan the list
                    return any(True for _ in held_texts(text))
                return any(t in text for t in texts)
            if not every_text or count < len(texts):  # more texts than it has parts
                return False
            if by_parts(text, count):
                return len(set(held_texts(text))) == len(texts)
            return all(t in text for t in texts)
        if not isinstance(value, list | tuple):
            return False
        if some:
            return any(listed(v) for v in value)
        if not listed.every or size > len(value):
            return False
        held = {_key(v) for v in value}
        return all(k in held for k in listed.keys())

    return found


def _value_test(op: FilterOperator, wanted: Any, key: str) -> _Test:
    """The test of one stored value (not ``None``) for ``op`` against the plain ``wanted``."""
    if op == FilterOperator.IS_EMPTY:
        return lambda value: (
            value is None
            or (isinstance(value, str) and not value)
            or (isinstance(value, list | tuple) and not value)
        )
    if op in (FilterOperator.EQ, FilterOperator.NE):
        same = equality(wanted)
        return same if op == FilterOperator.EQ else lambda value: not same(value)
    if op in _ORDER:
        if isinstance(wanted, str) or number(wanted) is not None:
            return ordering(_ORDER[op], wanted)
        raise ValueError(
            f"filter {key!r} {op.value}: compares numbers or strings, got {shown(wanted)}: "
            "pass a number or a str"
        )
    if op in _LISTED:
        member = _Listed(wanted)
        if op in (FilterOperator.IN, FilterOperator.NIN):
            return member if op == FilterOperator.IN else lambda value: not member(value)
        return _any_or_all(op == FilterOperator.ANY, member, member.only_texts)
    if op == FilterOperator.CONTAINS:
        same = equality(wanted)
        text = wanted if isinstance(wanted, str) else None

        def contains(value: Any) -> bool:
            if isinstance(value, str):
                return text is not None and text in str.__str__(value)
            return isinstance(value, list | tuple) and any(same(v) for v in value)

        return contains
    if op == FilterOperator.TEXT_MATCH:
        return lambda value: isinstance(value, str) and wanted in str.__str__(value)
    if op == FilterOperator.TEXT_MATCH_INSENSITIVE:
        folded = wanted.lower()
        return lambda value: isinstance(value, str) and folded in str.__str__(value).lower()
    raise ValueError(f"unsupported filter operator {op.value!r} at {key!r}")
