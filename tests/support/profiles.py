"""Hypothesis profiles: ``fast`` (the default, what ``make test`` runs) and ``thorough`` (CI:
``HYPOTHESIS_PROFILE=thorough``), which runs every property with three times the examples.

A test that sets its own count writes ``max_examples=examples(n)``, so the profile scales it too.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "fast")
FACTORS = {"fast": 1, "thorough": 3}
if PROFILE not in FACTORS:
    raise RuntimeError(f"HYPOTHESIS_PROFILE={PROFILE!r}: use one of {sorted(FACTORS)}")
settings.register_profile("fast", deadline=None, max_examples=50)
settings.register_profile("thorough", deadline=None, max_examples=50 * FACTORS["thorough"])
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """``n`` examples in the ``fast`` profile, scaled in the others."""
    return n * FACTORS[PROFILE]
