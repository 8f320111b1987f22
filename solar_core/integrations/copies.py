"""Copies of the adapters that serve memories by session or namespace: ``copy.copy`` is a second
handle on the same memories; a deep copy or a pickle, which cannot take them along, is refused."""

from __future__ import annotations


def refused_copy(adapter: object, how: str) -> TypeError:
    """The error for ``how`` (``"copy.deepcopy()"``, ``"pickling"``) of ``adapter``."""
    return TypeError(
        f"{how} of a {type(adapter).__name__} is refused: it serves live memories (perhaps "
        "a database's) that a copy cannot take along. copy.copy() gives a second handle on the "
        "same memories; build another one with store= to open them again, or pass memory= "
        "a memory's .detached() copy for an independent one"
    )
