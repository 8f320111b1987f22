"""Classes of your own that a memory's state may hold: registered, a snapshot may name them.

A stored scope is rebuilt from data, and the reader makes objects only of classes it knows by
name (see :mod:`solar_core.persistence.codec`): the library's own policies, records and
parts, and the classes registered here. :func:`solar_core.presets.register_policy` registers a
policy's classes; :func:`state_class` registers any other part of a state (a class a policy of
yours holds). Registering is one line in the module that defines the class, so that importing
the module is what makes its objects readable: a process that opens a scope of that policy
must have imported it, as it must have to build one.

A snapshot of your class is checked against a new memory of the scope's settings: each attribute
must be of the kind it is there. An attribute that is ``None`` there and fills on use, declare at
class level (``_cache: tuple[int, float] | None``) for what it may hold to be checked too:
concrete types (numbers, ``str``, ``tuple``, ``list``, ``dict``, ``np.ndarray``, a state class)
are checked; ``Any``, ``object``, an abstract type or a protocol check nothing, nor does leaving
it undeclared.

What a snapshot holds of an object is its attributes, each under its *stored name*. A class
says what they are with :func:`stored` (the library's classes all do, and a test holds each to
its attributes): a renamed attribute keeps its stored name, ``stored("p t1", _keys="key")`` after
renaming ``_key`` to ``_keys``, so a rename changes no snapshot. A class that says nothing stores
its attributes under their own names. The attributes that hold its parameters, it names with
:func:`settings` (``setting_names``): a stored scope records its parameters when it is created,
and a snapshot's values of these must be those of a memory built from them.

>>> from solar_core.eviction import FifoEviction
>>> class Newest(FifoEviction):
...     '''FIFO's mirror: evict the newest.'''
>>> state_class(Newest) is Newest, Newest in registered()
(True, True)
>>> stored("p t1", _keys="key")
{'p': 'p', 't1': 't1', '_keys': 'key'}
"""

from __future__ import annotations

from typing import TypeVar

_T = TypeVar("_T", bound=type)
_REGISTERED: dict[str, type] = {}


def state_class(cls: _T) -> _T:
    """Register ``cls`` (a class decorator too): snapshots may hold its objects, rebuilt
    attribute by attribute without running any of its code. Refuses a class whose name is
    another registered class's, and one that restores itself (``__setstate__``): a snapshot
    never runs code of the data's choosing."""
    if not isinstance(cls, type):
        raise TypeError(f"state_class registers a class, got {cls!r}")
    name = f"{cls.__module__}.{cls.__qualname__}"
    if "__setstate__" in vars(cls):
        raise TypeError(
            f"{cls.__qualname__} defines __setstate__: a snapshot restores a state class "
            "attribute by attribute, without calling it; keep its state in plain attributes"
        )
    stored_names(cls)  # a declaration that stores two attributes as one fails here, not later
    known = _REGISTERED.get(name)
    if known is not None and known is not cls:
        raise ValueError(f"another class is registered as {name}: rename one")
    _REGISTERED[name] = cls
    return cls


def registered() -> tuple[type, ...]:
    """The registered classes, in the order they were registered."""
    return tuple(_REGISTERED.values())


def stored(names: str = "", **renamed: str) -> dict[str, str]:
    """A class's ``snapshot_names``: its attributes -> the names a snapshot stores them under;
    ``names`` (separated by spaces) under their own, ``renamed`` under the name they had when
    first stored."""
    own = names.split()
    found = {name: name for name in own} | renamed
    values = list(found.values())
    twice = sorted({name for name in values if values.count(name) > 1})
    if twice or len(found) != len(own) + len(renamed):
        raise ValueError(f"name each attribute once, and store each under its own name: {twice}")
    return found


def settings(names: str) -> tuple[str, ...]:
    """A class's ``setting_names``: the attributes (separated by spaces) that hold its
    parameters, set from its constructor's arguments and never changed by its steps. A stored
    scope records its policy's parameters when it is created, and a snapshot's values of these
    must be those of a memory built from them: a snapshot cannot give a scope other parameters.
    A subclass names its own (a base's are not inherited: a subclass may change what they do).

    >>> settings("window ema")
    ('window', 'ema')
    """
    return tuple(names.split())


def stored_names(cls: type) -> dict[str, str]:
    """``cls``'s attributes -> their stored names, where they differ: the ``snapshot_names`` of
    ``cls`` and its bases, merged. Raises ``TypeError`` on a declaration that is not a mapping
    of names, or that stores two attributes under one name."""
    merged: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        names = vars(klass).get("snapshot_names")
        if names is None:
            continue
        if not isinstance(names, dict) or not all(
            isinstance(n, str) and n.isidentifier() for n in (*names, *names.values())
        ):
            raise TypeError(
                f"{klass.__qualname__}.snapshot_names must map attribute names to stored names: "
                'make it with stored("name other", renamed="its stored name")'
            )
        merged.update(names)
    renamed = {a: n for a, n in merged.items() if a != n}
    kept = {n for n in renamed.values() if n in merged and n not in renamed}
    if kept or len(set(renamed.values())) < len(renamed):
        raise TypeError(f"{cls.__qualname__}: its snapshot_names store two attributes as one")
    return renamed
