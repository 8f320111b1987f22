"""How a conversation turn becomes a stored experience, and how recalled ones are rendered.

Every LangChain adapter stores a turn the same way, so experiences recorded by one (say the agent
middleware) read well when another (the classic chain memory) recalls them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from solar_core import Hit

HUMAN, AI = "human", "ai"  # metadata keys holding the two sides of a recorded turn


def turn_text(human: str, ai: str, human_prefix: str = "Human", ai_prefix: str = "AI") -> str:
    """The experience stored for one turn: what is embedded and what is recalled.

    >>> print(turn_text("how do I handle HTTP 429?", "Retry with backoff."))
    Human: how do I handle HTTP 429?
    AI: Retry with backoff.
    """
    return f"{human_prefix}: {human}\n{ai_prefix}: {ai}"


def turn_metadata(human: str, ai: str, **extra: Any) -> dict[str, Any]:
    return {**extra, HUMAN: human, AI: ai}


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


def bulleted(hits: Sequence[Hit]) -> str:
    """Hits as a bullet list (continuation lines indented), for a system prompt.

    >>> print(bulleted([Hit("m1", "Human: hi\\nAI: hello", 0.9)]))
    - Human: hi
      AI: hello
    """
    return "\n".join("- " + hit.text.replace("\n", "\n  ") for hit in hits)
