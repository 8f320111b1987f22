"""Each ``SolarStore.put`` has its own verdict: concurrent tools (threads, asyncio tasks) each
read their own put's in ``store.last_decision``, and ``store.decision(namespace, key)`` keeps the
verdict of each key's latest put. (Before: one ``last_decision`` per store, so a tool read
whichever put came last and told its user "saved" for a refused write.)"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain.tools import ToolRuntime  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

import langchain_solar.store as store_module  # noqa: E402
from langchain_solar import SolarStore  # noqa: E402
from tests.support.langchain_fakes import ToolCallingFakeModel  # noqa: E402

FULL = ("notes", "full")  # holds one item: a wordless put there is refused
REFUSED = "no text: stored only into free room"


def bounded() -> SolarStore:
    index = {"dims": 16, "embed": DeterministicFakeEmbedding(size=16), "fields": ["text"]}
    store = SolarStore(index=index, capacity=1, policy="fifo")  # type: ignore[arg-type]
    store.put(FULL, "kept", {"text": "Alice is allergic to peanuts"})
    return store


def offer(n: int) -> tuple[tuple[str, ...], str, dict[str, Any], bool]:
    """The ``n``-th writer's put and whether it is stored: even ones are refused (nothing to
    remember, in a full namespace), odd ones admitted (text, into an empty namespace)."""
    if n % 2 == 0:
        return FULL, f"empty{n}", {}, False
    return ("notes", f"user{n}"), "fact", {"text": f"fact number {n}"}, True


def test_concurrent_threads_each_read_their_own_verdict() -> None:
    store = bounded()
    writers = 6
    barrier = threading.Barrier(writers, timeout=30)
    seen: dict[int, Any] = {}

    def write(n: int) -> None:
        namespace, key, value, _ = offer(n)
        store.put(namespace, key, value)
        barrier.wait()  # every writer has put before any reads its verdict
        seen[n] = store.last_decision

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for n in range(writers):
        namespace, key, _, admitted = offer(n)
        decision = seen[n]
        assert decision is not None and decision.admitted is admitted, n
        assert decision is store.decision(namespace, key)
        assert (store.get(namespace, key) is not None) is admitted
    store.close()


def test_concurrent_tasks_each_read_their_own_verdict() -> None:
    store = bounded()
    writers = 6

    async def run() -> list[Any]:
        arrived, everyone = [0], asyncio.Event()

        async def write(n: int) -> Any:
            namespace, key, value, _ = offer(n)
            await store.aput(namespace, key, value)
            arrived[0] += 1
            if arrived[0] == writers:
                everyone.set()
            await everyone.wait()  # every task has put before any reads its verdict
            return store.last_decision

        return await asyncio.gather(*(write(n) for n in range(writers)))

    seen = asyncio.run(run())
    for n, decision in enumerate(seen):
        assert decision is not None and decision.admitted is offer(n)[3], n
    store.close()


def test_parallel_tool_calls_report_saved_only_when_stored() -> None:
    """Two tool calls in one model turn: the refused write says so, the stored one says saved."""
    store = bounded()
    barrier = threading.Barrier(2, timeout=30)

    @tool
    def save(namespace: str, key: str, text: str, runtime: ToolRuntime) -> str:
        """Remember a text."""
        assert runtime.store is not None
        runtime.store.put(("notes", namespace), key, {"text": text} if text else {})
        barrier.wait()  # both calls have put before either reads its verdict
        decision = runtime.store.last_decision  # type: ignore[attr-defined]
        return "Saved." if decision.admitted else f"Not saved: {decision.reason}."

    calls = [
        {"name": "save", "args": {"namespace": "full", "key": "blank", "text": ""}, "id": "a"},
        {"name": "save", "args": {"namespace": "bob", "key": "k", "text": "Bob"}, "id": "b"},
    ]
    model = ToolCallingFakeModel(messages=iter([AIMessage("", tool_calls=calls), AIMessage("ok")]))
    agent = create_agent(model, tools=[save], store=store)
    out = agent.invoke({"messages": [HumanMessage("save both")]})
    answers = {m.tool_call_id: m.text for m in out["messages"] if m.type == "tool"}
    assert answers == {"a": f"Not saved: {REFUSED}.", "b": "Saved."}
    store.close()


def test_the_verdict_of_each_key() -> None:
    store = bounded()
    assert store.decision(FULL, "nothing") is None
    store.put(FULL, "blank", {})
    store.put(("notes", "bob"), "k", {"text": "Bob likes tea"})
    refused, stored = store.decision(FULL, "blank"), store.decision(("notes", "bob"), "k")
    assert refused is not None and not refused.admitted and refused.reason == REFUSED
    assert stored is not None and stored.admitted
    assert store.last_decision is stored  # this thread's latest put
    store.delete(("notes", "bob"), "k")  # deleted: no verdict stands for it
    assert store.decision(("notes", "bob"), "k") is None
    assert store.forget(FULL) and store.decision(FULL, "blank") is None  # nor once forgotten
    store.close()


def test_a_caller_that_made_no_put_reads_the_stores_latest() -> None:
    index = {"dims": 8, "embed": DeterministicFakeEmbedding(size=8)}
    store = SolarStore(index=index)  # type: ignore[arg-type]
    assert store.last_decision is None
    done: list[Any] = []
    writer = threading.Thread(target=lambda: done.append(store.put(("w",), "k", {"text": "x"})))
    writer.start()
    writer.join()
    assert store.last_decision is store.decision(("w",), "k")  # (this thread put nothing since)
    store.close()


def test_the_verdicts_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "DECISIONS_KEPT", 3)
    index = {"dims": 8, "embed": DeterministicFakeEmbedding(size=8)}
    store = SolarStore(index=index, capacity=None)  # type: ignore[arg-type]
    for n in range(5):
        store.put(("ns",), f"k{n}", {"text": f"note {n}"})
    assert [store.decision(("ns",), f"k{n}") is not None for n in range(5)] == [
        False,
        False,
        True,
        True,
        True,
    ]
    store.close()
