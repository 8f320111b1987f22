"""The variants the library's repeat rule (:mod:`solar_core.retrieval.repeats`) was measured
against in ``benchmarks/repeat_rule_check.py`` (``docs/benchmarks/repeats.md``):
:func:`same_normalised`, :func:`ratio_rule` (difflib's ratio of the normalised texts over a
threshold), :func:`ratio_guarded` and :func:`jaccard_guarded` (a threshold plus the rule's guards
on length, numbers and negations).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from solar_core.retrieval.repeats import MIN_CONTENT, Canon, normalise
from solar_core.retrieval.repeats import canon as canon  # (the doctests' examples use it)


def same_normalised(new: str, old: str) -> bool:
    """Exact repeats only: equal after :func:`normalise`.

    >>> same_normalised("It's  GREAT!", "its great"), same_normalised("It's great!", "it s great")
    (False, True)
    """
    return normalise(new) == normalise(old)


def _ratio_at_least(a: str, b: str, threshold: float) -> bool:
    """difflib's ratio of two strings >= threshold, with its cheap upper bounds first."""
    if a == b:
        return True
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return (
        matcher.real_quick_ratio() >= threshold
        and matcher.quick_ratio() >= threshold
        and matcher.ratio() >= threshold
    )


def ratio_rule(threshold: float) -> Callable[[str, str], bool]:
    """A repeat when difflib's ratio of the normalised texts is at least ``threshold``.

    >>> rule = ratio_rule(0.9)
    >>> rule("We moved to Paris in 2022 with my wife", "We moved to Paris in 2023 with my wife")
    True
    """

    def rule(new: str, old: str) -> bool:
        return _ratio_at_least(normalise(new), normalise(old), threshold)

    return rule


def guards_pass(a: Canon, b: Canon) -> bool:
    """The rule's guards without its edit classes: length, numbers, negations."""
    return (
        a.content >= MIN_CONTENT
        and b.content >= MIN_CONTENT
        and a.numbers == b.numbers
        and sorted(a.negations) == sorted(b.negations)
    )


def ratio_guarded(threshold: float) -> Callable[[Canon, Canon], bool]:
    """Equal normalised texts, or the guards and difflib's ratio of the normalised texts at least
    ``threshold``.

    >>> rule = ratio_guarded(0.9)
    >>> rule(canon("I live in Berlin with my wife and kids"),
    ...      canon("I live in Bern with my wife and kids"))
    True
    """

    def rule(a: Canon, b: Canon) -> bool:
        if a.norm == b.norm:
            return True
        return guards_pass(a, b) and _ratio_at_least(a.norm, b.norm, threshold)

    return rule


def jaccard_guarded(threshold: float) -> Callable[[Canon, Canon], bool]:
    """Equal normalised texts, or the guards and the Jaccard index of the sets of canonical
    words (articles and fillers included) at least ``threshold``.

    >>> rule = jaccard_guarded(0.8)
    >>> rule(canon("my sister Ana and I went hiking in the Alps last summer"),
    ...      canon("my sister Ada and I went hiking in the Alps last summer"))
    True
    """

    def rule(a: Canon, b: Canon) -> bool:
        if a.norm == b.norm:
            return True
        if not guards_pass(a, b):
            return False
        sa, sb = set(a.core) | set(a.ignored), set(b.core) | set(b.ignored)
        small, large = sorted((len(sa), len(sb)))
        if small < threshold * large:  # Jaccard <= small / large
            return False
        return len(sa & sb) >= threshold * len(sa | sb)

    return rule
