"""Snapshots of a memory's state: data only -- a JSON document and raw little-endian arrays.

A snapshot holds everything a memory needs to continue (store, policy state, gate state, RNG
state, counters, traces). Objects supplied at run time -- the embedder, the clock, the
evaluator -- are left out and put back from the live store on load, so a snapshot never holds
model weights or closures.

**Why not pickle.** Whoever can write the database can write a snapshot, and a checksum does
not stop them: they recompute it. A pickle is a program for a stack machine, and even one
restricted to "harmless" classes can be made to build objects their constructors never would
(numpy's scalar restorer turns eight chosen bytes into an object pointer: a crash, or worse, in
every process that opens the scope). So nothing read back from storage is ever given to a loader
that constructs objects of the data's choosing: this module reads *values*, and rebuilds only
the library's own state classes, attribute by attribute, after checking each one.

The format (every integer little-endian)::

    MAGIC            b"SOLAR-SNAPSHOT-2\\n"
    version          u16   (FORMAT_VERSION)
    document length  u32
    arrays length    u64
    checksum         32 bytes: BLAKE2b of everything above and below it
    document         UTF-8 JSON: {"format": 5, "layouts": [[class, [stored name...]]...],
                     "root": <node>}
    arrays           the raw bytes of every array, each at an 8-byte aligned offset

A node is ``null``, a boolean, a number, a string, or a list whose first element is a tag:

========================  ==========================================================
``["L", x...]``           a list (``"T"`` tuple, ``"S"`` set, ``"F"`` frozenset)
``["Q", maxlen, x...]``   a ``collections.deque``
``["d", {k: x}]``         a dict with string keys, in order
``["D", [k...], [x...]]`` a dict with other keys (``"M"``: an ``OrderedDict``)
``["A", dt, shape, o, f]``  an ndarray: dtype code, shape, offset in the arrays, ``"C"``/``"F"``
``["N", dt, hex]``        a numpy scalar: dtype code and its bytes
``["G", name, state]``    a ``numpy.random.Generator`` over bit generator ``name``
``["O", n, x..., [x...]]``  an object of layout ``n`` (a class and its attribute names, checked
                          once): the attributes' values in order, then the items of a list
                          subclass (``Hits``)
``["U", cls, [x...]]``    a named tuple of a state class
``["R", n]``              the ``n``-th mutable node met so far (shared references, cycles)
========================  ==========================================================

Mutable nodes (lists, dicts, sets, deques, arrays, generators, objects) are numbered in the order
they are first met, depth first; a later occurrence of the same object is a reference. The
decoder registers each one *before* reading its contents, so cycles through them rebuild.

**Tables.** A memory's state is mostly long runs of like things: a thousand decisions, hits,
retrievals, records. Written one node each, they made a snapshot twice as slow to write as the
pickle it replaced, so a run of at least :data:`_RUN` elements of a list, tuple, deque or dict's
values may instead be one *table* node, in place of all its elements:

====================================  ==================================================
``["#", "O", layout, n, [c...]]``     ``n`` objects of one layout, one column per attribute
``["#", "T", width, n, [c...]]``      ``n`` tuples of ``width`` elements, one column per place
``["#", "C", 1, n, [c]]``             the ``n`` values of one column
====================================  ==================================================

and a column of ``n`` values is one of:

=======================  ========================================================================
``["a", dt, o]``         floats (``<f8``), ints (``<i8``) or booleans (``|b1``): raw, at offset o
``["p", a]``             objects met before: their numbers, an ``"a"`` column of ints
``["j", {..}...]``       dicts of plain JSON values (str keys), numbered in order
``["s", dt, a, o]``      1-D arrays of one dtype: their lengths (``"a"``) and all their elements
``["r", a, [x...]]``     lists: their lengths, then all their elements (themselves maybe a table)
``["t", a, [x...]]``     tuples, likewise
``["v", x...]``          anything else: one node each
=======================  ========================================================================

A table's objects (and the lists or arrays of an ``r``/``s``/``j`` column) are numbered all
together, before their columns are read, and columns are read in order: the decoder does the
same. Sizes are checked before anything is made (an ``"a"`` column's bytes must lie inside the
arrays section, a ``"v"`` column must hold ``n`` nodes), and each column is checked against the
template once, as a whole.

**Reading** checks structure before anything reaches a memory: the header, lengths and checksum
(corruption); then every node: known tag, a dtype from a fixed list of numeric types (never
``object``), a shape whose bytes lie inside the arrays section, a class among
:func:`state_classes` (by exact name, looked up in a table: no import, no attribute walk),
attribute names that are identifiers and not ``__dunder__``, slotted classes' exact fields,
bounded nesting. Objects are made with ``cls.__new__(cls)`` and their attributes written into
their ``__dict__`` or slots directly: no ``__init__``, ``__setstate__``, property or any other
code of the data's choosing runs. A bit generator is rebuilt from its allowlisted name and a
plain ``state`` dict, which numpy validates. Then, given a *template* (a fresh memory of the
scope's settings, see :func:`loads`), every object of a class the template holds must have
exactly the template's attribute names, each of the same kind (number, string, array of the
same dtype and rank, the same container or class). One that is ``None`` in the template (and
in its examples) may be ``None``, or what its class's annotation of it says (``_l_ema: float |
None``); nothing else if the class is the library's and has none (a class of yours without one:
anything). A number where the templates hold a Python int (a counter, a serial, a flag) in the
library's classes lies within :data:`MOST_COUNT`, and the parts of the memory its settings make
(``_prepares``, ``dim``, ``policy``, ``capacity``) are the template's: a snapshot that loads can
take its next step.
Every failure is a :class:`PersistenceError` naming what was read.

What a database writer can still do: replace a memory's state by any *other* state the library's
classes can express (and that passes the checks above and the memory's invariants) -- the same as
editing its logged steps or items. What they cannot do: run code, construct objects of other
classes, or crash the reading process.

Format 2 is the same without tables; formats 2 and 3 hold ARC and the adaptive coverage policy
as two objects each (:mod:`solar_core.former_layouts`): they are read, brought to today's layout
and then checked as today's snapshot is. Format 4 wrote per-slot statistics for every slot
(format 5 leaves out the rows of slots never used, see :func:`_trailing_rows_left_out`); a
loaded memory grows them again either way. Snapshots of the first format
(``SOLAR-SNAPSHOT-1``, a pickle) are refused, never read;
:meth:`MemoryStore.reembed` rebuilds such a scope from its stored items.

>>> from collections import deque
>>> state = {"a": [1, 2.5, None], "b": deque([np.arange(3)], maxlen=4), 7: ("x", {1, 2})}
>>> state["self"] = state["a"]
>>> back = loads(dumps(state), "an example")
>>> back["a"] is back["self"], back["b"].maxlen, back["b"][0].tolist(), back[7]
(True, 4, [0, 1, 2], ('x', {1, 2}))
>>> loads(b"junk", "an example")
Traceback (most recent call last):
...
solar_core.persistence.errors.PersistenceError: an example is not a SOLAR memory snapshot
"""

from __future__ import annotations

import hashlib
import json
import operator
import struct
import threading
import types as _types
import typing
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any, Literal

import numpy as np

from .errors import PersistenceError

MAGIC = b"SOLAR-SNAPSHOT-2\n"
#: the first snapshot format (a pickle): recognised, refused, never read
LEGACY_MAGIC = b"SOLAR-SNAPSHOT-1\n"
FORMAT_VERSION = 5
#: the formats this version reads (2: without tables; 2 and 3: policies in a former layout;
#: 4: per-slot arrays whole)
_READS = frozenset({2, 3, 4, 5})
#: the first format whose policies have today's layout (see :mod:`solar_core.former_layouts`)
_CURRENT_LAYOUT = 4
_HEAD = struct.Struct("<HIQ")
_DIGEST = 32
_PREFIX = len(MAGIC) + _HEAD.size
#: bounds on what a snapshot may ask of the reader
_MAX_DEPTH = 400
_MAX_NDIM = 16
_MAX_BYTES = 1 << 32
#: a memory holds one random generator, shared by its parts; a snapshot may hold a few
_MAX_GENERATORS = 8

#: the array types a snapshot may hold, by code (all little-endian, never ``object``)
_DTYPES: dict[str, np.dtype[Any]] = {
    code: np.dtype(code)
    for code in (
        "|b1",
        "|i1",
        "<i2",
        "<i4",
        "<i8",
        "|u1",
        "<u2",
        "<u4",
        "<u8",
        "<f2",
        "<f4",
        "<f8",
    )
}
_DTYPE_CODES = {dtype: code for code, dtype in _DTYPES.items()}
_SCALARS = {dtype.type: code for code, dtype in _DTYPES.items()}
#: the bit generators a snapshot's random generator may run on
_BIT_GENERATORS: dict[str, type[np.random.BitGenerator]] = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}


class _Shape:
    """How the codec sees one state class: its name, attributes and how to read them back."""

    __slots__ = (
        *("cls", "name", "slots", "has_dict", "fields", "items", "named_tuple"),
        *("getter", "slot_names", "plain_dict", "stored_as", "attribute_of", "slot_arrays"),
        "settings",
        "added_later",
    )

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self.name = f"{cls.__module__}.{cls.__qualname__}"
        self.named_tuple = issubclass(cls, tuple)
        self.items = issubclass(cls, list)
        # slot name -> its member descriptor (written through it: no other code runs)
        self.slots: dict[str, Any] = {}
        self.has_dict = False
        for klass in cls.__mro__:
            if klass is object or klass is list or klass is tuple:
                continue
            declared = klass.__dict__.get("__slots__")
            if declared is None:
                self.has_dict = True
                continue
            for slot in (declared,) if isinstance(declared, str) else declared:
                if slot == "__dict__":
                    self.has_dict = True
                elif slot != "__weakref__":
                    descriptor = klass.__dict__.get(slot)
                    if isinstance(descriptor, _types.MemberDescriptorType):
                        self.slots.setdefault(slot, descriptor)
        #: a class without a ``__dict__`` has exactly its slots
        self.fields = None if self.has_dict else frozenset(self.slots)
        # Fast paths for the writer (tens of thousands of records, hits and decisions per
        # snapshot): all of a slotted class's values in one C call; a plain class's __dict__
        # read as it is (the writer never changes it).
        self.slot_names = tuple(self.slots)
        self.getter: Callable[[object], tuple[Any, ...]] | None = (
            operator.attrgetter(*self.slot_names)
            if not self.has_dict and len(self.slot_names) > 1
            else None
        )
        # Attribute -> its stored name, and back, where they differ (the snapshot_names of
        # the class and its bases, see solar_core.registry.stored): a renamed attribute is
        # written and read under its first name.
        from ..registry import stored_names

        self.stored_as = stored_names(cls)
        self.attribute_of = {n: a for a, n in self.stored_as.items()}
        if self.stored_as and self.slots:
            raise TypeError(f"{self.name}: snapshot_names rename attributes of a __dict__ only")
        #: stored names of attributes added after a snapshot format -> their value before
        self.added_later: dict[str, Callable[[], object]] = {
            self.stored_as.get(n, n): make for n, make in vars(cls).get("added_later", {}).items()
        }
        #: per-slot arrays -> the value their unused rows hold (see _trailing_rows_left_out)
        self.slot_arrays: dict[str, float] = {}
        for klass in reversed(cls.__mro__):
            self.slot_arrays.update(vars(klass).get("slot_arrays", {}))
        #: the attributes that hold its parameters (their stored names): with a scope that
        #: recorded its settings, each must be a new memory's (see loads). Its own class's
        #: list, not inherited: a subclass may change what its base's attributes do.
        self.settings: tuple[str, ...] = tuple(
            self.stored_as.get(name, name) for name in vars(cls).get("setting_names", ())
        )
        self.plain_dict = self.has_dict and not (
            self.slots or cls in _GETSTATE or self.stored_as or self.slot_arrays
        )

    def attributes(self, obj: object) -> dict[str, Any]:
        """``obj``'s state as its class means it to be saved (its ``__getstate__``), each
        attribute under its stored name."""
        if self.plain_dict:
            plain: dict[str, Any] = obj.__dict__
            return plain
        attrs: dict[str, Any]
        if type(obj) in _GETSTATE:
            attrs = _GETSTATE[type(obj)](obj)
        else:
            attrs = dict(obj.__dict__) if self.has_dict else {}
            for slot, descriptor in self.slots.items():
                try:
                    attrs[slot] = descriptor.__get__(obj, self.cls)
                except AttributeError:  # an unset slot stays unset
                    pass
        if self.slot_arrays:
            attrs = dict(attrs)
            for name, fill in self.slot_arrays.items():
                attrs[name] = _trailing_rows_left_out(attrs[name], fill)
        if self.stored_as:
            stored_as = self.stored_as
            renamed = {stored_as.get(name, name): value for name, value in attrs.items()}
            if len(renamed) < len(attrs):
                raise TypeError(f"a {self.name} has an attribute named as another is stored")
            return renamed
        return attrs


def _trailing_rows_left_out(array: Any, fill: float) -> Any:
    """``array`` without its last rows that hold only ``fill``, bit for bit: the rows of slots
    never used (or used and reset), which the memory grows again with ``fill`` when it is
    loaded (its ``reserve``). A per-slot statistic of a memory of 1,000 slots holding one item
    is one row, not a thousand.

    >>> _trailing_rows_left_out(np.array([[1.0, 0.0], [0.0, 0.0]]), 0.0).tolist()
    [[1.0, 0.0]]
    >>> _trailing_rows_left_out(np.array([1.0, -0.0]), 0.0).tolist()  # -0.0 is not 0.0's bits
    [1.0, -0.0]
    """
    if type(array) is not np.ndarray or array.ndim == 0 or not len(array):
        return array
    rows = np.ascontiguousarray(array).reshape(len(array), -1).view(np.uint8)
    blank = np.frombuffer(
        np.full(rows.shape[1] // array.itemsize, fill, array.dtype).tobytes(), np.uint8
    )
    used = np.flatnonzero((rows != blank).any(axis=1))
    return array[: int(used[-1]) + 1 if len(used) else 0]


_shapes: dict[type, _Shape] | None = None
_shapes_registered = 0  # how many registered classes _shapes holds
_shapes_lock = threading.Lock()
#: names state classes had in earlier versions -> their names now (read, never written)
_FORMER_NAMES = {
    "solar_core.memory._Record": "solar_core.records.Record",
    "solar_core.memory._Retrieval": "solar_core.records.Retrieval",
}
_by_name: dict[str, _Shape] = {}
#: parts of a memory's state added since snapshots were first written (the ranking and the
#: relevance floor): one missing is read as ``None`` (the memory's ``__setstate__`` says what
#: that means; the memory a store opens keeps its own, see ``SolarMemory.take_state``)
_LATER_PARTS = ("retrieval", "min_score")
#: state classes whose ``__getstate__``/``__setstate__`` leave out or remake run-time parts
_GETSTATE: dict[type, Callable[[Any], dict[str, Any]]] = {}
_RESTORE: dict[type, Callable[[Any], None]] = {}
#: state classes whose restore allocates by some of their attributes (rows left out of the
#: snapshot): with a template, those attributes must be the template's, so a forged size
#: cannot make a read allocate more than a new memory of the scope's settings does
_SIZED: dict[type, tuple[str, ...]] = {}


def _state_shapes() -> dict[type, _Shape]:
    global _shapes, _shapes_registered
    from ..registry import registered

    extra = registered()
    shapes_now = _shapes
    if shapes_now is not None and len(extra) == _shapes_registered:
        return shapes_now
    with _shapes_lock:  # (built once per registration, under a lock: never seen half-made)
        if _shapes is not None and len(extra) == _shapes_registered:
            return _shapes
        from .. import (
            admission,
            deletion,
            eviction,
            lifecycle,
            neighbours,
            records,
            salience,
            store,
            types,
        )
        from ..beta_posterior import BetaPosterior

        classes: list[type] = [
            records.Record,
            records.Retrieval,
            store.VectorStore,
            neighbours.NeighbourIndex,
            lifecycle.Lifecycle,
            BetaPosterior,
            types.Hit,
            types.Hits,
            types.Decision,
            salience.SaliencePrior,
            salience.TurnContext,
        ]
        for package, base in (
            (admission, admission.AdmissionPolicy),
            (eviction, eviction.EvictionPolicy),
            (deletion, deletion.DeletionPolicy),
        ):
            classes += [
                c for c in vars(package).values() if isinstance(c, type) and issubclass(c, base)
            ]
        classes += [admission.base.Verdict, admission.base.Candidate, eviction.base.Victim]
        classes += [c for c in extra if c not in classes]  # yours (see solar_core.registry)
        # Lifecycle.__getstate__ drops its thread, its stop event and its last error (run-time
        # things); __setstate__ makes a new event. Mirrored here, without calling either on data.
        _GETSTATE[lifecycle.Lifecycle] = lifecycle.Lifecycle.__getstate__
        _RESTORE[lifecycle.Lifecycle] = _new_stop_event
        # The store's keyword index is derived from its texts: never written, rebuilt on use.
        # The store's empty rows and the coverage ring's unfilled rows are left out, made again
        # on load (their number checked against the template's first, see _SIZED).
        _GETSTATE[store.VectorStore] = store.VectorStore.__getstate__
        _RESTORE[store.VectorStore] = store.VectorStore.restore_rows
        _GETSTATE[eviction.CoverageEviction] = eviction.CoverageEviction.__getstate__
        _RESTORE[eviction.CoverageEviction] = eviction.CoverageEviction.restore_ring
        # A shipped salience prior is written by name: its weights are the library's file.
        _GETSTATE[salience.SaliencePrior] = salience.prior_state
        _RESTORE[salience.SaliencePrior] = salience.restore_prior
        _GETSTATE[salience.TurnContext] = salience.TurnContext.state
        _RESTORE[salience.TurnContext] = salience.TurnContext.restore
        _SIZED.update(
            {
                store.VectorStore: ("dim", "capacity", "_initial", "_neighbour_k"),
                neighbours.NeighbourIndex: ("k",),
                eviction.CoverageEviction: ("window", "_dim"),
                salience.TurnContext: ("dim",),
            }
        )
        for cls in classes:
            own = getattr(cls, "__setstate__", None)
            if own is not None and cls not in _RESTORE and "__setstate__" in vars(cls):
                raise TypeError(f"{cls.__qualname__} defines __setstate__: teach the codec")
        shapes = {cls: _Shape(cls) for cls in classes}
        _by_name.update({shape.name: shape for shape in shapes.values()})
        for old, new in _FORMER_NAMES.items():  # snapshots written before a class moved
            _by_name[old] = _by_name[new]
        _shapes, _shapes_registered = shapes, len(extra)
    return shapes


def _check_reading(name: str, value: object) -> None:
    """A memory's ``retrieval`` or ``min_score``: any value its constructor takes (a template
    memory has one of them, a snapshot may hold another), or ``None`` (not written)."""
    from ..fusion import check_floor, check_retrieval

    if value is not None:
        try:
            (check_retrieval if name == "retrieval" else check_floor)(value)
        except ValueError as err:
            raise _Bad(f"the memory's {name} is {value!r}") from err


def _new_stop_event(lifecycle: Any) -> None:
    lifecycle.__dict__["_stop"] = threading.Event()
    lifecycle.__dict__.setdefault("_thread", None)
    lifecycle.__dict__["_run"] = None  # wired by the memory that loads it


def state_classes() -> set[tuple[str, str]]:
    """The library's classes a memory's state is made of, by (module, name): policies, the
    store and its index, records, decisions, hits, the lifecycle. Not ``SolarMemory`` (a
    snapshot holds its parts), not evaluators, embedders or anything else that could act."""
    return {(cls.__module__, cls.__qualname__) for cls in _state_shapes()}


# -- writing ----------------------------------------------------------------------------------
#: values JSON holds as they are
_PLAIN = frozenset({str, int, float, bool, type(None)})
#: a run of at least this many like elements is written as a table (column by column): far
#: fewer nodes to build, write and read, numbers as raw arrays, and each column checked once
_RUN = 8
#: the Python numbers a table column holds as an array, and its dtype code
_COLUMN_CODES: dict[type, str] = {float: "<f8", int: "<i8", bool: "|b1"}
_COLUMN_TYPES = frozenset(_COLUMN_CODES.values())
#: the containers of items' metadata (JSON has only lists and dicts; the rest is refused later)
_TREE_NODES = (dict, list, tuple, set, frozenset, deque)
#: the parts of each fixed-size column form (see :meth:`_Decoder._column`)
_COLUMN_SIZES = {"a": 3, "p": 2, "t": 3, "r": 3, "s": 4}


class _Encoder:
    def __init__(self) -> None:
        self.shapes = _state_shapes()
        self.memo: dict[int, int] = {}
        self.keep: list[object] = []  # every numbered object stays alive: ids are not reused
        self.arrays: list[bytes] = []
        self.size = 0
        self.layouts: dict[tuple[type, tuple[str, ...]], int] = {}
        self.layout_list: list[list[Any]] = []

    def encode(self, value: Any) -> Any:
        kind = type(value)
        if kind in _PLAIN:
            return value
        encode, plain = self.encode, _PLAIN
        if kind is tuple:
            return ["T", *self.items(value)]
        memo = self.memo
        key = id(value)
        if key in memo:
            return ["R", memo[key]]
        shape = self.shapes.get(kind)
        if shape is not None and not shape.named_tuple:
            memo[key] = len(self.keep)
            self.keep.append(value)
            values: Any
            try:
                if shape.getter is None:
                    raise AttributeError
                values, names = shape.getter(value), shape.slot_names
            except AttributeError:  # a dict, one slot, or an unset slot
                attrs = shape.attributes(value)
                values, names = attrs.values(), tuple(attrs)
            layout = self.layouts.get((kind, names))
            if layout is None:
                layout = self.layouts[kind, names] = len(self.layout_list)
                self.layout_list.append([shape.name, list(names)])
            node = ["O", layout, *[v if type(v) in plain else encode(v) for v in values]]
            if shape.items:
                node.append([v if type(v) in plain else encode(v) for v in value])
            return node
        if kind is frozenset:
            return ["F", *[v if type(v) in plain else encode(v) for v in value]]
        if kind in _SCALARS:
            return ["N", _SCALARS[kind], value.tobytes().hex()]
        if shape is not None:  # a named tuple: immutable, rebuilt after its items
            return ["U", shape.name, [v if type(v) in plain else encode(v) for v in value]]
        memo[key] = len(self.keep)
        self.keep.append(value)
        if kind is list:
            return ["L", *self.items(value)]
        if kind is dict:
            for k in value:
                if type(k) is not str:
                    return [
                        "D",
                        [k if type(k) in plain else encode(k) for k in value],
                        self.items(list(value.values())),
                    ]
            return ["d", {k: v if type(v) in plain else encode(v) for k, v in value.items()}]
        if kind is np.ndarray:
            return self._array(value)
        if kind is OrderedDict:
            return [
                "M",
                [k if type(k) in plain else encode(k) for k in value],
                self.items(list(value.values())),
            ]
        if kind is deque:
            return ["Q", value.maxlen, *self.items(value)]
        if kind is set:
            return ["S", *[v if type(v) in plain else encode(v) for v in value]]
        if kind is np.random.Generator:
            name = type(value.bit_generator).__name__
            if name not in _BIT_GENERATORS:
                raise TypeError(f"a random generator over {name} is not supported")
            return ["G", name, encode(value.bit_generator.state)]
        raise TypeError(f"it holds a {kind.__module__}.{kind.__qualname__}")

    def items(self, values: Any) -> list[Any]:
        """The nodes of a sequence's elements: one table if they are a run (see :data:`_RUN`)
        of tuples or objects alike, or of values one column can hold; else one node each."""
        if len(values) >= _RUN:
            values = values if type(values) is list else list(values)
            table = self._table(values)
            if table is not None:
                return [table]
            column = self._column(values)
            if column[0] != "v":
                return [["#", "C", 1, len(values), [column]]]
            return column[1:]
        plain, encode = _PLAIN, self.encode
        return [v if type(v) in plain else encode(v) for v in values]

    def _table(self, values: list[Any]) -> list[Any] | None:
        """``values`` column by column, if they are all tuples of one width or all objects of
        one state class with the same attribute names, none met before; else ``None``."""
        kind = type(values[0])
        if kind is tuple:
            width = len(values[0])
            if not width or any(type(v) is not tuple or len(v) != width for v in values):
                return None
            return [
                "#",
                "T",
                width,
                len(values),
                [self._column(c) for c in zip(*values, strict=True)],
            ]
        shape = self.shapes.get(kind)
        if shape is None or shape.named_tuple or shape.items or kind in _GETSTATE:
            return None
        memo = self.memo
        if any(type(v) is not kind for v in values) or len({id(v) for v in values}) != len(values):
            return None
        if any(id(v) in memo for v in values):
            return None
        rows: list[Any]
        if shape.getter is not None:
            names = shape.slot_names
            try:
                rows = [shape.getter(v) for v in values]
            except AttributeError:  # an unset slot
                return None
        elif shape.plain_dict:
            names = tuple(values[0].__dict__)
            if not names or any(tuple(v.__dict__) != names for v in values):
                return None
            rows = [tuple(v.__dict__.values()) for v in values]
        else:
            return None
        for v in values:
            memo[id(v)] = len(self.keep)
            self.keep.append(v)
        layout = self.layouts.get((kind, names))
        if layout is None:
            layout = self.layouts[kind, names] = len(self.layout_list)
            self.layout_list.append([shape.name, list(names)])
        return ["#", "O", layout, len(values), [self._column(c) for c in zip(*rows, strict=True)]]

    def _column(self, column: Sequence[Any]) -> list[Any]:
        """One column of a table (see the module's docs for its forms), the first that fits."""
        kinds = set(map(type, column))
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        code = _COLUMN_CODES.get(kind)  # type: ignore[arg-type]
        if code is not None:
            try:
                array = np.array(column, dtype=_DTYPES[code])
            except OverflowError:  # an int beyond 64 bits
                pass
            else:
                return ["a", code, self._raw(array)]
        elif kind is tuple:
            return ["t", self._lengths(column), self.items([x for v in column for x in v])]
        elif kind is not None and kind not in _PLAIN:
            memo = self.memo
            ids = [id(v) for v in column]
            if all(i in memo for i in ids):
                refs = np.array([memo[i] for i in ids], dtype=np.int64)
                return ["p", ["a", "<i8", self._raw(refs)]]
            if len(set(ids)) == len(ids) and not any(i in memo for i in ids):
                if kind is list:
                    self._number(column)
                    flat = [x for v in column for x in v]
                    return ["r", self._lengths(column), self.items(flat)]
                if kind is dict and all(
                    type(k) is str and type(x) in _PLAIN for d in column for k, x in d.items()
                ):
                    self._number(column)
                    return ["j", *column]
                if kind is np.ndarray:
                    code = _DTYPE_CODES.get(column[0].dtype)
                    if code is not None and all(
                        v.ndim == 1 and v.dtype == column[0].dtype for v in column
                    ):
                        self._number(column)
                        joined = np.concatenate(column)
                        return ["s", code, self._lengths(column), self._raw(joined)]
        plain, encode = _PLAIN, self.encode
        return ["v", *[v if type(v) in plain else encode(v) for v in column]]

    def _number(self, values: Sequence[Any]) -> None:
        """Number ``values`` (mutable, none met before) in order, as :meth:`encode` would."""
        memo, keep = self.memo, self.keep
        for v in values:
            memo[id(v)] = len(keep)
            keep.append(v)

    def _lengths(self, values: Sequence[Any]) -> list[Any]:
        return ["a", "<i8", self._raw(np.array([len(v) for v in values], dtype=np.int64))]

    def _raw(self, value: np.ndarray[Any, Any], order: Literal["C", "F"] = "C") -> int:
        """Append ``value``'s bytes (in ``order``) to the arrays section, 8-byte aligned; their
        offset."""
        raw = value.tobytes(order=order)
        offset = self.size
        self.arrays.append(raw)
        pad = -len(raw) % 8
        if pad:
            self.arrays.append(b"\0" * pad)
        self.size += len(raw) + pad
        return offset

    def _array(self, value: np.ndarray[Any, Any]) -> list[Any]:
        code = _DTYPE_CODES.get(value.dtype)
        if code is None:
            raise TypeError(f"it holds an array of dtype {value.dtype}")
        order: Literal["C", "F"] = (
            "F" if value.flags.f_contiguous and not value.flags.c_contiguous else "C"
        )
        return ["A", code, list(value.shape), self._raw(value, order), order]


def dumps(state: object) -> bytes:
    """``state`` as a snapshot (see the module's docs for the format)."""
    encoder = _Encoder()
    try:
        root = encoder.encode(state)
        document = json.dumps(
            {"format": FORMAT_VERSION, "layouts": encoder.layout_list, "root": root},
            separators=(",", ":"),
            ensure_ascii=False,
            allow_nan=True,
            check_circular=False,  # a tree by construction: shared objects are "R" nodes
        ).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as err:
        raise PersistenceError(
            f"the memory's state cannot be saved: {err} (pass run-time objects such as a custom "
            "clock, embedder or evaluator to the store, not inside policy parameters)"
        ) from err
    arrays = b"".join(encoder.arrays)
    if len(document) + len(arrays) > _MAX_BYTES:
        raise PersistenceError(f"the memory's state is too large to save ({len(arrays)} bytes)")
    head = MAGIC + _HEAD.pack(FORMAT_VERSION, len(document), len(arrays))
    digest = hashlib.blake2b(head, digest_size=_DIGEST)
    digest.update(document)
    digest.update(arrays)
    return b"".join((head, digest.digest(), document, arrays))


# -- reading ----------------------------------------------------------------------------------
class _Bad(Exception):
    """A structural fault in a snapshot (becomes a :class:`PersistenceError`)."""


_NUMBERS: frozenset[type] = frozenset(
    {bool, int, float, np.bool_, *(dtype.type for dtype in _DTYPES.values())}
)


def _kind(value: object) -> object:
    """What a template value says a decoded one must be like (``None``: anything)."""
    if value is None:
        return None
    kind = type(value)
    if kind in _NUMBERS:
        return _NUMBERS
    if kind is np.ndarray:
        return (value.dtype, value.ndim)  # type: ignore[attr-defined]
    return frozenset({kind})


_CONTAINERS = frozenset({list, tuple, set, frozenset, deque, dict, OrderedDict})
_EXAMPLES = 4  # a template container's first elements a decoded one's must each be like
#: containers whose elements are each like one of the example's (tuples are compared by place)
_SEQUENCES = frozenset({list, set, frozenset, deque})


def _fits(value: Any, example: Any, depth: int = 0) -> bool:
    """Whether ``value`` is like the template's ``example``, into containers: each element like
    one of the example's first elements, or ``None`` (a state class's contents are checked by
    its own layout; an empty or ``None`` example accepts anything)."""
    if example is None or value is None or depth > 8:
        return True
    kind = type(example)
    if kind in _NUMBERS:
        return type(value) in _NUMBERS
    if kind is np.ndarray:
        return (
            type(value) is np.ndarray
            and value.dtype == example.dtype
            and (value.ndim == example.ndim)
        )
    if type(value) is not kind:
        return False
    if kind is deque and value.maxlen != example.maxlen:
        return False  # a trace is as bounded as a new memory's
    if kind not in _CONTAINERS or not example:
        return True
    if kind is dict or kind is OrderedDict:
        keys, values = list(example)[:_EXAMPLES], list(example.values())[:_EXAMPLES]
        key_types, value_types = _flat_types(keys), _flat_types(values)
        if key_types is not None and value_types is not None:  # one pass, no calls
            if key_types is not _ANY and not set(map(type, value)) <= key_types:
                return False
            for k, v in value.items():
                if k in example:
                    e = example[k]
                    if not (
                        e is None
                        or v is None
                        or (type(v) in _NUMBERS if type(e) in _NUMBERS else type(v) is type(e))
                    ):
                        return False
                elif value_types is not _ANY and type(v) not in value_types:
                    return False
            return True
        return all(
            any(_fits(k, e, depth + 1) for e in keys)
            and (
                _fits(v, example[k], depth + 1)
                if k in example
                else any(_fits(v, e, depth + 1) for e in values)
            )
            for k, v in value.items()
        )
    items = list(example)[:_EXAMPLES]
    if kind is tuple and len(value) == len(example):
        return all(_fits(v, e, depth + 1) for v, e in zip(value, example, strict=True))
    types = _flat_types(items)
    if types is not None:  # examples with nothing inside: the elements' types say it all
        return types is _ANY or set(map(type, value)) <= types
    width = len(items[0]) if type(items[0]) is tuple and value else -1
    if (
        width > 0
        and all(type(e) is tuple and len(e) == width for e in items)
        and all(type(v) is tuple and len(v) == width for v in value)
    ):  # rows of tuples like the examples': place by place, each place a column
        places = list(zip(*items, strict=True))
        return all(
            _fits(list(column), list(place), depth + 1)
            for column, place in zip(zip(*value, strict=True), places, strict=True)
        )
    inner = type(items[0])
    if (
        inner in _SEQUENCES
        and all(type(e) is inner for e in items)
        and all(type(v) is inner for v in value)
    ):  # sequences of sequences: every inner element like one of the examples' inner ones
        examples = [x for e in items for x in list(e)[:_EXAMPLES]]
        return _fits(list(chain.from_iterable(_distinct(value))), examples, depth + 1)
    return all(any(_fits(v, e, depth + 1) for e in items) for v in _distinct(value))


def _distinct(values: Any) -> list[Any]:
    """``values`` without repeats of one object: what is shared is checked once, so a forged
    snapshot's rows all referring to one long list cost its length, not its length squared."""
    return list({id(v): v for v in values}.values())


_ANY: frozenset[type] = frozenset()  # (by identity) any element will do


def _flat_types(examples: list[Any]) -> frozenset[type] | None:
    """The types an element like one of ``examples`` may have, when none of them is a container
    or an array (else ``None``: compare each element); :data:`_ANY` if one is ``None``."""
    types: set[type] = {type(None)}
    for e in examples:
        kind = type(e)
        if e is None:
            return _ANY
        if kind in _NUMBERS:
            types |= _NUMBERS
        elif kind in _CONTAINERS or kind is np.ndarray:
            return None
        else:
            types.add(kind)
    return frozenset(types)


def _like(value: object, wanted: object) -> bool:
    if type(wanted) is tuple:
        return type(value) is np.ndarray and value.dtype == wanted[0] and value.ndim == wanted[1]
    return type(value) in wanted  # type: ignore[operator]


class _Layout:
    """One (class, attribute names) pair of a snapshot, checked once for all its objects."""

    __slots__ = (
        *("shape", "names", "attributes", "setters", "checks", "size", "exact", "metadata"),
        "later",
    )

    def __init__(self, entry: object, template: dict[type, dict[str, _Entry]] | None) -> None:
        if type(entry) is not list or len(entry) != 2 or type(entry[1]) is not list:
            raise _Bad("a malformed layout")
        name, names = entry
        shape = _by_name.get(name) if type(name) is str else None
        if shape is None or shape.named_tuple:
            raise _Bad(f"a snapshot may not hold a {name!r}")
        for attr in names:
            if type(attr) is not str or not attr.isidentifier() or attr.startswith("__"):
                raise _Bad(f"{shape.name} with an attribute named {attr!r}")
        if len(set(names)) != len(names):
            raise _Bad(f"{shape.name} with an attribute named twice")
        if shape.fields is not None and set(names) != shape.fields:
            raise _Bad(f"{shape.name} must have exactly the fields {sorted(shape.fields)}")
        self.checks: list[tuple[int, bool, frozenset[type] | None, _Entry | None]] = []
        kinds = None if template is None else template.get(shape.cls)
        if kinds is None and template is not None and shape.cls in _SIZED:
            raise _Bad(f"a memory of these settings holds no {shape.name}")
        self.exact: list[tuple[int, object]] = []
        #: attributes the class gained after the snapshot was written: their values when
        #: they did not exist yet (the class's ``added_later``), given to every object read
        self.later: dict[str, Callable[[], object]] = {}
        if kinds is not None:
            if set(names) != kinds.keys():
                extra, missing = (
                    sorted(set(names) - kinds.keys()),
                    sorted(kinds.keys() - set(names)),
                )
                added = shape.added_later
                if extra or not set(missing) <= added.keys():
                    raise _Bad(
                        f"{shape.name} has attributes {extra} it should not, lacks {missing}"
                    )
                self.later = {shape.attribute_of.get(n, n): added[n] for n in missing}
            for i, n in enumerate(names):
                entry = kinds[n]
                if entry.exact is not None:
                    self.exact.append((i, entry.exact[0]))
                kind = entry.kind
                types = kind if type(kind) is frozenset else None
                slow = (
                    entry
                    if entry.example is not None or type(kind) is tuple or entry.bounded
                    else None
                )
                if types is not None or slow is not None or not entry.nullable:
                    self.checks.append((i, entry.nullable, types, slow))
        self.shape = shape
        self.names: list[str] = names  # as stored
        self.attributes = [shape.attribute_of.get(n, n) for n in names]  # as the class has them
        self.setters = [shape.slots.get(n) for n in names]
        self.size = len(names) + 2 + shape.items
        #: where an item's metadata is (a record's, a hit's): JSON data, checked to be a tree
        self.metadata = names.index("metadata") if "metadata" in names else None


class _Decoder:
    def __init__(
        self, arrays: memoryview, layouts: list[_Layout], most_nodes: int, resize: bool = True
    ) -> None:
        self.arrays = arrays
        self.layouts = layouts
        self.memo: list[object] = []
        self.unread = len(arrays)  # bytes of the arrays not read yet (see _spend)
        #: the size of each container in items' metadata, written out (see _tree)
        self.sizes: dict[int, int] = {}
        self.open_nodes: set[int] = set()
        self.most_nodes = most_nodes
        #: whether objects make again the rows their snapshot left out (not while a former
        #: layout is read without a template: no format before today's leaves rows out)
        self.resize = resize
        self.generators = 0  # random generators made so far (see _generator)

    def decode(self, node: Any, depth: int) -> Any:
        kind = type(node)
        if kind is str or kind is int or kind is float or kind is bool or node is None:
            return node
        if kind is not list or not node:
            raise _Bad(f"a node of type {kind.__name__} without a tag")
        if depth > _MAX_DEPTH:
            raise _Bad(f"it is nested deeper than {_MAX_DEPTH} levels")
        depth += 1
        decode, plain = self.decode, _PLAIN
        tag = node[0]
        if tag == "O":
            return self._object(node, depth)
        if tag == "d":
            if len(node) != 2 or type(node[1]) is not dict:
                raise _Bad("a malformed dict")
            table: dict[Any, Any] = {}
            self.memo.append(table)
            for key, value in node[1].items():
                table[key] = value if type(value) in plain else decode(value, depth)
            return table
        if tag == "T":
            return tuple(self._items(node, 1, depth))
        if tag == "L":
            out: list[Any] = []
            self.memo.append(out)
            out.extend(self._items(node, 1, depth))
            return out
        if tag == "R":
            index = node[1] if len(node) == 2 else None
            if type(index) is not int or not 0 <= index < len(self.memo):
                raise _Bad(f"a reference to an unknown node {index!r}")
            return self.memo[index]
        if tag == "A":
            array = self._array(node)
            self.memo.append(array)
            return array
        if tag == "D" or tag == "M":
            if len(node) != 3 or type(node[1]) is not list or type(node[2]) is not list:
                raise _Bad("a malformed dict")
            mapping: dict[Any, Any] = {} if tag == "D" else OrderedDict()
            self.memo.append(mapping)
            keys = [decode(key, depth) for key in node[1]]
            values = self._items(node[2], 0, depth)
            if len(keys) != len(values):
                raise _Bad("a dict with more keys than values")
            mapping.update(zip(keys, values, strict=True))
            return mapping
        if tag == "Q":
            maxlen = node[1] if len(node) > 1 else "missing"
            if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
                raise _Bad(f"a deque with maxlen {maxlen!r}")
            queue: deque[Any] = deque(maxlen=maxlen)
            self.memo.append(queue)
            queue.extend(self._items(node, 2, depth))
            return queue
        if tag == "S":
            members: set[Any] = set()
            self.memo.append(members)
            members.update([v if type(v) in plain else decode(v, depth) for v in node[1:]])
            return members
        if tag == "F":
            return frozenset([v if type(v) in plain else decode(v, depth) for v in node[1:]])
        if tag == "N":
            if len(node) != 3 or node[1] not in _DTYPES or type(node[2]) is not str:
                raise _Bad("a malformed numpy scalar")
            dtype = _DTYPES[node[1]]
            raw = bytes.fromhex(node[2])
            if len(raw) != dtype.itemsize:
                raise _Bad(f"a numpy scalar of {len(raw)} bytes for dtype {dtype}")
            return np.frombuffer(raw, dtype)[0]
        if tag == "G":
            return self._generator(node, depth)
        if tag == "U":
            if len(node) != 3 or type(node[2]) is not list:
                raise _Bad("a malformed named tuple")
            shape = _by_name.get(node[1]) if type(node[1]) is str else None
            fields = None if shape is None else getattr(shape.cls, "_fields", None)
            if shape is None or not shape.named_tuple or fields is None:
                raise _Bad(f"a snapshot may not hold a {node[1]!r}")
            if len(node[2]) != len(fields):
                raise _Bad(f"{shape.name} has {len(fields)} fields, not {len(node[2])}")
            return tuple.__new__(
                shape.cls, [v if type(v) in plain else decode(v, depth) for v in node[2]]
            )
        raise _Bad(f"an unknown tag {tag!r}")

    def _items(self, nodes: list[Any], start: int, depth: int) -> list[Any]:
        """The elements whose nodes are ``nodes[start:]``: a table's rows, or one each."""
        if len(nodes) == start + 1:
            only = nodes[start]
            if type(only) is list and only and only[0] == "#":
                return self._table(only, depth + 1)
        decode, plain = self.decode, _PLAIN
        return [v if type(v) in plain else decode(v, depth) for v in nodes[start:]]

    def _table(self, node: list[Any], depth: int) -> list[Any]:
        """The rows of a table (see :meth:`_Encoder._table`): tuples, objects of one layout
        (numbered before their columns are read, as when written), or one column's values."""
        if depth > _MAX_DEPTH:
            raise _Bad(f"it is nested deeper than {_MAX_DEPTH} levels")
        if len(node) != 5 or type(node[2]) is not int or type(node[4]) is not list:
            raise _Bad("a malformed table")
        _, form, key, n, columns = node
        if type(n) is not int or n < 0 or not columns:
            raise _Bad(f"a table of {n!r} rows")
        for column in columns:  # sizes first: nothing is made for rows that are not there
            self._rows(column, n)
        if form == "C" and key == 1 and len(columns) == 1:
            return self._column(columns[0], n, depth)
        if form == "T":
            if key != len(columns):
                raise _Bad(f"a table of {key}-tuples with {len(columns)} columns")
            values = [self._column(column, n, depth) for column in columns]
            return list(zip(*values, strict=True))
        if form != "O" or not 0 <= key < len(self.layouts):
            raise _Bad(f"a table of {form!r} rows, layout {key!r}")
        layout = self.layouts[key]
        shape = layout.shape
        if shape.items or len(columns) != len(layout.names):
            raise _Bad(f"a table of {shape.name} with {len(columns)} columns")
        cls = shape.cls
        objects = [object.__new__(cls) for _ in range(n)]
        self.memo.extend(objects)
        values = [self._column(column, n, depth) for column in columns]
        for position, nullable, types, slow in layout.checks:
            column = values[position]
            kinds = set(map(type, column))
            if (
                (not nullable and type(None) in kinds)
                or types is not None
                and not kinds - {type(None)} <= types
                or slow is not None
                and not slow.check_all(column)
            ):
                name = layout.names[position]
                raise _Bad(f"{shape.name}.{name} is unlike a new one's")
        if layout.metadata is not None:
            for metadata in values[layout.metadata]:
                self._tree(metadata)
        if shape.has_dict:
            names = layout.attributes
            for obj, row in zip(objects, zip(*values, strict=True), strict=True):
                obj.__dict__.update(zip(names, row, strict=True))
                for name, make in layout.later.items():
                    obj.__dict__[name] = make()
        for setter, column in zip(layout.setters, values, strict=True):
            if setter is not None:
                deque(map(setter.__set__, objects, column), maxlen=0)  # one C loop per column
        for position, wanted in layout.exact:
            for value in values[position]:
                if not _same(wanted, value):
                    name = layout.names[position]
                    raise _Bad(f"{shape.name}.{name} is {value!r}, not the scope's {wanted!r}")
        restore = self._restore(cls)
        if restore is not None:
            for obj in objects:
                restore(obj)
        return objects

    def _restore(self, cls: type) -> Callable[[Any], None] | None:
        """What puts back ``cls``'s run-time parts and the rows its snapshot left out; not
        the rows while a former layout is read without a template (nothing to check their
        number against, and no earlier format left any out)."""
        if not self.resize and cls in _SIZED:
            return None
        return _RESTORE.get(cls)

    def _rows(self, column: object, n: int) -> None:
        """Check that ``column`` is a table column of ``n`` values, before any is made."""
        if not isinstance(column, list) or not column:
            raise _Bad("a malformed table column")
        tag = column[0]
        if tag == "v" or tag == "j":
            if len(column) != n + 1:
                raise _Bad(f"a table column of {len(column) - 1} values for {n} rows")
        elif type(tag) is not str or len(column) != _COLUMN_SIZES.get(tag):
            raise _Bad("a malformed table column")
        else:
            self._region(column if tag == "a" else column[2 if tag == "s" else 1], n)

    def _region(self, column: object, n: int) -> tuple[np.dtype[Any], int]:
        """The dtype and offset of an ``["a", dtype, offset]`` column of ``n`` numbers, once
        checked to lie inside the arrays."""
        if type(column) is not list or len(column) != 3 or column[1] not in _COLUMN_TYPES:
            raise _Bad(f"a malformed column of numbers {column!r:.40}")
        dtype = _DTYPES[column[1]]
        offset = column[2]
        if type(offset) is not int or offset < 0 or offset + n * dtype.itemsize > len(self.arrays):
            raise _Bad(f"a table column at offset {offset!r} outside the arrays")
        return dtype, offset

    def _tree(self, metadata: object) -> None:
        """Refuse an item's metadata that is more than its snapshot could spell out. Metadata
        is JSON, a tree, so written out in full it is no longer than the document; sixty
        lists each holding the next twice are sixty nodes to read but 2**60 leaves to
        whoever walks them (an export, a JSON dump). Sizes are counted once per container
        (a hit's metadata is a shallow copy of its item's: they share the containers inside),
        so this costs what was read."""
        if type(metadata) is dict and all(type(v) in _PLAIN for v in metadata.values()):
            return  # (most are: flat, nothing to share)
        sizes = self.sizes
        todo: list[tuple[Any, bool]] = [(metadata, False)]
        while todo:
            value, done = todo.pop()
            key = id(value)
            if done:
                items = value.values() if type(value) is dict else value
                sizes[key] = 1 + sum(sizes.get(id(v), 1) for v in items)
                if sizes[key] > self.most_nodes:
                    raise _Bad("an item's metadata holds one list or dict many times over")
                continue
            if type(value) not in _TREE_NODES or key in sizes:
                continue
            if key in self.open_nodes:
                raise _Bad("an item's metadata holds itself")
            self.open_nodes.add(key)
            todo.append((value, True))
            items = value.values() if type(value) is dict else value
            todo.extend((v, False) for v in items)
        self.open_nodes.clear()

    def _spend(self, nbytes: int) -> None:
        """Count ``nbytes`` read from the arrays: a snapshot reads each of its bytes once, so
        more than them all is a forged one making the reader's work grow without bound (the
        same region read by table after table)."""
        self.unread -= nbytes
        if self.unread < 0:
            raise _Bad("it reads its arrays more than once")

    def _numbers(self, column: object, n: int) -> list[Any]:
        """The ``n`` numbers of an ``["a", dtype, offset]`` column."""
        dtype, offset = self._region(column, n)
        self._spend(n * dtype.itemsize)
        values: list[Any] = np.frombuffer(self.arrays, dtype, n, offset).tolist()
        return values

    def _counts(self, column: object, n: int) -> list[int]:
        """The ``n`` lengths of a column of sequences: whole numbers."""
        counts = self._numbers(column, n)
        if column[1] != "<i8" or any(c < 0 for c in counts):  # type: ignore[index]
            raise _Bad("a table column of sequences with bad lengths")
        return counts

    def _column(self, column: list[Any], n: int, depth: int) -> list[Any]:
        """The ``n`` values of one table column (its size checked by :meth:`_rows`)."""
        tag = column[0]
        if tag == "a":
            return self._numbers(column, n)
        if tag == "v":
            decode, plain = self.decode, _PLAIN
            return [v if type(v) in plain else decode(v, depth) for v in column[1:]]
        if tag == "p":  # objects numbered before
            refs = self._numbers(column[1], n)
            memo = self.memo
            if column[1][1] != "<i8" or not all(0 <= i < len(memo) for i in refs):
                raise _Bad("a table column of references to unknown nodes")
            return [memo[i] for i in refs]
        if tag == "j":  # dicts of plain values, numbered in order
            for table in column[1:]:
                if type(table) is not dict or not all(type(v) in _PLAIN for v in table.values()):
                    raise _Bad("a malformed table column of plain dicts")
            self.memo.extend(column[1:])
            return column[1:]
        if tag == "s":  # 1-D arrays of one dtype, numbered in order
            dtype = _DTYPES.get(column[1]) if type(column[1]) is str else None
            if dtype is None:
                raise _Bad(f"a table column of arrays of dtype {column[1]!r}")
            counts = self._counts(column[2], n)
            offset, total = column[3], sum(counts)
            if (
                type(offset) is not int
                or offset < 0
                or offset + total * dtype.itemsize > len(self.arrays)
            ):
                raise _Bad(f"a table column of arrays at offset {offset!r} outside the arrays")
            self._spend(total * dtype.itemsize)
            flat = np.frombuffer(self.arrays, dtype, total, offset)
            bounds = np.cumsum(counts).tolist()
            arrays = [flat[b - c : b].copy() for b, c in zip(bounds, counts, strict=True)]
            self.memo.extend(arrays)
            return arrays
        # "r": n lists, numbered first, then their elements; "t": n tuples of elements
        counts = self._counts(column[1], n)
        lists: list[list[Any]] = [[] for _ in range(n)]
        if tag == "r":
            self.memo.extend(lists)
        if type(column[2]) is not list:
            raise _Bad("a malformed table column of sequences")
        elements = self._items(column[2], 0, depth)
        if len(elements) != sum(counts):
            raise _Bad(
                f"a table column of sequences of {sum(counts)} elements, not {len(elements)}"
            )
        start = 0
        for target, count in zip(lists, counts, strict=True):
            target.extend(elements[start : start + count])
            start += count
        if tag == "t":
            return [tuple(values) for values in lists]
        return lists

    def _object(self, node: list[Any], depth: int) -> object:
        index = node[1] if len(node) > 1 else None
        if type(index) is not int or not 0 <= index < len(self.layouts):
            raise _Bad(f"an object of unknown layout {index!r}")
        layout = self.layouts[index]
        if len(node) != layout.size:
            raise _Bad(f"a {layout.shape.name} of {len(node)} parts, not {layout.size}")
        shape = layout.shape
        cls = shape.cls
        obj: Any = object.__new__(cls) if not shape.items else list.__new__(cls)
        self.memo.append(obj)
        decode, plain = self.decode, _PLAIN
        end = len(layout.names) + 2
        values = [v if type(v) in plain else decode(v, depth) for v in node[2:end]]
        for position, nullable, types, slow in layout.checks:
            value = values[position]
            if (
                (not nullable if value is None else types is not None and type(value) not in types)
                or value is not None
                and slow is not None
                and not slow.check(value)
            ):
                name = layout.names[position]
                if slow is not None and slow.bounded and type(value) in _NUMBERS:
                    raise _Bad(f"{shape.name}.{name} is {value!r}, beyond +-{MOST_COUNT}")
                raise _Bad(f"{shape.name}.{name} is a {type(value).__name__}, unlike a new one's")
        if layout.metadata is not None:
            self._tree(values[layout.metadata])
        for position, wanted in layout.exact:
            value = values[position]
            if not _same(wanted, value):
                name = layout.names[position]
                raise _Bad(f"{shape.name}.{name} is {value!r}, not the scope's {wanted!r}")
        if shape.has_dict:
            obj.__dict__.update(zip(layout.attributes, values, strict=True))
            for name, make in layout.later.items():
                obj.__dict__[name] = make()
        for setter, value in zip(layout.setters, values, strict=True):
            if setter is not None:
                setter.__set__(obj, value)
        if shape.items:
            items = node[end]
            if type(items) is not list:
                raise _Bad(f"a malformed {shape.name}")
            list.extend(obj, [v if type(v) in plain else decode(v, depth) for v in items])
        restore = self._restore(cls)
        if restore is not None:
            restore(obj)
        return obj

    def _array(self, node: list[Any]) -> np.ndarray[Any, Any]:
        if len(node) != 5:
            raise _Bad("a malformed array")
        _, code, shape, offset, order = node
        dtype = _DTYPES.get(code) if type(code) is str else None
        if dtype is None:
            raise _Bad(f"an array of dtype {code!r}")
        if (
            type(shape) is not list
            or len(shape) > _MAX_NDIM
            or not all(type(n) is int and n >= 0 for n in shape)
        ):
            raise _Bad(f"an array of shape {shape!r}")
        if order != "C" and order != "F":
            raise _Bad(f"an array of order {order!r}")
        count = 1
        for n in shape:
            count *= n
        nbytes = count * dtype.itemsize
        if type(offset) is not int or offset < 0 or offset + nbytes > len(self.arrays):
            raise _Bad(f"an array of {nbytes} bytes at offset {offset!r} outside the arrays")
        self._spend(nbytes)
        flat = np.frombuffer(self.arrays, dtype, count, offset)
        return np.array(flat.reshape(shape, order=order), order=order)  # a writable copy

    def _generator(self, node: list[Any], depth: int) -> np.random.Generator:
        if len(node) != 3 or node[1] not in _BIT_GENERATORS:
            raise _Bad(f"a random generator over {node[1:2]!r}")
        self.generators += 1  # each takes kilobytes and the system's entropy to make
        if self.generators > _MAX_GENERATORS:
            raise _Bad(f"it holds more than {_MAX_GENERATORS} random generators")
        bit_generator = _BIT_GENERATORS[node[1]]()
        index = len(self.memo)
        self.memo.append(None)  # numbered first, as when written; set once rebuilt
        state = self.decode(node[2], depth)
        if type(state) is not dict or state.get("bit_generator") != node[1]:
            raise _Bad("a random generator's state is not its bit generator's")
        bit_generator.state = state  # checked by numpy
        generator = np.random.Generator(bit_generator)
        self.memo[index] = generator
        return generator


class _Entry:
    """What the templates say of one attribute: its kind (``None``: any), an example container
    (``None``: none), and whether it may be ``None``."""

    __slots__ = ("kind", "example", "nullable", "exact", "integral")

    def __init__(self) -> None:
        self.kind: object = _UNSEEN
        self.example: Any = None
        self.nullable = True
        self.exact: tuple[object] | None = None  # (the template's value,): it must be that
        #: every value seen is a Python int or bool: a counter, a size, a flag (see `bounded`)
        self.integral = True

    @property
    def bounded(self) -> bool:
        """Whether a value must lie within :data:`MOST_COUNT`: an attribute the templates
        hold as a Python int (a counter, an index, a flag) in a class of the library (or a
        part of the memory's own state), whose next step adds to it or writes it into an
        int64 array; a snapshot's value beyond the bound would load, and then make every
        step fail."""
        return self.integral and self.kind is _NUMBERS

    def see(self, value: object, new: bool) -> None:
        if value is None:
            return
        if new:
            self.nullable = False  # set in a new memory: never None
        if type(value) is not int and type(value) is not bool:
            self.integral = False
        kind = _kind(value)
        if self.kind is _UNSEEN:
            self.kind = kind
        elif self.kind != kind:
            self.kind = None  # seen with two kinds: either will do
        if type(value) in _CONTAINERS and (
            value and not self.example or self.example is None and type(value) is deque
        ):
            self.example = value  # the first that holds something (a deque: its maxlen too)

    def check_all(self, values: list[Any]) -> bool:
        """:meth:`check` of each of ``values`` (a table's column), in as few passes as can be."""
        present = [v for v in values if v is not None]
        if len(present) != len(values) and not self.nullable:
            return False
        example = self.example
        kind = type(example)
        if kind in _SEQUENCES and set(map(type, present)) <= {kind}:
            types = _flat_types(list(example)[:_EXAMPLES])
            if types is not None:  # every element of every value, in one pass
                return types is _ANY or set(map(type, chain.from_iterable(present))) <= types
        return all(self.check(v) for v in present)

    def check(self, value: object) -> bool:
        if value is None:
            return self.nullable
        kind = self.kind
        if kind is not None and kind is not _UNSEEN and not _like(value, kind):
            return False
        if self.bounded and not -MOST_COUNT <= value <= MOST_COUNT:  # type: ignore[operator]
            return False  # (NaN too: it compares false)
        return self.example is None or _fits(value, self.example)


_UNSEEN = object()
#: the largest count a snapshot may hold where a new memory holds an int (a step counter, a
#: serial, an index): far beyond any count a memory reaches, and far enough below 2**63 that
#: the steps after it still fit the int64 arrays counters are written into
MOST_COUNT = 2**62
#: the parts of a memory's state its settings make, and no step changes: a snapshot holds
#: the template's (a memory whose gate asks an evaluator, its dimension, policy and capacity)
_ROOT_SETTINGS = ("_prepares", "dim", "policy", "capacity")


def _hold_exact(
    shape: _Shape,
    attrs: dict[str, Any],
    known: dict[str, _Entry],
    settings: bool,
    loose: set[tuple[type, str]],
    new: bool,
) -> None:
    """Make the attributes of one object of a new memory (``new``; else of an example) that a
    snapshot must hold as they are exact: the sizes its restore allocates by, and with
    ``settings`` its parameters. A parameter that two objects of the class hold apart, in the
    new memory or its examples, is checked by kind only (``loose``)."""
    for name in _SIZED.get(shape.cls, ()) if new else ():
        stored_as = shape.stored_as.get(name, name)
        known[stored_as].exact = (attrs[stored_as],)
    for name in shape.settings if settings else ():
        if name not in attrs:  # (the class's declaration is wrong, not the data)
            raise TypeError(
                f"a {shape.name} has no attribute {name!r}, which its setting_names name"
            )
        held = known[name].exact
        if (shape.cls, name) in loose:
            continue
        if held is not None and not _same(held[0], attrs[name]):
            known[name].exact = None
            loose.add((shape.cls, name))
        elif new:
            known[name].exact = (attrs[name],)


def _same(wanted: object, value: object) -> bool:
    """What an exact attribute's check asks: of the very type, and equal."""
    return type(value) is type(wanted) and bool(value == wanted)


def _template_kinds(
    template: object, examples: tuple[object, ...], settings: bool = False
) -> tuple[dict[type, dict[str, _Entry]], dict[str, _Entry]]:
    """Per state class met in ``template`` or ``examples``: attribute name -> entry; and the
    root's, if a dict. An attribute is ``None``-able unless set in ``template`` (a new memory);
    its kind and example container come from both. The template's values are exact for the
    sizes a restore allocates by and, with ``settings``, for the parameters."""
    shapes = _state_shapes()
    classes: dict[type, dict[str, _Entry]] = {}
    root: dict[str, _Entry] = {}
    loose: set[tuple[type, str]] = set()  # parameters two objects of a class hold apart
    for position, start in enumerate((template, *examples)):
        new = position == 0
        if type(start) is dict:
            for key, item in start.items():
                root.setdefault(key, _Entry()).see(item, new)
                if new and key in _ROOT_SETTINGS:
                    root[key].exact = (item,)
        seen: set[int] = set()
        todo: list[Any] = [start]
        while todo:
            value = todo.pop()
            if id(value) in seen:
                continue
            seen.add(id(value))
            shape = shapes.get(type(value))
            if shape is not None:
                attrs = shape.attributes(value)
                known = classes.setdefault(shape.cls, {})
                if new or known:
                    for name, item in attrs.items():
                        known.setdefault(name, _Entry()).see(item, new)
                    _hold_exact(shape, attrs, known, settings, loose, new)
                else:  # first met in an example: its names are the example's
                    for name, item in attrs.items():
                        known.setdefault(name, _Entry()).see(item, False)
                todo.extend(attrs.values())
                if shape.items or shape.named_tuple:
                    todo.extend(value)
            elif type(value) in (dict, OrderedDict):
                todo.extend(value.values())
            elif type(value) in (list, tuple, set, frozenset, deque):
                todo.extend(value)
    for cls, known in classes.items():
        attribute_of = shapes[cls].attribute_of
        ours = cls.__module__.startswith("solar_core.")
        for name, entry in known.items():
            if not ours:  # a class of yours may hold any int (a hash, say): only its kind
                entry.integral = False
            if entry.kind is _UNSEEN:  # None in every template: what else may it hold?
                entry.kind = _annotated(cls, attribute_of.get(name, name), shapes)
    from ..core import MemoryCore  # (the root is a memory's state: its core's and its own)

    for name, entry in root.items():
        if entry.kind is _UNSEEN:
            entry.kind = _annotated(MemoryCore, name, shapes)
    return classes, root


def _annotated(cls: type, name: str, shapes: dict[type, _Shape]) -> object:
    """The kinds an attribute ``None`` in every template may hold: those of its annotation
    on the class (a union's members; a class stands for its registered subclasses too), none
    if it has no annotation and the class is the library's, any (:data:`_UNSEEN`) if it is
    yours (see :func:`solar_core.registry.state_class`)."""
    try:
        hint = typing.get_type_hints(cls).get(name)
    except Exception:  # an annotation that does not resolve says nothing
        hint = None
    if hint is None:
        return frozenset() if cls.__module__.startswith("solar_core.") else _UNSEEN
    kinds: set[type] = set()
    union = typing.get_origin(hint) in (typing.Union, _types.UnionType)
    for member in typing.get_args(hint) if union else (hint,):
        member = typing.get_origin(member) or member  # tuple[int, float] -> tuple
        if member is type(None):
            continue
        if member in (int, float, bool):
            kinds |= _NUMBERS
        elif member in _CONCRETE:
            kinds.add(member)
        elif isinstance(member, type) and (member in shapes or issubclass(member, _state_bases())):
            kinds |= {c for c in shapes if issubclass(c, member)}  # it, or one of its subclasses
        else:  # Any, object, an abstract type (Mapping, np.floating), a Literal: no check
            return None
    return frozenset(kinds)


#: the types an annotation names that a value read back has exactly (no subclass of them is read)
_CONCRETE = frozenset({str, tuple, list, dict, set, frozenset, deque, OrderedDict, np.ndarray})


def _state_bases() -> tuple[type, ...]:
    """The bases of the library's state classes (an annotation naming one: any of its
    registered subclasses)."""
    from ..admission import AdmissionPolicy
    from ..deletion import DeletionPolicy
    from ..eviction import EvictionPolicy

    return (AdmissionPolicy, DeletionPolicy, EvictionPolicy)


_Kinds = tuple[dict[type, dict[str, _Entry]], dict[str, _Entry]]
#: (id of the template, ids of the examples) -> (template, examples, their kinds)
_kinds_cache: OrderedDict[tuple[int, ...], tuple[object, tuple[object, ...], _Kinds]] = (
    OrderedDict()
)
_kinds_lock = threading.Lock()


def _kinds_of(template: object, examples: tuple[object, ...], settings: bool) -> _Kinds:
    """:func:`_template_kinds`, remembered for the last few templates: a store checks every
    snapshot of a scope against the same ones, made once and never changed. The cache holds
    them, so their ids are not reused while their entry is there."""
    key = (settings, id(template), *map(id, examples))
    with _kinds_lock:
        hit = _kinds_cache.get(key)
        if hit is not None:
            _kinds_cache.move_to_end(key)
            return hit[2]
    kinds = _template_kinds(template, examples, settings)
    with _kinds_lock:
        _kinds_cache[key] = (template, examples, kinds)
        while len(_kinds_cache) > 8:
            _kinds_cache.popitem(last=False)
    return kinds


def is_legacy(blob: bytes) -> bool:
    """Whether ``blob`` is a snapshot of the first format (a pickle, never read)."""
    return bytes(blob[: len(LEGACY_MAGIC)]) == LEGACY_MAGIC


def loads(
    blob: bytes,
    what: str,
    template: object = None,
    examples: tuple[object, ...] = (),
    settings: bool = False,
) -> Any:
    """The state in ``blob``; :class:`PersistenceError` naming ``what`` if it is not one.

    ``template``: a state of the same settings (a new memory's): every object of a class it
    holds, and the root if it is a dict, must have its attribute names, and each attribute the
    kind it has there (``None`` only where it is ``None`` there). ``examples``: states of the
    same settings that hold more (a memory after a few steps): the kinds of attributes the
    template leaves ``None``, of classes it does not hold, and of containers' elements.
    ``settings``: the template was built from settings the scope recorded, so each object's
    parameters (its class's ``setting_names``) must be the template's, not only of their kind:
    a snapshot cannot give a memory parameters its scope's settings do not."""
    view = memoryview(blob)
    if view.nbytes < _PREFIX + _DIGEST or bytes(view[: len(MAGIC)]) != MAGIC:
        if is_legacy(blob):
            raise PersistenceError(
                f"{what} is in the first snapshot format (a pickle), which this version does "
                "not read: nothing of it was loaded"
            )
        raise PersistenceError(f"{what} is not a SOLAR memory snapshot")
    version, doc_len, arrays_len = _HEAD.unpack_from(view, len(MAGIC))
    if version not in _READS:
        raise PersistenceError(
            f"{what} has snapshot format {version}; this library reads "
            f"{', '.join(map(str, sorted(_READS)))}"
        )
    start = _PREFIX + _DIGEST
    if start + doc_len + arrays_len != view.nbytes or view.nbytes > _MAX_BYTES:
        raise PersistenceError(f"{what} is corrupted (its length does not match its header)")
    digest = hashlib.blake2b(view[:_PREFIX], digest_size=_DIGEST)
    digest.update(view[start:])
    if digest.digest() != bytes(view[_PREFIX:start]):
        raise PersistenceError(f"{what} is corrupted (checksum mismatch)")
    try:
        _state_shapes()
        document = json.loads(bytes(view[start : start + doc_len]).decode("utf-8"))
        if type(document) is not dict or document.get("format") != version:
            raise _Bad("its document is not a snapshot's")
        classes, root = (None, {}) if template is None else _kinds_of(template, examples, settings)
        entries = document.get("layouts")
        if type(entries) is not list:
            raise _Bad("it has no layouts")
        if template is not None and version < _CURRENT_LAYOUT:
            # Written before ARC and the coverage policy were one object each: read it as
            # data (every structural check, no template), bring it to today's layout, then
            # check the result against the template like any snapshot.
            from ..former_layouts import upgrade

            layouts = [_Layout(entry, None) for entry in entries]
            reader = _Decoder(view[start + doc_len :], layouts, doc_len + arrays_len, False)
            state = reader.decode(document.get("root"), 0)
            if type(state) is not dict:
                raise _Bad(f"it holds a {type(state).__name__}, not a memory's state")
            upgrade(state)
            return loads(dumps(state), what, template, examples, settings)
        layouts = [_Layout(entry, classes) for entry in entries]
        reader = _Decoder(view[start + doc_len :], layouts, doc_len + arrays_len)
        state = reader.decode(document.get("root"), 0)
        if template is not None:
            if type(state) is not type(template):
                raise _Bad(f"it holds a {type(state).__name__}, not a memory's state")
            if root and type(state) is dict:
                for name in set(_LATER_PARTS) - state.keys():  # written before they existed
                    state[name] = None
                if state.keys() != root.keys():
                    extra, missing = (
                        sorted(state.keys() - root.keys()),
                        sorted(root.keys() - state.keys()),
                    )
                    raise _Bad(f"the memory has parts {extra} it should not, lacks {missing}")
                for name, wanted in root.items():
                    if name in _LATER_PARTS:
                        _check_reading(name, state[name])
                        continue
                    if wanted.exact is not None and not _same(wanted.exact[0], state[name]):
                        raise _Bad(
                            f"the memory's {name} is {state[name]!r}, not the scope's "
                            f"{wanted.exact[0]!r}"
                        )
                    if not wanted.check(state[name]):
                        if wanted.bounded and type(state[name]) in _NUMBERS:
                            raise _Bad(
                                f"the memory's {name} is {state[name]!r}, beyond +-{MOST_COUNT}"
                            )
                        raise _Bad(f"the memory's {name} is a {type(state[name]).__name__}")
    except PersistenceError:
        raise
    except Exception as err:  # any failure to read is the same problem for the caller
        raise PersistenceError(f"{what} cannot be read: {err}") from err
    return state
