"""An int too large for a float, given as days or as a time the caller read, is refused with the
lifecycle's own error (it was an ``OverflowError`` from converting it), and changes nothing."""

from __future__ import annotations

import pytest

from solar_core import SolarMemory

HUGE = 10**400  # no float holds it


@pytest.mark.parametrize(
    "arguments",
    [{"ttl_days": HUGE}, {"trace_retention_days": {"decision": HUGE}}],
)
def test_days_too_large_for_a_float_are_refused_as_not_finite(arguments: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="must be finite"):
        SolarMemory("fifo", 3, dim=2, **arguments)  # type: ignore[arg-type]


def test_a_seen_time_too_large_for_a_float_is_refused_and_renews_nothing() -> None:
    memory = SolarMemory("fifo", 3, dim=2, clock=lambda: 0.0)
    item = memory.add("tea at five", embedding=[1.0, 0.0], valid_until=100.0).item_id
    assert item is not None
    with pytest.raises(TypeError, match="must be a finite time"):
        memory.lifecycle.renew({item: 60.0}, seen={item: HUGE})
    assert memory.get(item).valid_until == 100.0
