"""Every adapter built without a policy uses its default: the chat memories (conversation
memory, middleware, chat memory, memory block) the chat policy, ``solar-dialogue``
(:data:`solar_core.policies.presets.CHAT_POLICY`), the retrievers the project's default,
``solar-adaptive`` (:data:`solar_core.policies.presets.DEFAULT_POLICY`): in memory, per scope or
session, and in a store."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solar_core import CHAT_POLICY, DEFAULT_POLICY


def test_the_defaults_are_solar_adaptive_and_solar_dialogue_for_chats() -> None:
    assert DEFAULT_POLICY == "solar-adaptive"
    assert CHAT_POLICY == "solar-dialogue"


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
        "SolarMemoryMiddleware(shared=True)": lambda: (
            SolarMemoryMiddleware(embedder="hash", shared=True).memory_for().policy
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
    assert policies == {
        name: DEFAULT_POLICY if "Retriever" in name else CHAT_POLICY for name in adapters
    }


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_a_chat_adapter_reopening_a_scope_of_another_policy_keeps_it(
    framework: str, tmp_path: Path
) -> None:
    """A database written when the chat default was ``solar-adaptive``: its scopes keep it."""
    from solar_core import MemoryStore

    db = tmp_path / "old.db"
    with MemoryStore(db, embedder="hash") as store:  # the core default: solar-adaptive
        store.scope(session="alice").add("my dog is called Rex")
    if framework == "langchain":
        pytest.importorskip("langchain")
        from langchain_solar import SolarMemoryMiddleware

        middleware = SolarMemoryMiddleware(store=db, scope="session_id", embedder="hash")
        assert middleware.memory_for("alice").policy == DEFAULT_POLICY  # its own
        assert middleware.memory_for("bob").policy == CHAT_POLICY  # a new one: the chat's
        middleware.close()
    else:
        pytest.importorskip("llama_index.core")
        from llamaindex_solar import SolarChatMemory

        memory = SolarChatMemory.from_defaults(store=db, chat_store_key="alice", embedder="hash")
        assert memory.policy == DEFAULT_POLICY and len(memory.memory) == 1
        memory.close()


def test_feedback_works_on_the_default_chat_policy() -> None:
    """A like raises the salience value of the recalled turns, a dislike lowers it."""
    pytest.importorskip("langchain_classic")
    from langchain_solar import SolarConversationMemory

    memory: Any = SolarConversationMemory(k=0, top_k=2, embedder="hash", seed=0)
    for question, answer in [
        ("my dog is called Rex and he loves the beach", "What a lovely name!"),
        ("what is the capital of France", "Paris."),
    ]:
        memory.save_context({"input": question}, {"output": answer})
    memory.load_memory_variables({"input": "my dog Rex and the beach"})
    best = memory.recalled[0].id
    before = memory.memory.get(best).policy["value"]
    memory.feedback(like=True)
    assert memory.memory.get(best).policy["value"] > before


def test_feedback_works_on_the_default_policy() -> None:
    """A dislike takes from the best recalled turn the coverage value it earned for the input."""
    pytest.importorskip("langchain_classic")
    from langchain_solar import SolarConversationMemory

    memory: Any = SolarConversationMemory(
        k=0, top_k=2, embedder="hash", seed=0, policy=DEFAULT_POLICY
    )
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


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_every_framework_model_gets_the_static_prior(framework: str) -> None:
    """Whatever model a framework wrapper names (MiniLM too), the chat policy reads the static
    prior, which embeds each turn with the built-in static embedder itself."""
    from solar_core import SolarMemory

    def prior(model_name: str | None) -> str:
        if framework == "langchain":
            pytest.importorskip("langchain_core")
            from langchain_core.embeddings import DeterministicFakeEmbedding

            from langchain_solar.embeddings import LangChainEmbedder

            class Named(DeterministicFakeEmbedding):
                model_name: str | None = None

            wrapped: Any = LangChainEmbedder(Named(size=384, model_name=model_name))
        else:
            pytest.importorskip("llama_index.core")
            from llama_index.core.embeddings import MockEmbedding

            from llamaindex_solar.embeddings import LlamaIndexEmbedder

            model = MockEmbedding(embed_dim=384)
            model.model_name = model_name  # type: ignore[assignment]
            wrapped = LlamaIndexEmbedder(model)
        memory = SolarMemory(CHAT_POLICY, embedder=wrapped)
        return str(memory.stats()["prior"])

    assert prior("sentence-transformers/all-MiniLM-L6-v2") == "dialogue-static"
    assert prior("all-minilm-l6-v2") == "dialogue-static"
    assert prior("BAAI/bge-small-en-v1.5") == "dialogue-static"
