"""A LangChain agent that reaches the memory through ``langchain-mcp-adapters``: its
``MultiServerMCPClient`` starts ``solar-memory mcp`` over stdio for every tool call (a new server
process each time), and a fake chat model calls ``remember``, then ``recall`` and ``rate``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_mcp_adapters.client import MultiServerMCPClient

from solar_core.persistence import MemoryStore, Scope
from tests.support.langchain_fakes import ToolCallingFakeModel, tool_call
from tests.support.mcp_servers import SERVER_ENV


def text_of(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in content)


class MemoryUsingModel(ToolCallingFakeModel):
    """Decides its next message from the conversation, as a model would: remember what the user
    states, recall for a question, rate the recall once it has answered from it (what the tools
    returned is kept in ``seen``)."""

    seen: dict[str, Any] = {}

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            said = text_of(last)
            if said.endswith("?"):
                reply = tool_call("recall", {"query": said, "k": 3}, "c-recall")
            else:
                reply = tool_call("remember", {"text": said}, "c-remember")
        elif isinstance(last, ToolMessage) and last.name == "recall":
            found = json.loads(text_of(last))
            self.seen["recalled"] = [item["text"] for item in found["items"]]
            reply = tool_call("rate", {"handle": found["handle"], "rating": "like"}, "c-rate")
        elif isinstance(last, ToolMessage) and last.name == "rate":
            self.seen["rating"] = json.loads(text_of(last))
            reply = AIMessage(content=f"From memory: {'; '.join(self.seen['recalled'])}")
        else:
            self.seen["verdict"] = json.loads(text_of(last))
            reply = AIMessage(content="Noted.")
        return ChatResult(generations=[ChatGeneration(message=reply)])


async def test_a_langchain_agent_remembers_recalls_and_rates_through_mcp(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    client = MultiServerMCPClient(
        {
            "memory": {
                "transport": "stdio",
                "command": sys.executable,
                "args": ["-m", "solar_core.cli", "mcp", db, "--scope", "user=alice"],
                "env": SERVER_ENV,
            }
        }
    )
    with anyio.fail_after(120):
        tools = await client.get_tools()
        assert sorted(t.name for t in tools) == sorted(
            ["remember", "recall", "rate", "forget", "list", "stats"]
        )
        model = MemoryUsingModel(messages=iter(()), seen={})
        agent = create_agent(model, tools=tools)
        said = await agent.ainvoke({"messages": [HumanMessage("I prefer window seats on flights")]})
        assert said["messages"][-1].content == "Noted."
        assert model.seen["verdict"]["stored"] is True
        answer = await agent.ainvoke({"messages": [HumanMessage("Which seat do I like?")]})
    assert answer["messages"][-1].content == "From memory: I prefer window seats on flights"
    # the rating reached the item the recall returned, though each call ran in a new server
    rating = model.seen["rating"]
    assert rating["rated"] == [model.seen["verdict"]["id"]] and rating["reward"] == 1.0
    with MemoryStore(db, embedder="static") as store:
        memory = store.get(Scope(user="alice"))
        assert [i.text for i in memory.items()] == ["I prefer window seats on flights"]
        assert memory.stats()["feedbacks"] == 1
