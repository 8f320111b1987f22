"""Metadata filters: which stored items a retrieval may return (``retrieve(filter=...)``).

A filter maps metadata keys to what their values must be, by the rule of LangGraph's stores
(``BaseStore.search(filter=...)``), and every key must match:

- a plain value matches by equality: ``{"topic": "billing"}``;
- a dict of operators must satisfy each of them: ``{"price": {"$gte": 10, "$lt": 20}}``;
  ``$eq`` and ``$ne`` compare by equality, ``$gt``, ``$gte``, ``$lt``, ``$lte`` by order;
- any other dict matches a nested dict key by key: ``{"user": {"tier": "gold"}}``;
- a list matches a list (or tuple) of the same length, element by element.

Comparisons keep to one kind of value: a number only with numbers (exactly, however large), a
string only with strings (by code point), a bool only with bools, ``None`` only with ``None``
(``"5"`` equals no number, ``True`` does not equal ``1``, NaN equals nothing). A missing value
or one of another kind satisfies no ``$gt``/``$gte``/``$lt``/``$lte`` (the item does not
match) and every ``$ne``.

A filter is data (str, numbers, bools, ``None``, lists, dicts with str keys), at most
:data:`MAX_DEPTH` levels deep with at most :data:`MAX_VALUES` values; anything else is refused
with a ``TypeError``/``ValueError`` before the retrieval does anything. It is checked and
compiled once per retrieval (:func:`compile_filter`); matching an item then costs at most the
filter's size and never raises. A retrieval may also take a predicate ``(metadata) -> bool``,
which sees a read-only copy of an item's metadata.

>>> wanted = check_filter({"topic": "billing", "n": {"$gte": 2}})
>>> matches({"topic": "billing", "n": 3}, wanted), matches({"topic": "billing"}, wanted)
(True, False)
>>> matches({"n": "3"}, {"n": {"$gte": 2}}), matches({"n": 10**400}, {"n": {"$gte": 2}})
(False, True)
>>> check_filter({"n": {"$in": [1, 2]}})
Traceback (most recent call last):
...
ValueError: unsupported filter operator '$in' at 'n': use one of $eq, $ne, $gt, $gte, $lt, $lte
"""

from __future__ import annotations

import numbers
import operator
import reprlib
from collections.abc import Callable, Collection, Iterable, Mapping
from fractions import Fraction
from typing import Any, TypeAlias

from solar_core.basics.records import Record, read_only
from solar_core.basics.types import Hits

#: the operators of a filter: LangGraph's stores' (``$eq``/``$ne``: equality; the rest: order)
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
#: the deepest a filter may nest (dicts and lists inside one another)
MAX_DEPTH = 32
#: the most values (each dict, list and plain value counted, a list or dict held in several
#: places counted in each) a filter may hold
MAX_VALUES = 1_000_000

_ORDER: dict[str, Callable[[Any, Any], bool]] = dict(
    zip(OPERATORS[2:], (operator.gt, operator.ge, operator.lt, operator.le), strict=True)
)
#: the same on strings, ``str``'s own: a subclass's comparison is not run
_STR_ORDER: dict[str, Callable[[Any, Any], bool]] = dict(
    zip(OPERATORS[2:], (str.__gt__, str.__ge__, str.__lt__, str.__le__), strict=True)
)

#: what ``retrieve(filter=...)`` takes: a filter mapping, or a predicate of an item's metadata
Filter: TypeAlias = Mapping[str, Any] | Callable[[Mapping[str, Any]], bool]
#: a compiled test of one value
Test: TypeAlias = Callable[[Any], bool]

#: the values a filter holds as they are (a list of only these is copied whole)
_PLAIN = frozenset({str, int, float, bool, type(None)})

_show = reprlib.Repr()
_show.maxstring = _show.maxother = 40


def shown(value: object) -> str:
    """``value``'s repr for an error message: short, whatever its size, depth or ``__repr__``."""
    try:
        return _show.repr(value)
    except Exception:  # a __repr__ that fails must not hide the error being reported
        return f"<{type(value).__name__}>"


def number(value: object) -> int | float | Fraction | None:
    """``value`` as a plain ``int``/``float`` (an ``int`` kept exact) if it is a real number
    other than a bool, else ``None``: what numeric comparisons compare."""
    kind = type(value)
    if kind is int or kind is float:
        return value  # type: ignore[return-value]
    if kind is bool:
        return None
    try:
        if isinstance(value, int):  # a subclass (an IntEnum): its value, not its methods
            return int.__int__(value)
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, Fraction):
            return value
        if isinstance(value, numbers.Integral):  # NumPy's integers
            whole = int(value)
            return whole if type(whole) is int else None
        if isinstance(value, numbers.Real):  # NumPy's floats
            real = float(value)
            return real if type(real) is float else None
    except Exception:  # an object whose conversion fails is not a number
        return None
    return None


def plain(wanted: object, where: str) -> Any:
    """``wanted`` checked to be data (as a filter's values are) and copied as plain data;
    ``where`` names it in the error. For adapters building tests from their frameworks'
    filters."""
    return _Checker().read(wanted, where, 1, literal=True)


def equality(wanted: object, where: str = "") -> Callable[[Any], bool]:
    """A test of a stored value: whether it equals ``wanted`` (checked by :func:`plain`) by the
    module's rule; never raises.

    >>> same = equality((1, [2]))
    >>> same([1.0, [2]]), same(True), same([True, [2]])
    (True, False, False)
    """
    return _test(plain(wanted, where), {}, exact=True)


def ordering(op: str, wanted: int | float | str) -> Callable[[Any], bool]:
    """A test of a stored value: whether it satisfies ``op`` (``$gt``, ``$gte``, ``$lt``,
    ``$lte``) against the plain ``wanted`` (a number or a str); never raises.

    >>> above = ordering("$gt", 1e308)
    >>> above(10**400), above("1e309")
    (True, False)
    """
    if isinstance(wanted, str):
        on_str = _STR_ORDER[op]
        return lambda value: isinstance(value, str) and on_str(value, wanted)
    compare = _ORDER[op]

    def in_range(value: Any) -> bool:
        kind = type(value)
        if kind is int or kind is float:  # the usual case, compared exactly
            return compare(value, wanted)
        n = number(value)
        return n is not None and compare(n, wanted)

    return in_range


class Matcher:
    """A test of an item's metadata compiled from ``wanted`` (a checked filter or a predicate),
    trusted not to change the metadata it is given."""

    __slots__ = ("test", "wanted")

    def __init__(self, test: Callable[[Mapping[str, Any]], bool], wanted: object) -> None:
        self.test, self.wanted = test, wanted

    def __call__(self, metadata: Mapping[str, Any]) -> bool:
        return self.test(metadata)

    def __repr__(self) -> str:
        return f"Matcher({shown(self.wanted)})"


def matches(metadata: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` matches the filter ``wanted`` (a bad filter raises).

    >>> matches({"user": {"tier": "gold"}, "tags": ("a", "b")}, {"tags": ["a", "b"]})
    True
    """
    return compile_filter(wanted, predicate=False)(metadata)


def compile_filter(wanted: object, *, predicate: bool = True) -> Matcher:
    """``wanted`` checked (as by :func:`check_filter`) and compiled into a :class:`Matcher`
    (returned as it is if it is one); a predicate sees a read-only copy of the metadata."""
    if isinstance(wanted, Matcher):
        return wanted
    checked = check_filter(wanted, predicate=predicate)
    if callable(checked):
        user: Callable[[Mapping[str, Any]], bool] = checked
        return Matcher(lambda metadata: bool(user(read_only(metadata))), user)
    return Matcher(_metadata_test(checked), checked)


def check_filter(wanted: object, *, predicate: bool = True) -> Filter:
    """``wanted`` (a mapping: copied as plain data) if it is a filter :func:`matches` can apply
    or, unless ``predicate=False``, a predicate; else an error that says how to write it.

    >>> check_filter(len, predicate=False)  # where only a filter mapping will do
    Traceback (most recent call last):
    ...
    TypeError: filter must be a mapping ... {'topic': 'billing'}, got builtin_function_or_method
    """
    if isinstance(wanted, Matcher):
        return wanted
    if predicate and callable(wanted) and not isinstance(wanted, Mapping):
        return wanted
    if not isinstance(wanted, Mapping):
        either = " (or a predicate of an item's metadata)" if predicate else ""
        raise TypeError(
            "filter must be a mapping of metadata keys to the values wanted, e.g. "
            f"{{'topic': 'billing'}}{either}, got {type(wanted).__name__}"
        )
    checker = _Checker()
    checker.open.add(id(wanted))
    checked: dict[str, Any] = {}
    for key, value in wanted.items():
        _check_key(key, "")
        if key in OPERATORS:
            raise ValueError(
                f"a filter's keys name metadata fields, got {key!r}: put the operator under "
                f"one, e.g. {{'price': {{{key!r}: {shown(value)}}}}}"
            )
        if key.startswith("$"):
            raise ValueError(
                f"a filter has no {key!r}: its keys name metadata fields, and every one must "
                "match (and: {'topic': 'billing', 'year': {'$gte': 2024}}); for or, pass a "
                "predicate: lambda m: m.get('topic') == 'billing' or m.get('year') == 2024"
            )
        checked[key] = checker.read(value, key, 1)
    return checked


def _check_key(key: object, where: str) -> None:
    if not isinstance(key, str):
        at = f" at {where!r}" if where else ""
        raise TypeError(f"filter keys are metadata keys (str), got {shown(key)}{at}")


class _Checker:
    """One filter's check and plain copy: counts its values and levels, refuses a container
    inside itself."""

    __slots__ = ("values", "open", "done")

    def __init__(self) -> None:
        self.values = 1
        self.open: set[int] = set()  # the containers being checked (the path from the top)
        #: (container, literal, depth) -> its copy and the values it holds: a list or dict
        #: held in several places is read once (its values counted in each place)
        self.done: dict[tuple[int, bool, int], tuple[Any, int]] = {}

    def read(self, wanted: object, where: str, depth: int, literal: bool = False) -> Any:
        """A filter's value at the path ``where`` (dotted, for the error), as plain data;
        ``literal``: an operand of ``$eq``/``$ne``, data compared as it is (no operators)."""
        self._count(1)
        if not isinstance(wanted, Mapping | list | tuple):
            return _scalar(wanted, where)
        key = (id(wanted), literal, depth)
        done = self.done.get(key)
        if done is not None:
            self._count(done[1])
            return done[0]
        if id(wanted) in self.open:
            raise ValueError(
                f"the filter holds itself at {where!r}: a filter is a tree of dicts and lists"
            )
        if depth >= MAX_DEPTH:  # (the filter itself is the first level)
            raise ValueError(
                f"the filter nests deeper than {MAX_DEPTH} levels at {where!r}: filter on a "
                "flatter field"
            )
        self.open.add(id(wanted))
        before = self.values
        if isinstance(wanted, Mapping):
            for name in wanted:
                _check_key(name, where)
            copied: Any = (
                {k: self.read(v, f"{where}.{k}", depth + 1, True) for k, v in wanted.items()}
                if literal
                else self.fields(wanted, where, depth)
            )
        else:
            if self.values + len(wanted) > MAX_VALUES:
                self._count(len(wanted))  # (a long list is refused before it is read)
            if all(type(v) in _PLAIN for v in wanted):  # the usual list: plain values, copied
                self._count(len(wanted))
                copied = list(wanted)
            else:
                copied = [
                    self.read(v, f"{where}[{i}]", depth + 1, literal) for i, v in enumerate(wanted)
                ]
        self.open.discard(id(wanted))
        self.done[key] = (copied, self.values - before)
        return copied

    def _count(self, n: int) -> None:
        self.values += n
        if self.values > MAX_VALUES:
            raise ValueError(
                f"the filter holds more than {MAX_VALUES} values: filter on fewer, or pass a "
                "predicate of an item's metadata"
            )

    def fields(self, wanted: Mapping[str, Any], where: str, depth: int) -> dict[str, Any]:
        ops = [key for key in wanted if key.startswith("$")]
        if not ops:
            return {k: self.read(v, f"{where}.{k}", depth + 1) for k, v in wanted.items()}
        if len(ops) != len(wanted):
            raise ValueError(
                f"the filter at {where!r} mixes operators and metadata keys "
                f"({shown(list(wanted))}): nest the keys under their own field"
            )
        return {op: self.operand(op, v, where, depth) for op, v in wanted.items()}

    def operand(self, op: str, operand: object, where: str, depth: int) -> Any:
        if op not in OPERATORS:
            raise ValueError(
                f"unsupported filter operator {op!r} at {where!r}: use one of "
                f"{', '.join(OPERATORS)}"
            )
        if op not in _ORDER:
            return self.read(operand, where, depth, literal=True)
        self._count(1)
        plain = number(operand) if not isinstance(operand, str) else str.__str__(operand)
        if plain is None:
            raise ValueError(
                f"filter operator {op!r} at {where!r} compares numbers or strings, got "
                f"{shown(operand)}: pass a number or a str"
            )
        return plain


def _scalar(wanted: object, where: str) -> Any:
    if wanted is None or isinstance(wanted, bool):
        return wanted
    if isinstance(wanted, str):
        return str.__str__(wanted)
    plain = number(wanted)
    if plain is None:
        raise TypeError(
            f"a filter's values are data (str, numbers, bools, None, lists, dicts), got "
            f"{type(wanted).__name__} {shown(wanted)} at {where!r}: pass plain data, or a "
            "predicate of an item's metadata"
        )
    return plain


# -- compiling: a checked filter as nested tests ------------------------------------------------
#: the tests of the lists and dicts of one filter compiled so far, by id and whether compared
#: exactly (a checked filter shares them where the filter did: each is compiled once)
Memo: TypeAlias = dict[tuple[int, bool], Test]


def _metadata_test(wanted: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """Each field of the checked filter ``wanted`` must match an item's metadata."""
    memo: Memo = {}
    fields = [(key, _test(value, memo)) for key, value in wanted.items()]

    def test(metadata: Mapping[str, Any]) -> bool:
        get = metadata.get
        return all(field(get(key)) for key, field in fields)

    return test


def _test(wanted: Any, memo: Memo, exact: bool = False) -> Test:
    """The test of a checked filter value; ``exact``: equality with it (an ``$eq`` operand)."""
    if not isinstance(wanted, dict | list):
        return lambda value: _same_scalar(value, wanted)
    test = memo.get((id(wanted), exact))
    if test is None:
        test = memo[id(wanted), exact] = _container_test(wanted, memo, exact)
    return test


def _container_test(wanted: dict[str, Any] | list[Any], memo: Memo, exact: bool) -> Test:
    if isinstance(wanted, list):  # as long, element by element: plain values without a test
        n = len(wanted)
        if all(type(w) in _PLAIN for w in wanted):
            return lambda value: (
                isinstance(value, list | tuple)
                and len(value) == n
                and all(_same_scalar(v, w) for v, w in zip(value, wanted, strict=False))
            )
        tests = [_test(w, memo, exact) for w in wanted]
        return lambda value: (
            isinstance(value, list | tuple)
            and len(value) == n
            and all(test(v) for test, v in zip(tests, value, strict=False))
        )
    if exact:
        fields = [(key, _test(w, memo, True)) for key, w in wanted.items()]
        n = len(fields)
        return lambda value: (
            isinstance(value, dict)
            and dict.__len__(value) == n
            and all(
                dict.__contains__(value, k) and t(dict.__getitem__(value, k)) for k, t in fields
            )
        )
    if wanted and next(iter(wanted)).startswith("$"):  # checked: all operators, or none
        tests = [_operator_test(op, operand, memo) for op, operand in wanted.items()]
        if len(tests) == 1:
            return tests[0]
        return lambda value: all(test(value) for test in tests)
    fields = [(key, _test(value, memo)) for key, value in wanted.items()]
    get = dict.get  # dict's own: a subclass's get is not run
    if len(fields) == 1:
        ((key, test),) = fields
        return lambda value: isinstance(value, dict) and test(get(value, key))
    return lambda value: isinstance(value, dict) and all(test(get(value, k)) for k, test in fields)


def _same_scalar(value: Any, wanted: Any) -> bool:
    """Whether ``value`` equals the plain str, number, bool or ``None`` ``wanted``."""
    if wanted is None:
        return value is None
    if wanted is True or wanted is False:
        return value is wanted
    if type(wanted) is str:
        return isinstance(value, str) and str.__eq__(value, wanted)
    kind = type(value)
    if kind is int or kind is float:
        return bool(value == wanted)
    n = number(value)
    return n is not None and bool(n == wanted)


def _operator_test(op: str, operand: Any, memo: Memo) -> Test:
    if op == "$eq":
        return _test(operand, memo, exact=True)
    if op == "$ne":
        same = _test(operand, memo, exact=True)
        return lambda value: not same(value)
    return ordering(op, operand)


# -- applying -----------------------------------------------------------------------------------
def left_out(
    records: Iterable[tuple[str, Record]], wanted: Filter, exclude: Collection[str] = ()
) -> set[str]:
    """The ids a filtered retrieval excludes: ``exclude`` plus every item ``wanted`` refuses
    (so a persisted memory logs a plain retrieval with an ``exclude``, which replays exactly)."""
    test = compile_filter(wanted)
    out = set(exclude)
    out.update(item_id for item_id, record in records if not test(record.metadata))
    return out


def only_matching(hits: Hits, wanted: Filter) -> Hits:
    """``hits`` without those ``wanted`` refuses (the same object when every hit matches): an
    item another process stored after a persisted memory read what to leave out goes here.

    >>> from solar_core.basics.types import Hit
    >>> hits = Hits([Hit("a", "x", 0.9, {"n": 1}, 0), Hit("b", "y", 0.8, {"n": 5}, 1)], 7)
    >>> kept = only_matching(hits, {"n": 5})
    >>> [h.id for h in kept], kept.retrieval_id
    (['b'], 7)
    """
    test = compile_filter(wanted)
    verdicts = [test(hit.metadata) for hit in hits]
    if all(verdicts):
        return hits
    kept = [hit for hit, keep in zip(hits, verdicts, strict=True) if keep]
    return Hits(kept, hits.retrieval_id, hits.origin)
