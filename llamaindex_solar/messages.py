"""Reading LlamaIndex chat histories: the messages users put, whose turn it is, and which turns
are finished."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock

#: what the chat memory's ``put``/``set`` take: a ``ChatMessage``, or its fields as a mapping
MessageLike = ChatMessage | Mapping[str, Any]


def as_message(message: object) -> ChatMessage:
    """``message`` as a ``ChatMessage``: a mapping of its fields (``{"role": "user", "content":
    "hi"}``, as chat APIs write messages) is validated into one, so the chat store never holds a
    dict that would break every later read (``ChatMemoryBuffer`` stores it as given, and its
    ``get`` then fails); anything else is refused.

    >>> as_message({"role": "user", "content": "hi"}).content
    'hi'
    >>> as_message("hi")
    Traceback (most recent call last):
    ...
    TypeError: a chat message must be a ChatMessage(role=..., content=...) or a mapping ... str
    """
    if isinstance(message, ChatMessage):
        return message
    if isinstance(message, Mapping):
        return ChatMessage.model_validate(dict(message))  # a bad role/field: ValidationError
    raise TypeError(
        "a chat message must be a ChatMessage(role=..., content=...) or a mapping of its fields "
        f"such as {{'role': 'user', 'content': 'hi'}}, got {type(message).__name__}"
    )


def as_messages(messages: Iterable[object]) -> list[ChatMessage]:
    """Every message of a history, checked before any is used (a bad one changes nothing).

    >>> [m.role.value for m in as_messages([{"role": "user", "content": "hi"},
    ...                                     ChatMessage(role="assistant", content="hello")])]
    ['user', 'assistant']
    """
    if isinstance(messages, str | bytes | Mapping | ChatMessage):
        raise TypeError(
            f"messages must be a list of chat messages, got one {type(messages).__name__}"
        )
    return [as_message(message) for message in messages]


def text_of(message: ChatMessage) -> str:
    """The message's text (its text blocks), stripped."""
    return (message.content or "").strip()


def is_answer(message: ChatMessage) -> bool:
    """An assistant message that answers: it has text and calls no tool."""
    if message.role != MessageRole.ASSISTANT or not text_of(message):
        return False
    if message.additional_kwargs.get("tool_calls"):
        return False
    return not any(isinstance(block, ToolCallBlock) for block in message.blocks)


def answer_text(message: ChatMessage) -> str:
    """An answer as worth remembering: a ReAct agent's final message carries its whole reasoning
    (``Thought: ... Answer: ...``); only what follows the last ``Answer:`` is the answer.

    >>> answer_text(ChatMessage(role="assistant", content="Thought: easy.\\nAnswer: 42"))
    '42'
    """
    text = text_of(message)
    if text.startswith("Thought:") and "Answer:" in text:
        return text.rsplit("Answer:", 1)[1].strip() or text
    return text


def last_user_index(messages: Sequence[ChatMessage]) -> int:
    """The index of the last user message (-1 if none)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == MessageRole.USER:
            return i
    return -1


def last_user_text(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == MessageRole.USER:
            return text_of(message)
    return ""


def finished_turns(messages: Sequence[ChatMessage]) -> list[tuple[str, str]]:
    """``(user, answer)`` for each user message followed by an answer (tool calls in between are
    part of the turn; a turn's first answer ends it)."""
    turns = []
    question: str | None = None
    for message in messages:
        if message.role == MessageRole.USER:
            question = text_of(message) or None
        elif question is not None and is_answer(message):
            turns.append((question, answer_text(message)))
            question = None
    return turns


def last_finished_question(messages: Sequence[ChatMessage]) -> int:
    """The index of the last user message that an answer follows (-1 if none): the turns up to
    it are finished."""
    last, question = -1, None
    for i, message in enumerate(messages):
        if message.role == MessageRole.USER:
            question = i
        elif question is not None and is_answer(message):
            last, question = question, None
    return last
