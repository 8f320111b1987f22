"""A Beta belief over an item's utility."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class BetaPosterior:
    """Beta(alpha, beta) belief that an item is useful: a reward r in [0, 1] adds r to alpha and
    1 - r to beta.

    >>> p = BetaPosterior(2.0, 1.0)      # SOLAR's optimistic prior
    >>> p.update(1.0); p.update(0.0)
    >>> p, round(p.mean, 3)
    (BetaPosterior(alpha=3.0, beta=2.0), 0.6)
    >>> 0.0 <= p.sample(np.random.default_rng(0)) <= 1.0
    True
    """

    alpha: float = 1.0
    beta: float = 1.0

    def __post_init__(self) -> None:
        if not (self.alpha > 0 and self.beta > 0):
            raise ValueError(f"alpha and beta must be > 0, got {self.alpha}, {self.beta}")

    def update(self, reward: float) -> None:
        if not 0.0 <= reward <= 1.0:
            raise ValueError(f"reward must be in [0, 1], got {reward}")
        self.alpha += reward
        self.beta += 1.0 - reward

    def sample(self, rng: np.random.Generator) -> float:
        return float(rng.beta(self.alpha, self.beta))

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)
