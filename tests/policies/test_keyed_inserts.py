"""An insert the gate does not judge (a keyed fact, an update) reads nothing a refused offer
left behind: coverage's and salience's judged offer is kept for the insert that follows it,
and a refused one has none. (Before, a keyed fact stored right after a refusal took the
refused offer's similarities or salience as its own.)"""

from __future__ import annotations

import pytest

from solar_core import SolarMemory


@pytest.mark.parametrize("policy", ["solar-adaptive", "solar-dialogue"])
def test_a_keyed_fact_after_a_refused_offer_is_valued_as_itself(policy: str) -> None:
    memory = SolarMemory(policy, capacity=4, embedder="hash", seed=0, repeats=False)
    for i in range(4):
        memory.add(f"distinct note number {i} about subject {i * 7} and more {i}")
        memory.retrieve(f"subject {i * 7}")
    refused = None
    for _ in range(40):  # offers until the gate refuses one
        decision = memory.add("ok")
        if not decision.admitted:
            refused = decision
            break
    assert refused is not None
    twin = memory.detached()
    keyed = memory.add("Ana works at the bakery on Main Street now", key="ana/job")
    twin.core.eviction._pending = None  # type: ignore[attr-defined]  # what it must read: none
    alone = twin.add("Ana works at the bakery on Main Street now", key="ana/job")
    assert keyed == alone
    assert memory.get(keyed.item_id).policy == twin.get(alone.item_id).policy
