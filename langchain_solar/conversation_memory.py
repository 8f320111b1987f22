"""``SolarConversationMemory``: a drop-in for LangChain's ``ConversationBufferWindowMemory``."""

from __future__ import annotations

import warnings
from collections import deque
from typing import Any

from langchain_classic.base_memory import BaseMemory
from langchain_classic.memory.utils import get_prompt_input_key
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, get_buffer_string
from pydantic import ConfigDict, Field, PrivateAttr, model_validator

from solar_core import Decision, Hit, Hits
from solar_core.turns import turn_metadata, turn_text

from ._params import SolarParams
from .turns import hits_as_messages, hits_as_text


class _Turn:
    __slots__ = ("human", "ai", "item_id")

    def __init__(self, human: str, ai: str, item_id: str | None) -> None:
        self.human, self.ai, self.item_id = human, ai, item_id


class SolarConversationMemory(SolarParams, BaseMemory):
    """The last ``k`` turns, like ``ConversationBufferWindowMemory``, plus the ``top_k`` most
    relevant older turns that a SOLAR memory chose to keep.

    Swap it into an existing ``ConversationChain`` or ``LLMChain`` with ``memory=``; nothing else
    changes. Each chain call is one SOLAR step: ``load_memory_variables`` retrieves the
    experiences most similar to the new input (turns already in the window are skipped), and
    ``save_context`` offers the finished turn (``Human: ...\\nAI: ...``) and ends the step. SOLAR's
    admission gate stores only the turns that add something; its Thompson-sampling eviction keeps
    the ones that keep proving useful. ``feedback(like=...)`` rates the last answer.

    What ``memory_key`` holds: with the default ``recall_key=None`` the recalled turns come first,
    oldest first, followed by the window, in the window memory's own format (a ``Human:/AI:``
    string, or messages with ``return_messages=True``), so the default ``ConversationChain`` prompt
    shows them with no change. With ``recall_key="relevant_history"`` (any name) ``memory_key``
    holds exactly what the window memory would, and the recalled turns come under ``recall_key``
    for a prompt that places them itself.

    Window parameters, as in ``ConversationBufferWindowMemory``: ``k``, ``memory_key``,
    ``human_prefix``, ``ai_prefix``, ``return_messages``, ``input_key``, ``output_key``. SOLAR
    parameters: ``top_k``, ``recall_key``, and ``memory=`` or ``policy``, ``capacity``,
    ``embedder`` (any LangChain ``Embeddings`` too), ``seed``. Unlike the window memory there is
    no ``chat_memory``: the window keeps the last ``k`` turns only (``buffer`` shows them), and
    every ``load_memory_variables`` with an input is a retrieval the memory learns from.

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
    """

    model_config = ConfigDict(extra="forbid")  # the LangChain base would drop typos silently

    k: int = Field(default=5, ge=0)
    """Recent turns kept verbatim (the last ``2k`` messages)."""
    memory_key: str = "history"
    human_prefix: str = "Human"
    ai_prefix: str = "AI"
    return_messages: bool = False
    input_key: str | None = None
    output_key: str | None = None
    top_k: int = Field(default=3, ge=0)
    """Relevant older turns recalled per input (0: none)."""
    recall_key: str | None = None
    """Where recalled turns go: ``None`` merges them into ``memory_key``."""

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

    _window: deque[_Turn] = PrivateAttr(default_factory=deque)
    _recalled: Hits | None = PrivateAttr(default=None)
    _last_decision: Decision | None = PrivateAttr(default=None)

    # -- the window ---------------------------------------------------------------------------
    def _recent(self) -> list[_Turn]:
        return list(self._window)[-self.k :] if self.k > 0 else []

    @property
    def buffer_as_messages(self) -> list[BaseMessage]:
        """The window as messages, exactly as ``ConversationBufferWindowMemory`` has it."""
        return [m for t in self._recent() for m in (HumanMessage(t.human), AIMessage(t.ai))]

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
        """The window plus the turns recalled for this input (a SOLAR retrieval event)."""
        is_turn, query = self._query(inputs)
        recent = self._recent()
        hits = Hits([], None)
        if query and self.top_k > 0:
            exclude = [t.item_id for t in recent if t.item_id is not None]
            hits = self.memory.retrieve(query, k=self.top_k, exclude=exclude)
        if is_turn:  # a new turn: feedback now rates its recall (or nothing), never an older one
            self._recalled = hits if hits.retrieval_id is not None else None
        recalled = self._chronological(hits, recent)
        window = self.buffer_as_messages
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
        """Offer the finished turn to SOLAR (ends the step) and push it onto the window."""
        human, ai = self._input_output(inputs, outputs)
        text = turn_text(human, ai, self.human_prefix, self.ai_prefix)
        decision = self.memory.add(text, metadata=turn_metadata(human, ai))
        self._last_decision = decision
        self._window.append(_Turn(human, ai, decision.item_id))
        while len(self._window) > self.k:
            self._window.popleft()

    def clear(self) -> None:
        """Forget everything: the window and every stored experience."""
        self.memory.clear()
        self._window.clear()
        self._recalled = None
        self._last_decision = None

    # -- SOLAR --------------------------------------------------------------------------------
    def feedback(self, *, like: bool | None = None, score: float | None = None) -> None:
        """Rate the last answer: ``like=True/False`` or ``score`` in [0, 1].

        The turns recalled for it are credited (Thompson eviction: ``alpha += 1`` on a like,
        ``beta += 1`` on a dislike), so helpful experiences outlive unhelpful ones.
        """
        if self._recalled is None:
            raise ValueError(
                "nothing to rate: the last turn recalled nothing (no input to search for, "
                "top_k=0, or no turn since clear())"
            )
        self.memory.feedback(like=like, score=score, retrieval=self._recalled)

    @property
    def recalled(self) -> Hits:
        """What the last ``load_memory_variables`` recalled, best first, with scores and ids."""
        return self._recalled if self._recalled is not None else Hits([], None)

    @property
    def last_decision(self) -> Decision | None:
        """Why the last saved turn was (or was not) stored, and what it evicted."""
        return self._last_decision

    # -- helpers ------------------------------------------------------------------------------
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

    def _chronological(self, hits: Hits, recent: list[_Turn]) -> list[Hit]:
        """Recalled turns oldest first, so merged with the window they read as one conversation.

        A turn said twice word for word may be stored twice (by a store-everything policy): it is
        shown once, and not at all if the window holds it.
        """
        seen = {turn_text(t.human, t.ai, self.human_prefix, self.ai_prefix) for t in recent}
        steps: dict[str, int] = {}
        shown = []
        for hit in hits:
            if hit.text in seen:
                continue
            seen.add(hit.text)
            try:
                steps[hit.id] = self.memory.get(hit.id).created_step
            except KeyError:  # removed by another user of a shared memory since the retrieval
                steps[hit.id] = 0
            shown.append(hit)
        return sorted(shown, key=lambda hit: steps[hit.id])
