"""The one snapshot format: a memory's parameters and state in a flat container.

A snapshot is what :meth:`SolarMemory.params <solar_core.SolarMemory.params>` and
:meth:`~solar_core.SolarMemory.state` return, and nothing else: names to JSON values and
numeric arrays (see :mod:`solar_core.basics.state`). Its bytes, every integer little-endian::

    MAGIC            b"SOLAR-STATE\\n"
    format           u16   (FORMAT: 1)
    header length    u32
    arrays length    u64
    header           UTF-8 JSON: {"params": {...}, "values": {name: value},
                     "arrays": [[name, dtype, [shape...]], ...]}
    arrays           each array's raw bytes, in the header's order, one after the other
    checksum         32 bytes: BLAKE2b of everything above

No references, no class names, nothing nested but JSON values, and array dtypes from a short
numeric list (never ``object``): reading is a JSON parse and a copy per array. A container of
another format, with a bad checksum or lengths, or whose arrays do not add up to the arrays
section, is refused with :class:`PersistenceError`; what the values mean is checked by
:meth:`~solar_core.SolarMemory.load_state`.

>>> import numpy as np
>>> blob = dumps({"policy": "fifo"}, {"steps": 2, "alpha": np.arange(3.0)})
>>> params, state = loads(blob, "an example")
>>> params, state["steps"], state["alpha"].tolist()
({'policy': 'fifo'}, 2, [0.0, 1.0, 2.0])
>>> loads(b"junk", "an example")
Traceback (most recent call last):
...
solar_core.persistence.errors.PersistenceError: an example is not a SOLAR memory snapshot
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
from collections.abc import Mapping
from typing import Any

import numpy as np

from solar_core.persistence.errors import PersistenceError

MAGIC = b"SOLAR-STATE\n"
#: the snapshot format this version writes and reads; a change of it ships a migration
#: (:data:`solar_core.persistence.backend.MIGRATIONS`) and a line in CHANGELOG.md
FORMAT = 1
_HEAD = struct.Struct("<HIQ")
_DIGEST = 32
_PREFIX = len(MAGIC) + _HEAD.size
#: the array types a snapshot may hold (little-endian, never ``object``)
_DTYPES = {code: np.dtype(code) for code in ("|b1", "<i4", "<i8", "<f4", "<f8")}
_CODES = {dtype.newbyteorder("="): code for code, dtype in _DTYPES.items()}
_MAX_NDIM = 4


def dumps(params: Mapping[str, Any], state: Mapping[str, Any]) -> bytes:
    """The container of ``params`` and ``state``. Raises ``TypeError`` for a value that is
    neither a JSON value nor an array of a stored dtype."""
    values: dict[str, Any] = {}
    arrays: list[list[Any]] = []
    chunks: list[bytes] = []
    for name, value in state.items():
        if isinstance(value, np.ndarray):
            code = _CODES.get(value.dtype.newbyteorder("="))
            if code is None:
                raise TypeError(f"state {name!r} is an array of {value.dtype}, not a stored dtype")
            arrays.append([name, code, list(value.shape)])
            chunks.append(np.ascontiguousarray(value, dtype=_DTYPES[code]).tobytes())
        else:
            values[name] = value
    header = json.dumps(
        {"params": params, "values": values, "arrays": arrays},
        ensure_ascii=False,
        separators=(",", ":"),
        default=_refuse,
    ).encode("utf-8")
    body = b"".join(chunks)
    head = MAGIC + _HEAD.pack(FORMAT, len(header), len(body)) + header + body
    return head + hashlib.blake2b(head, digest_size=_DIGEST).digest()


def _refuse(value: object) -> Any:
    raise TypeError(f"a state value of type {type(value).__name__} is not a JSON value")


def format_of(blob: bytes) -> int | None:
    """The format a snapshot says it is in (``None``: not a snapshot at all)."""
    if len(blob) < _PREFIX or not blob.startswith(MAGIC):
        return None
    return int(_HEAD.unpack_from(blob, len(MAGIC))[0])


def loads(blob: bytes, what: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parameters and state a container holds; :class:`PersistenceError` naming ``what``
    if it is not one of this format, is corrupt, or does not add up."""
    version = format_of(blob)
    if version is None:
        raise PersistenceError(f"{what} is not a SOLAR memory snapshot")
    if version != FORMAT:
        raise PersistenceError(
            f"{what} is in snapshot format {version}, which this version of solar-memory does "
            f"not read (it reads format {FORMAT}): open it with the version that wrote it"
        )
    _, header_length, arrays_length = _HEAD.unpack_from(blob, len(MAGIC))
    end = _PREFIX + header_length + arrays_length
    if end + _DIGEST != len(blob):
        raise _damaged(what, "it is truncated or has trailing bytes")
    if hashlib.blake2b(blob[:end], digest_size=_DIGEST).digest() != blob[end:]:
        raise _damaged(what, "it fails its checksum (the stored bytes are corrupted)")
    try:
        header = json.loads(blob[_PREFIX : _PREFIX + header_length].decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise _damaged(what, f"its header is not JSON ({err})") from None
    if (
        type(header) is not dict
        or set(header) != {"params", "values", "arrays"}
        or type(header["params"]) is not dict
        or type(header["values"]) is not dict
        or type(header["arrays"]) is not list
    ):
        raise _damaged(what, "its header is of another layout")
    state: dict[str, Any] = dict(header["values"])
    body = memoryview(blob)[_PREFIX + header_length : end]
    offset = 0
    for entry in header["arrays"]:
        name, dtype, shape = _array_entry(entry, what)
        if name in state:
            raise _damaged(what, f"it holds {name!r} twice")
        size = dtype.itemsize * math.prod(shape)
        if size > len(body) - offset:
            raise _damaged(what, f"array {name!r} runs past the arrays section")
        state[name] = np.frombuffer(body[offset : offset + size], dtype=dtype).reshape(shape)
        offset += size
    if offset != len(body):
        raise _damaged(what, "it has bytes no array claims")
    return header["params"], state


def _damaged(what: str, why: str) -> PersistenceError:
    return PersistenceError(f"{what} cannot be read: {why}")


def _array_entry(entry: object, what: str) -> tuple[str, np.dtype[Any], tuple[int, ...]]:
    if (
        type(entry) is not list
        or len(entry) != 3
        or type(entry[0]) is not str
        or type(entry[1]) is not str
        or entry[1] not in _DTYPES
        or type(entry[2]) is not list
        or len(entry[2]) > _MAX_NDIM
        or any(type(n) is not int or not 0 <= n < 1 << 40 for n in entry[2])
    ):
        raise _damaged(what, f"it describes an array as {str(entry)[:80]}")
    return entry[0], _DTYPES[entry[1]], tuple(entry[2])
