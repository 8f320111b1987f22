"""``SolarMemoryBlock``: SOLAR long-term memory as a block of LlamaIndex's ``Memory``."""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemoryBlock
from llama_index.core.utils import get_tokenizer
from pydantic import Field, PrivateAttr

from solar_core import Decision, Hits, ScopedMemories, SolarMemory
from solar_core.adapter_params import check_not_both
from solar_core.turns import bulleted, turn_id, turn_metadata, turn_text

from ._params import SolarParams
from .messages import finished_turns, is_answer, last_user_text

RECORDED_PER_SESSION = 4096  # turn ids remembered as offered; more than any chat window holds
RENDERED_KEPT = 256  # rendered contents remembered for atruncate


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
    starts or the FIFO flushes it, whichever comes first.

    One memory per ``Memory`` session (``session_id``) unless a single ``memory=`` is given:
    sessions never see each other's experiences. ``atruncate`` (when ``Memory`` is over its token
    limit and this block's ``priority`` is not 0) drops the least similar experiences first.

    Args:
        memory: one :class:`~solar_core.SolarMemory` for every session (else one per session,
            built from ``policy``, ``capacity``, ``embedder``, ``seed``; ``embedder`` may be any
            LlamaIndex ``BaseEmbedding``, shared by all sessions).
        top_k: experiences recalled per user message.
        name, description, priority: as for every memory block (``priority`` 1 by default, so
            the block can be truncated rather than crowd out the chat history).

    Example:
        >>> import asyncio
        >>> from llama_index.core.base.llms.types import ChatMessage, MessageRole
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
    """

    name: str = "solar_memories"
    description: str | None = "Relevant past experiences recalled from a SOLAR memory."
    priority: int = 1
    top_k: int = Field(default=3, ge=1)
    human_prefix: str = "Human"
    ai_prefix: str = "AI"

    _single: SolarMemory | None = PrivateAttr(default=None)
    _sessions: ScopedMemories | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _recorded: dict[str, OrderedDict[str, None]] = PrivateAttr(default_factory=dict)
    _last: dict[str, tuple[tuple[str, int], Hits]] = PrivateAttr(default_factory=dict)
    _decisions: dict[str, Decision] = PrivateAttr(default_factory=dict)
    _rendered: OrderedDict[str, Hits] = PrivateAttr(default_factory=OrderedDict)

    def __init__(
        self,
        memory: SolarMemory | None = None,
        *,
        policy: str = "solar",
        capacity: int | None = 50,
        embedder: object = None,
        seed: int | None = None,
        **fields: Any,
    ) -> None:
        build = {"policy": policy, "capacity": capacity, "embedder": embedder, "seed": seed}
        check_not_both(memory, build)
        if memory is not None and not isinstance(memory, SolarMemory):
            raise TypeError(f"memory must be a SolarMemory, got {type(memory).__name__}")
        super().__init__(**fields)
        if memory is not None:
            self._single = memory
        else:
            embedder = SolarParams.convert_embedder(embedder)
            self._sessions = ScopedMemories(policy, capacity, embedder=embedder, seed=seed)

    # -- sessions -----------------------------------------------------------------------------
    def memory_for(self, session_id: str | None = None) -> SolarMemory:
        """The memory of ``session_id`` (created empty on first use), or the one ``memory=``."""
        if self._single is not None:
            return self._single
        assert self._sessions is not None
        return self._sessions.get(_session(session_id))

    def forget(self, session_id: str | None = None) -> None:
        """Drop a session's memory (with one shared ``memory=``: empty it)."""
        key = _session(session_id)
        with self._lock:
            self._recorded.pop(key, None)
            self._last.pop(key, None)
            self._decisions.pop(key, None)
        if self._sessions is not None:
            self._sessions.forget(key)
        elif self._single is not None:
            self._single.clear()

    # -- BaseMemoryBlock ----------------------------------------------------------------------
    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        session = _session(block_kwargs.get("session_id"))
        # Embedding is CPU-bound: keep it off the event loop.
        return await asyncio.to_thread(self._recall, list(messages or []), session)

    def _recall(self, messages: list[ChatMessage], session: str) -> str:
        turns = finished_turns(messages)
        self._offer(turns, session)
        query = last_user_text(messages)
        if not query:
            return ""
        with self._lock:
            last = self._last.get(session)
        answered = (
            bool(messages) and messages[-1].role != MessageRole.USER and is_answer(messages[-1])
        )
        key = (query, len(turns) - answered)  # the same user message, however often asked for
        if last is not None and last[0] == key:
            hits = last[1]
        elif answered:  # the turn is over (agents read memory once more): nothing to recall
            return ""
        else:
            in_history = [turn_id(self._text(u, a)) for u, a in turns]
            hits = self.memory_for(session).retrieve(query, k=self.top_k, exclude=in_history)
            with self._lock:
                self._last[session] = (key, hits)
        return self._render(hits)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        """Messages flushed out of the short-term FIFO: offer their finished turns, if new."""
        by_session: dict[str, list[ChatMessage]] = {}
        for message in messages:
            session = _session(message.additional_kwargs.get("session_id"))
            by_session.setdefault(session, []).append(message)
        for session, chunk in by_session.items():
            await asyncio.to_thread(self._offer, finished_turns(chunk), session)

    def _offer(self, turns: list[tuple[str, str]], session: str) -> None:
        memory = self.memory_for(session)
        for human, ai in turns:
            text = self._text(human, ai)
            item_id = turn_id(text)
            with self._lock:
                seen = self._recorded.setdefault(session, OrderedDict())
                if item_id in seen:
                    continue
            decision = memory.add(text, metadata=turn_metadata(human, ai), item_id=item_id)
            with self._lock:  # marked only once offered: a failed offer is retried next time
                seen[item_id] = None
                if len(seen) > RECORDED_PER_SESSION:
                    seen.popitem(last=False)
                self._decisions[session] = decision

    async def atruncate(self, content: str, tokens_to_truncate: int) -> str | None:
        """Drop the least similar experiences until ``tokens_to_truncate`` tokens are saved."""
        with self._lock:
            hits = self._rendered.get(content)
        if not hits:
            return None
        tokenizer = get_tokenizer()
        size = len(tokenizer(content))
        kept = list(hits)
        while kept:
            kept.pop()  # hits are best first: the least similar goes first
            rendered = bulleted(kept)
            if size - len(tokenizer(rendered)) >= tokens_to_truncate:
                return self._render(Hits(kept, hits.retrieval_id)) if kept else None
        return None

    # -- SOLAR --------------------------------------------------------------------------------
    def feedback(
        self, *, like: bool | None = None, score: float | None = None, session_id: str | None = None
    ) -> None:
        """Rate the experiences recalled for the session's latest user message: ``like`` or
        ``score`` in [0, 1] (Thompson eviction: ``alpha += 1`` on a like, ``beta += 1`` on a
        dislike), so experiences that help outlive those that do not."""
        key = _session(session_id)
        with self._lock:
            last = self._last.get(key)
        if last is None:
            raise ValueError(f"nothing to rate: nothing was recalled for session {key!r} yet")
        self.memory_for(session_id).feedback(like=like, score=score, retrieval=last[1])

    def recalled(self, session_id: str | None = None) -> Hits:
        """What was recalled for the session's latest user message, best first."""
        with self._lock:
            last = self._last.get(_session(session_id))
        return last[1] if last is not None else Hits([], None)

    def last_decision(self, session_id: str | None = None) -> Decision | None:
        """Why the session's last offered turn was (or was not) stored."""
        with self._lock:
            return self._decisions.get(_session(session_id))

    # -- helpers ------------------------------------------------------------------------------
    def _render(self, hits: Hits) -> str:
        content = bulleted(hits)
        if content:
            with self._lock:
                self._rendered[content] = hits
                if len(self._rendered) > RENDERED_KEPT:
                    self._rendered.popitem(last=False)
        return content

    def _text(self, human: str, ai: str) -> str:
        return turn_text(human, ai, self.human_prefix, self.ai_prefix)


def _session(session_id: object) -> str:
    """``Memory`` passes its ``session_id``; a block used on its own has none."""
    if session_id is None or session_id == "":
        return "default"
    return ScopedMemories.check(session_id)
