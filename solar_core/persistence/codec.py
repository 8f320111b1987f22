"""Snapshots of a memory's state: a pickle that can only rebuild the library's own objects.

A snapshot holds everything a memory needs to continue (store, policy state, gate state, RNG
state, counters, traces). Objects supplied at run time -- the embedder, the clock, the
evaluator -- are written as named references and put back from the live memory on load, so a
snapshot never holds model weights or closures.

Loading is restricted: :class:`_SafeUnpickler` resolves only the library's own classes, numpy's
array and random-generator constructors and a few containers. A tampered or foreign blob cannot
name ``os.system`` or any other callable; it fails with :class:`PersistenceError`. A checksum in
the header tells corruption from tampering.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from typing import Any

from .errors import PersistenceError

MAGIC = b"SOLAR-SNAPSHOT-1\n"
_DIGEST = 16

#: (module, name) pairs a snapshot may name besides the library's state classes
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
    # Cython's generated restorer: checks a layout checksum, then sets the fields
    ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
    ("numpy.random._pcg64", "PCG64"),
    ("numpy.random._pcg64", "PCG64DXSM"),
    ("numpy.random._mt19937", "MT19937"),
    ("numpy.random._philox", "Philox"),
    ("numpy.random._sfc64", "SFC64"),
}
_state_classes: set[tuple[str, str]] | None = None


def state_classes() -> set[tuple[str, str]]:
    """The library's classes a memory's state is made of, by (module, name): policies, the
    store and its index, records, decisions, hits, the lifecycle. Not ``SolarMemory`` (a
    snapshot holds its parts), not evaluators, embedders or anything else that could act."""
    global _state_classes
    if _state_classes is None:
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
        _state_classes = {(c.__module__, c.__qualname__) for c in classes}
    return _state_classes


class _SafeUnpickler(pickle.Unpickler):
    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))

    def find_class(self, module: str, name: str) -> Any:
        # Exact (module, name) pairs only: no dotted name (pickle would walk attributes from
        # an allowed module to anything it imports), no function but numpy's restorers.
        if "." not in name and ((module, name) in _ALLOWED or (module, name) in state_classes()):
            found = super().find_class(module, name)
            if module.startswith("numpy") or getattr(found, "__module__", None) == module:
                return found
        raise pickle.UnpicklingError(f"a snapshot may not name {module}.{name}")


def dumps(state: object) -> bytes:
    """``state`` as a snapshot."""
    try:
        payload = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        raise PersistenceError(
            f"the memory's state cannot be saved: {err} (pass run-time objects such as a custom "
            "clock, embedder or evaluator to the store, not inside policy parameters)"
        ) from err
    return MAGIC + hashlib.blake2b(payload, digest_size=_DIGEST).digest() + payload


def loads(blob: bytes, what: str) -> Any:
    """The state in ``blob``; :class:`PersistenceError` naming ``what`` if it is not one."""
    blob = bytes(blob)
    if not blob.startswith(MAGIC):
        raise PersistenceError(f"{what} is not a SOLAR memory snapshot")
    digest, payload = blob[len(MAGIC) : len(MAGIC) + _DIGEST], blob[len(MAGIC) + _DIGEST :]
    if hashlib.blake2b(payload, digest_size=_DIGEST).digest() != digest:
        raise PersistenceError(f"{what} is corrupted (checksum mismatch)")
    try:
        return _SafeUnpickler(payload).load()
    except Exception as err:  # any failure to rebuild is the same problem for the caller
        raise PersistenceError(f"{what} cannot be read: {err}") from err
