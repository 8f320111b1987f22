"""``SolarMemoryBlock``: SOLAR long-term memory as a block of LlamaIndex's ``Memory``."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn, SupportsIndex

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.memory import BaseMemoryBlock
from llama_index.core.utils import get_tokenizer
from pydantic import Field, PrivateAttr

from solar_core import CHAT_POLICY, Decision, Hit, Hits, SolarMemory
from solar_core.basics.validation import FloatVector, check_feedback
from solar_core.engine.async_calls import in_worker
from solar_core.integrations.copies import refused_copy
from solar_core.integrations.params import (
    build_params,
    check_not_both,
    extract_params,
    extraction_of,
)
from solar_core.integrations.sessions import Sessions
from solar_core.integrations.shown import record_shown
from solar_core.integrations.turns import (
    DEFAULT_MAX_RECALL_CHARS,
    bulleted,
    turn_id,
    turn_metadata,
    turn_text,
)
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore, Scope
from solar_core.persistence.scope import check_part_name
from solar_core.retrieval.filters import Filter
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

from ._params import MaxRecallChars, SolarChatParams, within_chars
from .messages import finished_turns, is_answer, last_user_index, last_user_text
from .retriever import FiltersSetting, solar_filter

OFFERED_PER_SESSION = 4096  # turn ids remembered as offered; more than any chat window holds
RENDERED_KEPT = 256  # rendered contents remembered for atruncate
#: the memory of a block used without a ``session_id``, in a ``MemoryStore``: a scope of two
#: parts, which no session id can name (a session's is one part, e.g. ``session=default``)
DEFAULT_SCOPE = Scope(project="llamaindex_solar", session="default")


class SolarMemoryBlock(BaseMemoryBlock[str]):
    """Recalls the ``top_k`` past turns most similar to the latest user message, for
    ``Memory.from_defaults(memory_blocks=[SolarMemoryBlock(...)])``.

    ``Memory`` hands a block only the messages its short-term FIFO flushes, which on a normal
    token budget is rarely; this block therefore also records turns itself: each ``aget``
    (``Memory`` calls it with the current chat history before every LLM call, and agents read
    the memory once more after the answer) offers SOLAR every finished turn in that history it
    has not offered yet, then retrieves once per user message, skipping the turns still in the
    history (the LLM sees them already). So every turn is offered exactly once: at the end of
    its run with the agents of ``llama_index.core.agent.workflow``, else when the next turn
    starts or the FIFO flushes it, whichever comes first. The first time the block sees a
    session whose memory was offered turns already (a new process on a persistent memory), the
    finished turns before the latest user message (and the turns flushed to it) count as
    offered already -- the earlier process offered them -- so a restarted block makes exactly
    the steps one that never stopped would have, and never re-stores turns SOLAR evicted;
    after a session's memory is forgotten, the turns still in its history are not stored again.

    One memory per ``Memory`` session (``session_id``) unless a single ``memory=`` is given:
    sessions never see each other's experiences. Name the session in :meth:`feedback`,
    :meth:`recalled`, :meth:`last_decision`, :meth:`memory_for` and :meth:`forget`; without a
    ``session_id`` they address the block's own unnamed memory (a block used without
    ``Memory``), and on a block that only served sessions they raise a ``ValueError`` saying to
    pass ``session_id=`` rather than silently rate, report or forget nothing. ``atruncate``
    (when ``Memory`` is over its token limit and this block's ``priority`` is not 0) drops the
    least similar experiences first.

    Persistence: with ``store=`` a session's memory is the
    :class:`~solar_core.persistence.MemoryStore`'s ``store.scope(session=session_id)``
    (without a ``session_id``: the reserved scope :data:`DEFAULT_SCOPE`,
    ``project="llamaindex_solar", session="default"``, which no session id -- not even
    ``"default"`` -- reaches): every step is logged, and a block opened later on the same
    database (another process, after a restart) continues each session's memory exactly.
    Session ids must then be valid store identifiers (no control characters, at most 256
    characters). A store opened from a path is the block's: :meth:`close` closes it; a copy
    (``model_copy``) shares it but never owns it. What the block keeps of a session (its
    latest recall, last decision, offered turns) belongs to the session's memory object: once
    the session is forgotten -- :meth:`forget`, ``store.forget``/``store.erase``, here or in
    another process -- it goes too, and rating the session is refused rather than recreating it.

    The chat adapters' common verbs, here of a named session: :meth:`recalled`,
    :meth:`memory_for`, :meth:`forget` (deletes that session's memory) and :meth:`close`
    (releases a store the block opened; safe to call twice).

    Args:
        memory: one :class:`~solar_core.SolarMemory` for every session (else one per session,
            built from ``policy``, ``capacity``, ``embedder``, ``seed``, ``retrieval``,
            ``min_score``; ``policy=None`` is :data:`~solar_core.policies.presets.CHAT_POLICY`,
            ``solar-dialogue``; ``embedder`` may be any LlamaIndex ``BaseEmbedding``, shared by
            all sessions).
        store: a :class:`~solar_core.persistence.MemoryStore` (its settings apply; its owner
            closes it), or a SQLite path / ``postgresql://`` URL to open one with ``policy``,
            ``capacity``, ``embedder``, ``seed`` and ``extractor`` (owned: call :meth:`close`).
        store_part: with ``store``, the scope part a ``session_id`` names (``session``; a
            part of your own too: ``store_part="team"`` keeps ``store.scope(team=...)``
            memories, one per ``session_id``).
        top_k: experiences recalled per user message.
        max_recall_chars: the most characters of recalled turns' text the block holds per user
            message (4,000 by default; ``None``: no limit): turns are added best first while
            they fit, so one huge old turn never goes whole into the prompt. ``Memory``'s token
            limit applies after it (``atruncate``).
        filters: recall only the experiences whose metadata match: LlamaIndex
            ``MetadataFilters``, as a vector store retriever takes them, or a filter of
            :mod:`solar_core.retrieval.filters` (see :class:`~llamaindex_solar.SolarRetriever` for
            the operators); for a memory shared with components that store experiences with their
            own metadata.
        extractor, extract: a model that reads each turn the block offers (the text stored
            for it, ``"Human: ...\\nAI: ..."``) and names the lasting facts it states, each with
            a key (``"user/home"``), so that a newer fact supersedes the older one: a LlamaIndex
            LLM, a LangChain chat model or LLM, or a callable
            (:mod:`solar_core.engine.extraction`). Its facts are stored ``"beside"`` the turn
            (default) or ``"instead"`` of it; a failed extraction stores the turn, and
            :meth:`last_decision` says why. Given to every session's memory the block builds,
            or to the store it opens from a path; refused beside ``memory=`` or a
            ``MemoryStore``, which have their own (``SolarMemory(..., extractor=...)``,
            ``MemoryStore(..., extractor=...)``).
        name, description, priority: as for every memory block (``priority`` 1 by default, so
            the block can be truncated rather than crowd out the chat history).

    Example:
        >>> import asyncio
        >>> from llama_index.core.base.llms.types import ChatMessage
        >>> block = SolarMemoryBlock(embedder="hash", top_k=1)
        >>> chat = [ChatMessage(role="user", content="our API returns HTTP 429"),
        ...         ChatMessage(role="assistant", content="Back off and retry.")]
        >>> asyncio.run(block.aget(chat, session_id="s1"))  # offers the finished turn
        ''
        >>> later = [ChatMessage(role="user", content="HTTP 429 again")]
        >>> print(asyncio.run(block.aget(later, session_id="s1")))
        - Human: our API returns HTTP 429
          AI: Back off and retry.
        >>> asyncio.run(block.aget(later, session_id="s2"))  # another session: its own memory
        ''

        Persistent: a new block on the same database recalls the session's turns.

        >>> import os, tempfile
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = os.path.join(tmp.name, "agent.db")
        >>> block = SolarMemoryBlock(store=path, embedder="hash", top_k=1, seed=0)
        >>> asyncio.run(block.aget(chat, session_id="s1"))
        ''
        >>> block.close()
        >>> again = SolarMemoryBlock(store=path, embedder="hash", top_k=1, seed=0)
        >>> print(asyncio.run(again.aget(later, session_id="s1")))
        - Human: our API returns HTTP 429
          AI: Back off and retry.
        >>> again.sessions
        ['s1']
        >>> again.close(); tmp.cleanup()
    """

    name: str = "solar_memories"
    description: str | None = "Relevant past experiences recalled from a SOLAR memory."
    priority: int = 1
    top_k: int = Field(default=3, ge=1)
    max_recall_chars: MaxRecallChars = DEFAULT_MAX_RECALL_CHARS
    """The most characters of recalled turns' text per user message (``None``: no limit)."""
    human_prefix: str = "Human"
    ai_prefix: str = "AI"
    filters: FiltersSetting = None
    """Recall only experiences whose metadata match (``None``: any)."""

    tokenizer_fn: Callable[[str], list[Any]] | None = Field(default=None, exclude=True)
    """Counts tokens for ``atruncate``; pass the ``Memory``'s own if it is not the default."""

    _sessions: Sessions = PrivateAttr()  # the memory of each session_id
    _owners: dict[str, SolarMemory] = PrivateAttr(default_factory=dict)  # whose state we hold
    _forgotten: set[str] = PrivateAttr(default_factory=set)  # sessions whose memory went
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _offered: dict[str, OrderedDict[str, None]] = PrivateAttr(default_factory=dict)
    _recalls: dict[str, _Recall] = PrivateAttr(default_factory=dict)
    _epochs: dict[str, int] = PrivateAttr(default_factory=dict)  # bumped when a turn ends
    _decisions: dict[str, Decision] = PrivateAttr(default_factory=dict)
    _read: dict[str, list[tuple[str, str]]] = PrivateAttr(default_factory=dict)  # turns last read
    _rendered: OrderedDict[str, _Recall] = PrivateAttr(default_factory=OrderedDict)

    def __init__(
        self,
        memory: SolarMemory | None = None,
        *,
        store: MemoryStore | str | os.PathLike[str] | None = None,
        policy: str | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        embedder: object = None,
        seed: int | None = None,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
        store_part: str = "session",
        extractor: object = None,
        extract: str = "beside",
        **fields: Any,
    ) -> None:
        build = build_params(policy, capacity, embedder, seed, retrieval, min_score)
        build.update(extract_params(extractor, extract))
        check_part_name(store_part)
        check_not_both(memory, build)
        extraction = extraction_of(build)  # checked before a store is opened
        if memory is not None and not isinstance(memory, SolarMemory):
            raise TypeError(f"memory must be a SolarMemory, got {type(memory).__name__}")
        if memory is not None and store is not None:
            raise ValueError("pass memory= or store=, not both")
        super().__init__(**fields)
        if store is not None:  # last: nothing after it can fail and leave an opened store
            opened, owned = SolarChatParams.open_store(store, build)
            self._sessions = Sessions.stored(opened, store_part, DEFAULT_SCOPE, owns_store=owned)
        elif memory is not None:
            self._sessions = Sessions.shared(memory)
        else:
            embedder = SolarChatParams.convert_embedder(embedder)
            self._sessions = Sessions.in_process(
                CHAT_POLICY if policy is None else policy,
                capacity,
                embedder=embedder,
                seed=seed,
                retrieval=retrieval,
                min_score=min_score,
                extraction=extraction,
            )

    def __copy__(self) -> SolarMemoryBlock:
        """A shallow copy (``model_copy()``) shares the store but never owns it."""
        twin = super().__copy__()
        twin._sessions = self._sessions.unowned()
        return twin

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> NoReturn:
        raise refused_copy(self, "copy.deepcopy()")

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise refused_copy(self, "pickling")

    # -- sessions -----------------------------------------------------------------------------
    def memory_for(self, session_id: str | None = None) -> SolarMemory:
        """The memory of ``session_id`` (created empty on first use, or reopened from the
        store), or the one ``memory=``. Without ``session_id``: the block's own unnamed memory,
        for a block used without ``Memory`` (which always passes its ``session_id``)."""
        return self._memory(self._named(session_id, "memory_for('alice')", own_state=False))

    def _memory(self, session: str) -> SolarMemory:
        return self._sessions.get(session)

    def _existing(self, session: str) -> SolarMemory | None:
        """The session's memory if it exists (never creates one): ``None`` once forgotten,
        here or by another process."""
        return self._sessions.existing(session)

    def forget(self, session_id: str | None = None) -> None:
        """Drop a session's memory (with one shared ``memory=``: empty it; with a store: delete
        its rows from the database)."""
        key = self._named(session_id, "forget('alice')", own_state=False)
        with self._lock:
            self._drop(key)
            self._forgotten.add(key)
        self._sessions.forget(key)

    def _drop(self, session: str) -> None:
        """Let go of what this block keeps of a session, whose memory went (call under the
        lock)."""
        if session in self._owners:
            self._forgotten.add(session)
        states = (self._offered, self._recalls, self._epochs, self._decisions, self._owners)
        for state in (*states, self._read):
            state.pop(session, None)
        for content, recall in list(self._rendered.items()):
            if recall.session == session:
                del self._rendered[content]

    def _adopt(
        self, session: str, old: list[tuple[str, str]], flushed: bool = False
    ) -> SolarMemory | None:
        """The session's memory (created on first use). The first time this block sees it -- a
        new process, or its memory was forgotten -- its state starts afresh, and the turns
        ``old`` count as offered if the memory was offered turns already (an earlier process
        offered these: a restarted block continues exactly as one that never stopped) or the
        session's memory was forgotten (its turns are not stored again from the history). A new
        session's memory gets them all. ``flushed``: ``old`` are turns the FIFO flushed; when
        they count as offered, ``None`` (offer nothing; the session's next read adopts it)."""
        memory = self._memory(session)
        with self._lock:
            if self._owners.get(session) is memory:
                return memory
        used = bool(old) and memory.stats()["steps"] > 0
        with self._lock:
            if self._owners.get(session) is not memory:
                self._drop(session)
                used = used or session in self._forgotten
                if flushed and used:
                    return None
                self._forgotten.discard(session)
                self._owners[session] = memory
                seen = self._offered.setdefault(session, OrderedDict())
                for turn in old[-OFFERED_PER_SESSION:] if used else ():
                    seen[turn_id(self._text(*turn))] = None
        return memory

    def _current(self, session: str) -> SolarMemory | None:
        """The session's memory if it is still the one this block's state belongs to; else
        that state is dropped (the session was forgotten) and ``None``."""
        memory = self._existing(session)
        with self._lock:
            if memory is None or self._owners.get(session) is not memory:
                self._drop(session)
                return None
        return memory

    @property
    def sessions(self) -> list[str]:
        """The sessions that have a memory of their own so far (with a store: every session
        scope it holds, including those of earlier processes)."""
        return self._sessions.names()

    @property
    def store(self) -> MemoryStore | None:
        """The :class:`~solar_core.persistence.MemoryStore` holding the memories, if any."""
        return self._sessions.store

    def close(self) -> None:
        """Snapshot and close the store this block opened from a path (a no-op otherwise: a
        ``MemoryStore`` passed in is its owner's to close; safe to call twice). Its memories stop
        working."""
        self._sessions.close()

    def _session(self, session_id: object) -> str:
        """``Memory`` passes its ``session_id``; a block used on its own has none (``""``: no
        session id can be empty)."""
        if session_id is None or session_id == "":
            return ""
        return self._sessions.check(session_id)

    def _named(self, session_id: object, call: str, *, own_state: bool = True) -> str:
        """``session_id`` as a key, for a method users call (``call``: how, with a session).

        A block inside ``Memory`` always gets a ``session_id``; its unnamed memory serves only a
        block used on its own. So a call without one, on a block that has served sessions but
        has no unnamed memory (``own_state=False``: none exists; ``own_state=True``: none this
        process read from, so there is nothing of it to rate or report), forgot the session:
        the error names the fix rather than rating nothing or forgetting the wrong memory."""
        key = self._session(session_id)
        if key:
            return key
        with self._lock:
            named = any(self._owners)  # a session read in this process ("" is falsy)
            unnamed = "" in self._owners
        if own_state:
            forgot = not unnamed and (named or bool(self.sessions))
        else:
            forgot = self._existing("") is None and (named or bool(self.sessions))
        if forgot:
            raise ValueError(
                f"this block keeps one memory per Memory session: pass session_id=, e.g. {call}"
            )
        return key

    # -- BaseMemoryBlock ----------------------------------------------------------------------
    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        session = self._session(block_kwargs.get("session_id"))
        # Embedding is CPU-bound: keep it off the event loop.
        return await in_worker(self._recall, list(messages or []), session)

    def _recall(self, messages: list[ChatMessage], session: str) -> str:
        turns = finished_turns(messages)
        answered = bool(messages) and is_answer(messages[-1])
        memory = self._adopt(session, finished_turns(messages[: max(last_user_index(messages), 0)]))
        assert memory is not None
        with self._lock:
            self._read[session] = turns  # what look() skips: the history the LLM sees
        new = self._unoffered(turns, session)
        if answered or new:  # this turn's retrieval is recorded before its turn is offered
            self._commit(session)
        if self._offer(new, session, memory) or answered:
            with self._lock:
                self._epochs[session] = self._epochs.get(session, 0) + 1
        query = last_user_text(messages)
        if not query or answered:  # agents read the memory once more after the answer
            return ""
        with self._lock:
            key = (query, self._epochs.get(session, 0))
            recall = self._recalls.get(session)
        filters = self.filters
        if recall is None or recall.key != key or recall.filters != filters:
            self._commit(session)
            vector = memory.embed_query(query)
            exclude = [turn_id(self._text(u, a)) for u, a in turns]  # the LLM sees them already
            wanted = solar_filter(filters)
            preview = memory.retrieve(
                query, embedding=vector, k=self.top_k, exclude=exclude, record=False, filter=wanted
            )
            shown = within_chars(preview, self.max_recall_chars)
            recall = _Recall(key, vector, preview, exclude, [h.id for h in shown])
            recall.session, recall.memory = session, memory
            recall.filters, recall.wanted = filters, wanted
            with self._lock:
                self._recalls[session] = recall
        return self._render(recall)

    def _commit(self, session: str) -> None:
        """Record the retrieval of what the session's last recall ended up showing (after any
        truncation), once: only that gains the retrieval's credit and can be rated."""
        with self._lock:
            recall = self._recalls.get(session)
            if recall is None or recall.recorded is not None:
                return
            recall.recorded = Hits([], None)  # claimed: a concurrent commit records nothing
        assert recall.memory is not None  # its own memory: never a newer one of the session
        recall.recorded = record_shown(
            recall.memory,
            recall.vector,
            recall.preview,
            recall.shown,
            recall.exclude,
            recall.key[0],
            recall.wanted,
        )

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Messages flushed out of the short-term FIFO: offer their finished turns, if new."""
        by_session: dict[str, list[ChatMessage]] = {}
        for message in messages:
            session = self._session(message.additional_kwargs.get("session_id"))
            by_session.setdefault(session, []).append(message)
        # one worker call for the whole flush: cancelled, it still runs to its end (never half)
        await in_worker(self._put_sessions, by_session)

    def _put_sessions(self, by_session: Mapping[str, list[ChatMessage]]) -> None:
        for session, chunk in by_session.items():
            turns = finished_turns(chunk)
            # flushed turns are old: on a first sight (a new process) they were offered already
            memory = self._adopt(session, turns, True)
            new = self._unoffered(turns, session) if memory is not None else []
            if memory is not None and new:
                self._commit(session)
                self._offer(new, session, memory)

    def _unoffered(self, turns: list[tuple[str, str]], session: str) -> list[tuple[str, str]]:
        with self._lock:
            seen: Mapping[str, None] = self._offered.get(session, {})
            return [t for t in turns if turn_id(self._text(*t)) not in seen]

    def _offer(self, turns: list[tuple[str, str]], session: str, memory: SolarMemory) -> int:
        """Offer each turn not offered yet (each ends a step); how many were."""
        offered = 0
        for human, ai in turns:
            text = self._text(human, ai)
            item_id = turn_id(text)
            with self._lock:  # claimed before offering: two concurrent reads offer it once
                seen = self._offered.setdefault(session, OrderedDict())
                if item_id in seen:
                    continue
                seen[item_id] = None
                if len(seen) > OFFERED_PER_SESSION:
                    seen.popitem(last=False)
            try:
                decision = memory.add(text, metadata=turn_metadata(human, ai), item_id=item_id)
            except BaseException:
                with self._lock:  # not offered after all: the next read retries it
                    seen.pop(item_id, None)
                raise
            offered += 1
            with self._lock:
                if self._owners.get(session) is memory:
                    self._decisions[session] = decision
        return offered

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the least similar experiences until ``tokens_to_truncate`` tokens are saved."""
        with self._lock:
            recall = self._rendered.get(content)
        if recall is None:
            return None
        count = self.tokenizer_fn if self.tokenizer_fn is not None else get_tokenizer()
        size = len(count(content))
        kept = recall.shown_hits()
        while kept:
            kept.pop()  # hits are best first: the least similar goes first
            if size - len(count(bulleted(kept))) >= tokens_to_truncate:
                break
        with self._lock:
            if recall.recorded is None:  # what the prompt will show: that is what gets credit
                recall.shown = [hit.id for hit in kept]
        return self._render(recall) if kept else None

    # -- SOLAR --------------------------------------------------------------------------------
    def feedback(
        self,
        *,
        like: bool | None = None,
        score: float | None = None,
        session_id: str | None = None,
        recall: Hits | int | None = None,
    ) -> None:
        """Rate the experiences recalled for the session's latest user message: ``like`` or
        ``score`` in [0, 1]; or those of an earlier one, named by ``recall``: the ``Hits`` that
        :meth:`recalled` gave for its turn (or their ``retrieval_id`` or ``handle``), any of the
        session memory's last 1,000 recorded retrievals, once. The session's memory refuses a
        recall it cannot rate (already rated, too old, another memory's, or a :meth:`look`),
        with a ``ValueError``, and nothing changes.

        They are credited as the memory's policy does it (the default ``solar-dialogue``: a
        rating above the memory's usual one raises their value, one below lowers it, and
        uniform ratings move nothing; ``solar-adaptive``: a dislike takes from the best of them
        the value it earned for this message; the paper's ``solar``: Thompson posteriors,
        ``alpha += 1`` on a like, ``beta += 1`` on a dislike), so experiences that help outlive
        those that do not. When the prompt showed none, there is nothing to credit and nothing
        happens. A session without a memory (never read, or forgotten) is refused with a
        ``ValueError``: feedback never creates one; so is a call without ``session_id``
        on a block that serves ``Memory`` sessions (the error names the fix)."""
        check_feedback(like, score)  # bad input fails even when there is nothing to credit
        key = self._named(session_id, "feedback(like=True, session_id='alice')")
        memory = self._current(key)
        if memory is None:
            raise ValueError(
                f"nothing to rate: session {session_id!r} has no memory here (never read, or "
                "forgotten)"
            )
        if recall is not None:
            if isinstance(recall, Hits) and recall.retrieval_id is None and not recall:
                return  # that prompt showed no recalled turn: there is nothing to credit
            memory.feedback(like=like, score=score, retrieval=recall)
            return
        self._commit(key)
        with self._lock:
            latest = self._recalls.get(key)
        if latest is None:
            raise ValueError(f"nothing to rate: no user message of session {key!r} was read yet")
        if latest.recorded is None or latest.recorded.retrieval_id is None:
            return  # the prompt showed no recalled turn: there is nothing to credit
        memory.feedback(like=like, score=score, retrieval=latest.recorded)

    def recalled(self, session_id: str | None = None) -> Hits:
        """What the prompt showed of the session's latest recall, best first (nothing once the
        session is forgotten), as the recorded retrieval: ``feedback(recall=...)`` rates it
        later, after other turns. (Its retrieval is recorded here if the next turn has not
        recorded it yet: ``Memory`` truncates the block before the LLM sees it, so what the
        prompt showed is known by then.)"""
        key = self._named(session_id, "recalled('alice')")
        if self._current(key) is None:
            return Hits([], None)
        self._commit(key)
        with self._lock:
            recall = self._recalls.get(key)
        if recall is None:
            return Hits([], None)
        if recall.recorded is not None and recall.recorded.retrieval_id is not None:
            return recall.recorded
        return Hits(recall.shown_hits(), None)

    def look(self, query: str, session_id: str | None = None) -> Hits:
        """What the session's next recall would add for ``query``, recording nothing: the turns
        the block would hold for it as the next user message (the same ``top_k``, filters,
        relevance floor and ``max_recall_chars``; the turns of the history it last read
        skipped, as the LLM sees them), best first, as ``Hits`` with no ``retrieval_id`` (a
        look is not rated). Nothing is learned: no retrieval is recorded and no item's value
        moves; a session with no memory (never read, or forgotten) gets none and is not
        created. ``Memory`` may still truncate the block to its token limit."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        key = self._named(session_id, "look('my dog?', session_id='alice')", own_state=False)
        memory = self._existing(key)
        query = query.strip()
        if memory is None or not query:
            return Hits([], None)
        with self._lock:
            read = self._read.get(key, []) if self._owners.get(key) is memory else []
        exclude = [turn_id(self._text(u, a)) for u, a in read]
        wanted = solar_filter(self.filters)
        vector = memory.embed_query(query)
        preview = memory.retrieve(
            query, embedding=vector, k=self.top_k, exclude=exclude, record=False, filter=wanted
        )
        return Hits(within_chars(preview, self.max_recall_chars), None, preview.origin)

    def last_decision(self, session_id: str | None = None) -> Decision | None:
        """Why the session's last offered turn was (or was not) stored (``None`` once the
        session is forgotten)."""
        key = self._named(session_id, "last_decision('alice')")
        if self._current(key) is None:
            return None
        with self._lock:
            return self._decisions.get(key)

    # -- helpers ------------------------------------------------------------------------------
    def _render(self, recall: _Recall) -> str:
        content = bulleted(recall.shown_hits())
        if content:
            with self._lock:
                self._rendered[content] = recall
                if len(self._rendered) > RENDERED_KEPT:
                    self._rendered.popitem(last=False)
        return content

    def _text(self, human: str, ai: str) -> str:
        return turn_text(human, ai, self.human_prefix, self.ai_prefix)


@dataclass
class _Recall:
    """One user message's recall in one session: looked at first, recorded once shown."""

    key: tuple[str, int]
    vector: FloatVector
    preview: Hits
    exclude: list[str]
    shown: list[str]  # ids the prompt shows (truncation removes some)
    recorded: Hits | None = None
    session: str = ""
    memory: SolarMemory | None = None  # whose retrieval it is
    filters: object = None  # the block's filters when it looked
    wanted: Filter | None = None  # and what they filter by

    def shown_hits(self) -> list[Hit]:
        return [hit for hit in self.preview if hit.id in self.shown]
