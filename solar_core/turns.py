"""How a conversation turn becomes a stored experience, for every framework adapter.

One format everywhere (``"Human: ...\\nAI: ..."``, the two sides also kept in metadata), so a memory
shared between adapters (say a LangChain middleware and a LlamaIndex memory block) recalls
readable turns whichever recorded them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from .types import Hit

HUMAN, AI = "human", "ai"  # metadata keys holding the two sides of a recorded turn


def turn_text(human: str, ai: str, human_prefix: str = "Human", ai_prefix: str = "AI") -> str:
    """The experience stored for one turn: what is embedded and what is recalled.

    >>> print(turn_text("how do I handle HTTP 429?", "Retry with backoff."))
    Human: how do I handle HTTP 429?
    AI: Retry with backoff.
    """
    return f"{human_prefix}: {human}\n{ai_prefix}: {ai}"


def turn_metadata(human: str, ai: str, **extra: Any) -> dict[str, Any]:
    """The metadata of a stored turn: ``extra`` plus its two sides."""
    return {**extra, HUMAN: human, AI: ai}


def turn_id(human: str, ai: str) -> str:
    """A stable id for a turn's content: the same exchange recorded twice is one item.

    >>> turn_id("hi", "hello") == turn_id("hi", "hello") != turn_id("hi", "hello!")
    True
    """
    digest = hashlib.blake2b(f"{human}\x00{ai}".encode(), digest_size=8).hexdigest()
    return f"turn-{digest}"


def bulleted(hits: Sequence[Hit]) -> str:
    """Hits as a bullet list (continuation lines indented), for a system prompt.

    >>> print(bulleted([Hit("m1", "Human: hi\\nAI: hello", 0.9)]))
    - Human: hi
      AI: hello
    """
    return "\n".join("- " + hit.text.replace("\n", "\n  ") for hit in hits)
