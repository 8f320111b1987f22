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
    document         UTF-8 JSON: {"format": 2, "layouts": [[class, [attribute...]]...],
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
same dtype and rank, the same container or class) unless the template's is ``None``. Every
failure is a :class:`PersistenceError` naming what was read.

What a database writer can still do: replace a memory's state by any *other* state the library's
classes can express (and that passes the checks above and the memory's invariants) -- the same as
editing its logged steps or items. What they cannot do: run code, construct objects of other
classes, or crash the reading process.

Snapshots written before this format (``SOLAR-SNAPSHOT-1``, a pickle) are refused, never read;
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
from collections import OrderedDict, deque
from collections.abc import Callable
from typing import Any

import numpy as np

from .errors import PersistenceError

MAGIC = b"SOLAR-SNAPSHOT-2\n"
#: the first snapshot format (a pickle): recognised, refused, never read
LEGACY_MAGIC = b"SOLAR-SNAPSHOT-1\n"
FORMAT_VERSION = 2
_HEAD = struct.Struct("<HIQ")
_DIGEST = 32
_PREFIX = len(MAGIC) + _HEAD.size
#: bounds on what a snapshot may ask of the reader
_MAX_DEPTH = 400
_MAX_NDIM = 16
_MAX_BYTES = 1 << 32

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
        *("getter", "slot_names", "plain_dict"),
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
        self.plain_dict = self.has_dict and not self.slots and cls not in _GETSTATE

    def attributes(self, obj: object) -> dict[str, Any]:
        """``obj``'s state as its class means it to be saved (its ``__getstate__``)."""
        if type(obj) in _GETSTATE:
            state: dict[str, Any] = _GETSTATE[type(obj)](obj)
            return state
        if self.plain_dict:
            plain: dict[str, Any] = obj.__dict__
            return plain
        attrs: dict[str, Any] = dict(obj.__dict__) if self.has_dict else {}
        for slot, descriptor in self.slots.items():
            try:
                attrs[slot] = descriptor.__get__(obj, self.cls)
            except AttributeError:  # an unset slot stays unset
                pass
        return attrs


_shapes: dict[type, _Shape] | None = None
_by_name: dict[str, _Shape] = {}
#: state classes whose ``__getstate__``/``__setstate__`` leave out or remake run-time parts
_GETSTATE: dict[type, Callable[[Any], dict[str, Any]]] = {}
_RESTORE: dict[type, Callable[[Any], None]] = {}


def _state_shapes() -> dict[type, _Shape]:
    global _shapes
    if _shapes is None:
        from .. import admission, deletion, eviction, lifecycle, memory, neighbours, store, types
        from ..beta_posterior import BetaPosterior

        classes: list[type] = [
            memory._Record,
            memory._Retrieval,
            store.VectorStore,
            neighbours.NeighbourIndex,
            lifecycle.Lifecycle,
            BetaPosterior,
            types.Hit,
            types.Hits,
            types.Decision,
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
        # Lifecycle.__getstate__ drops its thread, its stop event and its last error (run-time
        # things); __setstate__ makes a new event. Mirrored here, without calling either on data.
        _GETSTATE[lifecycle.Lifecycle] = lifecycle.Lifecycle.__getstate__
        _RESTORE[lifecycle.Lifecycle] = _new_stop_event
        for cls in classes:
            own = getattr(cls, "__setstate__", None)
            if own is not None and cls not in _RESTORE and "__setstate__" in vars(cls):
                raise TypeError(f"{cls.__qualname__} defines __setstate__: teach the codec")
        shapes = {cls: _Shape(cls) for cls in classes}
        _by_name.update({shape.name: shape for shape in shapes.values()})
        _shapes = shapes
    return _shapes


def _new_stop_event(lifecycle: Any) -> None:
    lifecycle.__dict__["_stop"] = threading.Event()
    lifecycle.__dict__.setdefault("_thread", None)


def state_classes() -> set[tuple[str, str]]:
    """The library's classes a memory's state is made of, by (module, name): policies, the
    store and its index, records, decisions, hits, the lifecycle. Not ``SolarMemory`` (a
    snapshot holds its parts), not evaluators, embedders or anything else that could act."""
    return {(cls.__module__, cls.__qualname__) for cls in _state_shapes()}


# -- writing ----------------------------------------------------------------------------------
#: values JSON holds as they are
_PLAIN = frozenset({str, int, float, bool, type(None)})


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
            return ["T", *[v if type(v) in plain else encode(v) for v in value]]
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
            return ["L", *[v if type(v) in plain else encode(v) for v in value]]
        if kind is dict:
            for k in value:
                if type(k) is not str:
                    return [
                        "D",
                        [k if type(k) in plain else encode(k) for k in value],
                        [v if type(v) in plain else encode(v) for v in value.values()],
                    ]
            return ["d", {k: v if type(v) in plain else encode(v) for k, v in value.items()}]
        if kind is np.ndarray:
            return self._array(value)
        if kind is OrderedDict:
            return [
                "M",
                [k if type(k) in plain else encode(k) for k in value],
                [v if type(v) in plain else encode(v) for v in value.values()],
            ]
        if kind is deque:
            return ["Q", value.maxlen, *[v if type(v) in plain else encode(v) for v in value]]
        if kind is set:
            return ["S", *[v if type(v) in plain else encode(v) for v in value]]
        if kind is np.random.Generator:
            name = type(value.bit_generator).__name__
            if name not in _BIT_GENERATORS:
                raise TypeError(f"a random generator over {name} is not supported")
            return ["G", name, encode(value.bit_generator.state)]
        raise TypeError(f"it holds a {kind.__module__}.{kind.__qualname__}")

    def _array(self, value: np.ndarray[Any, Any]) -> list[Any]:
        code = _DTYPE_CODES.get(value.dtype)
        if code is None:
            raise TypeError(f"it holds an array of dtype {value.dtype}")
        fortran = value.flags.f_contiguous and not value.flags.c_contiguous
        raw = value.tobytes(order="F" if fortran else "C")
        order = "F" if fortran else "C"
        offset = self.size
        self.arrays.append(raw)
        pad = -len(raw) % 8
        if pad:
            self.arrays.append(b"\0" * pad)
        self.size += len(raw) + pad
        return ["A", code, list(value.shape), offset, order]


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


_NUMBERS = frozenset({bool, int, float, np.bool_, *(dtype.type for dtype in _DTYPES.values())})


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
    if kind not in _CONTAINERS or not example:
        return True
    if kind is dict or kind is OrderedDict:
        keys, values = list(example)[:_EXAMPLES], list(example.values())[:_EXAMPLES]
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
    return all(any(_fits(v, e, depth + 1) for e in items) for v in value)


def _like(value: object, wanted: object) -> bool:
    if type(wanted) is tuple:
        return type(value) is np.ndarray and value.dtype == wanted[0] and value.ndim == wanted[1]
    return type(value) in wanted  # type: ignore[operator]


class _Layout:
    """One (class, attribute names) pair of a snapshot, checked once for all its objects."""

    __slots__ = ("shape", "names", "setters", "checks", "size")

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
        if kinds is not None:
            if set(names) != kinds.keys():
                extra, missing = (
                    sorted(set(names) - kinds.keys()),
                    sorted(kinds.keys() - set(names)),
                )
                raise _Bad(f"{shape.name} has attributes {extra} it should not, lacks {missing}")
            for i, n in enumerate(names):
                entry = kinds[n]
                kind = entry.kind
                types = kind if type(kind) is frozenset else None
                slow = entry if entry.example is not None or type(kind) is tuple else None
                if types is not None or slow is not None or not entry.nullable:
                    self.checks.append((i, entry.nullable, types, slow))
        self.shape = shape
        self.names: list[str] = names
        self.setters = [shape.slots.get(n) for n in names]
        self.size = len(names) + 2 + shape.items


class _Decoder:
    def __init__(self, arrays: memoryview, layouts: list[_Layout]) -> None:
        self.arrays = arrays
        self.layouts = layouts
        self.memo: list[object] = []

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
            return tuple([v if type(v) in plain else decode(v, depth) for v in node[1:]])
        if tag == "L":
            out: list[Any] = []
            self.memo.append(out)
            out.extend([v if type(v) in plain else decode(v, depth) for v in node[1:]])
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
            if len(node[1]) != len(node[2]):
                raise _Bad("a dict with more keys than values")
            mapping: dict[Any, Any] = {} if tag == "D" else OrderedDict()
            self.memo.append(mapping)
            for key, value in zip(node[1], node[2], strict=True):
                mapping[decode(key, depth)] = decode(value, depth)
            return mapping
        if tag == "Q":
            maxlen = node[1] if len(node) > 1 else "missing"
            if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
                raise _Bad(f"a deque with maxlen {maxlen!r}")
            queue: deque[Any] = deque(maxlen=maxlen)
            self.memo.append(queue)
            queue.extend([v if type(v) in plain else decode(v, depth) for v in node[2:]])
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
                raise _Bad(f"{shape.name}.{name} is a {type(value).__name__}, unlike a new one's")
        if shape.has_dict:
            obj.__dict__.update(zip(layout.names, values, strict=True))
        for setter, value in zip(layout.setters, values, strict=True):
            if setter is not None:
                setter.__set__(obj, value)
        if shape.items:
            items = node[end]
            if type(items) is not list:
                raise _Bad(f"a malformed {shape.name}")
            list.extend(obj, [v if type(v) in plain else decode(v, depth) for v in items])
        restore = _RESTORE.get(cls)
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
        flat = np.frombuffer(self.arrays, dtype, count, offset)
        return np.array(flat.reshape(shape, order=order), order=order)  # a writable copy

    def _generator(self, node: list[Any], depth: int) -> np.random.Generator:
        if len(node) != 3 or node[1] not in _BIT_GENERATORS:
            raise _Bad(f"a random generator over {node[1:2]!r}")
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

    __slots__ = ("kind", "example", "nullable")

    def __init__(self) -> None:
        self.kind: object = _UNSEEN
        self.example: Any = None
        self.nullable = True

    def see(self, value: object, new: bool) -> None:
        if value is None:
            return
        if new:
            self.nullable = False  # set in a new memory: never None
        kind = _kind(value)
        if self.kind is _UNSEEN:
            self.kind = kind
        elif self.kind != kind:
            self.kind = None  # seen with two kinds: either will do
        if type(value) in _CONTAINERS and value and self.example is None:
            self.example = value

    def check(self, value: object) -> bool:
        if value is None:
            return self.nullable
        kind = self.kind
        if kind is not None and kind is not _UNSEEN and not _like(value, kind):
            return False
        return self.example is None or _fits(value, self.example)


_UNSEEN = object()


def _template_kinds(
    template: object, examples: tuple[object, ...]
) -> tuple[dict[type, dict[str, _Entry]], dict[str, _Entry]]:
    """Per state class met in ``template`` or ``examples``: attribute name -> entry; and the
    root's, if a dict. An attribute is ``None``-able unless set in ``template`` (a new memory);
    its kind and example container come from both."""
    shapes = _state_shapes()
    classes: dict[type, dict[str, _Entry]] = {}
    root: dict[str, _Entry] = {}
    for position, start in enumerate((template, *examples)):
        new = position == 0
        if type(start) is dict:
            for key, item in start.items():
                root.setdefault(key, _Entry()).see(item, new)
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
    return classes, root


def is_legacy(blob: bytes) -> bool:
    """Whether ``blob`` is a snapshot of the first format (a pickle, never read)."""
    return bytes(blob[: len(LEGACY_MAGIC)]) == LEGACY_MAGIC


def loads(
    blob: bytes, what: str, template: object = None, examples: tuple[object, ...] = ()
) -> Any:
    """The state in ``blob``; :class:`PersistenceError` naming ``what`` if it is not one.

    ``template``: a state of the same settings (a new memory's): every object of a class it
    holds, and the root if it is a dict, must have its attribute names, and each attribute the
    kind it has there (``None`` only where it is ``None`` there). ``examples``: states of the
    same settings that hold more (a memory after a few steps): the kinds of attributes the
    template leaves ``None``, of classes it does not hold, and of containers' elements."""
    view = memoryview(blob)
    if view.nbytes < _PREFIX + _DIGEST or bytes(view[: len(MAGIC)]) != MAGIC:
        if is_legacy(blob):
            raise PersistenceError(
                f"{what} is in the first snapshot format (a pickle), which this version does "
                "not read: nothing of it was loaded"
            )
        raise PersistenceError(f"{what} is not a SOLAR memory snapshot")
    version, doc_len, arrays_len = _HEAD.unpack_from(view, len(MAGIC))
    if version != FORMAT_VERSION:
        raise PersistenceError(
            f"{what} has snapshot format {version}; this library reads {FORMAT_VERSION}"
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
        if type(document) is not dict or document.get("format") != FORMAT_VERSION:
            raise _Bad("its document is not a snapshot's")
        classes, root = (None, {}) if template is None else _template_kinds(template, examples)
        entries = document.get("layouts")
        if type(entries) is not list:
            raise _Bad("it has no layouts")
        layouts = [_Layout(entry, classes) for entry in entries]
        state = _Decoder(view[start + doc_len :], layouts).decode(document.get("root"), 0)
        if template is not None:
            if type(state) is not type(template):
                raise _Bad(f"it holds a {type(state).__name__}, not a memory's state")
            if root and type(state) is dict:
                if state.keys() != root.keys():
                    extra, missing = (
                        sorted(state.keys() - root.keys()),
                        sorted(root.keys() - state.keys()),
                    )
                    raise _Bad(f"the memory has parts {extra} it should not, lacks {missing}")
                for name, wanted in root.items():
                    if not wanted.check(state[name]):
                        raise _Bad(f"the memory's {name} is a {type(state[name]).__name__}")
    except PersistenceError:
        raise
    except Exception as err:  # any failure to read is the same problem for the caller
        raise PersistenceError(f"{what} cannot be read: {err}") from err
    return state
