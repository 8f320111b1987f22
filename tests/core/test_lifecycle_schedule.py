"""The lifecycle's background schedule: intervals it cannot keep are refused up front, and
whatever stops its thread is reported in ``last_error``."""

from __future__ import annotations

import threading
import time

import pytest

from solar_core import SolarMemory


def memory() -> SolarMemory:
    return SolarMemory("fifo", capacity=5, embedder="hash")


@pytest.mark.parametrize(
    "every",
    [float("inf"), float("nan"), threading.TIMEOUT_MAX * 2, 10**400, 0, -1.0, 0.0],
    ids=["inf", "nan", "past-timeout-max", "huge-int", "zero", "negative", "zero-float"],
)
def test_an_interval_the_thread_cannot_wait_is_refused_before_it_starts(every: object) -> None:
    m = memory()
    with pytest.raises(ValueError, match="every_seconds"):
        m.lifecycle.start(every)  # type: ignore[arg-type]
    assert not m.lifecycle.running and m.lifecycle.ticks == 0


@pytest.mark.parametrize("every", ["60", None, True])
def test_an_interval_that_is_not_a_number_is_refused(every: object) -> None:
    with pytest.raises(TypeError, match="every_seconds"):
        memory().lifecycle.start(every)  # type: ignore[arg-type]


def test_the_longest_waitable_interval_is_accepted() -> None:
    m = memory()
    m.lifecycle.start(threading.TIMEOUT_MAX)
    try:
        assert m.lifecycle.running
    finally:
        m.lifecycle.stop()
    assert not m.lifecycle.running and m.lifecycle.last_error is None


def test_an_error_that_kills_the_thread_lands_in_last_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failure outside ``run`` (here: the wait itself) used to end the thread silently."""
    m = memory()
    lifecycle = m.lifecycle

    def broken_wait(timeout: float | None = None) -> bool:
        raise OverflowError("timeout value is too large")

    monkeypatch.setattr(lifecycle._stop, "wait", broken_wait)
    lifecycle.start(1.0)
    deadline = time.monotonic() + 5
    while lifecycle.running and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not lifecycle.running
    assert isinstance(lifecycle.last_error, OverflowError)
    assert lifecycle.ticks == 1


def test_a_failing_run_is_recorded_and_the_schedule_keeps_going(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    m = memory()
    lifecycle = m.lifecycle
    calls = []

    def failing_run() -> None:
        calls.append(1)
        raise RuntimeError("sweep failed")

    monkeypatch.setattr(lifecycle, "run", failing_run)
    lifecycle.start(0.01)
    deadline = time.monotonic() + 5
    while len(calls) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    lifecycle.stop()
    assert len(calls) >= 3 and isinstance(lifecycle.last_error, RuntimeError)
