"""A repeat is the same item said again, not the same words about something else: an offer
whose metadata, category or expiry says something the stored item's does not is stored on its
own; a chat turn's sides, which its text holds, never stop a repeat. And what a repeat or a
fact cannot be: a fact is not extracted from a text that is one already, and a current fact
does not age out."""

from __future__ import annotations

import pytest

from solar_core import SolarMemory

TEXT = "Ana: the blue product photo for the spring catalogue is ready"


def memory() -> SolarMemory:
    return SolarMemory("fifo", capacity=10, embedder="hash", seed=0)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"metadata": {"user": "alice"}}, {"metadata": {"user": "bob"}}),
        ({"metadata": {"sku": "A1"}}, {}),
        ({}, {"category": "identity"}),
        ({"valid_until": 10.0}, {"valid_until": 99.0}),
    ],
)
def test_the_same_words_about_something_else_are_stored_apart(
    first: dict[str, object], second: dict[str, object]
) -> None:
    m = memory()
    m.add(TEXT, **first)  # type: ignore[arg-type]
    decision = m.add(TEXT, **second)  # type: ignore[arg-type]
    assert decision.admitted and len(m) == 2
    if "metadata" in second:
        found = m.retrieve(TEXT, filter=second["metadata"], min_score=None)  # type: ignore[arg-type]
        assert [h.id for h in found] == [decision.item_id]


def test_a_chat_turns_sides_do_not_stop_a_repeat() -> None:
    m = memory()
    sides = {"human": "the blue product photo is ready", "ai": "great"}
    first = m.add("Human: the blue product photo is ready\nAI: great", metadata=sides)
    again = {"human": "the blue product photo is ready!", "ai": "great"}
    decision = m.add("Human: the blue product photo is ready!\nAI: great", metadata=again)
    assert decision.reason == "repeat" and decision.item_id == first.item_id


def test_a_text_keyed_by_its_metadata_is_not_sent_to_the_extractor() -> None:
    asked: list[str] = []
    m = SolarMemory(
        "fifo",
        capacity=10,
        embedder="hash",
        seed=0,
        extractor=lambda text: asked.append(text) or [("Ana lives in Rome", "ana/home")],
    )
    m.add("Ana lives in Rome now", metadata={"key": "ana/home"})
    assert asked == [] and [i.key for i in m.items()] == ["ana/home"]


def test_a_refused_fact_is_named_in_the_note() -> None:
    m = SolarMemory(
        "fifo",
        capacity=1,
        embedder="hash",
        seed=0,
        extractor=lambda text: [("Ana lives in Oslo", "ana/city")] if "Oslo" in text else [],
    )
    m.add("Ana likes tea", key="ana/drink")  # a current fact fills the memory: kept
    decision = m.add("Human: we moved to Oslo\nAI: nice")
    assert decision.extraction == "facts: none stored (full of protected items)"


def test_a_current_fact_does_not_age_out_and_a_superseded_one_stays_in_the_history() -> None:
    now = [0.0]
    m = SolarMemory("fifo", capacity=10, embedder="hash", seed=0, clock=lambda: now[0])
    old = m.add("Ana lives in Berlin", key="ana/home").item_id
    now[0] = 1.0
    new = m.add("Ana lives in Paris", key="ana/home").item_id
    chat = m.add("Ana said hello").item_id
    now[0] = 30 * 86_400.0
    expired = m.lifecycle.expire()
    assert set(expired) == {chat} and new in m  # the superseded one holds no slot to expire
    assert m.get(old).superseded_by == new
