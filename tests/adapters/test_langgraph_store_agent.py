"""``create_agent(..., store=SolarStore(...))`` driven by a fake model, run with ``ainvoke``:
async tools use ``runtime.store`` and the user's namespace is curated as with sync calls (the
sync path runs in ``examples/langgraph_store.py``, whose test is in ``tests/project``)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain.tools import ToolRuntime  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from langchain_solar import SolarStore  # noqa: E402
from tests.support.langchain_fakes import ToolCallingFakeModel  # noqa: E402


@dataclass
class Context:
    user_id: str


@tool
async def save(key: str, fact: str, runtime: ToolRuntime[Context]) -> str:
    """Remember a fact about the user."""
    assert runtime.store is not None
    await runtime.store.aput(("memories", runtime.context.user_id), key, {"text": fact})
    return f"saved {key}"


@tool
async def recall(query: str, runtime: ToolRuntime[Context]) -> str:
    """Search what is remembered about the user."""
    assert runtime.store is not None
    hits = await runtime.store.asearch(("memories", runtime.context.user_id), query=query)
    return "; ".join(hit.value["text"] for hit in hits)


def call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": name}])


def test_an_async_agent_saves_and_searches_through_runtime_store() -> None:
    script = [
        call("save", {"key": "diet", "fact": "pizza"}),
        AIMessage("Noted."),
        call("save", {"key": "city", "fact": "Lisbon"}),
        AIMessage("Noted."),
        call("save", {"key": "pet", "fact": "a cat"}),
        AIMessage("Noted."),
        call("recall", {"query": "pizza"}),
        AIMessage("Done."),
    ]
    index = {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}
    store = SolarStore(index=index, capacity=2, policy="fifo", seed=0)  # type: ignore[arg-type]
    agent = create_agent(
        ToolCallingFakeModel(messages=iter(script)),
        tools=[save, recall],
        context_schema=Context,
        store=store,
    )

    async def chat() -> list[Any]:
        outs = []
        for text in ["I like pizza", "I live in Lisbon", "I have a cat", "What do I eat?"]:
            state = {"messages": [HumanMessage(text)]}
            outs.append(await agent.ainvoke(state, context=Context("alice")))
        return outs

    outs = asyncio.run(chat())
    assert outs[-1]["messages"][-1].text == "Done."
    recalled = outs[-1]["messages"][-2].text  # the recall tool's answer: fifo kept the last two
    assert sorted(recalled.split("; ")) == ["Lisbon", "a cat"]
    memory = store.memory(("memories", "alice"))
    assert memory is not None and sorted(i.id for i in memory.items()) == ["city", "pet"]
    assert store.last_decision is not None and store.last_decision.evicted == "diet"
    assert memory.stats()["retrievals"] == 1  # the tool's search credited what it returned
    store.close()
