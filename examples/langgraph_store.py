"""LangGraph long-term memory through ``create_agent(..., store=SolarStore(...))``: tools save
and search a user's memories with ``runtime.store``, and each user's namespace is a bounded,
SOLAR-curated memory instead of an ever-growing list.

Runs offline: the model is LangChain's ``GenericFakeChatModel`` replaying scripted tool calls and
answers; the store embeds with the built-in static embedder (numpy only).

    python examples/langgraph_store.py
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from langchain_solar import SolarStore


@dataclass
class Context:
    user_id: str


@tool
def save_memory(key: str, fact: str, runtime: ToolRuntime[Context]) -> str:
    """Remember a fact about the user under a short key."""
    store = runtime.store
    assert isinstance(store, SolarStore)
    store.put(("memories", runtime.context.user_id), key, {"text": fact})
    verdict = store.last_decision  # this call's own put, whatever other tools put meanwhile
    assert verdict is not None
    return f"saved {key}" if verdict.admitted else f"not saved ({verdict.reason})"


@tool
def search_memory(query: str, runtime: ToolRuntime[Context]) -> str:
    """Search what is remembered about the user."""
    assert runtime.store is not None
    hits = runtime.store.search(("memories", runtime.context.user_id), query=query, limit=2)
    return "; ".join(hit.value["text"] for hit in hits) or "nothing remembered"


class ScriptedModel(GenericFakeChatModel):
    """The fake chat model, able to call tools (the base class cannot bind them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": name, "type": "tool_call"}])


SCRIPT = [
    call("save_memory", {"key": "diet", "fact": "Alice is vegetarian."}),  # alice, turn 1
    AIMessage("Noted: no meat for you."),
    call("save_memory", {"key": "city", "fact": "Alice lives in Lisbon."}),  # alice, turn 2
    AIMessage("Noted: Lisbon."),
    call("search_memory", {"query": "what food does she eat"}),  # alice, turn 3
    AIMessage("Since you are vegetarian: try the grilled vegetables at Cantinho."),
]


def main() -> None:
    # Two memories per user namespace: a third `put` makes the policy choose what to keep.
    # `SolarStore("memories.db", ...)` persists them (SQLite; or a postgresql:// URL).
    store = SolarStore(
        index={"fields": ["text"]},  # built in; or {"dims": ..., "embed": any LangChain Embeddings}
        capacity=2,
        seed=0,
    )
    agent = create_agent(
        ScriptedModel(messages=iter(SCRIPT)),
        tools=[save_memory, search_memory],
        context_schema=Context,
        store=store,
    )
    for text in ["I'm vegetarian.", "I live in Lisbon.", "Where should I eat tonight?"]:
        out = agent.invoke({"messages": [HumanMessage(text)]}, context=Context("alice"))
        tools = [m.text for m in out["messages"] if m.type == "tool"]
        print(f"alice: {text}\n    tools: {tools[-1]}\n    agent: {out['messages'][-1].text}")

    ns = ("memories", "alice")
    for key, text, pinned in [
        ("name", "Her name is Alice.", True),  # pinned: kept whatever the policy says
        ("weather", "It rained on Tuesday.", False),
    ]:
        store.put(ns, key, {"text": text}, pinned=pinned)
        d = store.last_decision
        assert d is not None
        print(f"put {key}: stored={d.admitted} ({d.reason}), evicted={d.evicted}")
    print("alice's namespace now holds:")
    for item in store.search(("memories", "alice"), limit=10):
        print(f"  {item.key}: {item.value['text']}")
    store.close()


if __name__ == "__main__":
    main()
