"""``add(..., update=True)``: an item stored under an id replaced in one step."""

from __future__ import annotations

import numpy as np
import pytest

from solar_core import SolarMemory
from tests.support.memories import full_state, onehot


def full_memory() -> SolarMemory:
    memory = SolarMemory("fifo", 3, dim=4, seed=0)
    for i in range(3):
        memory.add(f"fact {i}", embedding=onehot(i, 4), item_id=f"k{i}")
    return memory


def test_an_update_replaces_in_place_and_evicts_nothing() -> None:
    memory = full_memory()
    decision = memory.add("fact 1, revised", embedding=onehot(3, 4), item_id="k1", update=True)
    assert decision.admitted and decision.item_id == "k1" and decision.evicted is None
    assert decision.reason == "updated"
    assert sorted(i.id for i in memory.items()) == ["k0", "k1", "k2"]
    assert memory.get("k1").text == "fact 1, revised"
    hits = memory.retrieve(embedding=onehot(3, 4), k=1)
    assert [h.id for h in hits] == ["k1"]  # its new vector
    assert memory.stats()["removed"] == 1  # the old value went as removed
    memory.check_invariants()


def test_an_update_of_an_id_not_stored_is_a_plain_offer() -> None:
    memory = full_memory()
    decision = memory.add("new fact", embedding=onehot(3, 4), item_id="k9", update=True)
    assert decision.admitted and decision.evicted == "k0"  # fifo: the oldest made room


def test_without_update_a_new_text_under_a_stored_id_is_still_refused() -> None:
    memory = full_memory()
    with pytest.raises(ValueError, match="different text"):
        memory.add("fact 1, revised", embedding=onehot(3, 4), item_id="k1")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"update": True}, ValueError, "pass item_id="),
        ({"update": "yes", "item_id": "k1"}, TypeError, "update must be True or False"),
    ],
)
def test_a_bad_update_is_refused_and_changes_nothing(
    kwargs: dict[str, object], error: type[Exception], match: str
) -> None:
    memory = full_memory()
    before = full_state(memory)
    with pytest.raises(error, match=match):
        memory.add("x", embedding=np.ones(4, np.float32), **kwargs)  # type: ignore[arg-type]
    assert full_state(memory) == before
