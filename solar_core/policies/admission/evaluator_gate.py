"""Evaluator-gated addition: store an experience only if a judge accepts it."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from numbers import Real
from typing import Any

import numpy as np

from solar_core.basics.state import build, prefixed, register_part, spec
from solar_core.basics.validation import check_nonnegative_int
from solar_core.policies.admission.base import (
    ALWAYS,
    AdmissionPolicy,
    AlwaysAdmit,
    Candidate,
    Verdict,
    reader_of,
    run_stages,
    staged,
)
from solar_core.policies.admission.coverage_gate import CoverageGate

#: ``(query, execution, metadata) -> bool | float``: does this execution deserve to be stored?
Evaluator = Callable[[str | None, str, Mapping[str, Any]], Any]
#: ``params()["inner"]`` of a gate whose inner gate is its memory's eviction policy
INNER_EVICTION = "eviction"


@register_part
class EvaluatorGate(AdmissionPolicy):
    """Store an offered experience only if ``evaluator`` accepts it, and ``inner`` too (the
    experience-following study's addition rule ``pi``). It is called as ``evaluator(query,
    execution, metadata)`` (``query``: ``metadata["query"]`` if a string); a ``bool`` is the
    verdict, a number accepts if ``>= threshold``, anything else is an error. The inner gate
    sees every step; the first ``initial`` offers skip the evaluator.

    >>> from solar_core.policies.admission import Candidate
    >>> gate = EvaluatorGate(lambda q, e, m: m["error"] <= 1.0)
    >>> [gate.admit(Candidate(0, None, text="y=1", metadata={"error": e})).reason for e in (0.5, 2)]
    ['evaluator accepts', 'evaluator rejects']
    """

    name = "evaluator"
    judged: bool | None
    evaluator: Evaluator
    threshold: float
    inner: AdmissionPolicy
    initial: int
    _offers: int

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        threshold: float = 0.5,
        inner: AdmissionPolicy | None = None,
        initial: int = 0,
    ) -> None:
        if not callable(evaluator):
            raise TypeError(f"evaluator must be callable, got {type(evaluator).__name__}")
        if isinstance(threshold, bool) or not isinstance(threshold, Real):
            raise TypeError(f"threshold must be a number, got {type(threshold).__name__}")
        if not math.isfinite(threshold):
            raise ValueError(f"threshold must be finite, got {threshold}")
        if inner is not None and not isinstance(inner, AdmissionPolicy):
            raise TypeError(f"inner must be an AdmissionPolicy, got {type(inner).__name__}")
        self.evaluator = evaluator
        self.threshold = float(threshold)
        self.inner = inner if inner is not None else AlwaysAdmit()
        self.initial = check_nonnegative_int(initial, "initial")
        self._offers = 0
        self.judged = None  # the verdict on the latest offer (None: not judged)

    def prepare(self, text: str, metadata: Mapping[str, Any]) -> bool | None:
        """The evaluator's verdict, asked before the memory locks (``None``: an initial offer)."""
        if self._offers < self.initial:  # (read without the lock: at worst one extra call)
            return None
        return self.verdict(text, metadata)

    def judge(self, candidate: Candidate) -> bool:
        """The evaluator's verdict on ``candidate`` (raises on an unusable answer)."""
        if isinstance(candidate.prepared, bool):
            verdict = candidate.prepared
        elif candidate.text is None:
            raise ValueError("EvaluatorGate needs the candidate's text: use it inside a memory")
        else:
            verdict = self.verdict(candidate.text, candidate.metadata)
        # (a persisted memory logs it: a replay never asks again)
        self.judged = verdict
        return verdict

    def verdict(self, text: str, metadata: Mapping[str, Any]) -> bool:
        """The evaluator's verdict on an execution (raises on an unusable answer)."""
        query = metadata.get("query")
        answer = self.evaluator(query if isinstance(query, str) else None, text, metadata)
        if isinstance(answer, bool | np.bool_):
            return bool(answer)
        if isinstance(answer, Real) and math.isfinite(answer):
            return float(answer) >= self.threshold
        name = getattr(self.evaluator, "__name__", type(self.evaluator).__name__)
        raise ValueError(f"evaluator {name} returned {answer!r}: expected a bool or a number")

    def _admit(self, candidate: Candidate) -> Verdict:
        self.judged = None
        seeding = self._offers < self.initial
        if candidate.refused is not None:
            seen = self.inner.admit(candidate)
            return Verdict(False, candidate.refused, seen.cost, seen.regret, seen.tau)
        if not seeding and not self.judge(candidate):
            self._offers += 1
            candidate.refused = "evaluator rejects"
            try:  # the inner gate sees every step
                seen = self.inner.admit(candidate)
            finally:
                candidate.refused = None
            return Verdict(False, "evaluator rejects", seen.cost, seen.regret, seen.tau)
        self._offers += 1
        verdict = self.inner.admit(candidate)
        if verdict is ALWAYS:
            return Verdict(True, "initial" if seeding else "evaluator accepts")
        if not verdict.admitted:
            return verdict
        prefix = "initial" if seeding else "evaluator accepts"
        return verdict._replace(reason=f"{prefix}; {verdict.reason}")

    def clear(self) -> None:
        self._offers = 0
        self.inner.clear()

    def check_invariants(self) -> None:
        self.inner.check_invariants()

    @property
    def regret(self) -> float | None:
        return self.inner.regret

    @property
    def tau(self) -> float | None:
        return self.inner.tau

    def params(self) -> dict[str, Any]:
        """``inner``: its ``spec()``, or ``"eviction"``. The evaluator is not a parameter."""
        inner = INNER_EVICTION if _is_eviction(self.inner) else spec(self.inner)
        return {"threshold": self.threshold, "initial": self.initial, "inner": inner}

    @classmethod
    def from_params(
        cls,
        params: Mapping[str, Any],
        evaluator: Evaluator | None = None,
        *,
        eviction: object = None,
    ) -> EvaluatorGate:
        """A new gate from :meth:`params` asking ``evaluator``; ``eviction``: the new memory's."""
        if evaluator is None:
            raise TypeError(
                "an EvaluatorGate is built with its evaluator, which no state holds: "
                "EvaluatorGate.from_params(params, evaluator)"
            )
        rest = dict(params)
        described = rest.pop("inner", None)
        inner: AdmissionPolicy | None
        if described == INNER_EVICTION:
            if not isinstance(eviction, AdmissionPolicy):
                raise TypeError(
                    "this EvaluatorGate asks its memory's eviction policy: pass eviction= (one "
                    f"that decides admission too), got {type(eviction).__name__}"
                )
            inner = eviction
        elif described is None:
            inner = None
        else:
            inner = build(described, "EvaluatorGate's inner gate")
            if isinstance(inner, CoverageGate) or _is_eviction(inner):
                raise TypeError(
                    f"an EvaluatorGate's inner {type(inner).__name__} is its memory's eviction "
                    'policy, named "eviction" in its parameters'
                )
        return cls(evaluator, inner=inner, **rest)

    def state(self) -> dict[str, Any]:
        """``offers``, ``judged`` (the latest verdict or ``None``), the inner gate's state under
        ``inner.`` (unless it is the memory's eviction policy)."""
        own: dict[str, Any] = {"offers": self._offers, "judged": self.judged}
        if _is_eviction(self.inner):
            return own
        return own | prefixed("inner", self.inner.state())

    def checked_state(self, state: Mapping[str, Any]) -> Callable[[], None]:
        reader = reader_of(self, state)
        offers = reader.integer("offers")
        judged = reader.value("judged")
        if judged is not None and type(judged) is not bool:
            raise reader.fail(f"judged must be true, false or null, got {judged!r}")
        stages: list[tuple[bool, Callable[[], None]]] = []
        if not _is_eviction(self.inner):
            inner = {
                name[len("inner.") :]: reader.value(name)
                for name in list(state)
                if name.startswith("inner.")
            }
            stages.append(staged(self.inner, inner))
        reader.done()

        def assign() -> None:
            run_stages(stages)
            self._offers, self.judged = offers, judged

        return assign


class MetadataThreshold:
    """A ground-truth evaluator: accept iff ``metadata[key]``, a number, is within the bounds.

    >>> strict = MetadataThreshold("error", at_most=1.0)
    >>> strict(None, "y=3.1", {"error": 0.4}), strict(None, "y=9", {"error": 5.0})
    (True, False)
    """

    def __init__(
        self, key: str, *, at_most: float | None = None, at_least: float | None = None
    ) -> None:
        if not isinstance(key, str) or not key:
            raise TypeError("key must be a non-empty str")
        if at_most is None and at_least is None:
            raise ValueError("give at_most, at_least or both")
        if at_most is not None and at_least is not None and at_least > at_most:
            raise ValueError(f"at_least {at_least} > at_most {at_most}: nothing would pass")
        for name, bound in (("at_most", at_most), ("at_least", at_least)):
            if bound is not None and (
                isinstance(bound, bool) or not isinstance(bound, Real) or math.isnan(bound)
            ):
                raise ValueError(f"{name} must be a number, got {bound!r}")
        self.key = key
        self.at_most = at_most
        self.at_least = at_least
        self.__name__ = f"{key} threshold"

    def __call__(self, query: str | None, execution: str, metadata: Mapping[str, Any]) -> bool:
        value = metadata.get(self.key)
        if isinstance(value, bool) or not isinstance(value, Real) or math.isnan(value):
            raise ValueError(f"metadata[{self.key!r}] must be a number, got {value!r}")
        number = float(value)
        if self.at_most is not None and number > self.at_most:
            return False
        return not (self.at_least is not None and number < self.at_least)


def _is_eviction(policy: object) -> bool:
    from solar_core.policies.eviction.base import EvictionPolicy  # (it imports this module)

    return isinstance(policy, EvictionPolicy)
