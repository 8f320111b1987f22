"""The admission-policy interface (should this step's experience be stored?) and the checked
explicit state the policies share."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

from solar_core.basics.state import StateReader, no_params, register_part

F32 = npt.NDArray[np.float32]


class Victim(NamedTuple):
    """The slot to evict, the score that chose it (lowest wins) and the lowest contenders."""

    slot: int
    score: float | None = None
    contenders: tuple[tuple[int, float], ...] = ()


class Candidate:
    """What an admission policy sees of an offered item: ``size`` stored now, ``capacity``
    (``None``: unbounded), the step's ``score`` from ``feedback()`` (or ``None``), ``text`` and
    ``metadata``, an evaluator's verdict ``prepared`` before the lock, the ``stored`` slot of a
    re-offer, and why another rule ``refused`` it (a gate may learn from it, never admit it).
    The memory's own candidate computes :attr:`vector`, :attr:`similarities` and :attr:`victim`
    when first read.

    >>> c = Candidate(size=2, capacity=10, vector=np.array([1.0, 0.0], np.float32))
    >>> c.vector.tolist(), c.victim is None
    ([1.0, 0.0], True)
    """

    __slots__ = (
        *("size", "capacity", "score", "text", "metadata", "prepared", "stored", "refused"),
        *("_vector", "_similarities", "_victim"),
    )

    def __init__(
        self,
        size: int,
        capacity: int | None,
        score: float | None = None,
        similarities: F32 | None = None,
        vector: F32 | None = None,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        prepared: object = None,
        *,
        stored: int | None = None,
        refused: str | None = None,
        victim: Victim | None = None,
    ) -> None:
        self.size, self.capacity, self.score = size, capacity, score
        self.text, self.prepared, self.stored, self.refused = text, prepared, stored, refused
        self.metadata: Mapping[str, Any] = {} if metadata is None else metadata
        self._vector, self._similarities, self._victim = vector, similarities, victim

    @property
    def vector(self) -> F32 | None:
        """The unit vector (``None`` for a candidate made by hand without one)."""
        return self._vector

    @property
    def similarities(self) -> F32 | None:
        """Cosine to every used slot (``-inf`` for empty ones)."""
        return self._similarities

    @property
    def victim(self) -> Victim | None:
        """What admitting the candidate would evict (``None`` while there is room)."""
        return self._victim

    def made(self) -> tuple[F32 | None, F32 | None, Victim | None]:
        """The vector, similarities and victim computed so far (the memory reuses them)."""
        return self._vector, self._similarities, self._victim

    def forget_victim(self) -> None:
        """Drop a victim named before a policy changed what it would name (ARC's lists)."""
        self._victim = None


class Verdict(NamedTuple):
    """An admission decision and the numbers behind it (for the decision trace)."""

    admitted: bool
    reason: str
    cost: float | None = None
    regret: float | None = None
    tau: float | None = None

    def __bool__(self) -> bool:  # `if gate.admit(c):` must mean "admitted", not "non-empty tuple"
        return self.admitted


class StagedState:
    """The explicit state (:mod:`solar_core.basics.state`) of the library's policies:
    :meth:`load_state` checks the whole state before it assigns any of it, a held policy's
    included (:func:`staged`). The defaults: no parameters, nothing learned."""

    #: the constructor's keyword arguments, each kept in the attribute of its name
    param_names: ClassVar[str] = ""

    def params(self) -> dict[str, Any]:
        """Its constructor's keyword arguments, as JSON values."""
        return params_of(self, self.param_names) if self.param_names else no_params(self)

    def state(self) -> dict[str, Any]:
        """What it has learned since it was built, as plain values."""
        return {}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Take ``state`` on a new policy built from the same parameters (bound to a store
        holding the same items); a bad one raises :class:`~solar_core.basics.state.StateError`
        and changes nothing."""
        self.checked_state(state)()

    def checked_state(self, state: Mapping[str, Any]) -> Callable[[], None]:
        """Check ``state`` and return what assigns it, which cannot fail."""
        reader = reader_of(self, state)
        values = self._read(reader)
        reader.done()
        return lambda: vars(self).update(values)

    def _read(self, reader: StateReader) -> dict[str, Any]:
        """Read and check the state; return the attributes to assign."""
        return {}


class AdmissionPolicy(StagedState, ABC):
    """Decides whether an offered item enters the memory: :meth:`admit` validates and asks
    :meth:`_admit`; a candidate another rule refused is never admitted."""

    name: ClassVar[str] = "base"
    #: what a verdict's two scores (``Decision.regret`` and ``.tau``) are, for a trace's columns
    score_names: ClassVar[tuple[str, str]] = ("regret", "tau")

    def admit(self, candidate: Candidate) -> Verdict:
        if candidate.size < 0:
            raise ValueError("candidate.size must be >= 0")
        if candidate.score is not None and not 0.0 <= candidate.score <= 1.0:
            raise ValueError(f"candidate.score must be in [0, 1], got {candidate.score}")
        verdict = self._admit(candidate)
        if candidate.refused is not None and verdict.admitted:
            return Verdict(False, candidate.refused, verdict.cost, verdict.regret, verdict.tau)
        return verdict

    @abstractmethod
    def _admit(self, candidate: Candidate) -> Verdict: ...

    def clear(self) -> None:
        """Forget learned state (the memory was cleared)."""

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if internal state is inconsistent."""

    @property
    def regret(self) -> float | None:
        return None

    @property
    def tau(self) -> float | None:
        return None


@register_part
class AlwaysAdmit(AdmissionPolicy):
    """Store every offered item (FIFO, LRU, LFU, ARC, SOLAR-E; the study's pi_all)."""

    name = "always"

    def _admit(self, candidate: Candidate) -> Verdict:
        return ALWAYS


#: AlwaysAdmit's verdict on every candidate (immutable: one shared instance)
ALWAYS = Verdict(True, "always")


def reader_of(part: object, state: Mapping[str, Any]) -> StateReader:
    """A :class:`~solar_core.basics.state.StateReader` of ``part``'s ``state``, whose names must
    be strings."""
    reader = StateReader(state, f"{type(part).__name__}'s state")
    odd = [name for name in state if type(name) is not str]
    if odd:
        raise reader.fail(f"a state's names are strings, got {odd[0]!r}")
    return reader


def plain(value: Any) -> Any:
    """A parameter as a JSON value: a numpy number as the Python one, anything else as it is."""
    if isinstance(value, np.integer):
        return int(value)
    return float(value) if isinstance(value, np.floating) else value


def params_of(part: object, names: str) -> dict[str, Any]:
    """The attributes ``names`` (space-separated) of ``part``, as JSON values."""
    return {name: plain(getattr(part, name)) for name in names.split()}


def staged(part: Any, state: Mapping[str, Any]) -> tuple[bool, Callable[[], None]]:
    """A held part's load of ``state``: ``(True, assign)`` for a :class:`StagedState`, which
    checks first; ``(False, load)`` for another part, which checks while it loads."""
    if getattr(type(part), "load_state", None) is StagedState.load_state:
        checked: Callable[[], None] = part.checked_state(state)
        return True, checked
    return False, lambda: part.load_state(state)


def run_stages(stages: list[tuple[bool, Callable[[], None]]]) -> None:
    """Run :func:`staged`'s results: the loads that may refuse first, then the assignments."""
    for checked, step in stages:
        if not checked:
            step()
    for checked, step in stages:
        if checked:
            step()
