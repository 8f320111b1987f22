"""``SolarChatMemory``: a LlamaIndex chat memory buffer with a self-curating long-term memory."""

from __future__ import annotations

import os
import pickle
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms.llm import LLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.memory.chat_memory_buffer import (
    DEFAULT_TOKEN_LIMIT,
    DEFAULT_TOKEN_LIMIT_RATIO,
)
from llama_index.core.memory.types import DEFAULT_CHAT_STORE_KEY
from llama_index.core.storage.chat_store import BaseChatStore, SimpleChatStore
from llama_index.core.storage.chat_store.loading import load_chat_store
from llama_index.core.utils import get_tokenizer
from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from solar_core import Decision, Hit, Hits, SolarMemory
from solar_core.basics.validation import FloatVector, check_feedback
from solar_core.engine.async_calls import in_worker
from solar_core.integrations.params import (
    BUILD_DEFAULTS,
    build_params,
    extract_params,
    memory_or_store,
    user_stacklevel,
)
from solar_core.integrations.shown import CallableHits, record_shown
from solar_core.integrations.turns import (
    DEFAULT_MAX_RECALL_CHARS,
    HEADER,
    render,
    turn_id,
    turn_metadata,
    turn_text,
)
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore, Scope
from solar_core.persistence.scope import check_identifier, check_part_name
from solar_core.retrieval.filters import Filter
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

from ._params import MaxRecallChars, SolarChatParams, within_chars
from .messages import (
    MessageLike,
    answer_text,
    as_message,
    as_messages,
    finished_turns,
    is_answer,
    last_finished_question,
    last_user_index,
    text_of,
)
from .retriever import FiltersSetting, solar_filter

MIN_TURN_TOKENS = 16  # a short recalled turn, as rendered: below this the recall never fits
#: roles ChatMemoryBuffer never lets start its window (when trimming leaves one first)
_NOT_FIRST = (MessageRole.TOOL, MessageRole.ASSISTANT)


class SolarChatMemory(SolarChatParams, ChatMemoryBuffer):
    """``ChatMemoryBuffer``'s token-limited recent window, plus the ``top_k`` most relevant older
    turns that a SOLAR memory chose to keep, as one system message in front.

    Use it wherever a ``ChatMemoryBuffer`` goes, e.g. ``agent.run(user_msg, memory=memory)``,
    reusing the same object across runs. ``get`` (which agents call before every LLM call)
    retrieves once per user message the experiences most similar to it, or to ``input`` when
    one is given (chat engines pass the new message before they put it; turns still in the
    window are skipped) and prepends them, clearly delimited, to the window: they take at most
    ``recall_token_ratio`` of ``token_limit`` (least similar dropped first), the window the
    rest. Each finished turn (the user's message and the assistant's answer; tool calls in
    between are left out) is offered to SOLAR when the answer is put, which ends the step: the
    memory's policy (by default ``solar-dialogue``: a turn is kept when later questions are
    likely to ask about it, learning from ratings) decides what is kept and what is evicted;
    the turns recalled are those that match the question best by meaning and by words (hybrid
    retrieval, above a relevance floor: ``retrieval=``, ``min_score=``).
    ``feedback(like=...)`` rates the last answer's recalled turns, ``feedback(like=...,
    recall=hits)`` an earlier answer's (the :attr:`recalled` of its turn); :meth:`look` shows
    what a query would recall, learning nothing. The recalled turns' text is capped at
    ``max_recall_chars`` characters (4,000; ``None``: no cap) besides the token share, added
    best first while they fit. The window is ``ChatMemoryBuffer``'s, found without
    re-tokenising the whole history. ``put`` and ``set`` also take mappings of a message's
    fields (``{"role": "user", "content": "hi"}``).

    ``filters`` recalls only the experiences whose metadata match: LlamaIndex
    ``MetadataFilters``, as a vector store retriever takes them, or a filter of
    :mod:`solar_core.retrieval.filters` (for a memory shared with components that store experiences
    with their own metadata; see :class:`~llamaindex_solar.SolarRetriever` for the operators).

    Build it with :meth:`from_defaults`: ``ChatMemoryBuffer``'s parameters plus ``top_k``,
    ``recall_token_ratio``, ``max_recall_chars``, ``header``, ``filters``, and ``memory=`` or
    ``policy``, ``capacity``, ``embedder`` (any LlamaIndex ``BaseEmbedding`` too), ``seed``,
    ``retrieval``, ``min_score``, ``extractor`` and ``extract``. One instance is one
    conversation (``chat_store_key``) with its own SOLAR memory, unless you pass the same
    ``memory=`` to several.

    Facts: ``extractor=`` (a LlamaIndex LLM, a LangChain chat model or LLM, or a callable:
    :mod:`solar_core.engine.extraction`) reads each finished turn as it is offered
    (``Human: ...\\nAI: ...``) and names the lasting facts it states, each with a key
    (``"user/home"``); they are stored ``extract="beside"`` the turn (default) or ``"instead"``
    of it, and a newer fact with the same key supersedes the older one, so a recall shows the
    current value. A failed extraction stores the turn; :attr:`last_decision` (its
    ``extraction``) says why. The extractor goes to the memory this object builds, or to the
    store it opens from a path; beside ``memory=`` or a ``MemoryStore`` it is refused: give it
    to ``SolarMemory(..., extractor=...)`` or ``MemoryStore(..., extractor=...)`` instead. See
    "Facts that stay current" in the guide.

    Persistence: ``store=`` (a :class:`~solar_core.persistence.MemoryStore`, or a SQLite path /
    ``postgresql://`` URL opened with ``policy``, ``capacity``, ``embedder``, ``seed``,
    ``extractor``) with ``session_id=`` makes the SOLAR memory the store's
    ``store.scope(session=session_id)``, the memory :class:`~llamaindex_solar.SolarMemoryBlock`
    keeps for that session (``store_part="user"``: ``store.scope(user=session_id)``, for a
    memory shared by a user's conversations): every step is logged, and a ``SolarChatMemory``
    opened later with the same ``session_id`` (another process, after a restart) recalls what
    earlier ones stored.
    Without ``session_id``, a ``chat_store_key`` of yours names the session (the default
    ``"chat_history"`` is refused, as it would silently make every conversation share one
    persistent memory). Pair it with a persistent ``chat_store`` (and a ``chat_store_key`` of
    the conversation's) to keep the window too: the turns already in the chat store when
    an instance is built count as offered (the earlier process offered them), so a restarted
    instance makes exactly the steps one that never stopped would have. A store opened from a
    path is this memory's: :meth:`close` closes it; a copy (``model_copy``) shares it but never
    owns it. ``memory=`` and ``store=`` together are refused (one of them says which memory).

    The chat adapters' common verbs: :attr:`recalled` (call it: ``recalled()``), ``.memory``,
    :meth:`forget` (empties the SOLAR memory), :meth:`close` (releases a store it opened),
    and LlamaIndex's :meth:`reset` (a new conversation, experiences kept).

    Example:
        >>> from llama_index.core.base.llms.types import ChatMessage
        >>> memory = SolarChatMemory.from_defaults(
        ...     token_limit=64, recall_token_ratio=0.5, top_k=1, embedder="hash")
        >>> for question, answer in [("our API returns HTTP 429", "Back off and retry."),
        ...                          ("what is the capital of France?", "Paris."),
        ...                          ("how do I sort a list in Python?", "sorted(xs)."),
        ...                          ("recommend a book about space", "Cosmos, by Carl Sagan."),
        ...                          ("what is 2 + 2?", "4")]:
        ...     memory.put(ChatMessage(role="user", content=question))
        ...     memory.put(ChatMessage(role="assistant", content=answer))
        >>> memory.put(ChatMessage(role="user", content="HTTP 429 again"))
        >>> messages = memory.get()
        >>> print(messages[0].content)
        Relevant past experiences (from memory; they may be outdated):
        - Human: our API returns HTTP 429
          AI: Back off and retry.
        >>> [m.content for m in messages[1:]]  # the window
        ['recommend a book about space', 'Cosmos, by Carl Sagan.', 'what is 2 + 2?', '4',
         'HTTP 429 again']
        >>> memory.feedback(like=True)

        Persistent: a new instance (here in the same process) with the same ``session_id``
        recalls the turns the first one stored.

        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "agent.db")
        >>> first = SolarChatMemory.from_defaults(
        ...     store=path, session_id="alice", top_k=1, embedder="hash", seed=0)
        >>> first.put(ChatMessage(role="user", content="my locker code is 1234"))
        >>> first.put(ChatMessage(role="assistant", content="Noted."))
        >>> first.close()
        >>> later = SolarChatMemory.from_defaults(
        ...     store=path, session_id="alice", top_k=1, embedder="hash", seed=0)
        >>> later.put(ChatMessage(role="user", content="what is my locker code?"))
        >>> print(later.get()[0].content)
        Relevant past experiences (from memory; they may be outdated):
        - Human: my locker code is 1234
          AI: Noted.
        >>> later.close(); tmp.cleanup()
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    top_k: int = Field(default=3, ge=0)
    """Relevant older turns recalled per user message (0: none)."""
    recall_token_ratio: float = Field(default=0.3, gt=0.0, lt=1.0)
    """The largest share of ``token_limit`` the recalled turns may take (as ``Memory``'s
    ``chat_history_token_ratio`` splits its budget); the window gets the rest."""
    max_recall_chars: MaxRecallChars = DEFAULT_MAX_RECALL_CHARS
    """The most characters of recalled turns' text added to a prompt (``None``: no limit besides
    the token share): turns are added best first while they fit, so one huge old turn never
    goes whole into the prompt, and is never tokenised to find out."""
    header: str = HEADER
    """The first line of the recalled-experiences system message."""
    human_prefix: str = "Human"
    ai_prefix: str = "AI"
    filters: FiltersSetting = None
    """Recall only experiences whose metadata match (``None``: any)."""

    # Recall, per user message (its index in the history): the query vector, the record=False
    # preview (with the filters it was made with), and the recorded retrieval of what the
    # prompt showed (what feedback rates).
    _look: tuple[int, str, object, FloatVector, Hits] | None = PrivateAttr(default=None)
    _recalled: Hits | None = PrivateAttr(default=None)
    _recalled_for: int = PrivateAttr(default=-1)
    _questions: dict[int, str] = PrivateAttr(default_factory=dict)  # user texts as first put
    _recorded: int = PrivateAttr(default=-1)  # index of the last user message offered to SOLAR
    _last_decision: Decision | None = PrivateAttr(default=None)
    _store: MemoryStore | None = PrivateAttr(default=None)
    _owns_store: bool = PrivateAttr(default=False)

    def __init__(
        self,
        *,
        memory: SolarMemory | None = None,
        store: MemoryStore | str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        store_part: str = "session",
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
        """``memory=`` a ready SOLAR memory, or ``store=`` and ``session_id=`` (the memory is
        the store's ``store.scope(session=session_id)``; ``store_part``: another part), or the
        parameters to build one (``extractor=``/``extract=`` among them); ``data``: the fields
        (``token_limit``, ``top_k``, ...). Typed here, so IDEs and type checkers see the
        building parameters, which are not fields."""
        build = build_params(policy, capacity, embedder, seed, retrieval, min_score)
        build.update(extract_params(extractor, extract))
        memory_or_store(memory, store, "session_id=")
        check_part_name(store_part)
        if store is None:
            if session_id is not None or store_part != "session":
                raise ValueError(
                    "session_id= and store_part= name a scope of store=: pass store= too (a "
                    "MemoryStore, a SQLite path or a postgresql:// URL), or "
                    "memory=store.scope(...)"
                )
            if memory is not None:
                data["memory"] = memory
            super().__init__(**build, **data)
            self._recorded = last_finished_question(self.get_all())
            return
        key = data.get("chat_store_key", DEFAULT_CHAT_STORE_KEY)
        if session_id is None and key == DEFAULT_CHAT_STORE_KEY:
            raise ValueError(
                "with store=, pass session_id= naming this conversation's memory (e.g. a user "
                "or thread id; or pass chat_store_key= naming this conversation): the default "
                f"chat_store_key {DEFAULT_CHAT_STORE_KEY!r} would make every conversation share "
                "one persistent memory"
            )
        if session_id is None:  # the conversation's chat_store_key names it (the earlier form)
            session_id = key
        scope = Scope.of({store_part: check_identifier(store_part, session_id)})
        opened, owned = type(self).open_store(store, build)
        try:
            super().__init__(**data, memory=opened.get(scope))
            # the turns already in the chat store were offered by the process that put them
            self._recorded = last_finished_question(self.get_all())
        except BaseException:
            if owned:
                opened.close()
            raise
        self._store, self._owns_store = opened, owned

    def __copy__(self) -> SolarChatMemory:
        """A shallow copy (``model_copy()``) shares the store but never owns it."""
        twin = super().__copy__()
        twin._owns_store = False
        return twin

    def __getstate__(self) -> dict[str, Any]:
        """Pickled with its SOLAR memory, or refused: LlamaIndex's components leave out what
        does not pickle, and this one would come back without its memory (a stored memory is
        refused: a copy's writes would never reach its scope)."""
        if self.memory.persistent:
            raise TypeError(
                "pickling a SolarChatMemory whose SOLAR memory is stored is refused: a copy's "
                "writes would never reach its scope. Pickle to_dict() instead and rebuild it "
                "with SolarChatMemory.from_dict(data, store=..., session_id=...), which reopens "
                "the session's memory"
            )
        state: dict[str, Any] = super().__getstate__()
        if "memory" not in state["__dict__"]:
            pickle.dumps(self.memory)  # what made it unpicklable, raised
        return state

    @model_validator(mode="after")
    def _recall_fits(self) -> SolarChatMemory:
        budget = int(self.token_limit * self.recall_token_ratio)
        header = len(self.tokenizer_fn(self.header))
        if self.top_k > 0 and budget < header + MIN_TURN_TOKENS:
            warnings.warn(
                f"recall_token_ratio x token_limit = {budget} tokens: no room for a recalled turn "
                f"(the header alone takes {header}); raise token_limit or recall_token_ratio",
                UserWarning,
                stacklevel=user_stacklevel("llamaindex_solar"),
            )
        return self

    @classmethod
    def class_name(cls) -> str:
        return "SolarChatMemory"

    @classmethod
    def from_defaults(
        cls,
        chat_history: Sequence[MessageLike] | None = None,
        llm: LLM | None = None,
        chat_store: BaseChatStore | None = None,
        chat_store_key: str = DEFAULT_CHAT_STORE_KEY,
        token_limit: int | None = None,
        tokenizer_fn: Callable[[str], list[Any]] | None = None,
        *,
        memory: SolarMemory | None = None,
        store: MemoryStore | str | os.PathLike[str] | None = None,
        session_id: str | None = None,
        store_part: str = "session",
        policy: str | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        embedder: object = None,
        seed: int | None = None,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
        extractor: object = None,
        extract: str = "beside",
        **solar: Any,
    ) -> SolarChatMemory:
        """As ``ChatMemoryBuffer.from_defaults``, plus ``memory=``, or ``store=`` with
        ``session_id=`` (and ``store_part=``), or the parameters to build a SOLAR memory
        (``policy``, ``capacity``, ``embedder``, ``seed``, ``retrieval``, ``min_score``,
        ``extractor``, ``extract``);
        ``solar``: the other fields (``top_k``, ``recall_token_ratio``, ``max_recall_chars``,
        ``header``, ``filters``, ...). A ``chat_history`` (messages, or mappings of their fields)
        seeds the window (its turns are not offered to SOLAR), as do the turns already in
        ``chat_store``."""
        if llm is not None:
            token_limit = token_limit or int(
                llm.metadata.context_window * DEFAULT_TOKEN_LIMIT_RATIO
            )
        elif token_limit is None:
            token_limit = DEFAULT_TOKEN_LIMIT
        if chat_store is None:  # not `or`: a chat store with a length is falsy when empty
            chat_store = SimpleChatStore()
        built = cls(
            token_limit=token_limit,
            tokenizer_fn=tokenizer_fn if tokenizer_fn is not None else get_tokenizer(),
            chat_store=chat_store,
            chat_store_key=chat_store_key,
            memory=memory,
            store=store,
            session_id=session_id,
            store_part=store_part,
            policy=policy,
            capacity=capacity,
            embedder=embedder,
            seed=seed,
            retrieval=retrieval,
            min_score=min_score,
            extractor=extractor,
            extract=extract,
            **solar,
        )
        if chat_history is not None:
            built.set(chat_history)
        return built

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> SolarChatMemory:
        """Rebuild from :meth:`to_dict`. The SOLAR memory is not part of that form: pass
        ``memory=`` to reattach one, ``store=`` to reopen the session's persistent one (with the
        ``session_id=`` it was built with; without one, the ``chat_store_key`` names it), or
        ``policy=``... to start a new one. The turns in the serialised history count as
        offered already: the rebuilt memory offers only the turns that finish after."""
        if not kwargs.keys() & {"memory", "store", *BUILD_DEFAULTS}:
            raise ValueError(
                "the SOLAR memory is not serialised with the chat history: pass memory= or "
                "store= (or policy=/capacity=/embedder=/seed= to start a new one)"
            )
        data = {k: v for k, v in data.items() if k != "class_name"}
        if "chat_store" in data:
            data["chat_store"] = load_chat_store(data["chat_store"])
        return cls(**data, **kwargs)

    # -- reading ------------------------------------------------------------------------------
    def get(
        self, input: str | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        """The recalled experiences (one system message, if any) followed by the recent window."""
        history = self.get_all()
        user_index = last_user_index(history)
        query = self._question(user_index, history, input)
        plan = self._plan(history, user_index, query, initial_token_count, cache=True)
        if plan is None:
            if self._recalled_for != user_index:  # this message recalls nothing to rate
                self._recalled, self._recalled_for = None, user_index
            return self._window(history, initial_token_count)
        if self._recalled_for != user_index:  # the first prompt of a turn is the one that counts
            ids = {hit.id for hit in plan.shown}
            self._recalled = record_shown(
                self.memory,
                plan.vector,
                plan.preview,
                ids,
                exclude=plan.exclude,
                query=query,
                filter=plan.wanted,
            )
            self._recalled_for = user_index
        if not plan.shown:
            return plan.window
        recall = ChatMessage(role=MessageRole.SYSTEM, content=render(plan.shown, self.header))
        return [recall, *plan.window]

    def look(self, query: str) -> Hits:
        """What the recall for ``query`` would add to the next prompt, recording nothing: the
        turns :meth:`get` would show for it (the same ``top_k``, filters, relevance floor, token
        share and ``max_recall_chars``, the same turns of the window skipped), best first, as
        ``Hits`` with no ``retrieval_id`` (a look is not rated). Nothing is learned: no
        retrieval is recorded and no item's value moves.

        When the chat history ends with a user message, this is that message's prompt with
        ``query`` as ``get(input=query)``; otherwise ``query`` counts as the next user message,
        put first, as an agent puts it before it reads the memory."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        history = self.get_all()
        user_index = last_user_index(history)
        if not history or history[-1].role != MessageRole.USER:
            history = [*history, ChatMessage(role=MessageRole.USER, content=query)]
            user_index = len(history) - 1
        plan = self._plan(history, user_index, query.strip(), 0, cache=False)
        if plan is None:
            return Hits([], None)
        return Hits(plan.shown, None, plan.preview.origin)

    def _plan(
        self,
        history: list[ChatMessage],
        user_index: int,
        query: str,
        initial_token_count: int,
        *,
        cache: bool,
    ) -> _Plan | None:
        """What the prompt for ``query`` shows: its window, and the recalled turns that fit
        beside it (``None``: nothing is recalled). Records nothing."""
        budget = min(
            int(self.token_limit * self.recall_token_ratio),
            self.token_limit - initial_token_count,
        )
        if not query or self.top_k == 0 or budget <= 0:
            return None
        # The window if the recall took its whole share: turns in it need no recalling.
        least = self._window(history, initial_token_count + budget)
        in_least = self._turn_ids(least)
        wanted = solar_filter(self.filters)
        vector, preview = self._preview(user_index, query, in_least, wanted, cache)
        fitting, tokens = self._fit(preview, budget)
        window = self._window(history, initial_token_count + tokens)
        in_window = set(self._turn_ids(window))
        shown = [hit for hit in fitting if hit.id not in in_window]  # the window grew back
        return _Plan(window, shown, vector, preview, in_least, wanted)

    def _window(self, history: list[ChatMessage], initial_token_count: int) -> list[ChatMessage]:
        """``ChatMemoryBuffer.get``'s window of ``history``, found without its cost.

        ``ChatMemoryBuffer.get`` tokenises the whole history, then drops its oldest message (and
        any assistant or tool messages that would start the window) and tokenises the rest
        again, until it fits: quadratic in the history's length. Here the same candidate tails
        are searched from the newest end, doubling, then halving (a longer tail never has fewer
        tokens), so only tails up to about twice the window are tokenised, counted as
        ``_token_count_for_messages`` counts them: the same window, in time that does not grow
        with the history."""
        if initial_token_count > self.token_limit:
            raise ValueError("Initial token count exceeds token limit")  # as ChatMemoryBuffer
        total = len(history)
        if total <= 1:  # (ChatMemoryBuffer.get returns it whether it fits or not)
            return history[-1:]
        room = self.token_limit - initial_token_count
        # The message counts ChatMemoryBuffer.get tries, shortest first: 1, every count whose
        # first message is no assistant or tool message, and the whole history; listed as far
        # as the search needs them.
        starts = [1]
        seen = 1

        def start(i: int) -> int | None:
            nonlocal seen
            while len(starts) <= i and seen < total:
                seen += 1
                if seen == total or history[-seen].role not in _NOT_FIRST:
                    starts.append(seen)
            return starts[i] if i < len(starts) else None

        def fits(count: int) -> bool:
            return self._token_count_for_messages(history[-count:]) <= room

        if not fits(1):  # the shortest tail does not fit: none does
            return history[-1:]
        good, bad, step = 0, -1, 1  # starts[good] fits; starts[bad] does not (-1: none found)
        while bad < 0:  # gallop towards longer tails
            probe = good + step
            count = start(probe)
            if count is None:  # past the whole history: try the whole history
                probe = len(starts) - 1
                if probe == good:
                    break
                count = starts[probe]
            if fits(count):
                good, step = probe, step * 2
            else:
                bad = probe
        while bad - good > 1:  # the longest fitting tail lies in [good, bad)
            middle = (good + bad) // 2
            if fits(starts[middle]):
                good = middle
            else:
                bad = middle
        return history[-starts[good] :]

    def _question(self, user_index: int, history: list[ChatMessage], input: str | None) -> str:
        """What the prompt recalls for: the ``input`` the caller passes (LlamaIndex's agents
        pass the user's message; its chat engines the new message, before they put it), else
        the user's message as it was put (agents may rewrite the stored one, e.g. to add their
        state), else the history's text."""
        if isinstance(input, str) and input.strip():
            return input.strip()
        if user_index in self._questions:
            return self._questions[user_index]
        return text_of(history[user_index]) if user_index >= 0 else ""

    def _preview(
        self,
        user_index: int,
        query: str,
        exclude: list[str],
        wanted: Filter | None,
        cache: bool = True,
    ) -> tuple[FloatVector, Hits]:
        """One look per user message and query: agents call ``get`` before every LLM call of a
        turn (the same query each time); a caller asking about another ``input`` at the same
        point of the chat, or with other ``filters``, gets a look of its own (``cache=False``:
        a look of its own, kept for no one)."""
        look = self._look
        if cache and look is not None and look[:3] == (user_index, query, self.filters):
            return look[3], look[4]
        vector = self.memory.embed_query(query)
        preview = self.memory.retrieve(
            query, embedding=vector, k=self.top_k, exclude=exclude, record=False, filter=wanted
        )
        if cache:
            self._look = (user_index, query, self.filters, vector, preview)
        return vector, preview

    def _fit(self, hits: Hits, budget: int) -> tuple[list[Hit], int]:
        """The best hits that fit ``max_recall_chars`` and whose rendering fits ``budget``
        tokens (added best first while they fit: the least similar are dropped first)."""
        kept = within_chars(hits, self.max_recall_chars)
        while kept:
            message = ChatMessage(role=MessageRole.SYSTEM, content=render(kept, self.header))
            tokens = self._token_count_for_messages([message])
            if tokens <= budget:
                return kept, tokens
            kept.pop()
        return [], 0

    def _turn_ids(self, messages: list[ChatMessage]) -> list[str]:
        return [turn_id(self._text(u, a)) for u, a in finished_turns(messages)]

    # -- writing ------------------------------------------------------------------------------
    def put(self, message: MessageLike) -> None:
        """Append ``message`` (a ``ChatMessage``, or a mapping of its fields such as
        ``{"role": "user", "content": "hi"}``, validated into one); an answer offers its turn."""
        message = as_message(message)
        super().put(message)
        self._after_put(message)

    async def aput(self, message: MessageLike) -> None:
        message = as_message(message)
        await super().aput(message)
        await in_worker(self._after_put, message)

    def put_messages(self, messages: Sequence[MessageLike]) -> None:
        """:meth:`put` each message; all are checked first, so a bad one puts none."""
        super().put_messages(as_messages(messages))

    async def aput_messages(self, messages: Sequence[MessageLike]) -> None:
        await super().aput_messages(as_messages(messages))

    def _after_put(self, message: ChatMessage) -> None:
        if message.role == MessageRole.USER:
            history = self.get_all()
            self._questions[len(history) - 1] = text_of(message)
        elif is_answer(message):
            self._offer_finished_turns()

    def _offer_finished_turns(self) -> None:
        """Offer every answered user message not offered yet, in order (each ends a step). A
        failed offer (say the embedding service is down) is retried with the next answer."""
        history = self.get_all()
        question = None
        for i in range(self._recorded + 1, len(history)):
            message = history[i]
            if message.role == MessageRole.USER:
                question = i
            elif question is not None and is_answer(message):
                human = self._questions.get(question) or text_of(history[question])
                ai = answer_text(message)
                if human:
                    text = self._text(human, ai)
                    self._last_decision = self.memory.add(
                        text, metadata=turn_metadata(human, ai), item_id=turn_id(text)
                    )
                self._recorded = question
                self._questions = {k: v for k, v in self._questions.items() if k > question}
                question = None

    def set(self, messages: Sequence[MessageLike]) -> None:
        """Replace the window's history (chat messages, or mappings of their fields); its turns
        count as offered already."""
        checked = as_messages(messages)
        super().set(checked)
        self._after_set(checked)

    async def aset(self, messages: Sequence[MessageLike]) -> None:
        checked = as_messages(messages)
        await super().aset(checked)
        self._after_set(checked)

    def _after_set(self, messages: list[ChatMessage]) -> None:
        self._recorded = last_user_index(messages)
        self._questions = {}
        self._look, self._recalled_for = None, -1

    def reset(self) -> None:
        """Start a new conversation: the chat history empties; experiences stay (see
        :meth:`forget`)."""
        super().reset()
        self._after_set([])

    async def areset(self) -> None:
        await super().areset()
        self._after_set([])

    def forget(self) -> None:
        """Empty the SOLAR memory: every stored experience goes (with a store, from its scope's
        rows too); the chat history stays (:meth:`reset` empties that)."""
        self.memory.clear()
        self._look, self._recalled, self._recalled_for = None, None, -1
        self._last_decision = None

    # -- SOLAR --------------------------------------------------------------------------------
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

    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        recall: Hits | int | None = None,
    ) -> None:
        """Rate the last answer: ``like=True/False`` or ``score`` in [0, 1]; or an earlier one,
        named by ``recall``: the ``Hits`` that :attr:`recalled` gave for its turn (or their
        ``retrieval_id`` or ``handle``), any of the memory's last 1,000 recorded retrievals,
        once. The SOLAR memory refuses a recall it cannot rate (already rated, too old, made by
        another memory, or a :meth:`look`), with a ``ValueError``, and nothing changes.

        The turns recalled for it are credited as the memory's policy does it (the default
        ``solar-dialogue``: a rating above the memory's usual one raises their value, one below
        lowers it, and uniform ratings move nothing; ``solar-adaptive``: a dislike takes from
        the best of them the value it earned for this message; the paper's ``solar``: Thompson
        posteriors, ``alpha += 1`` on a like, ``beta += 1`` on a dislike), so helpful
        experiences outlive unhelpful ones. When its prompt showed none, there is nothing to
        credit and nothing happens.
        """
        check_feedback(like, score)  # bad input fails even when there is nothing to credit
        if recall is not None:
            if isinstance(recall, Hits) and recall.retrieval_id is None and not recall:
                return  # that prompt showed no recalled turn: there is nothing to credit
            self.memory.feedback(like=like, score=score, retrieval=recall)
            return
        if self._recalled_for < 0:
            raise ValueError("nothing to rate: no user message has been read from memory yet")
        if self._recalled is None or self._recalled.retrieval_id is None:
            return  # the prompt showed no recalled turn: there is nothing to credit
        self.memory.feedback(like=like, score=score, retrieval=self._recalled)

    @property
    def recalled(self) -> CallableHits:
        """What the prompt showed of the recall for the latest user message, best first: call
        it, ``memory.recalled()``, as every chat adapter's ``recalled(...)`` (the memory block's
        takes the session). Read without the call it gives the same hits."""
        hits = self._recalled if self._recalled is not None else Hits([], None)
        return CallableHits(hits, hits.retrieval_id, hits.origin)

    @property
    def last_decision(self) -> Decision | None:
        """Why the last finished turn was (or was not) stored, and what it evicted."""
        return self._last_decision

    def _text(self, human: str, ai: str) -> str:
        return turn_text(human, ai, self.human_prefix, self.ai_prefix)


@dataclass
class _Plan:
    """What one prompt shows: the window, and the recalled turns beside it (of ``preview``, the
    ``record=False`` retrieval for the query, made with ``exclude`` and ``wanted``)."""

    window: list[ChatMessage]
    shown: list[Hit]
    vector: FloatVector
    preview: Hits
    exclude: list[str]
    wanted: Filter | None
