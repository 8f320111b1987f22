"""A LlamaIndex ``FunctionAgent`` whose memory is ``SolarChatMemory``: ``ChatMemoryBuffer``'s
recent window plus the older turns that matter, recalled into every LLM call.

Runs offline: the LLM is LlamaIndex's ``MockFunctionCallingLLM`` replaying scripted answers (and
one tool call); the memory embeds with the built-in static embedder (numpy only).

    python examples/llamaindex_agent.py
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool

from llamaindex_solar import SolarChatMemory


def convert(amount: float, currency: str) -> str:
    """Convert an amount of euros into another currency."""
    return f"{amount} EUR = {amount * 1.08:.2f} {currency}"


# What the scripted LLM answers, call after call (a real LLM decides for itself).
SCRIPT: list[ChatMessage] = [
    ChatMessage(role="assistant", content="Lovely! Lisbon in May is warm and sunny."),
    ChatMessage(role="assistant", content="Noted: vegetarian. Plenty of places for you."),
    ChatMessage(role="assistant", content="Sintra: palaces and forest, 40 minutes by train."),
    ChatMessage(
        role="assistant",
        blocks=[
            ToolCallBlock(
                tool_call_id="c1",
                tool_name="convert",
                tool_kwargs={"amount": 100, "currency": "USD"},
            )
        ],
    ),  # fmt: skip
    ChatMessage(role="assistant", content="100 EUR is about 108 USD."),
    ChatMessage(role="assistant", content="Light clothes and sunscreen: May is warm."),
    ChatMessage(role="assistant", content="As a vegetarian: pastéis de nata, caldo verde."),
]
QUESTIONS = [
    "Hi! I'm planning a trip to Lisbon in May.",
    "I'm vegetarian, by the way.",
    "What's a good day trip from Lisbon?",
    "How much is 100 euros in dollars?",
    "What should I pack for the weather?",
    "What food should I try?",
]


def scripted(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
    scripted.seen = messages  # type: ignore[attr-defined]  # what the LLM was sent, last call
    return SCRIPT.pop(0)


async def main() -> None:
    # Before: memory = ChatMemoryBuffer.from_defaults(token_limit=120). The recall gets at most
    # half the budget; the recent window the rest.
    memory = SolarChatMemory.from_defaults(
        token_limit=120, recall_token_ratio=0.5, top_k=2, capacity=20, seed=0
    )
    # A real LLM plugs in here, e.g. `llm = OpenAI(model="gpt-4o-mini")`
    # (pip install llama-index-llms-openai); nothing else changes.
    llm = MockFunctionCallingLLM(response_generator=scripted)
    agent = FunctionAgent(
        tools=[FunctionTool.from_defaults(convert)],
        llm=llm,
        system_prompt="You are a travel assistant.",
    )
    for turn, question in enumerate(QUESTIONS, start=1):
        answer = await agent.run(user_msg=question, memory=memory)  # the same memory every run
        recalled = ", ".join(f"{h.metadata['human'][:30]!r}" for h in memory.recalled) or "-"
        decision = memory.last_decision
        print(f"turn {turn}: {question}\n  answer: {answer}\n  recalled: {recalled}")
        print(f"  stored: {decision.admitted if decision else None}")

    print("\nWhat the LLM was sent on the last call:\n")
    for message in scripted.seen:  # type: ignore[attr-defined]
        print(f"[{message.role.value}] {message.content or '(tool call)'}")

    memory.feedback(like=True)  # the user liked the answer: the recalled turns gain credit
    print("\nposteriors of the recalled turns after a like:")
    for hit in memory.recalled:
        stats = memory.memory.get(hit.id).policy
        print(
            f"  {hit.metadata['human'][:40]!r}: "
            + ", ".join(f"{k}={v:.3g}" for k, v in stats.items())
        )


if __name__ == "__main__":
    asyncio.run(main())
