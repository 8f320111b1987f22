"""Recalled turns as LangChain messages or text (the turn format itself:
``solar_core.integrations.turns``)."""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from solar_core import Hit
from solar_core.integrations.turns import turn_sides, turn_text


def hit_messages(hit: Hit) -> list[BaseMessage]:
    """A recalled turn as the messages it was made of; other experiences (an extractor's
    facts too) as a system note."""
    sides = turn_sides(hit)
    if sides is not None:
        return [HumanMessage(content=sides[0]), AIMessage(content=sides[1])]
    return [SystemMessage(content=hit.text)]


def hits_as_messages(hits: Sequence[Hit]) -> list[BaseMessage]:
    return [message for hit in hits for message in hit_messages(hit)]


def hits_as_text(hits: Sequence[Hit], human_prefix: str = "Human", ai_prefix: str = "AI") -> str:
    """Recalled experiences as one string: recorded turns in the buffer's ``Human:/AI:`` form."""
    lines = []
    for hit in hits:
        sides = turn_sides(hit)
        lines.append(hit.text if sides is None else turn_text(*sides, human_prefix, ai_prefix))
    return "\n".join(lines)
