"""Repeats take no second slot: a text offered again (the same words after normalising, or a
near-identical wording by the measured rule) refreshes the stored item: the policy observes it
again, its provenance counts the repeat, and the decision names it. ``repeats=False`` judges
every offer on its own, as the paper's policies do."""

from __future__ import annotations

import pytest

from solar_core import SolarMemory


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


FACT = "Melanie: I finally adopted a rescue dog named Biscuit last weekend"


@pytest.mark.parametrize(
    "again",
    [
        FACT,
        "melanie: i finally adopted a rescue dog named biscuit last weekend!!",
        "Melanie: I finally adopted a rescue dog named Biscuit last weekend, really",
        "Melanie: I finally adopted the rescue dog named Biscuit last weekend",
        "Melanie: I finally adopted a rescue dog named Biscuit last wekend",
    ],
)
def test_a_repeat_refreshes_the_stored_item(again: str) -> None:
    clock = Clock()
    memory = SolarMemory("solar-dialogue", capacity=10, embedder="hash", seed=0, clock=clock)
    first = memory.add(FACT)
    memory.add("Caroline: the weather was lovely at the beach today")
    clock.now = 2_000.0
    decision = memory.add(again)
    assert (decision.admitted, decision.reason, decision.item_id) == (
        False,
        "repeat",
        first.item_id,
    )
    assert len(memory) == 2
    item = memory.get(first.item_id)
    assert (item.text, item.seen, item.last_seen) == (FACT, 2, 2_000.0)
    assert memory.trace()[-1] == decision


@pytest.mark.parametrize(
    "other",
    [
        "Melanie: I finally adopted a rescue cat named Biscuit last weekend",
        "Melanie: I finally adopted two rescue dogs named Biscuit last weekend",
        "Melanie: I never adopted a rescue dog named Biscuit last weekend",
        "Melanie: I finally adopted a rescue dog named Biscuit last month",
        "Caroline: I finally adopted a rescue dog named Biscuit last weekend",
    ],
)
def test_a_different_fact_is_never_merged(other: str) -> None:
    memory = SolarMemory("solar-dialogue", capacity=10, embedder="hash", seed=0)
    memory.add(FACT)
    assert memory.add(other).reason != "repeat"
    assert len(memory) == 2


def test_the_policy_observes_a_repeat_as_a_use() -> None:
    memory = SolarMemory("lru", capacity=3, embedder="hash", seed=0)
    first = memory.add(FACT).item_id
    memory.add("Caroline: the weather was lovely at the beach today")
    memory.add("Caroline: I am reading a novel about sailors and storms")
    memory.add(FACT.lower())  # a repeat: the item is used again, the most recent now
    evicted = memory.add("Melanie: we painted the kitchen a bright yellow").evicted
    assert evicted != first and first in memory
    solar = SolarMemory("solar", capacity=5, embedder="hash", seed=0)
    item = solar.add(FACT).item_id
    alpha = solar.get(item).policy["alpha"]
    solar.add(FACT.upper())
    assert solar.get(item).policy["alpha"] == alpha + 1  # as a retrieval that returned it


def test_without_repeats_every_offer_is_judged_on_its_own() -> None:
    memory = SolarMemory("fifo", capacity=5, embedder="hash", seed=0, repeats=False)
    assert memory.add(FACT).admitted and memory.add(FACT.lower()).admitted
    assert len(memory) == 2 and memory.params()["repeats"] is False
    with pytest.raises(TypeError, match="repeats must be True or False"):
        SolarMemory("fifo", capacity=5, embedder="hash", repeats="yes")  # type: ignore[arg-type]


def test_a_memory_whose_parameters_predate_repeats_keeps_every_offer() -> None:
    params = SolarMemory("fifo", capacity=5, embedder="hash").params()
    del params["repeats"]  # as a scope stored before the setting was recorded
    memory = SolarMemory.from_params(params, embedder="hash")
    assert memory.add(FACT).admitted and memory.add(FACT).admitted


def test_repeat_counts_survive_a_rebuild_from_parameters_and_state() -> None:
    clock = Clock()
    memory = SolarMemory("solar-adaptive", capacity=5, embedder="hash", seed=0, clock=clock)
    item = memory.add(FACT).item_id
    clock.now = 1_500.0
    memory.add(FACT + "!")
    rebuilt = SolarMemory.from_params(memory.params(), embedder="hash", clock=clock)
    rebuilt.load_state(memory.state())
    assert (rebuilt.get(item).seen, rebuilt.get(item).last_seen) == (2, 1_500.0)
    assert rebuilt.add(FACT.lower()) == memory.add(FACT.lower())
