"""Explicit state: ``params()`` (constructor arguments as JSON), ``state()`` (a flat dict of
names to JSON values and numpy arrays) and ``load_state(state)``, which reads every value
through a :class:`StateReader` and checks them together before assigning anything. See
DESIGN.md ("Explicit state").

>>> import numpy as np
>>> reader = StateReader({"count": 3, "weights": np.zeros(2)}, "an example")
>>> reader.integer("count"), reader.array("weights", np.float64, (2,)).tolist()
(3, [0.0, 0.0])
>>> reader.done()
>>> StateReader({"count": -1}, "an example").integer("count")
Traceback (most recent call last):
...
solar_core.basics.state.StateError: an example: count must be an int in [0, 4611686018427387904],
got -1
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

_T = TypeVar("_T")
Value: TypeAlias = Any  # a JSON value or a numpy array
State: TypeAlias = dict[str, Value]
#: counters and serials of a loaded state lie within this (a step adds one; none overflows)
MOST_COUNT = 2**62
MAX_JSON_DEPTH = 64


class StateError(ValueError):
    """A state that cannot be loaded: the message names the value and what is wrong."""


@runtime_checkable
class Stateful(Protocol):
    """A part of a memory with explicit state."""

    def params(self) -> dict[str, Any]: ...

    def state(self) -> State: ...

    def load_state(self, state: Mapping[str, Value]) -> None: ...


#: the classes a stored part may name, by class name (see :func:`register_part`)
PARTS: dict[str, type] = {}


def part_name(cls: type) -> str:
    """A part's stored class name: the library's bare, any other's with its module."""
    if cls.__module__.split(".", 1)[0] == "solar_core":
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def register_part(cls: type[_T]) -> type[_T]:
    """Make ``cls`` a part a memory's parameters may name (a decorator; a policy of your own:
    :func:`solar_core.policies.presets.register_policy`): :func:`build` makes only these."""
    if not isinstance(cls, type):
        raise TypeError(f"register_part registers a class, got {cls!r}")
    name = part_name(cls)
    known = PARTS.setdefault(name, cls)
    if known is not cls:
        raise ValueError(f"a part named {name} is registered already: rename your class")
    return cls


def spec(part: Stateful) -> dict[str, Any]:
    """``part``'s class name and parameters, as :func:`build` takes them."""
    name = part_name(type(part))
    if PARTS.get(name) is not type(part):
        raise TypeError(
            f"{name} is not a registered part: register it with solar_core.register_policy"
        )
    return {"class": name, "params": part.params()}


def build(described: object, what: str) -> Any:
    """A new part from its :func:`spec` (``cls.from_params(params)`` if defined, else
    ``cls(**params)``); an unregistered class or refused parameters: :class:`StateError`."""
    if (
        type(described) is not dict
        or set(described) != {"class", "params"}
        or type(described["params"]) is not dict
    ):
        raise StateError(f"{what} must be {{'class': name, 'params': {{...}}}}, got {described!r}")
    cls = PARTS.get(described["class"]) if type(described["class"]) is str else None
    if cls is None:
        raise StateError(
            f"{what} names {described['class']!r}, not a registered part: import the module "
            "that registers it first"
        )
    params = described["params"]
    check_json(params, f"{what}'s parameters")
    try:
        from_params = getattr(cls, "from_params", None)
        return from_params(params) if from_params is not None else cls(**params)
    except (TypeError, ValueError) as err:
        raise StateError(f"{what}: {cls.__name__}({params!r}) is refused: {err}") from err


def no_params(part: object) -> dict[str, Any]:
    """``{}`` for a part whose constructor takes no parameters, else an error."""
    init = type(part).__init__
    if init is not object.__init__:
        taken = [
            name
            for name, p in list(inspect.signature(init).parameters.items())[1:]
            if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        ]
        if taken:
            raise NotImplementedError(
                f"{type(part).__name__} takes parameters ({', '.join(taken)}): define its params()"
            )
    return {}


def prefixed(prefix: str, state: Mapping[str, Value]) -> State:
    """``state`` with its names under ``prefix`` (``"eviction.alpha"``)."""
    return {f"{prefix}.{name}": value for name, value in state.items()}


def part_of(prefix: str, state: Mapping[str, Value]) -> State:
    """The values of ``state`` under ``prefix``, without it (the inverse of :func:`prefixed`)."""
    start = prefix + "."
    return {name[len(start) :]: value for name, value in state.items() if name.startswith(start)}


class StateReader:
    """Reads a part's state with checks; :meth:`done` refuses any value nobody read."""

    def __init__(self, state: Mapping[str, Value], what: str) -> None:
        if not isinstance(state, Mapping):
            raise StateError(f"{what}: a state is a mapping of names to values")
        self._state = state
        self._unread = set(state)
        self.what = what

    def fail(self, message: str) -> StateError:
        return StateError(f"{self.what}: {message}")

    def has(self, name: str) -> bool:
        return name in self._state

    def value(self, name: str) -> Value:
        if name not in self._state:
            raise self.fail(f"{name} is missing")
        self._unread.discard(name)
        return self._state[name]

    def integer(self, name: str, lo: int = 0, hi: int = MOST_COUNT) -> int:
        value = self.value(name)
        if type(value) is not int or not lo <= value <= hi:
            raise self.fail(f"{name} must be an int in [{lo}, {hi}], got {_shown(value)}")
        return value

    def number(
        self, name: str, lo: float = -math.inf, hi: float = math.inf, *, optional: bool = False
    ) -> Any:
        """A finite float (an int is taken as one) in ``[lo, hi]``; ``None`` if ``optional``."""
        value = self.value(name)
        if value is None and optional:
            return None
        if type(value) is int and abs(value) <= MOST_COUNT:
            value = float(value)
        if type(value) is not float or not math.isfinite(value) or not lo <= value <= hi:
            raise self.fail(f"{name} must be a finite number in [{lo}, {hi}], got {_shown(value)}")
        return value

    def flag(self, name: str) -> bool:
        value = self.value(name)
        if type(value) is not bool:
            raise self.fail(f"{name} must be true or false, got {_shown(value)}")
        return value

    def text(
        self, name: str, choices: Iterable[str] | None = None, *, optional: bool = False
    ) -> Any:
        value = self.value(name)
        if value is None and optional:
            return None
        if type(value) is not str:
            raise self.fail(f"{name} must be a string, got {_shown(value)}")
        if choices is not None and value not in set(choices):
            raise self.fail(f"{name} must be one of {', '.join(sorted(choices))}, got {value!r}")
        return value

    def json(self, name: str) -> Any:
        """A JSON value, checked as such (:func:`check_json`)."""
        value = self.value(name)
        check_json(value, f"{self.what}: {name}")
        return value

    def listed(self, name: str, length: int | None = None) -> list[Any]:
        value = self.json(name)
        if type(value) is not list or (length is not None and len(value) != length):
            wanted = "a list" if length is None else f"a list of {length}"
            raise self.fail(f"{name} must be {wanted}, got {_shown(value)}")
        return value

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.json(name)
        if type(value) is not dict:
            raise self.fail(f"{name} must be a JSON object, got {_shown(value)}")
        return value

    def array(
        self,
        name: str,
        dtype: npt.DTypeLike,
        shape: Sequence[int | None],
        *,
        finite: bool = True,
        lo: float | None = None,
        hi: float | None = None,
    ) -> npt.NDArray[Any]:
        """An owned, native-order copy of an array of ``dtype`` and ``shape`` (``None``: any
        length), its values finite (floats) and within ``[lo, hi]`` when given."""
        value = self.value(name)
        wanted = np.dtype(dtype)
        if not isinstance(value, np.ndarray) or value.dtype.newbyteorder("=") != wanted:
            raise self.fail(f"{name} must be an array of {wanted}, got {_shown(value)}")
        if value.ndim != len(shape) or any(
            want is not None and have != want for have, want in zip(value.shape, shape, strict=True)
        ):
            raise self.fail(f"{name} must have shape {tuple(shape)}, got {value.shape}")
        array = np.array(value, dtype=wanted, order="C", copy=True)
        if array.size:
            if finite and wanted.kind == "f" and not np.isfinite(array).all():
                raise self.fail(f"{name} holds a value that is not finite")
            if lo is not None and array.min() < lo:
                raise self.fail(f"{name} holds a value below {lo}")
            if hi is not None and array.max() > hi:
                raise self.fail(f"{name} holds a value above {hi}")
        return array

    def integers(self, name: str, lo: int = 0, hi: int = MOST_COUNT) -> list[int]:
        """A list of ints in ``[lo, hi]`` (read from an int64 array or a JSON list)."""
        value = self.value(name)
        if isinstance(value, np.ndarray):
            array = self.array(name, np.int64, (None,), lo=lo, hi=hi)
            return [int(v) for v in array.tolist()]
        if type(value) is not list or any(type(v) is not int or not lo <= v <= hi for v in value):
            raise self.fail(f"{name} must be a list of ints in [{lo}, {hi}]")
        return list(value)

    def done(self) -> None:
        """Refuse the values nobody read (a name this part does not know)."""
        if self._unread:
            raise self.fail(f"unknown state {', '.join(sorted(self._unread))}")


def check_json(value: object, what: str) -> None:
    """Raise :class:`StateError` unless ``value`` is JSON of at most :data:`MAX_JSON_DEPTH`
    levels (str keys; floats may be infinite: a trace holds them)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        kind = type(node)
        if node is None or kind is bool or kind is int or kind is str or kind is float:
            continue
        if depth >= MAX_JSON_DEPTH:
            raise StateError(f"{what} nests deeper than {MAX_JSON_DEPTH} levels")
        if kind is list:
            stack.extend((v, depth + 1) for v in node)  # type: ignore[attr-defined]
        elif kind is dict:
            for key, v in node.items():  # type: ignore[attr-defined]
                if type(key) is not str:
                    raise StateError(f"{what} has a key that is not a string: {key!r}")
                stack.append((v, depth + 1))
        else:
            raise StateError(f"{what} holds a {kind.__name__}, not a JSON value")


def _shown(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype} with shape {value.shape}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
