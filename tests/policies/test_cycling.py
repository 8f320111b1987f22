"""The cycling workload of the paper (§6): FIFO thrashes, the SOLAR presets do not."""

from __future__ import annotations

import numpy as np

from solar_core import SolarMemory
from tests.support.memories import unit


def cycling_hit_rate(policy: str, m: int, capacity: int = 10, seed: int = 42) -> float:
    """m topics x 5 items, queried round robin for 10 cycles; the topic's next item is offered."""
    rng = np.random.default_rng(seed)
    dim = 128
    centres = unit(rng.normal(size=(m, dim)))
    items = unit(centres[:, None, :] + rng.normal(scale=0.1, size=(m, 5, dim)))
    memory = SolarMemory(policy, capacity=capacity, dim=dim, seed=seed)
    hits = 0
    for t in range(10 * m):
        topic = t % m
        query = unit(centres[topic] + rng.normal(scale=0.05, size=dim))
        retrieved = memory.retrieve(embedding=query, k=3)
        hits += any(h.metadata["topic"] == topic for h in retrieved)
        item = (t // m) % 5
        memory.add(f"t{topic}/{item}", embedding=items[topic, item], metadata={"topic": topic})
    return hits / (10 * m)


def test_fifo_gets_exactly_zero_when_topics_outnumber_slots() -> None:
    assert cycling_hit_rate("fifo", m=20) == 0.0
    assert cycling_hit_rate("fifo", m=15) == 0.0


def test_solar_presets_keep_a_stable_subset() -> None:
    assert cycling_hit_rate("solar", m=20) > 0.0
    assert cycling_hit_rate("solar-a", m=20) > 0.0


def test_fifo_retains_everything_when_topics_fit() -> None:
    # m == K: each topic's item survives exactly until its topic comes back.
    assert cycling_hit_rate("fifo", m=10) > 0.8
