"""Real ``create_agent`` agents around a middleware, driven by the tool-calling fake model."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from langchain_solar import SolarMemoryMiddleware
from tests.support.langchain_fakes import ToolCallingFakeModel


@tool
def lookup(q: str) -> str:
    """Look something up."""
    return f"result for {q}"


def model(*replies: AIMessage) -> ToolCallingFakeModel:
    return ToolCallingFakeModel(messages=iter(replies))


def agent_with(mw: SolarMemoryMiddleware, *replies: AIMessage, **kwargs: Any) -> Any:
    return create_agent(
        model(*replies), tools=[lookup], system_prompt="You are helpful.", middleware=[mw], **kwargs
    )


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


@dataclass
class UserContext:
    user_id: str
