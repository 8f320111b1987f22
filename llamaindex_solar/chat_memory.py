"""``SolarChatMemory``: a LlamaIndex chat memory buffer with a self-curating long-term memory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
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
from llama_index.core.utils import get_tokenizer
from pydantic import ConfigDict, Field, PrivateAttr

from solar_core import Decision, Hit, Hits
from solar_core.turns import HEADER, render, turn_id, turn_metadata, turn_text

from ._params import SolarParams
from .messages import finished_turns, is_answer, last_user_text, text_of


class SolarChatMemory(SolarParams, ChatMemoryBuffer):
    """``ChatMemoryBuffer``'s token-limited recent window, plus the ``top_k`` most relevant older
    turns that a SOLAR memory chose to keep, as one system message in front.

    Use it wherever a ``ChatMemoryBuffer`` goes, e.g. ``agent.run(user_msg, memory=memory)``,
    reusing the same object across runs. ``get`` (which agents call before every LLM call)
    retrieves once per user message the experiences most similar to it (turns still in the
    window are skipped) and prepends them, clearly delimited, to the window: they take at most
    ``recall_token_ratio`` of ``token_limit`` (least similar dropped first), the window the
    rest. Each finished turn (the user's message and the assistant's answer; tool calls in
    between are left out) is offered to SOLAR when the answer is put, which ends the step:
    SOLAR's admission gate stores only the turns that add something, its Thompson-sampling
    eviction keeps those that keep proving useful. ``feedback(like=...)`` rates the last
    answer's recalled turns.

    Build it with :meth:`from_defaults`: ``ChatMemoryBuffer``'s parameters plus ``top_k``,
    ``recall_token_ratio``, ``header``, and ``memory=`` or ``policy``, ``capacity``,
    ``embedder`` (any LlamaIndex ``BaseEmbedding`` too) and ``seed``. One instance is one
    conversation (``chat_store_key``) with its own SOLAR memory, unless you pass the same
    ``memory=`` to several.

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
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    top_k: int = Field(default=3, ge=0)
    """Relevant older turns recalled per user message (0: none)."""
    recall_token_ratio: float = Field(default=0.3, gt=0.0, lt=1.0)
    """The largest share of ``token_limit`` the recalled turns may take (as ``Memory``'s
    ``chat_history_token_ratio`` splits its budget); the window gets the rest."""
    header: str = HEADER
    """The first line of the recalled-experiences system message."""
    human_prefix: str = "Human"
    ai_prefix: str = "AI"

    _recall_key: tuple[int, str] | None = PrivateAttr(default=None)
    _recalled: Hits | None = PrivateAttr(default=None)
    _recorded: int = PrivateAttr(default=-1)  # index of the last user message offered to SOLAR
    _last_decision: Decision | None = PrivateAttr(default=None)

    @classmethod
    def class_name(cls) -> str:
        return "SolarChatMemory"

    @classmethod
    def from_defaults(
        cls,
        chat_history: list[ChatMessage] | None = None,
        llm: LLM | None = None,
        chat_store: BaseChatStore | None = None,
        chat_store_key: str = DEFAULT_CHAT_STORE_KEY,
        token_limit: int | None = None,
        tokenizer_fn: Callable[[str], list[Any]] | None = None,
        **solar: Any,
    ) -> SolarChatMemory:
        """As ``ChatMemoryBuffer.from_defaults``; ``solar``: ``top_k``, ``recall_token_ratio``,
        ``header``, ``memory`` or
        ``policy``/``capacity``/``embedder``/``seed``. A ``chat_history`` seeds the window (its
        turns are not offered to SOLAR)."""
        if llm is not None:
            token_limit = token_limit or int(
                llm.metadata.context_window * DEFAULT_TOKEN_LIMIT_RATIO
            )
        elif token_limit is None:
            token_limit = DEFAULT_TOKEN_LIMIT
        chat_store = chat_store or SimpleChatStore()
        memory = cls(
            token_limit=token_limit,
            tokenizer_fn=tokenizer_fn or get_tokenizer(),
            chat_store=chat_store,
            chat_store_key=chat_store_key,
            **solar,
        )
        if chat_history is not None:
            memory.set(chat_history)
        return memory

    # -- reading ------------------------------------------------------------------------------
    def get(
        self, input: str | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        """The recalled experiences (one system message, if any) followed by the recent window."""
        history = self.get_all()
        query = input.strip() if isinstance(input, str) and input.strip() else None
        query = query or last_user_text(history)
        if not query or self.top_k == 0:
            return super().get(input=input, initial_token_count=initial_token_count, **kwargs)
        budget = int(self.token_limit * self.recall_token_ratio)
        # The window if the recall took its whole share: turns in it need no recalling.
        least = super().get(input=input, initial_token_count=initial_token_count + budget, **kwargs)
        hits = self._recall(query, history, least)
        recall, tokens = self._render_within(hits, budget)
        window = super().get(
            input=input, initial_token_count=initial_token_count + tokens, **kwargs
        )
        if recall is None:
            return window
        shown = {turn_id(self._text(u, a)) for u, a in finished_turns(window)}
        kept = [hit for hit in hits if hit.id not in shown]  # the window grew back over them
        if len(kept) < len(hits):
            recall, _ = self._render_within(kept, budget)
        return window if recall is None else [recall, *window]

    def _render_within(self, hits: list[Hit], budget: int) -> tuple[ChatMessage | None, int]:
        """The recall message within ``budget`` tokens (least similar dropped first), its size."""
        while hits:
            recall = ChatMessage(role=MessageRole.SYSTEM, content=render(hits, self.header))
            tokens = self._token_count_for_messages([recall])
            if tokens <= budget:
                return recall, tokens
            hits = hits[:-1]
        return None, 0

    def _recall(self, query: str, history: list[ChatMessage], window: list[ChatMessage]) -> Hits:
        """One retrieval per user message: agents call ``get`` before every LLM call of a turn."""
        user_index = max(
            (i for i, m in enumerate(history) if m.role == MessageRole.USER), default=-1
        )
        key = (user_index, query)
        if key == self._recall_key and self._recalled is not None:
            return self._recalled
        in_window = [turn_id(self._text(u, a)) for u, a in finished_turns(window)]
        hits = self.memory.retrieve(query, k=self.top_k, exclude=in_window)
        self._recall_key, self._recalled = key, hits
        return hits

    # -- writing ------------------------------------------------------------------------------
    def put(self, message: ChatMessage) -> None:
        super().put(message)
        self._offer_finished_turn(message)

    async def aput(self, message: ChatMessage) -> None:
        await super().aput(message)
        await asyncio.to_thread(self._offer_finished_turn, message)

    def _offer_finished_turn(self, message: ChatMessage) -> None:
        """If ``message`` answers a user message not offered yet, offer the turn (ends a step)."""
        if not is_answer(message):
            return
        history = self.get_all()
        user_index = max(
            (i for i, m in enumerate(history) if m.role == MessageRole.USER), default=-1
        )
        if user_index <= self._recorded or not text_of(history[user_index]):
            return  # no question, or this turn was offered at its first answer
        human, ai = text_of(history[user_index]), text_of(message)
        text = self._text(human, ai)
        self._recorded = user_index
        self._last_decision = self.memory.add(
            text, metadata=turn_metadata(human, ai), item_id=turn_id(text)
        )

    def set(self, messages: list[ChatMessage]) -> None:
        """Replace the window's history; its turns count as offered already."""
        super().set(messages)
        self._after_set(messages)

    async def aset(self, messages: list[ChatMessage]) -> None:
        await super().aset(messages)
        self._after_set(messages)

    def _after_set(self, messages: list[ChatMessage]) -> None:
        self._recorded = max(
            (i for i, m in enumerate(messages) if m.role == MessageRole.USER), default=-1
        )
        self._recall_key = None

    def reset(self) -> None:
        """Forget everything: the chat history and every stored experience."""
        super().reset()
        self._forget()

    async def areset(self) -> None:
        await super().areset()
        self._forget()

    def _forget(self) -> None:
        self.memory.clear()
        self._recall_key, self._recalled, self._last_decision = None, None, None
        self._recorded = -1

    # -- SOLAR --------------------------------------------------------------------------------
    def feedback(self, *, like: bool | None = None, score: float | None = None) -> None:
        """Rate the last answer: ``like=True/False`` or ``score`` in [0, 1].

        The turns recalled for it are credited (Thompson eviction: ``alpha += 1`` on a like,
        ``beta += 1`` on a dislike), so helpful experiences outlive unhelpful ones.
        """
        if self._recalled is None:
            raise ValueError("nothing to rate: no user message has been answered from memory yet")
        self.memory.feedback(like=like, score=score, retrieval=self._recalled)

    @property
    def recalled(self) -> Hits:
        """What was recalled for the latest user message, best first, with scores and ids."""
        return self._recalled if self._recalled is not None else Hits([], None)

    @property
    def last_decision(self) -> Decision | None:
        """Why the last finished turn was (or was not) stored, and what it evicted."""
        return self._last_decision

    def _text(self, human: str, ai: str) -> str:
        return turn_text(human, ai, self.human_prefix, self.ai_prefix)
