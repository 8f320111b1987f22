"""A LangChain v1 ``create_agent`` agent with ``SolarMemoryMiddleware``: one self-curating memory
per user, recalled into the system prompt, with a tool the agent uses to rate its memories.

Runs offline: the model is LangChain's ``GenericFakeChatModel`` replaying scripted tool calls and
answers; the memory embeds with the built-in static embedder (numpy only).

    python examples/langchain_agent.py
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool

from langchain_solar import SolarMemoryMiddleware


@dataclass
class Context:
    user_id: str


@tool
def order_status(order_id: str) -> str:
    """Look up the status of an order."""
    return f"order {order_id}: shipped, arrives Friday"


class ScriptedModel(GenericFakeChatModel):
    """The fake chat model, able to call tools (the base class cannot bind them)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


class ShowSystemPrompt(BaseCallbackHandler):
    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], **kw: Any):
        print("    model sees:", messages[0][0].text.replace("\n", "\n" + " " * 16))


def call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": name, "type": "tool_call"}])


SCRIPT = [
    AIMessage("Got it: you prefer answers in French from now on."),  # alice, turn 1
    call("order_status", {"order_id": "A-17"}),  # bob, turn 1: a tool call ...
    AIMessage("Your order A-17 has shipped and arrives Friday."),  # ... then the answer
    call("rate_memories", {"helpful": True}),  # alice, turn 2: rates the recalled memory ...
    AIMessage("Bien sûr ! Votre commande arrive vendredi."),  # ... and answers in French
]


def main() -> None:
    memory = SolarMemoryMiddleware(
        scope="user_id", top_k=2, capacity=50, feedback_tool=True, seed=0
    )
    # A real model plugs in here, e.g. `model = init_chat_model("openai:gpt-4o-mini")`
    # (from langchain.chat_models import init_chat_model); nothing else changes.
    model = ScriptedModel(messages=iter(SCRIPT))
    agent = create_agent(
        model,
        tools=[order_status],
        system_prompt="You are a helpful support agent.",
        middleware=[memory],
        context_schema=Context,
    )
    config = {"callbacks": [ShowSystemPrompt()]}
    for user, text in [
        ("alice", "Please always answer me in French."),
        ("bob", "Where is my order A-17?"),
        ("alice", "When does my order arrive?"),
    ]:
        print(f"{user}: {text}")
        out = agent.invoke({"messages": [HumanMessage(text)]}, config, context=Context(user))
        print(f"    agent: {out['messages'][-1].text}")
        decision = memory.last_decision(user)
        print(f"    turn stored in {user}'s memory: {decision.admitted if decision else None}")

    memory.feedback(like=True, scope="bob")  # e.g. bob clicked thumbs-up on his last answer

    print("\nmemories per user (never shared):")
    for user in memory.scopes:
        for item in memory.memory_for(user).items():
            print(f"  {user}: {item.metadata['human']!r}  posterior {_rounded(item.policy)}")


def _rounded(stats: Mapping[str, float]) -> dict[str, float]:
    return {name: round(value, 3) for name, value in stats.items()}


if __name__ == "__main__":
    main()
