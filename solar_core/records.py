"""What a memory keeps per item and per recorded retrieval, and the item categories.

These are state: a snapshot holds them (see :mod:`solar_core.persistence.codec`), so their
fields are part of the snapshot format.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

#: the item categories, from the most to the least protected (what each means for an item is
#: the lifecycle's rule: :mod:`solar_core.lifecycle`)
CATEGORIES = ("identity", "knowledge", "context")


def check_category(category: object) -> str:
    """``category`` if it is one of :data:`CATEGORIES`.

    >>> check_category("knowledge")
    'knowledge'
    >>> check_category("fact")
    Traceback (most recent call last):
    ...
    ValueError: category must be one of identity, knowledge, context, got 'fact'
    """
    if category not in CATEGORIES:
        raise ValueError(f"category must be one of {', '.join(CATEGORIES)}, got {category!r}")
    return str(category)


def content_key(text: str) -> str:
    """An item's key by content: ARC keys its ghosts so, and re-offering the same text is a
    ghost hit."""
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass(slots=True)
class Record:
    """One stored item's text, metadata and lifecycle fields (its vector is in the store)."""

    text: str
    metadata: dict[str, Any]
    step: int
    created_at: float
    category: str = "context"
    importance: float = 0.5
    valid_until: float | None = None


@dataclass(slots=True)
class Retrieval:
    """A recorded retrieval that feedback may still rate."""

    slots: npt.NDArray[np.int64]
    records: list[Record]
    step: int
    removals: int  # the memory's removal count then: unchanged means every slot is still live
    rated: bool = False
