"""The previous snapshot codec (a restricted pickle), kept ONLY as a benchmark baseline.

``solar-bench persistence --snapshot-format old,new`` runs the same workload with this codec
swapped in for the run's worker processes, so the two formats are compared side by side in one
run. It is never used by the library: :mod:`solar_core.persistence.codec` refuses pickles and
never reads one. It writes its own magic (``SOLAR-BENCH-PICKLE``), which neither the library nor
this module accepts from anywhere but the benchmark's own temporary files: :func:`loads` reads
only blobs that :func:`dumps` wrote in this process tree's temporary databases.

Do not use it for anything else: a pickle, even restricted to a list of classes, is a program,
and whoever can write the database can make it crash the reader (numpy's scalar restorer turns
chosen bytes into an object pointer).
"""

from __future__ import annotations

import hashlib
import io
import pickle
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from solar_core.persistence import codec
from solar_core.persistence.errors import PersistenceError

MAGIC = b"SOLAR-BENCH-PICKLE\n"
_DIGEST = 16

#: (module, name) pairs the old format could name besides the library's state classes
_ALLOWED = {
    ("collections", "OrderedDict"),
    ("collections", "deque"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "slice"),
    ("builtins", "complex"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.random._pickle", "__generator_ctor"),
    ("numpy.random._pickle", "__bit_generator_ctor"),
    ("numpy.random.bit_generator", "SeedSequence"),
    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
    ("numpy.random._pcg64", "PCG64"),
    ("numpy.random._pcg64", "PCG64DXSM"),
    ("numpy.random._mt19937", "MT19937"),
    ("numpy.random._philox", "Philox"),
    ("numpy.random._sfc64", "SFC64"),
}


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))

    def find_class(self, module: str, name: str) -> Any:
        if "." not in name and (
            (module, name) in _ALLOWED or (module, name) in codec.state_classes()
        ):
            found = super().find_class(module, name)
            if module.startswith("numpy") or getattr(found, "__module__", None) == module:
                return found
        raise pickle.UnpicklingError(f"a snapshot may not name {module}.{name}")


def dumps(state: object) -> bytes:
    """``state`` as an old-format (pickle) snapshot, under the benchmark's own magic."""
    payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    return MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload


def loads(blob: bytes, what: str, *checks: object, **options: object) -> Any:
    """The state :func:`dumps` wrote (the codec's ``checks`` against a template are ignored: the
    old format checked nothing against the scope's settings)."""
    blob = bytes(blob)
    if not blob.startswith(MAGIC):
        raise PersistenceError(f"{what} is not a benchmark pickle snapshot")
    digest, payload = blob[len(MAGIC) : len(MAGIC) + _DIGEST], blob[len(MAGIC) + _DIGEST :]
    if hashlib.blake2b(payload, digest_size=_DIGEST).digest() != digest:
        raise PersistenceError(f"{what} is corrupted (checksum mismatch)")
    try:
        return _RestrictedUnpickler(payload).load()
    except Exception as err:
        raise PersistenceError(f"{what} cannot be read: {err}") from err


def install() -> None:
    """Swap this codec into :mod:`solar_core.persistence.codec` for the rest of this process
    (a benchmark worker's, which handles only its own temporary databases)."""
    codec.dumps = dumps
    codec.loads = loads
    codec.is_legacy = lambda blob: False


@contextmanager
def installed() -> Iterator[None]:
    """:func:`install` for the duration of a block (the benchmark's parent process)."""
    saved = codec.dumps, codec.loads, codec.is_legacy
    install()
    try:
        yield
    finally:
        codec.dumps, codec.loads, codec.is_legacy = saved
