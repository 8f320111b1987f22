"""``SolarConversationMemory``: a drop-in for LangChain's ``ConversationBufferWindowMemory``."""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_classic.memory.chat_memory import BaseChatMemory
from langchain_classic.memory.utils import get_prompt_input_key
from langchain_core._api import suppress_langchain_deprecation_warning
from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, get_buffer_string
from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from solar_core import Decision, Hit, Hits, SolarMemory
from solar_core.engine.async_calls import in_worker
from solar_core.integrations.params import build_params, extract_params, memory_or_store
from solar_core.integrations.shown import CallableHits
from solar_core.integrations.turns import (
    AI,
    DEFAULT_MAX_RECALL_CHARS,
    HUMAN,
    check_recall_budget,
    cut,
    fitting,
    has_words,
    turn_id,
    turn_metadata,
    turn_sides,
    turn_text,
)
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore, Scope, deferred_retrievals
from solar_core.retrieval.filters import check_filter
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

from ._params import SolarChatParams
from .turns import hits_as_messages, hits_as_text


class _Lock:
    """A lock that copies and pickles as a new, unlocked one: the memory must stay copyable
    (``copy.deepcopy``, ``model_copy(deep=True)``, pickle), which a bare lock would prevent."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def __enter__(self) -> bool:
        return self._lock.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()

    def __reduce__(self) -> tuple[type[_Lock], tuple[()]]:
        return _Lock, ()


def _new_history() -> BaseChatMessageHistory:
    # The window memory's default history. langchain-core 1.6.4 deprecated it, like the whole
    # classic-memory stack this class serves: building the default must not warn the user.
    with suppress_langchain_deprecation_warning():
        return InMemoryChatMessageHistory()


class SolarConversationMemory(SolarChatParams, BaseChatMemory):
    """The last ``k`` turns, like ``ConversationBufferWindowMemory``, plus the ``top_k`` most
    relevant older turns that a SOLAR memory chose to keep.

    Swap it into an existing ``ConversationChain`` or ``LLMChain`` with ``memory=``; nothing else
    changes. Each chain call is one SOLAR step: ``load_memory_variables`` retrieves the
    experiences most similar to the new input (turns already in the window are skipped), and
    ``save_context`` offers the finished turn (``Human: ...\\nAI: ...``) and ends the step. The
    memory's policy (by default ``solar-dialogue``: a turn is kept when later questions are
    likely to ask about it, learning from ratings) decides what is kept and what is evicted;
    the turns recalled are those that match the input best by meaning and by words (hybrid
    retrieval, above a relevance floor: ``retrieval=``, ``min_score=``).
    ``feedback(like=...)`` rates the last answer; ``feedback(like=..., recall=hits)`` an earlier
    one, named by the :attr:`recalled` kept from its turn. :meth:`look` shows what a recall
    would add, without recording a retrieval the memory learns from.

    What the prompt gets: up to ``k + top_k`` exchanges -- the last ``k`` (the window, exactly
    as ``ConversationBufferWindowMemory(k=k)`` has them) plus up to ``top_k`` (default 3) older
    ones recalled for the input, fewer when fewer are relevant enough. So ``k=2`` shows up to 5
    exchanges; ``top_k=0`` keeps the window memory's prompt exactly (nothing recalled, no
    retrieval). Recalled text is capped at ``max_recall_chars`` characters per input (default
    4,000, about 1,000 tokens; ``None``: no limit; the window is never cut): recalled turns are
    added best first while they fit, one that does not fit is left out (a shorter, less
    relevant one may still fit), except the best, which is cut to the budget (its longer side
    ending in "…") rather than dropped. A turn left out is still part of the recall the memory
    recorded, so a rating of that answer credits it too.

    What ``memory_key`` holds: with the default ``recall_key=None`` the recalled turns come first,
    oldest first, followed by the window, in the window memory's own format (a ``Human:/AI:``
    string, or messages with ``return_messages=True``), so the default ``ConversationChain`` prompt
    shows them with no change. With ``recall_key="relevant_history"`` (any name) ``memory_key``
    holds exactly what the window memory would, and the recalled turns come under ``recall_key``
    for a prompt that places them itself.

    Window parameters, as in ``ConversationBufferWindowMemory``: ``chat_memory``, ``k``,
    ``memory_key``, ``human_prefix``, ``ai_prefix``, ``return_messages``, ``input_key``,
    ``output_key``. SOLAR parameters: ``top_k``, ``max_recall_chars``, ``recall_key``, ``filter``
    (recall only the experiences whose metadata match it, :mod:`solar_core.retrieval.filters`:
    for a memory shared with components that store experiences with their own metadata), and
    ``memory=`` or ``policy``, ``capacity``, ``embedder`` (any LangChain ``Embeddings`` too),
    ``seed``, ``retrieval``, ``min_score``, ``extractor``, ``extract``. Every
    ``load_memory_variables`` with an input is a retrieval the memory learns from.

    Facts: ``extractor=`` (a LangChain chat model or LLM, a LlamaIndex LLM, or a callable:
    :mod:`solar_core.engine.extraction`) reads each turn offered (``Human: ...\\nAI: ...``) and
    names the lasting facts it states, each with a key (``"user/home"``); they are stored
    ``extract="beside"`` the turn (default) or ``"instead"`` of it, and a newer fact with the
    same key supersedes the older one, so a recall shows the current value. Recalled facts come
    as notes (a ``SystemMessage`` with ``return_messages=True``). A failed extraction stores the
    turn; :attr:`last_decision` (its ``extraction``) says why. The extractor goes to the memory
    this object builds, or to the store it opens from a path; beside ``memory=`` or a
    ``MemoryStore`` it is refused: give it to ``SolarMemory(..., extractor=...)`` or
    ``MemoryStore(..., extractor=...)`` instead. See "Facts that stay current" in the guide.

    Persistence: ``store=`` (a :class:`~solar_core.persistence.MemoryStore`, or a SQLite path /
    ``postgresql://`` URL opened with ``policy``, ``capacity``, ``embedder``, ``seed``,
    ``extractor``) with ``scope=`` makes the SOLAR memory that scope of the store: a session id
    (``scope="thread-1"``: ``store.scope(session="thread-1")``) or its parts
    (``scope={"user": "alice"}``: the memory ``SolarMemoryMiddleware(store=store,
    scope="user_id")`` keeps for ``"alice"``). ``memory=store.scope(...)`` is the same memory;
    ``memory=`` and ``store=`` together are refused. A store opened from a path is this
    memory's: :meth:`close` closes it; a copy (``model_copy``) shares it but never owns it.

    The chat adapters' common verbs: :attr:`recalled` (call it: ``recalled()``), ``.memory``,
    :meth:`forget` (empties the SOLAR memory, the conversation stays), :meth:`close` (releases a
    store it opened), and LangChain's :meth:`clear` (the conversation and the experiences).

    ``chat_memory`` is the conversation, as in the window memory (an
    ``InMemoryChatMessageHistory`` by default; any ``BaseChatMessageHistory``, e.g. a persistent
    one): ``save_context`` appends each turn to it, ``buffer`` shows its last ``2k`` messages, and
    messages added to it directly (``memory.chat_memory.add_user_message(...)``) or given when
    it is built show in the window the same way. Every finished turn in it -- a human message
    directly followed by an AI message -- reaches SOLAR exactly once, in order: the chain's own
    turns at ``save_context``, the others at the next ``load_memory_variables`` with an input or
    ``save_context``, so a seeded long history is recallable from the first question on. One
    exception: when the SOLAR memory has made steps already as this object is built (a restart,
    say ``store=store, scope="s1"`` with a persistent ``chat_memory``), the turns already
    in ``chat_memory`` count as offered -- the earlier process offered them -- so nothing is
    offered twice, and turns SOLAR rejected or evicted do not come back. Each turn is stored
    under an id made from its text, so the window's turns are never recalled too. What was
    offered is tracked by the last message accounted for, so a history that is only appended
    to, trimmed from the front (a bounded store) or cleared and refilled is followed; one whose
    earlier messages are rewritten in place may have turns offered again or skipped.

    Example:
        >>> memory = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
        >>> memory.save_context({"input": "our API returns HTTP 429"}, {"output": "Back off."})
        >>> memory.save_context({"input": "what is 2 + 2?"}, {"output": "4"})
        >>> print(memory.load_memory_variables({"input": "HTTP 429 again"})["history"])
        Human: our API returns HTTP 429
        AI: Back off.
        Human: what is 2 + 2?
        AI: 4
        >>> memory.feedback(like=True)  # the recalled 429 turn helped

        A rating that comes late names its turn's recall; a look records nothing:

        >>> hits = memory.recalled()  # kept with the answer it served
        >>> _ = memory.load_memory_variables({"input": "what is 2 + 2 again?"})
        >>> memory.feedback(like=False, recall=hits)
        Traceback (most recent call last):
        ...
        ValueError: this retrieval already has feedback
        >>> retrievals = memory.memory.stats()["retrievals"]
        >>> [hit.metadata["human"] for hit in memory.look("HTTP 429 again")]
        ['our API returns HTTP 429']
        >>> memory.memory.stats()["retrievals"] == retrievals
        True

        Seeded with an earlier conversation: its turns are offered at the first input, and the
        older ones are recalled when relevant.

        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> earlier = [HumanMessage("my dog is called Rex"), AIMessage("Lovely name!"),
        ...            HumanMessage("capital of France?"), AIMessage("Paris.")]
        >>> seeded = SolarConversationMemory(k=1, top_k=1, embedder="hash", seed=0)
        >>> seeded.chat_memory.add_messages(earlier)
        >>> print(seeded.load_memory_variables({"input": "what is my dog called?"})["history"])
        Human: my dog is called Rex
        AI: Lovely name!
        Human: capital of France?
        AI: Paris.
        >>> len(seeded.memory)  # both turns reached SOLAR
        2
    """

    model_config = ConfigDict(extra="forbid")  # the LangChain base would drop typos silently

    chat_memory: BaseChatMessageHistory = Field(default_factory=_new_history)
    """The conversation: every turn saved or added, as in ``ConversationBufferWindowMemory``."""
    k: int = Field(default=5, ge=0)
    """Recent turns kept verbatim (the last ``2k`` messages)."""
    memory_key: str = "history"
    human_prefix: str = "Human"
    ai_prefix: str = "AI"
    return_messages: bool = False
    input_key: str | None = None
    output_key: str | None = None
    top_k: int = Field(default=3, ge=0)
    """Relevant older turns recalled per input (0: none, the window memory's prompt exactly)."""
    max_recall_chars: int | None = DEFAULT_MAX_RECALL_CHARS
    """Characters of recalled turns added to the prompt per input (``None``: no limit)."""
    recall_key: str | None = None
    """Where recalled turns go: ``None`` merges them into ``memory_key``."""
    filter: dict[str, Any] | Callable[[Mapping[str, Any]], bool] | None = None
    """Recall only experiences whose metadata match it (:mod:`solar_core.retrieval.filters`)."""

    @field_validator("filter", mode="before")
    @classmethod
    def _check_filter(cls, wanted: object) -> object:
        return None if wanted is None else check_filter(wanted)

    @field_validator("max_recall_chars", mode="before")
    @classmethod
    def _check_budget(cls, budget: object) -> object:
        return check_recall_budget(budget, "turn")

    @model_validator(mode="after")
    def _distinct_keys(self) -> SolarConversationMemory:
        keys = [self.memory_key, self.recall_key, self.input_key]
        named = [key for key in keys if key is not None]
        if len(set(named)) != len(named):
            raise ValueError(
                f"memory_key, recall_key and input_key must differ, got {self.memory_key!r}, "
                f"{self.recall_key!r}, {self.input_key!r}"
            )
        return self

    _recalled: Hits | None = PrivateAttr(default=None)
    _last_decision: Decision | None = PrivateAttr(default=None)
    # Which turns of chat_memory SOLAR was offered: the first ``_offered`` messages of
    # ``_history`` are accounted for (each finished turn offered once, or counted as offered),
    # the last two of them being ``_anchor`` (types and texts), which finds the place again if
    # the history was trimmed from the front or cleared meanwhile.
    _history: BaseChatMessageHistory | None = PrivateAttr(default=None)
    _offered: int = PrivateAttr(default=0)
    _anchor: tuple[tuple[str, str], ...] | None = PrivateAttr(default=None)
    _lock: _Lock = PrivateAttr(default_factory=_Lock)  # one offer of a turn at a time
    _store: MemoryStore | None = PrivateAttr(default=None)  # given as store=
    _owns_store: bool = PrivateAttr(default=False)  # opened from a path: close() closes it

    def __init__(
        self,
        *,
        memory: SolarMemory | None = None,
        store: MemoryStore | str | os.PathLike[str] | None = None,
        scope: Scope | Mapping[str, str] | str | None = None,
        policy: str | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        embedder: object = None,
        seed: int | None = None,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
        extractor: object = None,
        extract: str = "beside",
        **data: Any,
    ) -> None:
        """``memory=`` a ready SOLAR memory, or ``store=`` and ``scope=`` (the memory is that
        scope of the store), or the parameters to build one (``extractor=``/``extract=``
        among them); ``data``: the fields (the window memory's parameters, ``top_k``, ...).
        Typed here, so IDEs and type checkers see the building parameters, which are not
        fields (see the class docstring)."""
        build = build_params(policy, capacity, embedder, seed, retrieval, min_score)
        build.update(extract_params(extractor, extract))
        memory_or_store(memory, store, "scope=")
        if store is None:
            if scope is not None:
                raise ValueError(
                    "scope= names a scope of store=: pass store= too (a MemoryStore, a SQLite "
                    "path or a postgresql:// URL), or memory=store.scope(...)"
                )
            if memory is not None:
                data["memory"] = memory
            super().__init__(**build, **data)
            self._adopt()
            return
        if scope is None:
            raise ValueError(
                "with store=, pass scope= naming this conversation's memory in it: a session "
                "id (scope='thread-1'), or its parts (scope={'user': 'alice'}), as "
                "store.scope(...) names them"
            )
        wanted = Scope.of(scope)  # checked before a store is opened
        opened, owned = type(self).open_store(store, build)
        try:
            super().__init__(**data, memory=opened.get(wanted))
            self._adopt()
        except BaseException:
            if owned:
                opened.close()
            raise
        self._store, self._owns_store = opened, owned

    def __copy__(self) -> SolarConversationMemory:
        """A shallow copy (``model_copy()``) shares the store but never owns it."""
        twin = super().__copy__()
        twin._owns_store = False
        return twin

    # -- the window ---------------------------------------------------------------------------
    @property
    def buffer_as_messages(self) -> list[BaseMessage]:
        """The window as messages, exactly as ``ConversationBufferWindowMemory`` has it."""
        return self.chat_memory.messages[-self.k * 2 :] if self.k > 0 else []

    @property
    def buffer_as_str(self) -> str:
        return self._as_str(self.buffer_as_messages)

    @property
    def buffer(self) -> str | list[BaseMessage]:
        return self.buffer_as_messages if self.return_messages else self.buffer_as_str

    def _as_str(self, messages: list[BaseMessage]) -> str:
        return get_buffer_string(messages, human_prefix=self.human_prefix, ai_prefix=self.ai_prefix)

    # -- BaseMemory ---------------------------------------------------------------------------
    @property
    def memory_variables(self) -> list[str]:
        if self.recall_key is None:
            return [self.memory_key]
        return [self.memory_key, self.recall_key]

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, Any]:
        """The window plus the turns recalled for this input (a SOLAR retrieval event). An input
        first offers SOLAR the finished turns added to ``chat_memory`` since the last offer."""
        is_turn, query = self._query(inputs)
        if is_turn:  # a look at the window (no input) changes nothing
            with self._lock:
                self._follow_history()
                self._offer_new_turns()
        window = self.buffer_as_messages
        recent = _finished_turns(window)[0]
        hits = Hits([], None)
        shown: list[Hit] = []
        if query and self.top_k > 0:
            # over a store, logged with the turn's save_context: a turn is one transaction
            with deferred_retrievals():
                hits, shown = self._retrieve(query, recent, record=True)
        if is_turn:  # a new turn: feedback now rates its recall (or nothing), never an older one
            self._recalled = hits if hits.retrieval_id is not None else None
        recalled = self._chronological(shown)
        if self.return_messages:
            recall: Any = hits_as_messages(recalled)
        else:
            recall = hits_as_text(recalled, self.human_prefix, self.ai_prefix)
        if self.recall_key is not None:
            return {self.memory_key: self.buffer, self.recall_key: recall}
        if self.return_messages:
            return {self.memory_key: recall + window}
        return {self.memory_key: "\n".join(s for s in (recall, self._as_str(window)) if s)}

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Append the finished turn to ``chat_memory`` and offer it to SOLAR (ends the step),
        after any finished turns added there since the last offer.

        An offer that fails (say the embedding service is down) raises; the turn stays in
        ``chat_memory`` and is offered again with the next input or turn. A turn the memory
        refuses for what it is (a NUL character with a database behind it) stays in the window
        and is skipped with a warning, so it never blocks the turns after it; one that is not
        valid Unicode raises here and adds nothing."""
        human, ai = self._input_output(inputs, outputs)  # checked first: a bad turn adds nothing
        text = self._text(human, ai)
        try:
            text.encode("utf-8")  # a lone surrogate: no memory (and no file) can hold the turn
        except UnicodeEncodeError as err:
            raise ValueError(f"the turn is not valid Unicode ({err.reason})") from None
        with self._lock:
            self._follow_history()  # a replaced chat_memory is adopted before this turn joins it
            self.chat_memory.add_messages([HumanMessage(content=human), AIMessage(content=ai)])
            self._offer_new_turns()

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        # Not BaseChatMemory's: that one only appends to chat_memory (nothing offered to SOLAR).
        await in_worker(self.save_context, inputs, outputs)

    def clear(self) -> None:
        """LangChain's "clear the memory's contents": the conversation (``chat_memory``) and
        every stored experience (:meth:`forget`) both go. To keep what the memory learned, clear
        only ``chat_memory``."""
        with self._lock:
            self.chat_memory.clear()
            self.memory.clear()
            self._history = self.chat_memory
            self._account([], 0)
            self._recalled = None
            self._last_decision = None

    async def aclear(self) -> None:
        # Not BaseChatMemory's: that one only clears chat_memory (SOLAR would keep everything).
        await in_worker(self.clear)

    def forget(self) -> None:
        """Empty the SOLAR memory: every stored experience goes (with a store, from its scope's
        rows too); the conversation (``chat_memory``) stays, and its turns are not offered
        again. :meth:`clear` does both."""
        with self._lock:
            self.memory.clear()
            self._recalled = None
            self._last_decision = None

    @property
    def store(self) -> MemoryStore | None:
        """The :class:`~solar_core.persistence.MemoryStore` given as ``store=``, if any."""
        return self._store

    def close(self) -> None:
        """Snapshot and close the store this memory opened from a path (a no-op otherwise: a
        ``MemoryStore`` passed in is its owner's to close; safe to call twice). The SOLAR memory
        stops working."""
        if self._store is not None and self._owns_store:
            self._store.close()

    # -- offering chat_memory's turns ---------------------------------------------------------
    def _adopt(self) -> None:
        """Start following ``chat_memory``. Its turns are all to be offered (a seeded history
        becomes recallable), unless SOLAR has made steps already: then this is a restart over a
        persistent memory, and the process that added these turns offered them."""
        messages = self.chat_memory.messages
        offered = _finished_turns(messages)[1] if self.memory.stats()["steps"] > 0 else 0
        self._history = self.chat_memory
        self._account(messages, offered)

    def _account(self, messages: Sequence[BaseMessage], offered: int) -> None:
        """The first ``offered`` of ``messages`` are accounted for."""
        self._offered = offered
        self._anchor = _tail(messages, offered) if offered > 0 else None

    def _unaccounted(self, messages: Sequence[BaseMessage]) -> int:
        """Where the messages not accounted for yet begin. Usually the history was only
        appended to; if it moved (trimmed from the front, or cleared and refilled), the
        accounted part ends at the latest copy of its last message that is still there, else
        nothing of it is left and every message is new."""
        offered = self._offered
        if offered == 0 or self._anchor is None:
            return 0
        # The last two messages (a turn), not one: after a trim from the front, a repeated reply
        # ("OK.") alone would often match at the old place and skip the turns before it.
        if offered <= len(messages) and _tail(messages, offered) == self._anchor:
            return offered
        for end in range(min(offered, len(messages)), 0, -1):
            if _tail(messages, end) == self._anchor:
                return end
        return 0

    def _follow_history(self) -> None:
        """Adopt a ``chat_memory`` assigned since (call under the lock)."""
        if self.chat_memory is not self._history:
            self._adopt()

    def _offer_new_turns(self) -> None:
        """Offer SOLAR, in order, each finished turn of ``chat_memory`` not offered yet (each
        ends a step); a failed offer leaves it and the later ones for the next call (under the
        lock)."""
        messages = self.chat_memory.messages
        turns, end = _finished_turns(messages, self._unaccounted(messages))
        for after, human, ai in turns:
            if not has_words(human, ai):  # kept in the window, never offered
                self._account(messages, after)
                continue
            text = self._text(human, ai)
            try:
                self._last_decision = self.memory.add(
                    text, metadata=turn_metadata(human, ai), item_id=turn_id(text)
                )
            except ValueError as err:
                # The memory refuses this turn for what it is (a NUL a database cannot hold, a
                # text that is not valid Unicode): it would refuse it at every retry and block
                # every later turn. It stays in the window; the memory never gets it.
                warnings.warn(f"a turn the memory cannot store was skipped: {err}", stacklevel=3)
            self._account(messages, after)
        self._account(messages, end)

    # -- SOLAR --------------------------------------------------------------------------------
    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        recall: Hits | int | None = None,
    ) -> None:
        """Rate an answer: ``like=True/False`` or ``score`` in [0, 1].

        The turns recalled for it are credited, so helpful experiences outlive unhelpful ones
        (with the default ``solar-dialogue``, by how the rating differs from the memory's usual
        one: a user who dislikes every answer moves nothing; with ``solar-adaptive``, a dislike
        takes from the best recalled turn the value it earned for this input; with the paper's
        ``solar``, Thompson eviction adds 1 to alpha on a like, to beta on a dislike).

        ``recall``: which answer's recall to rate -- the ``recalled()`` of that turn (a
        ``Hits``), or its ``retrieval_id``/``handle`` -- for a rating that arrives after the
        next question; by default the latest. Any of the memory's last 1,000 recalls, once each;
        one that is unknown, expired, rated already or another memory's is refused by the memory
        with a ``ValueError``, and nothing changes.
        """
        if recall is None:
            if self._recalled is None:
                raise ValueError(
                    "nothing to rate: the last turn recalled nothing (no input to search for, "
                    "top_k=0, or no turn since clear())"
                )
            recall = self._recalled
        self.memory.feedback(like=like, score=score, retrieval=recall)

    def look(self, query: str) -> Hits:
        """What the next recall for ``query`` would add to the prompt, best first, recording
        nothing: no retrieval the policy learns from, nothing to rate (its ``retrieval_id`` is
        ``None``). The same turns, ``k``, filter, relevance floor, window exclusion and
        ``max_recall_chars`` as :meth:`load_memory_variables` (turns are shown whole here; the
        prompt may cut the first one to the budget). Turns added to ``chat_memory`` and not
        offered yet are not offered by a look."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        if not query.strip() or self.top_k == 0:
            return Hits([], None)
        recent = _finished_turns(self.buffer_as_messages)[0]
        return self._retrieve(query, recent, record=False)[0]

    @property
    def recalled(self) -> CallableHits:
        """What the last ``load_memory_variables`` recalled, best first, with scores and ids:
        keep it to rate this turn's recall later, ``feedback(like=..., recall=hits)``. Call it,
        ``memory.recalled()``, as every chat adapter's ``recalled(...)`` (the middleware's takes
        the scope); read without the call it gives the same hits."""
        hits = self._recalled if self._recalled is not None else Hits([], None)
        return CallableHits(hits, hits.retrieval_id, hits.origin)

    @property
    def last_decision(self) -> Decision | None:
        """Why the last turn offered was (or was not) stored, and what it evicted."""
        return self._last_decision

    # -- helpers ------------------------------------------------------------------------------
    def _text(self, human: str, ai: str) -> str:
        return turn_text(human, ai, self.human_prefix, self.ai_prefix)

    def _query(self, inputs: dict[str, Any]) -> tuple[bool, str | None]:
        """``(is a turn, query)``: ``load_memory_variables({})`` only looks at the window."""
        if self.input_key is not None:
            if self.input_key not in inputs:
                return False, None
            value = inputs[self.input_key]
        else:
            if not set(inputs).difference([*self.memory_variables, "stop"]):
                return False, None
            value = inputs[get_prompt_input_key(inputs, self.memory_variables)]
        return True, value if isinstance(value, str) and value.strip() else None

    def _input_output(self, inputs: dict[str, Any], outputs: dict[str, Any]) -> tuple[str, str]:
        # The same key rules as langchain_classic's BaseChatMemory.
        if self.input_key is None:
            input_key = get_prompt_input_key(inputs, self.memory_variables)
        else:
            input_key = self.input_key
        if self.output_key is not None:
            output_key = self.output_key
        elif len(outputs) == 1:
            output_key = next(iter(outputs))
        elif "output" in outputs:
            output_key = "output"
            warnings.warn(
                f"{type(self).__name__} got multiple output keys: {list(outputs)}; using "
                "'output'. Set output_key if this is not the one.",
                stacklevel=3,
            )
        else:
            raise ValueError(
                f"got multiple output keys {list(outputs)}, cannot tell which to store; "
                "set output_key"
            )
        for where, values, key in (("inputs", inputs, input_key), ("outputs", outputs, output_key)):
            if key not in values:
                raise ValueError(f"{where} have no key {key!r} (got {list(values)})")
            if not isinstance(values[key], str):
                raise TypeError(f"{where}[{key!r}] must be a str, got {type(values[key]).__name__}")
        return inputs[input_key], outputs[output_key]

    def _retrieve(
        self, query: str, recent: list[tuple[int, str, str]], *, record: bool
    ) -> tuple[Hits, list[Hit]]:
        """The recall for ``query`` (``record=False``: a look), narrowed to the turns the prompt
        shows (uncut), with the retrieval's id; and those turns as the prompt shows them
        (:meth:`_fit`: the best cut to the budget)."""
        exclude = [turn_id(self._text(human, ai)) for _, human, ai in recent]
        hits = self.memory.retrieve(
            query, k=self.top_k, exclude=exclude, filter=self.filter, record=record
        )
        shown = self._fit(hits, recent)
        ids = {hit.id for hit in shown}
        narrowed = Hits([hit for hit in hits if hit.id in ids], hits.retrieval_id, hits.origin)
        return narrowed, shown

    def _fit(self, hits: Sequence[Hit], recent: list[tuple[int, str, str]]) -> list[Hit]:
        """The recalled turns the prompt shows, best first: each once, none the window holds (a
        memory shared with adapters that store turns under other ids may hold a turn twice),
        within ``max_recall_chars`` (:func:`~solar_core.integrations.turns.fitting`: the best
        cut to it if it alone is too long)."""
        seen = {self._text(human, ai) for _, human, ai in recent}
        unique = []
        for hit in hits:
            if hit.text not in seen:
                seen.add(hit.text)
                unique.append(hit)
        texts = [self._shown_text(hit) for hit in unique]
        budget = self.max_recall_chars
        shown = [unique[i] for i in fitting([len(text) for text in texts], budget)]
        if shown and budget is not None and len(texts[0]) > budget:
            shown[0] = self._cut(shown[0], budget)
        return shown

    def _shown_text(self, hit: Hit) -> str:
        sides = turn_sides(hit)
        return hit.text if sides is None else self._text(*sides)

    def _cut(self, hit: Hit, size: int) -> Hit:
        """``hit`` shown in ``size`` characters: a turn's two sides cut to share them."""
        sides = turn_sides(hit)
        room = size - len(self._text("", ""))
        if sides is None or room < 2:  # as a note
            metadata = {key: v for key, v in hit.metadata.items() if key not in (HUMAN, AI)}
            return dataclasses.replace(
                hit, text=cut(self._shown_text(hit), size), metadata=metadata
            )
        human, ai = sides
        human = cut(human, max(room // 2, room - len(ai)))
        ai = cut(ai, room - len(human))
        metadata = {**hit.metadata, HUMAN: human, AI: ai}
        return dataclasses.replace(hit, text=self._text(human, ai), metadata=metadata)

    def _chronological(self, hits: list[Hit]) -> list[Hit]:
        """Recalled turns oldest first, so merged with the window they read as one conversation."""
        steps: dict[str, int] = {}
        memory = self.memory
        # The hits' steps are read from the memory as the retrieval left it (it caught up with
        # the database), not through get(): with a database behind the memory, each get()
        # would ask it again whether another process wrote, a statement per hit.
        with memory.lock:
            core = memory.core
            for hit in hits:
                try:
                    steps[hit.id] = core.item(hit.id).created_step
                except KeyError:  # removed by another user of a shared memory since the retrieval
                    steps[hit.id] = 0
        return sorted(hits, key=lambda hit: steps[hit.id])


def _tail(messages: Sequence[BaseMessage], end: int) -> tuple[tuple[str, str], ...]:
    """The marks of the (up to) two messages before ``end``: where the accounted part ends."""
    return tuple(_mark(m) for m in messages[max(0, end - 2) : end])


def _mark(message: BaseMessage) -> tuple[str, str]:
    """What identifies a message again, also once a persistent history reloaded it (its ids and
    metadata may not survive the round trip)."""
    return message.type, str(message.text)


def _finished_turns(
    messages: Sequence[BaseMessage], start: int = 0
) -> tuple[list[tuple[int, str, str]], int]:
    """The finished turns of ``messages[start:]`` -- a human message directly followed by an AI
    message -- as ``(index just past it, human text, AI text)``, and where the next look starts:
    the end, or a last human message still waiting for its answer. Other messages (a human
    message that got no answer, system notes) are no turn.

    >>> turns, end = _finished_turns([HumanMessage("hi"), AIMessage("hello"), HumanMessage("?")])
    >>> turns, end
    ([(2, 'hi', 'hello')], 2)
    """
    turns = []
    i = start
    while i < len(messages):
        if messages[i].type == "human":
            if i + 1 == len(messages):
                break  # its answer is still to come
            if messages[i + 1].type == "ai":
                turns.append((i + 2, str(messages[i].text), str(messages[i + 1].text)))
                i += 2
                continue
        i += 1
    return turns, i
