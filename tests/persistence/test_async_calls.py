"""The asyncio calls: a hundred users' turns gathered on one event loop, no cross-talk."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from solar_core import SolarMemory
from solar_core.persistence import MemoryStore

FACTS = ["my dog is called {}", "I live in {}", "my favourite tea is {}"]


async def user_turns(store: MemoryStore, user: int) -> list[str]:
    """One user's conversation: three facts, then a question about each."""
    memory = await store.ascope(user=f"u{user}")
    for fact in FACTS:
        await memory.aadd(fact.format(f"name{user}x"))
    answers = []
    for fact in FACTS:
        hits = await memory.aretrieve(fact.format(""), k=1)
        await memory.afeedback(like=True, retrieval=hits)
        answers += [hit.text for hit in hits]
    return answers


def test_a_hundred_users_gathered_never_see_each_other(tmp_path: Path) -> None:
    async def main() -> list[list[str]]:
        store = MemoryStore(tmp_path / "m.db", policy="fifo", capacity=10, embedder="hash")
        try:
            return await asyncio.gather(*(user_turns(store, u) for u in range(100)))
        finally:
            await store.aclose()

    results = asyncio.run(main())
    for user, answers in enumerate(results):
        assert len(answers) == 3
        assert all(f"name{user}x" in text for text in answers), (user, answers)


def test_the_calls_run_off_the_event_loop() -> None:
    memory = SolarMemory("fifo", 5, embedder="hash", seed=0)
    threads: list[str] = []

    def spy(text: str, **kwargs: object) -> object:
        threads.append(threading.current_thread().name)
        return SolarMemory.add(memory, text, **kwargs)  # type: ignore[arg-type]

    memory.add = spy  # type: ignore[method-assign]

    async def main() -> str:
        await memory.aadd("tea")
        await memory.aremove((await memory.aretrieve("tea", k=1))[0].id)
        await memory.aclear()
        return threading.current_thread().name

    loop_thread = asyncio.run(main())
    assert threads and threads[0] != loop_thread
    assert len(memory) == 0
