"""A clock the tests move by hand."""

from __future__ import annotations


class Clock:
    """A clock the test moves by hand (``clock.now += DAY``): decay and expiry see days pass."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
