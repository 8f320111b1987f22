"""What a chat turn through ``SolarConversationMemory`` asks of a SQLite database: one look at
whether another process wrote (before the recall), then its two steps (the retrieval, the offer)
in one transaction, and nothing else -- recalled turns are put in order from the memory as the
retrieval left it, not by asking the database again per turn."""

from __future__ import annotations

import warnings
from pathlib import Path

from langchain_solar import SolarConversationMemory
from solar_core.persistence import MemoryStore

TURNS = [
    ("I adopted a beagle named Max last week.", "Lovely!"),
    ("My sister moved to Lisbon in March.", "Nice city."),
    ("I ran a 10k race on Sunday in 52 minutes.", "Well done."),
    ("My favourite food is ramen.", "Good choice."),
    ("What is the name of my dog, the beagle?", "Max."),
    ("Where did my sister move to, Lisbon?", "Lisbon."),
]


def _turn(memory: SolarConversationMemory, said: str, answer: str) -> None:
    memory.load_memory_variables({"input": said})
    memory.save_context({"input": said}, {"output": answer})


def test_a_chat_turn_is_one_transaction_and_one_look(tmp_path: Path) -> None:
    warnings.simplefilter("ignore", DeprecationWarning)
    store = MemoryStore(tmp_path / "chat.db", embedder="hash", seed=0, min_score=None)
    memory = SolarConversationMemory(memory=store.scope("u"), k=1, top_k=3)
    for said, answer in TURNS[:4]:
        _turn(memory, said, answer)
    turns: list[list[str]] = []
    connection = store.backend._conn  # type: ignore[attr-defined]
    try:
        for said, answer in TURNS[4:]:
            statements: list[str] = []
            connection.set_trace_callback(statements.append)
            _turn(memory, said, answer)
            connection.set_trace_callback(None)
            turns.append(statements)
            assert len(memory.recalled) >= 2  # several recalled turns to put in order
    finally:
        connection.set_trace_callback(None)
    for statements in turns:
        assert statements[0] == "PRAGMA data_version"  # the recall: did another process write?
        transaction = statements[1:]
        assert transaction[0] == "BEGIN IMMEDIATE" and transaction[-1] == "COMMIT"
        assert sum(s.startswith(("BEGIN", "COMMIT")) for s in transaction) == 2
        # both steps' log rows, in the one transaction
        assert sum(s.startswith("INSERT INTO solar_ops") for s in transaction) == 2
    live = memory.memory.stats()
    store.close()
    with MemoryStore(tmp_path / "chat.db", embedder="hash", seed=0, min_score=None) as again:
        assert again.scope("u").stats() == live  # every retrieval was logged


def test_recalled_turns_come_oldest_first_over_sqlite(tmp_path: Path) -> None:
    warnings.simplefilter("ignore", DeprecationWarning)
    store = MemoryStore(tmp_path / "chat.db", embedder="hash", seed=0, min_score=None)
    memory = SolarConversationMemory(memory=store.scope("u"), k=1, top_k=3)
    for said, answer in TURNS:
        _turn(memory, said, answer)
    shown = memory.load_memory_variables({"input": "beagle Lisbon race ramen"})["history"]
    assert len(memory.recalled) >= 2
    steps = [memory.memory.get(hit.id).created_step for hit in memory.recalled]
    order = [shown.index(hit.text) for hit in memory.recalled]
    assert [s for _, s in sorted(zip(order, steps, strict=True))] == sorted(steps)
    store.close()
