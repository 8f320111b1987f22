"""LlamaIndex's ``Memory`` with a ``SolarMemoryBlock``: the short-term chat history plus a SOLAR
long-term memory, one per session, rendered into the system message as a memory block.

Runs offline: the LLM is LlamaIndex's ``MockFunctionCallingLLM`` replaying scripted answers; the
block embeds with the built-in static embedder (numpy only).

    python examples/llamaindex_memory_block.py
"""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import Memory

from llamaindex_solar import SolarMemoryBlock

ANSWERS = [
    "Got it: you prefer answers in French from now on.",  # alice
    "Your order A-17 has shipped and arrives Friday.",  # bob
    "Noted, you are allergic to peanuts.",  # alice
    "The store opens at 9:00.",  # alice
    "En français, bien sûr !",  # alice
]
RUNS = [
    ("alice", "Please always answer me in French."),
    ("bob", "Where is my order A-17?"),
    ("alice", "I'm allergic to peanuts."),
    ("alice", "When does the store open?"),
    ("alice", "In which language should you answer me?"),
]


def scripted(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
    scripted.seen = messages  # type: ignore[attr-defined]  # what the LLM was sent, last call
    return ChatMessage(role="assistant", content=ANSWERS.pop(0))


async def main() -> None:
    # One block serves every session; each session gets its own SOLAR memory.
    block = SolarMemoryBlock(top_k=2, capacity=50, seed=0)
    sessions = {
        user: Memory.from_defaults(
            session_id=user,
            token_limit=100,  # small on purpose: older turns leave the chat history quickly
            chat_history_token_ratio=0.5,
            token_flush_size=10,
            memory_blocks=[block],
        )
        for user in ("alice", "bob")
    }
    # A real LLM plugs in here, e.g. `llm = OpenAI(model="gpt-4o-mini")`
    # (pip install llama-index-llms-openai); nothing else changes.
    agent = FunctionAgent(
        tools=[], llm=MockFunctionCallingLLM(response_generator=scripted), system_prompt="Be brief."
    )
    for user, question in RUNS:
        answer = await agent.run(user_msg=question, memory=sessions[user])
        print(f"{user}: {question}\n    agent: {answer}")

    print("\nWhat the LLM was sent on alice's last call:\n")
    for message in scripted.seen:  # type: ignore[attr-defined]
        print(f"[{message.role.value}] {message.content}")

    block.feedback(like=True, session_id="alice")  # alice liked it: her recalled turns gain credit
    print("\nmemories per session (never shared):")
    for user in ("alice", "bob"):
        for item in block.memory_for(user).items():
            value = {name: round(x, 3) for name, x in item.policy.items()}
            print(f"  {user}: {item.metadata['human']!r}  policy {value}")


if __name__ == "__main__":
    asyncio.run(main())
