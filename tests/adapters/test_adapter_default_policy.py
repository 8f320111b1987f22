"""Every adapter built without a policy uses the project's default, ``solar-adaptive``
(:data:`solar_core.presets.DEFAULT_POLICY`): in memory, per scope or session, and in a store."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solar_core import DEFAULT_POLICY


def test_the_default_is_solar_adaptive() -> None:
    assert DEFAULT_POLICY == "solar-adaptive"


def langchain_adapters(db: Path) -> dict[str, Callable[[], str]]:
    from langchain_solar import SolarMemoryMiddleware, SolarRetriever

    def conversation_memory() -> str:
        pytest.importorskip("langchain_classic")
        from langchain_solar import SolarConversationMemory

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return SolarConversationMemory(embedder="hash").policy

    def stored_middleware() -> str:
        middleware = SolarMemoryMiddleware(store=db, scope="user_id", embedder="hash")
        policy = middleware.memory_for("alice").policy
        middleware.close()
        return policy

    # SolarSemanticCache holds a ResponseCache (prompt -> answer), never a SolarMemory: no policy.
    return {
        "SolarConversationMemory()": conversation_memory,
        "SolarMemoryMiddleware()": lambda: (
            SolarMemoryMiddleware(embedder="hash").memory_for().policy
        ),
        "SolarMemoryMiddleware(scope=)": lambda: (
            SolarMemoryMiddleware(embedder="hash", scope="user_id").memory_for("alice").policy
        ),
        "SolarMemoryMiddleware(store=, scope=)": stored_middleware,
        "langchain SolarRetriever()": lambda: SolarRetriever(embedder="hash").policy,
    }


def llamaindex_adapters(db: Path) -> dict[str, Callable[[], str]]:
    from llamaindex_solar import SolarChatMemory, SolarMemoryBlock, SolarRetriever

    def stored_chat_memory() -> str:
        memory = SolarChatMemory.from_defaults(store=db, chat_store_key="alice", embedder="hash")
        policy = memory.policy
        memory.close()
        return policy

    def stored_block() -> str:
        block = SolarMemoryBlock(store=db, embedder="hash")
        policy = block.memory_for("alice").policy
        block.close()
        return policy

    return {
        "llamaindex SolarRetriever()": lambda: SolarRetriever(embedder="hash").memory.policy,
        "SolarChatMemory.from_defaults()": lambda: (
            SolarChatMemory.from_defaults(embedder="hash").policy
        ),
        "SolarChatMemory.from_defaults(store=)": stored_chat_memory,
        "SolarMemoryBlock() session": lambda: (
            SolarMemoryBlock(embedder="hash").memory_for("alice").policy
        ),
        "SolarMemoryBlock() unnamed": lambda: SolarMemoryBlock(embedder="hash").memory_for().policy,
        "SolarMemoryBlock(store=)": stored_block,
    }


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_every_adapter_built_without_a_policy_uses_the_default(
    framework: str, tmp_path: Path
) -> None:
    if framework == "langchain":
        pytest.importorskip("langchain")
        adapters = langchain_adapters(tmp_path / "agent.db")
    else:
        pytest.importorskip("llama_index.core")
        adapters = llamaindex_adapters(tmp_path / "agent.db")
    policies = {name: build() for name, build in adapters.items()}
    assert policies == dict.fromkeys(adapters, DEFAULT_POLICY)


def test_feedback_works_on_the_default_policy() -> None:
    """A dislike takes from the best recalled turn the coverage value it earned for the input."""
    pytest.importorskip("langchain_classic")
    from langchain_solar import SolarConversationMemory

    memory: Any = SolarConversationMemory(k=0, top_k=2, embedder="hash", seed=0)
    for question, answer in [
        ("my dog is called Rex and he loves the beach", "What a lovely name!"),
        ("what is the capital of France", "Paris."),
        ("how do I sort a list in python", "Use sorted(xs)."),
    ]:
        memory.save_context({"input": question}, {"output": answer})
    memory.load_memory_variables({"input": "my dog Rex and the beach"})
    best = memory.recalled[0].id
    assert memory.memory.get(best).metadata["human"].startswith("my dog is called Rex")
    assert memory.memory.get(best).policy["value"] > 0
    memory.feedback(like=False)
    assert memory.memory.get(best).policy["value"] == 0.0
