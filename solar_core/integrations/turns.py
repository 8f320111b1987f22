"""How a conversation turn becomes a stored experience: one format for every adapter
(``"Human: ...\\nAI: ..."``, the two sides also in metadata), so a memory shared between
adapters recalls readable turns whichever recorded them."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from solar_core.basics.types import Hit

HUMAN, AI = "human", "ai"  # metadata keys holding the two sides of a recorded turn
HEADER = "Relevant past experiences (from memory; they may be outdated):"


def turn_text(human: str, ai: str, human_prefix: str = "Human", ai_prefix: str = "AI") -> str:
    """The experience stored for one turn: what is embedded and what is recalled."""
    return f"{human_prefix}: {human}\n{ai_prefix}: {ai}"


def has_words(human: str, ai: str) -> bool:
    """Whether a turn says anything (one whose two sides are blank is never offered)."""
    return bool(human.strip() or ai.strip())


def turn_metadata(human: str, ai: str, **extra: Any) -> dict[str, Any]:
    """The metadata of a stored turn: ``extra`` plus its two sides."""
    return {**extra, HUMAN: human, AI: ai}


def turn_sides(hit: Hit) -> tuple[str, str] | None:
    """A recalled turn's two sides, or ``None`` for another experience: one without them, or
    a fact (it has a key) -- an extractor's fact carries the metadata of the turn it came from,
    but what it says is its own text.

    >>> turn_sides(Hit("t1", "Human: hi\\nAI: hello", 0.9, {"human": "hi", "ai": "hello"}))
    ('hi', 'hello')
    >>> turn_sides(Hit("m2", "Ana lives in Rome", 0.9, {"human": "hi", "ai": "hello",
    ...                                                  "key": "ana/home"})) is None
    True
    """
    human, ai = hit.metadata.get(HUMAN), hit.metadata.get(AI)
    if isinstance(human, str) and isinstance(ai, str) and hit.metadata.get("key") is None:
        return human, ai
    return None


def turn_id(text: str) -> str:
    """A stable id for a stored turn's text: the same exchange recorded twice is one item."""
    return "turn-" + hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def render(hits: Sequence[Hit], header: str = HEADER) -> str:
    """Recalled experiences for a system prompt: the header, then :func:`bulleted` ("" if none)."""
    return f"{header}\n{bulleted(hits)}" if hits else ""


def bulleted(hits: Sequence[Hit]) -> str:
    """Hits as a bullet list (continuation lines indented), for a system prompt."""
    return "\n".join("- " + hit.text.replace("\n", "\n  ") for hit in hits)


#: every chat adapter's default ``max_recall_chars``: about 1,000 tokens of recalled text a turn
DEFAULT_MAX_RECALL_CHARS = 4_000


def check_recall_budget(budget: object, per: str) -> object:
    """``max_recall_chars`` checked: a positive int (characters of recalled text ``per`` turn
    or invoke), or ``None`` for no limit."""
    if budget is not None and (type(budget) is not int or budget < 1):
        raise ValueError(
            f"max_recall_chars must be a positive int (characters of recalled text per {per}), "
            f"or None for no limit; got {budget!r}"
        )
    return budget


def fitting(sizes: Sequence[int], budget: int | None) -> list[int]:
    """Which recalled texts (their ``sizes``, best first) a budget of characters admits: each
    while it fits, one too long is left out (a shorter later one may fit); the best is always
    admitted, cut to the budget if it alone is too long (:func:`cut`). ``None``: all."""
    kept, room = [], budget
    for i, size in enumerate(sizes):
        if room is None or size <= room or i == 0:
            kept.append(i)
            room = None if room is None else max(room - size, 0)
    return kept


def cut(text: str, size: int) -> str:
    """``text`` in at most ``size`` characters: cut, ending in an ellipsis, if it is longer."""
    return text if len(text) <= size else text[: max(size - 1, 0)] + "…"
