"""Input checks shared by the public API. Each raises before any state is touched."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.basics.records import check_category, copy_metadata

FloatVector = npt.NDArray[np.float32]

_FLOAT32 = np.dtype(np.float32)
_FLOAT32_STRIDES = (_FLOAT32.itemsize,)


def check_text(text: object, what: str = "text") -> str:
    """``text`` if it is a non-blank string of valid Unicode (no lone surrogate)."""
    if not isinstance(text, str):
        raise TypeError(f"{what} must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError(f"{what} must not be empty or blank")
    if not text.isascii():  # ASCII (the common case) cannot hold a surrogate
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ValueError(
                f"{what} is not valid Unicode ({err.reason} at position {err.start}): it cannot "
                "be embedded, hashed or persisted; decode the bytes it came from with "
                "errors='replace' (or fix them)"
            ) from None
    return text


def check_k(k: object, what: str = "k") -> int:
    """Return ``k`` if it is an int >= 1 (bools rejected)."""
    if type(k) is not int and (isinstance(k, bool) or not isinstance(k, int | np.integer)):
        raise TypeError(f"{what} must be an int, got {type(k).__name__}")
    if k < 1:
        raise ValueError(f"{what} must be >= 1, got {k}")
    return int(k)


def check_nonnegative_int(value: object, what: str) -> int:
    """Return ``value`` if it is an int >= 0 (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0, got {value}")
    return int(value)


# Bounds of sizes allocated up front: a memory's slots (a larger one takes capacity=None and
# grows), coverage's window of queries (window x dim floats), neighbours kept per item.
MAX_CAPACITY = 1_000_000
MAX_WINDOW = 65_536
MAX_NEIGHBOURS = 256


def check_size(value: object, what: str, most: int) -> int:
    """``value`` if it is an int in ``[1, most]``: a size something is allocated by.

    >>> check_size(70_000, "max_window", MAX_WINDOW)
    Traceback (most recent call last):
    ...
    ValueError: max_window must be at most 65536 (it sizes what the memory allocates), got 70000
    """
    number = check_k(value, what)
    if number > most:
        raise ValueError(
            f"{what} must be at most {most} (it sizes what the memory allocates), got {number}"
        )
    return number


def check_capacity(capacity: object) -> int | None:
    """``capacity`` if it is ``None`` (unbounded) or an int in ``[1, MAX_CAPACITY]``."""
    if capacity is None:
        return None
    number = check_k(capacity, "capacity")
    if number > MAX_CAPACITY:
        raise ValueError(
            f"capacity must be at most {MAX_CAPACITY:,} (its slots are allocated up front), got "
            f"{number:,}: for a memory that grows with what it holds, pass capacity=None"
        )
    return number


def check_score(score: object, what: str = "score") -> float:
    """Return ``score`` as a float if it is a finite real number in [0, 1]."""
    if type(score) is not float and (  # a plain float, the common case, skips the long test
        isinstance(score, bool) or not isinstance(score, int | float | np.floating | np.integer)
    ):
        raise TypeError(f"{what} must be a number in [0, 1], got {type(score).__name__}")
    value = float(score)
    if not (0.0 <= value <= 1.0):  # also rejects NaN
        raise ValueError(f"{what} must be in [0, 1], got {score!r}")
    return value


def _check_real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return number


def check_positive(**values: object) -> None:
    """Raise unless every keyword value is a finite real number > 0 (policy parameters)."""
    for name, value in values.items():
        if _check_real(name, value) <= 0:
            raise ValueError(f"{name} must be > 0, got {value!r}")


def check_nonnegative(**values: object) -> None:
    """As :func:`check_positive`, for >= 0."""
    for name, value in values.items():
        if _check_real(name, value) < 0:
            raise ValueError(f"{name} must be >= 0, got {value!r}")


def check_weight(value: object, what: str) -> float:
    """``value`` as a weight in [0, 1], else a ``TypeError``/``ValueError`` naming ``what``.

    >>> check_weight(0.5, "importance_weight")
    0.5
    >>> check_weight(2, "importance_weight")
    Traceback (most recent call last):
    ...
    ValueError: importance_weight must be in [0, 1], got 2
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} must be a number, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{what} must be in [0, 1], got {value}")
    return float(value)


def check_metadata(metadata: object) -> dict[str, Any]:
    """:func:`~solar_core.basics.records.copy_metadata` of a mapping with str keys, or ``{}``."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise TypeError(f"metadata must be a mapping, got {type(metadata).__name__}")
    for key in metadata:
        if not isinstance(key, str):
            raise TypeError(f"metadata keys must be str, got {type(key).__name__} {key!r}")
    return copy_metadata(metadata)


def unit_vector(vector: object, dim: int, what: str = "embedding") -> FloatVector:
    """``vector`` as a new float32 unit row of length ``dim``, else a ``TypeError`` (not real
    numbers) or ``ValueError`` (wrong dimension, NaN/inf, zero)."""
    return scaled(*unit_scale(vector, dim, what))


def unit_scale(
    vector: object, dim: int, what: str = "embedding"
) -> tuple[FloatVector, float | None]:
    """:func:`unit_vector` as ``(row, scale)`` for :func:`scaled`; ``row`` may be ``vector`` itself
    (never write it). A strided row is copied first: BLAS would sum it in another order."""
    if (
        type(vector) is np.ndarray
        and vector.dtype is _FLOAT32
        and vector.shape == (dim,)
        and vector.strides == _FLOAT32_STRIDES
    ):
        arr: FloatVector = vector
    else:
        arr = _float32_row(vector, dim, what)
    # One dot product screens for NaN/inf/zero; below ~1e-30 float32 loses precision.
    norm2 = float(arr.dot(arr))
    if not 1e-30 < norm2 < math.inf:
        if not np.isfinite(arr).all():
            raise ValueError(f"{what} contains NaN or inf")
        wide = arr.astype(np.float64)
        norm = float(np.linalg.norm(wide))
        if norm == 0.0:
            raise ValueError(f"{what} must not be the zero vector")
        out: FloatVector = (wide / norm).astype(np.float32)
        return out, None
    return arr, 1.0 / math.sqrt(norm2)


def scaled(row: FloatVector, scale: float | None) -> FloatVector:
    """The unit vector from :func:`unit_scale`'s ``(row, scale)``, never the caller's array."""
    return row if scale is None else row * scale


def _real_array(values: object, what: str) -> npt.NDArray[Any]:
    """``values`` as a new float32 array if they are real numbers (ints or floats of any width):
    casting would drop an imaginary part, turn ``True`` into 1.0 and parse ``"1.0"``."""
    try:
        given = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{what} must be a sequence of numbers (real: ints or floats) ({exc})"
        ) from None
    kind = given.dtype.kind
    if kind not in _REAL_KINDS:
        raise TypeError(
            f"{what} must be a sequence of numbers (real: ints or floats), got dtype {given.dtype}"
            + _REAL_FIX.get(kind, "")
        )
    return np.array(given, dtype=np.float32)


_REAL_KINDS = frozenset("iuf")
_REAL_FIX = {
    "c": ": pass the real part (vector.real) or the magnitude (abs(vector)) explicitly",
    "b": ": convert it with vector.astype(float) if the booleans are meant as 0/1",
    "U": ": parse the strings into floats first",
    "S": ": parse the bytes into floats first",
    "O": ": pass a numeric array (the elements are not all plain numbers)",
}


def _float32_row(vector: object, dim: int, what: str) -> FloatVector:
    """``vector`` copied into a new float32 array of shape ``(dim,)``, else a worded error."""
    arr = _real_array(vector, what)
    if arr.shape != (dim,):
        if arr.ndim != 1:
            raise ValueError(f"{what} must be one vector (1-D), got shape {arr.shape}")
        raise ValueError(
            f"{what} has dimension {arr.shape[0]}, expected {dim} "
            "(for precomputed vectors of another size pass dim= to SolarMemory)"
        )
    return arr


def unit_rows(matrix: object, dim: int, rows: int, what: str = "embeddings") -> FloatVector:
    """:func:`unit_vector` for an ``(rows, dim)`` matrix, as an embedder returns."""
    arr = _real_array(matrix, what)
    if arr.shape != (rows, dim):
        raise ValueError(f"{what} has shape {arr.shape}, expected {(rows, dim)}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{what} contain NaN or inf")
    wide = arr.astype(np.float64)  # float32 norms overflow near 1e19, underflow near 1e-19
    norms = np.linalg.norm(wide, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError(f"{what} contain a zero vector")
    out: FloatVector = (wide / norms).astype(np.float32)
    return out


def check_feedback(like: object, score: object) -> tuple[float, float]:
    """``(reward, quality)`` of a rating: ``like`` as 1/0, else ``score``; quality prefers
    ``score``. Given both, they must agree: a like with a score of at least 0.5, a dislike with
    one of at most 0.5 (0.5 goes with either); else a ``ValueError``.

    >>> check_feedback(True, None), check_feedback(None, 0.25), check_feedback(False, 0.5)
    ((1.0, 1.0), (0.25, 0.25), (0.0, 0.5))
    >>> check_feedback(True, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: like=True and score=0.0 disagree: a like goes with a score of at least 0.5, ...
    """
    if like is None and score is None:
        raise ValueError("pass like=True/False or score=<float in [0, 1]>")
    if like is not None and not isinstance(like, bool | np.bool_):
        raise TypeError(f"like must be a bool, got {type(like).__name__}")
    value = check_score(score) if score is not None else None
    if like is not None and value is not None and (value < 0.5 if like else value > 0.5):
        raise ValueError(
            f"like={bool(like)} and score={value} disagree: a like goes with a score of at "
            "least 0.5, a dislike with one of at most 0.5; pass one of them, or a score on the "
            "like's side"
        )
    reward = float(bool(like)) if like is not None else float(value)  # type: ignore[arg-type]
    return reward, value if value is not None else reward


#: the longest fact key (``add(key=...)``): a name, not a text
MAX_KEY = 200


def check_key(key: object) -> str | None:
    """A fact's key: ``None``, or a non-blank ``str`` of at most :data:`MAX_KEY` characters.

    >>> check_key("alice/home"), check_key(None)
    ('alice/home', None)
    >>> check_key(7)
    Traceback (most recent call last):
    ...
    TypeError: key must be a str naming the fact (e.g. "alice/home"), got int
    """
    if key is None:
        return None
    if type(key) is not str:
        raise TypeError(
            f'key must be a str naming the fact (e.g. "alice/home"), got {type(key).__name__}'
        )
    if not key.strip() or len(key) > MAX_KEY:
        raise ValueError(
            f"key must be a non-blank name of at most {MAX_KEY} characters, got {key!r}"
        )
    return key


def fact_key(key: object, metadata: dict[str, Any]) -> str | None:
    """An offer's key (:func:`check_key`): ``key=``, else its metadata's ``"key"``; the key is
    then in its metadata too (``filter={"key": ...}`` finds a fact's values). Both given, they
    must agree.

    >>> meta = {}
    >>> fact_key("ana/home", meta), meta
    ('ana/home', {'key': 'ana/home'})
    >>> fact_key(None, {"key": "ana/job"})
    'ana/job'
    """
    given = metadata.get("key")
    if key is not None and given is not None and given != key:
        raise ValueError(f"key={key!r} and the metadata's key {given!r} differ: pass one of them")
    checked = check_key(key if key is not None else given)
    if checked is not None:
        metadata["key"] = checked
    return checked


def check_as_of(as_of: object, include_superseded: object = False) -> tuple[float | None, bool]:
    """A retrieval's ``as_of``: ``None``, a clock time in seconds (a finite number, as
    ``time.time()`` gives) or a ``datetime`` (a naive one is local time); and its
    ``include_superseded``, a bool.

    >>> from datetime import datetime, timezone
    >>> check_as_of(datetime(2023, 5, 1, tzinfo=timezone.utc))
    (1682899200.0, False)
    >>> check_as_of("yesterday")
    Traceback (most recent call last):
    ...
    TypeError: as_of must be a time: clock seconds (a number, as time.time() gives) or a ...
    """
    if type(include_superseded) is not bool:
        raise TypeError(f"include_superseded must be True or False, got {include_superseded!r}")
    if as_of is None:
        return None, include_superseded
    if isinstance(as_of, datetime):
        return as_of.timestamp(), include_superseded
    if isinstance(as_of, bool) or not isinstance(as_of, int | float):
        raise TypeError(
            "as_of must be a time: clock seconds (a number, as time.time() gives) or a "
            f"datetime, got {type(as_of).__name__}"
        )
    if not math.isfinite(as_of):
        raise ValueError(f"as_of must be a finite clock time, got {as_of!r}")
    return float(as_of), include_superseded


def check_offer(
    metadata: Mapping[str, Any] | None,
    item_id: object,
    category: str,
    valid_until: object,
    update: object = False,
) -> dict[str, Any]:
    """Check an offer's other arguments; returns its metadata as a plain dict.

    >>> check_offer(None, None, "context", None)
    {}
    >>> check_offer(None, None, "context", float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: valid_until must be a finite clock time, got inf
    """
    if category != "context":  # the default needs no checking
        check_category(category)
    if valid_until is not None and (
        isinstance(valid_until, bool)
        or not isinstance(valid_until, int | float)
        or not math.isfinite(valid_until)
    ):
        raise ValueError(f"valid_until must be a finite clock time, got {valid_until!r}")
    meta = {} if metadata is None else check_metadata(metadata)  # (no call for the usual None)
    if item_id is not None:
        check_text(item_id, "item_id")
    if update is not False:
        if type(update) is not bool:
            raise TypeError(f"update must be True or False, got {update!r}")
        if item_id is None:
            raise ValueError("update=True replaces the item stored under an id: pass item_id=")
    return meta


def check_exclude(exclude: object) -> set[str]:
    """``retrieve(exclude=...)`` as a set of ids (a lone string is refused).

    >>> check_exclude(["a", "b"]) == {"a", "b"}
    True
    >>> check_exclude("a")
    Traceback (most recent call last):
    ...
    TypeError: exclude must be a collection of item ids, not a string
    """
    if isinstance(exclude, str):
        raise TypeError("exclude must be a collection of item ids, not a string")
    return set(exclude)  # type: ignore[call-overload,no-any-return]
