"""A memory with an extractor: an offered text's facts are offered with their keys, beside the
text or instead of it; a failed, slow or malformed extraction stores the text and says why in
its decision and the trace; nothing already stored changes because an extractor failed."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.language_models import FakeListChatModel

from solar_core import SolarMemory
from solar_core.persistence import MemoryStore

TURN = "Human: We moved to Paris last month.\nAI: Congratulations!"
ANSWER = '[{"fact": "The user lives in Paris", "key": "user/home"}]'


def memory_with(extractor: Any, extract: str = "beside") -> SolarMemory:
    return SolarMemory(
        "fifo", capacity=10, embedder="hash", seed=0, extractor=extractor, extract=extract
    )


def test_a_chat_models_facts_are_offered_beside_the_turn() -> None:
    model = FakeListChatModel(responses=[ANSWER])
    memory = memory_with(model)
    decision = memory.add(TURN)
    items = {i.text: i for i in memory.items()}
    assert set(items) == {"The user lives in Paris", TURN}
    fact = items["The user lives in Paris"]
    assert fact.key == "user/home" and decision.extraction == f"facts: {fact.id}"
    assert memory.trace()[-1].extraction == decision.extraction


def test_instead_keeps_only_the_facts_and_nothing_for_small_talk() -> None:
    answers = iter([ANSWER, "[]"])
    memory = memory_with(lambda text: next(answers), extract="instead")
    decision = memory.add(TURN)
    assert [i.text for i in memory.items()] == ["The user lives in Paris"]
    assert decision.item_id == memory.items()[0].id and decision.extraction is not None
    nothing = memory.add("Human: thanks!\nAI: You're welcome.")
    assert not nothing.admitted and nothing.reason == "no facts extracted"
    assert len(memory) == 1 and len(memory.trace()) == 1


def test_a_newer_extracted_fact_supersedes_the_older_one() -> None:
    answers = iter([ANSWER, '[{"fact": "The user lives in Lyon", "key": "user/home"}]'])
    memory = memory_with(lambda text: next(answers), extract="instead")
    memory.add(TURN)
    memory.add("Human: We left Paris for Lyon.\nAI: Lovely city.")
    current = memory.retrieve("where does the user live", filter={"key": "user/home"})
    assert [h.text for h in current] == ["The user lives in Lyon"]


@pytest.mark.parametrize(
    ("extractor", "why"),
    [
        (lambda text: (_ for _ in ()).throw(ConnectionError("down")), "raised ConnectionError"),
        (lambda text: "I think the user moved", "not a JSON list"),
        (lambda text: 42, "not a list of facts"),
        (lambda text: '[{"fact": "x"}]', "no key"),
        (lambda text: time.sleep(1.0) or [], "timed out"),
    ],
)
@pytest.mark.parametrize("extract", ["beside", "instead"])
def test_a_failed_extraction_stores_the_turn_and_says_why(
    extractor: Any, why: str, extract: str
) -> None:
    memory = SolarMemory(
        "fifo", capacity=10, embedder="hash", seed=0, extractor=extractor, extract=extract
    )
    memory.extraction = memory.extraction._replace(timeout=0.2)  # type: ignore[union-attr]
    before = memory.add("Human: an earlier turn about tea\nAI: Noted.", key="user/tea")
    decision = memory.add(TURN)
    assert decision.admitted and why in (decision.extraction or "")
    assert decision.extraction.startswith("failed: ")  # type: ignore[union-attr]
    assert memory.trace()[-1].extraction == decision.extraction
    assert [i.text for i in memory.items()] == [
        "Human: an earlier turn about tea\nAI: Noted.",
        TURN,
    ]
    assert memory.get(before.item_id).superseded_at is None


def test_a_keyed_or_updated_offer_is_never_sent_to_the_extractor() -> None:
    asked: list[str] = []
    memory = memory_with(lambda text: asked.append(text) or [])
    memory.add("Ana lives in Rome", key="ana/home")
    memory.add("a note", item_id="n1")
    memory.add("a newer note", item_id="n1", update=True)
    assert asked == ["a note"]


def test_a_bad_extractor_or_mode_is_refused_when_the_memory_is_built() -> None:
    with pytest.raises(TypeError, match="extractor"):
        memory_with(42)
    with pytest.raises(ValueError, match="beside.*instead"):
        memory_with(lambda text: [], extract="both")


def test_a_stored_memory_logs_the_extraction_and_replays_it_without_the_extractor(
    tmp_path: Any,
) -> None:
    path = str(tmp_path / "m.db")
    calls: list[str] = []

    def extractor(text: str) -> str:
        calls.append(text)
        return ANSWER if "Paris" in text else "not json"

    writer = MemoryStore(path, policy="fifo", embedder="hash", seed=0, extractor=extractor)
    ana = writer.scope(user="ana")
    ana.add(TURN)
    ana.add("Human: I like tea.\nAI: Noted.")
    reader = MemoryStore(path, policy="fifo", embedder="hash", seed=0)  # no extractor
    replayed = reader.scope(user="ana")
    assert [d.extraction for d in replayed.trace()] == [d.extraction for d in ana.trace()]
    assert [(i.text, i.key) for i in replayed.items()] == [(i.text, i.key) for i in ana.items()]
    assert len(calls) == 2  # the replay asked nothing
    writer.close()
    reader.close()
