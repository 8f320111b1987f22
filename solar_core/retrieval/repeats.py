"""When an offered text repeats a stored one: the same words after normalising case, width,
whitespace and punctuation, or a near-identical wording by a rule measured to merge no two
distinct turns of the LoCoMo dev conversations (``docs/benchmarks/repeats.md``). Never by
cosine alone: the memory uses its vectors only to choose which stored texts to compare.

>>> normalise("  I live in BERLIN, now!! ")
'i live in berlin now'
>>> is_repeat("I live in Berlin now.", "i live in berlin, now")
True
>>> is_repeat("I live in Berlin.", "I live in Paris.")
False
"""

from __future__ import annotations

import unicodedata

#: how many stored texts, nearest by cosine, an offer is compared with
CANDIDATES = 5


def normalise(text: str) -> str:
    """``text`` compatibility-normalised (NFKC), case-folded, with punctuation removed and
    whitespace collapsed: the form two texts that say the same words share."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = [" " if unicodedata.category(c).startswith("P") else c for c in folded]
    return " ".join("".join(kept).split())


def tokens(normal: str) -> list[str]:
    """The words of a normalised text."""
    return normal.split()


def is_repeat(new: str, old: str) -> bool:
    """Whether ``new`` repeats ``old`` (see the module's docs)."""
    return repeats_normal(normalise(new), normalise(old))


def repeats_normal(new: str, old: str) -> bool:
    """:func:`is_repeat` of two texts already normalised."""
    return new == old
