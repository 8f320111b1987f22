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
            turns.append((question, text_of(message)))
            question = None
    return turns
