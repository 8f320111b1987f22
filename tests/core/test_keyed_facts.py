"""Facts with a key: ``add(text, key=...)`` supersedes the current item of that key. The older
one stays readable with the time it stopped being current, is left out of retrievals unless
asked for (then ranked below the current ones), is what ``as_of`` returns for a time it was
current, and is the first to go when room is needed. Bad input changes nothing."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

import pytest

from solar_core import SolarMemory
from tests.support.persistence import deep_diff


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def memory_at(clock: Clock, policy: str = "solar-dialogue", capacity: int = 6) -> SolarMemory:
    return SolarMemory(policy, capacity=capacity, embedder="hash", seed=0, clock=clock)


def texts(hits: Any) -> list[str]:
    return [hit.text for hit in hits]


def test_a_newer_fact_of_a_key_supersedes_the_older_one() -> None:
    clock = Clock()
    memory = memory_at(clock)
    first = memory.add("Caroline lives in Berlin", key="caroline/home")
    clock.now = 2_000.0
    second = memory.add("Caroline moved to Paris", key="caroline/home")
    assert second.admitted and second.reason == "key" and second.superseded == first.item_id
    old, new = memory.get(first.item_id), memory.get(second.item_id)
    assert (old.key, old.superseded_at, old.superseded_by) == ("caroline/home", 2_000.0, new.id)
    assert (new.key, new.superseded_at, new.superseded_by) == ("caroline/home", None, None)
    # another key is another fact
    other = memory.add("Melanie lives in Berlin", key="melanie/home")
    assert other.superseded is None and memory.get(other.item_id).superseded_at is None


def test_retrievals_return_the_current_fact_and_the_older_ones_when_asked() -> None:
    clock = Clock()
    memory = memory_at(clock)
    berlin = memory.add("Caroline lives in Berlin", key="caroline/home").item_id
    clock.now = 2_000.0
    paris = memory.add("Caroline lives in Paris now", key="caroline/home").item_id
    query = "where does Caroline live"
    assert [h.id for h in memory.retrieve(query, min_score=None)] == [paris]
    both = memory.retrieve(query, include_superseded=True, min_score=None)
    assert [h.id for h in both] == [paris, berlin] and [h.rank for h in both] == [0, 1]
    assert [h.id for h in memory.retrieve(query, as_of=1_500.0, min_score=None)] == [berlin]
    assert [h.id for h in memory.retrieve(query, as_of=2_000.0, min_score=None)] == [paris]
    assert memory.retrieve(query, as_of=999.0, min_score=None) == []  # nothing stored yet
    when = datetime.fromtimestamp(1_500.0, tz=timezone.utc)
    assert [h.id for h in memory.retrieve(query, as_of=when, min_score=None)] == [berlin]


def test_a_superseded_item_is_the_first_to_go_when_room_is_needed() -> None:
    clock = Clock()
    memory = memory_at(clock, policy="lru", capacity=3)
    old = memory.add("my name is Ana", key="me/name", category="identity").item_id
    memory.add("I like tea")
    clock.now = 2_000.0
    memory.add("my name is Ana Lopez now", key="me/name", category="identity")
    memory.retrieve("tea")  # "I like tea" is the most recently used: LRU would evict the name
    decision = memory.add("the weather is fine")
    assert decision.evicted == old  # superseded (and no longer protected): it goes first
    assert "I like tea" in texts(memory.items())


def test_repeats_refresh_only_a_current_item_of_the_same_key() -> None:
    clock = Clock()
    memory = memory_at(clock)
    home = memory.add("Caroline lives in Berlin with her two cats", key="caroline/home")
    again = memory.add("caroline lives in Berlin with her two cats!", key="caroline/home")
    assert again.reason == "repeat" and again.item_id == home.item_id
    assert memory.get(home.item_id).seen == 2
    unkeyed = memory.add("Caroline lives in Berlin with her two cats")  # said again, no key
    assert unkeyed.reason == "repeat" and unkeyed.item_id == home.item_id
    other = memory.add("Caroline lives in Berlin with her two cats", key="caroline/pets")
    assert other.admitted  # another key: another fact, whatever its words
    clock.now = 2_000.0
    memory.add("Caroline lives in Paris with her two cats", key="caroline/home")
    clock.now = 3_000.0  # moved back: the old words, now superseding Paris
    back = memory.add("Caroline lives in Berlin with her two cats", key="caroline/home")
    assert back.admitted and back.reason == "key"
    current = memory.retrieve("where does Caroline live", include_superseded=False, k=5)
    assert [h.text for h in current if "Paris" in h.text] == []


def test_a_keyed_memory_is_rebuilt_exactly_from_its_parameters_and_state() -> None:
    clock = Clock()
    memory = memory_at(clock)
    for i in range(12):
        clock.now += 10.0
        memory.add(f"fact {i % 4} has value {i}", key=f"k{i % 4}")
        memory.add(f"chat line {i} about the weather and football")
        memory.retrieve(f"value {i}", include_superseded=i % 2 == 0)
    rebuilt = SolarMemory.from_params(memory.params(), embedder="hash", clock=clock)
    rebuilt.load_state(memory.state())
    assert deep_diff(memory.core, rebuilt.core) is None, deep_diff(memory.core, rebuilt.core)
    for i in range(8):
        clock.now += 10.0
        assert memory.add(f"fact {i % 4} is now {i}", key=f"k{i % 4}") == rebuilt.add(
            f"fact {i % 4} is now {i}", key=f"k{i % 4}"
        )
        assert memory.retrieve("fact", as_of=clock.now - 15.0) == rebuilt.retrieve(
            "fact", as_of=clock.now - 15.0
        )
    assert deep_diff(memory.core, rebuilt.core) is None


@pytest.mark.parametrize(
    ("call", "error", "says"),
    [
        (lambda m: m.add("x is 1", key=7), TypeError, "key must be a str"),
        (lambda m: m.add("x is 1", key=""), ValueError, "non-blank"),
        (lambda m: m.add("x is 1", key="   "), ValueError, "non-blank"),
        (lambda m: m.add("x is 1", key="k" * 201), ValueError, "at most 200"),
        (lambda m: m.retrieve("x", as_of="yesterday"), TypeError, "as_of must be a time"),
        (lambda m: m.retrieve("x", as_of=True), TypeError, "as_of must be a time"),
        (lambda m: m.retrieve("x", as_of=math.nan), ValueError, "finite"),
        (lambda m: m.retrieve("x", include_superseded=1), TypeError, "True or False"),
    ],
)
def test_bad_keys_and_times_are_refused_and_nothing_changes(
    call: Any, error: type[Exception], says: str
) -> None:
    clock = Clock()
    memory = memory_at(clock)
    memory.add("x is 0", key="x")
    state = memory.state()
    with pytest.raises(error, match=says):
        call(memory)
    assert deep_diff(state, memory.state()) is None


def test_resizing_evicts_superseded_items_first() -> None:
    clock = Clock()
    memory = memory_at(clock, policy="fifo", capacity=5)
    old = memory.add("the office is in Lyon", key="office").item_id
    for i in range(3):
        memory.add(f"note {i} about lunch plans and the team")
    clock.now = 2_000.0
    memory.add("the office moved to Nantes", key="office")
    assert [d.evicted for d in memory.resize(4)] == [old]
