"""SOLAR's regret-gated admission (paper §4.2)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from solar_core.basics.state import StateReader, register_part
from solar_core.basics.validation import check_k, check_nonnegative, check_positive
from solar_core.policies.admission.base import (
    AdmissionPolicy,
    Candidate,
    Verdict,
)
from solar_core.policies.admission.info_gain import information_gain

#: how far below 0.1 (the floor of every ``L_new``) rounding may leave their average ``L_ema``
_L_FLOOR = 0.1 * (1.0 - 1e-9)


@register_part
class RegretGate(AdmissionPolicy):
    """Store only when the regret accumulated since the last store exceeds ``tau``. Each offer
    brings the step cost ``c_t``: ``1 - score`` with feedback, else :func:`information_gain`.

    1. ``R += c_t``; the cost joins a window of the last 30 costs.
    2. Once 30 costs exist: ``L_new = max(2 * std(window), 0.1)``,
       ``L_ema = 0.7 * L_ema + 0.3 * L_new`` (first value: ``L_new``),
       ``tau = clip(sqrt(2 * lambda / L_ema), 0.1, 5)``. Before that ``tau = sqrt(2 * lambda / L)``
       with ``lambda = 5``, ``L = 2`` (the economic-order-quantity threshold of the paper).
    3. While fewer than ``min(max(K // 2, 5), 25)`` items are stored (bootstrap), store.
       Otherwise store iff ``R > tau``. Every store resets ``R = 0``; nothing else does.

    Constants from the reference implementation (``src/agent/solar.py``).

    >>> from solar_core.policies.admission.base import Candidate
    >>> gate = RegretGate(bootstrap=1)
    >>> [gate.admit(Candidate(size=n, capacity=10, score=0.0)).admitted for n in range(5)]
    [True, False, False, True, False]
    """

    name = "regret"
    param_names = (
        "switching_cost lipschitz window tau_min tau_max ema bootstrap novelty_weight"
        " density_weight"
    )
    _l_ema: float | None

    def __init__(
        self,
        switching_cost: float = 5.0,
        lipschitz: float = 2.0,
        window: int = 30,
        tau_min: float = 0.1,
        tau_max: float = 5.0,
        ema: float = 0.7,
        bootstrap: int | None = None,
        novelty_weight: float = 0.6,
        density_weight: float = 0.4,
    ) -> None:
        check_positive(
            switching_cost=switching_cost, lipschitz=lipschitz, tau_min=tau_min, tau_max=tau_max
        )
        check_nonnegative(ema=ema, novelty_weight=novelty_weight, density_weight=density_weight)
        if check_k(window, "window") < 2 or tau_min > tau_max or ema >= 1:
            raise ValueError("need window >= 2, tau_min <= tau_max and ema < 1")
        if bootstrap is not None and bootstrap != 0:
            check_k(bootstrap, "bootstrap")
        self.switching_cost = switching_cost
        self.lipschitz = lipschitz
        self.window = window
        self.tau_min = tau_min
        self.tau_max = tau_max
        self.ema = ema
        self.bootstrap = bootstrap
        self.novelty_weight = novelty_weight
        self.density_weight = density_weight
        self.clear()

    def clear(self) -> None:
        self._regret = 0.0
        self._tau = math.sqrt(2.0 * self.switching_cost / self.lipschitz)
        self._l_ema = None
        self._costs: list[float] = []  # ring buffer of the last `window` costs
        self._head = 0
        self._seen = 0
        self._sum = 0.0
        self._sumsq = 0.0

    @property
    def regret(self) -> float:
        return self._regret

    @property
    def tau(self) -> float:
        return self._tau

    def bootstrap_size(self, capacity: int | None) -> int:
        if self.bootstrap is not None:
            return self.bootstrap
        return 25 if capacity is None else min(max(capacity // 2, 5), 25)

    def cost(self, candidate: Candidate) -> float:
        """``1 - score`` with feedback, else the candidate's information gain."""
        if candidate.score is not None:
            return 1.0 - candidate.score
        similarities = candidate.similarities
        if similarities is None:
            raise ValueError("RegretGate needs candidate.similarities when there is no score")
        return information_gain(
            similarities, candidate.size, self.novelty_weight, self.density_weight
        )

    def _record(self, cost: float) -> None:
        # Every offer: locals, `b if b > a else a` for max; the running sums are recomputed
        # exactly once per lap so rounding cannot drift
        costs, window = self._costs, self.window
        if len(costs) < window:
            costs.append(cost)
            total, squares = self._sum, self._sumsq
        else:
            head = self._head
            old = costs[head]
            costs[head] = cost
            self._head = (head + 1) % window
            total = self._sum - old
            squares = self._sumsq - old * old
        total += cost
        squares += cost * cost
        self._seen += 1
        if self._head == 0:
            total = math.fsum(costs)
            squares = math.fsum([x * x for x in costs])
        self._sum, self._sumsq = total, squares
        if self._seen >= window:
            mean = total / window
            variance = squares / window - mean * mean
            std = math.sqrt(0.0 if 0.0 > variance else variance)
            l_new = 2.0 * std
            if 0.1 > l_new:
                l_new = 0.1
            l_ema = self._l_ema
            ema = self.ema
            l_ema = l_new if l_ema is None else (ema * l_ema + (1.0 - ema) * l_new)
            self._l_ema = l_ema
            self._tau = self._clipped_tau(l_ema)

    def _admit(self, candidate: Candidate) -> Verdict:
        cost = self.cost(candidate)
        self._regret += cost
        self._record(cost)
        regret = self._regret
        if candidate.refused is not None:
            # refused elsewhere: its cost counts as any rejected offer's
            return Verdict(False, candidate.refused, cost, regret, self._tau)
        if candidate.size < self.bootstrap_size(candidate.capacity):
            self._regret = 0.0
            return Verdict(True, "bootstrap", cost, regret, self._tau)
        if regret > self._tau:
            self._regret = 0.0
            return Verdict(True, "regret > tau", cost, regret, self._tau)
        return Verdict(False, "regret <= tau", cost, regret, self._tau)

    def check_invariants(self) -> None:
        if not (self._regret >= 0 and math.isfinite(self._regret)):
            raise AssertionError(f"regret {self._regret} must be finite and >= 0")
        if not self.tau_min <= self._tau <= self.tau_max and self._seen >= self.window:
            raise AssertionError(f"tau {self._tau} outside [{self.tau_min}, {self.tau_max}]")
        if len(self._costs) > self.window:
            raise AssertionError("cost window overflow")

    def state(self) -> dict[str, Any]:
        """R, tau, ``l_ema`` (``None`` until ``window`` costs were seen), the ring of the last
        ``costs``, its ``head`` once full, the costs ``seen``, the ring's running sums."""
        return {
            "regret": float(self._regret),
            "tau": float(self._tau),
            "l_ema": None if self._l_ema is None else float(self._l_ema),
            "costs": np.array(self._costs, dtype=np.float64).reshape(-1),
            "head": self._head,
            "seen": self._seen,
            "sum": float(self._sum),
            "sumsq": float(self._sumsq),
        }

    def _read(self, reader: StateReader) -> dict[str, Any]:
        # the largest step cost: 1 - score, or a gain (at most its novelty weight)
        window, top = self.window, max(1.0, float(self.novelty_weight))
        costs = reader.array("costs", np.float64, (None,), lo=0.0, hi=top)
        seen = reader.integer("seen")
        head = reader.integer("head", 0, window - 1)
        regret = reader.number("regret", 0.0, seen * top * (1.0 + 1e-9))
        total = reader.number("sum")
        squares = reader.number("sumsq")
        l_ema = reader.number("l_ema", optional=True)
        tau = reader.number("tau")
        filled = len(costs)
        if filled > window:
            raise reader.fail(f"costs holds {filled} costs, more than the window of {window}")
        if filled < window and (seen != filled or head != 0):
            raise reader.fail(
                f"a window filling up ({filled} of {window} costs) comes with seen = {filled} "
                f"and head = 0, got seen = {seen}, head = {head}"
            )
        if filled == window and (seen < window or head != seen % window):
            raise reader.fail(
                f"a full window has seen >= {window} and head = seen mod {window}, got seen = "
                f"{seen}, head = {head}"
            )
        listed = [float(x) for x in costs.tolist()]
        exact_sum, exact_squares = math.fsum(listed), math.fsum([x * x for x in listed])
        if filled < window or head == 0:  # the sums were just recomputed: exactly these
            if total != exact_sum or squares != exact_squares:
                raise reader.fail("sum and sumsq must be the fsum of costs and of their squares")
        else:  # running sums since the last lap: what rounding can drift, no more
            drift = 1e-12 * window * window
            if abs(total - exact_sum) > drift * top or abs(squares - exact_squares) > drift * (
                top * top
            ):
                raise reader.fail("sum and sumsq stray from the costs' sums")
        if (l_ema is None) != (seen < window):
            raise reader.fail(f"l_ema is null exactly while seen < window ({window})")
        if l_ema is None:
            if tau != math.sqrt(2.0 * self.switching_cost / self.lipschitz):
                raise reader.fail("tau must be its first value until the window is full")
        else:
            if not _L_FLOOR <= l_ema <= max(2.0 * top, 0.1) * (1.0 + 1e-9):
                raise reader.fail(f"l_ema must be in [0.1, {max(2.0 * top, 0.1)}], got {l_ema}")
            if tau != self._clipped_tau(l_ema):
                raise reader.fail(f"tau {tau} is not the clipped threshold of l_ema {l_ema}")
        return {
            "_regret": regret,
            "_tau": tau,
            "_l_ema": l_ema,
            "_costs": listed,
            "_head": head,
            "_seen": seen,
            "_sum": total,
            "_sumsq": squares,
        }

    def _clipped_tau(self, l_ema: float) -> float:
        """``tau`` for ``l_ema``, as :meth:`_record` computes it."""
        tau = math.sqrt(2.0 * self.switching_cost / l_ema)
        if self.tau_min > tau:
            tau = self.tau_min
        return self.tau_max if self.tau_max < tau else tau
