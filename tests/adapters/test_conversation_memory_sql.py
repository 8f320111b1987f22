"""What a chat turn through ``SolarConversationMemory`` asks of a SQLite database: its two steps
(the retrieval, the offer), each one transaction, and nothing else -- recalled turns are put in
order from the memory as the retrieval left it, not by asking the database again per turn."""

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


def test_a_chat_turn_is_two_transactions_and_reads_nothing_outside_them(
    tmp_path: Path,
) -> None:
    warnings.simplefilter("ignore", DeprecationWarning)
    store = MemoryStore(tmp_path / "chat.db", embedder="hash", seed=0, min_score=None)
    memory = SolarConversationMemory(memory=store.scope("u"), k=1, top_k=3)
    for said, answer in TURNS[:4]:
        _turn(memory, said, answer)
    statements: list[str] = []
    connection = store.backend._conn  # type: ignore[attr-defined]
    connection.set_trace_callback(statements.append)
    try:
        for said, answer in TURNS[4:]:
            _turn(memory, said, answer)
            assert len(memory.recalled) >= 2  # several recalled turns to put in order
    finally:
        connection.set_trace_callback(None)
    transactions: list[list[str]] = []
    for statement in statements:
        if statement.startswith("BEGIN"):
            transactions.append([])
        assert transactions, f"{statement!r} ran outside a transaction"
        transactions[-1].append(statement)
    assert len(transactions) == 2 * len(TURNS[4:])
    assert all(t[0] == "BEGIN IMMEDIATE" and t[-1] == "COMMIT" for t in transactions)
    # the retrievals: one look at whether another process wrote, the log row, the scope's seq
    assert all(len(t) == 5 for t in transactions[::2])
    store.close()


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
