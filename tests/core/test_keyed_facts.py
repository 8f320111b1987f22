"""Facts with a key: ``add(text, key=...)`` supersedes the current item of that key. The older
one stays readable with the time it stopped being current, is left out of retrievals unless
asked for (then ranked below the current ones), and is what ``as_of`` returns for a time it
was current. It leaves the memory's slots at once for the history of past values, which holds
as many as the memory holds items, outside its capacity: the longest-superseded goes first.
Bad input changes nothing."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

import pytest

from solar_core import SolarMemory
from solar_core.basics.types import UnknownItemError
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


def test_a_superseded_item_leaves_the_slots_for_the_history_at_once() -> None:
    clock = Clock()
    memory = memory_at(clock, policy="lru", capacity=3)
    old = memory.add("my name is Ana", key="me/name", category="identity").item_id
    memory.add("I like tea")
    clock.now = 2_000.0
    new = memory.add("my name is Ana Lopez now", key="me/name", category="identity")
    assert (new.superseded, new.evicted, len(memory)) == (old, None, 2)  # no slot for the old
    decision = memory.add("the weather is fine")
    assert decision.evicted is None and len(memory) == 3  # the room the old one left
    kept = ["I like tea", "my name is Ana Lopez now", "the weather is fine"]
    assert texts(memory.items()) == kept
    assert [i.id for i in memory.items(include_superseded=True)][-1] == old
    assert memory.get(old).superseded_at == 2_000.0 and memory.stats()["superseded"] == 1
    memory.check_invariants()


def test_the_history_keeps_as_many_past_values_as_the_memory_holds_items() -> None:
    clock = Clock()
    memory = memory_at(clock, policy="fifo", capacity=2)
    ids = []
    for i in range(5):
        clock.now += 10.0
        ids.append(memory.add(f"the office is on floor {i} of the tower", key="office").item_id)
    past = [i.id for i in memory.items(include_superseded=True)][1:]
    assert past == ids[2:4]  # the two latest past values; the longest-superseded went first
    assert [h.id for h in memory.retrieve("office floor", as_of=1_035.0)] == [ids[2]]
    assert memory.retrieve("office floor", as_of=1_015.0) == []  # its value then is gone
    memory.remove(ids[2])  # a past value can be forgotten
    assert [i.id for i in memory.items(include_superseded=True)] == [ids[4], ids[3]]
    with pytest.raises(UnknownItemError):
        memory.get(ids[2])
    memory.clear()
    assert memory.items(include_superseded=True) == []


def test_an_id_of_a_past_value_is_never_reused() -> None:
    clock = Clock()
    memory = memory_at(clock, policy="fifo", capacity=2)
    old = memory.add("Ana lives in Paris", key="ana/home", item_id="home-1").item_id
    memory.add("Ana lives in Lyon", key="ana/home")
    with pytest.raises(ValueError, match="superseded value"):
        memory.add("Ana likes tea", item_id=old)
    assert [i.text for i in memory.items(include_superseded=True)] == [
        "Ana lives in Lyon",
        "Ana lives in Paris",
    ]
    fresh = [memory.add(f"note {i} on the weekend plans").item_id for i in range(5)]
    assert old not in fresh and len(set(fresh)) == 5


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
        (lambda m: m.items(include_superseded="yes"), TypeError, "True or False"),
        (lambda m: m.add("y is 3", item_id="m1"), ValueError, "id of a superseded value"),
    ],
)
def test_bad_keys_and_times_are_refused_and_nothing_changes(
    call: Any, error: type[Exception], says: str
) -> None:
    clock = Clock()
    memory = memory_at(clock)
    memory.add("x is 0", key="x")
    clock.now += 1.0
    memory.add("x is now 2", key="x")  # m1 is a past value
    state = memory.state()
    with pytest.raises(error, match=says):
        call(memory)
    assert deep_diff(state, memory.state()) is None


def test_resizing_trims_the_history_to_the_new_capacity() -> None:
    clock = Clock()
    memory = memory_at(clock, policy="fifo", capacity=5)
    ids = [memory.add("the office is in Lyon", key="office").item_id]
    for i in range(3):
        memory.add(f"note {i} about lunch plans and the team")
    for town in ("Nantes", "Brest"):
        clock.now += 1_000.0
        ids.append(memory.add(f"the office moved to {town}", key="office").item_id)
    assert memory.resize(4) == []  # 4 items held: the past values take no slot
    assert [i.id for i in memory.items(include_superseded=True)][4:] == ids[:2]
    evicted = [d.evicted for d in memory.resize(1)]
    assert len(evicted) == 3 and ids[2] in memory  # the current fact is kept
    assert [i.id for i in memory.items(include_superseded=True)] == [ids[2], ids[1]]
    memory.check_invariants()


def test_subscribers_hear_that_a_value_was_superseded() -> None:
    memory = memory_at(Clock(), policy="fifo", capacity=3)
    gone: list[tuple[list[str], str]] = []
    memory.subscribe(lambda *_: None, on_delete=lambda ids, why: gone.append((ids, why)))
    old = memory.add("the office is in Lyon", key="office").item_id
    memory.add("the office moved to Nantes", key="office")
    assert gone == [([old], "superseded")]  # (a watching cache drops its answers on it)


def test_an_update_naming_a_past_value_replaces_it_only_when_stored() -> None:
    memory = memory_at(Clock(), policy="fifo", capacity=1)
    old = memory.add("Ana lives in Paris", key="ana/home").item_id
    memory.add("Ana lives in Lyon", key="ana/home")  # the one item held: a current fact
    refused = memory.add("a note", item_id=old, update=True)  # no room: refused, as any offer
    assert not refused.admitted and memory.get(old).text == "Ana lives in Paris"
    memory.check_invariants()
    memory.resize(2)
    stored = memory.add("a note", item_id=old, update=True)  # room: the past value gives way
    assert stored.admitted and memory.get(old).text == "a note"
    assert [i.id for i in memory.items(include_superseded=True)] == ["m2", old]
    memory.check_invariants()


def test_removing_a_past_value_is_told_and_a_watching_cache_drops_its_answers() -> None:
    from solar_core.response_cache import ResponseCache

    clock = Clock()
    memory = memory_at(clock, policy="fifo", capacity=10)
    gone: list[tuple[list[str], str]] = []
    memory.subscribe(lambda *_: None, on_delete=lambda ids, why: gone.append((ids, why)))
    cache = ResponseCache("hash")
    cache.watch(memory)
    old = memory.add("Ana lived at 12 Elm Street", key="ana/address").item_id
    clock.now += 100.0
    memory.add("Ana lives at 5 Oak Road", key="ana/address")
    question = "Where did Ana live before?"
    cache.store(question, memory.retrieve(question, as_of=1_050.0)[0].text)
    memory.remove(old)
    assert gone[-1] == ([old], "removed")
    assert cache.lookup(question) is None
    memory.check_invariants()


def test_a_state_whose_past_values_are_not_unit_vectors_is_refused() -> None:
    from solar_core.basics.state import StateError

    memory = memory_at(Clock(), policy="fifo", capacity=3)
    memory.add("Ana lives in Paris", key="ana/home")
    memory.add("Ana lives in Lyon", key="ana/home")
    for scale in (5.0, 0.0):
        state = memory.state()
        state["history.vectors"] = state["history.vectors"] * scale
        twin = SolarMemory.from_params(memory.params(), embedder="hash")
        with pytest.raises(StateError, match="unit vector"):
            twin.load_state(state)
