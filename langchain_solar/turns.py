"""Recalled turns as LangChain messages or text (the turn format itself:
``solar_core.integrations.turns``)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from solar_core import Hit
from solar_core.integrations.turns import AI, HUMAN, turn_text


def hit_messages(hit: Hit) -> list[BaseMessage]:
    """A recalled turn as the messages it was made of; other experiences as a system note."""
    human, ai = hit.metadata.get(HUMAN), hit.metadata.get(AI)
    if isinstance(human, str) and isinstance(ai, str):
        return [HumanMessage(content=human), AIMessage(content=ai)]
    return [SystemMessage(content=hit.text)]


def hits_as_messages(hits: Sequence[Hit]) -> list[BaseMessage]:
    return [message for hit in hits for message in hit_messages(hit)]


def hits_as_text(hits: Sequence[Hit], human_prefix: str = "Human", ai_prefix: str = "AI") -> str:
    """Recalled experiences as one string: recorded turns in the buffer's ``Human:/AI:`` form."""
    lines = []
    for hit in hits:
        human, ai = hit.metadata.get(HUMAN), hit.metadata.get(AI)
        if isinstance(human, str) and isinstance(ai, str):
            lines.append(turn_text(human, ai, human_prefix, ai_prefix))
        else:
            lines.append(hit.text)
    return "\n".join(lines)
