"""A policy of a user's own, in its own module: FIFO's mirror, which evicts the newest item.
Its one registration line makes it a policy every store persists."""

from __future__ import annotations

from collections.abc import Iterable

from solar_core.policies.admission import RegretGate
from solar_core.policies.eviction import FifoEviction
from solar_core.policies.presets import register_policy


class NewestOut(FifoEviction):
    """Evict the item inserted last."""

    name = "newest-out"

    def _ranking(self, step: int) -> Iterable[int]:
        return reversed(self._order)


register_policy("newest-out", NewestOut, rule="evict the newest insert")
#: a composition of registered parts: the paper's regret gate before it
register_policy("regret-newest-out", NewestOut, RegretGate, rule="regret gate; newest out")
