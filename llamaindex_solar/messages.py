"""Reading LlamaIndex chat histories: whose turn it is, and which turns are finished."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock


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
