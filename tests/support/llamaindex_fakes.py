"""Test doubles built from LlamaIndex's own mocks and extension points: a scripted
function-calling LLM that records what it was sent, a completion LLM with fixed answers, and a
deterministic embedding model; and a LlamaIndex ``Memory`` over a memory block."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import (
    ChatMessage,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
    ToolCallBlock,
)
from llama_index.core.llms import CustomLLM
from llama_index.core.llms.mock import MockFunctionCallingLLMWithChatMemoryOfLastCall
from llama_index.core.memory import Memory
from pydantic import PrivateAttr

from llamaindex_solar import SolarMemoryBlock
from solar_core import HashEmbedder


def scripted_llm(
    replies: Iterable[ChatMessage | str],
) -> tuple[MockFunctionCallingLLMWithChatMemoryOfLastCall, list[list[ChatMessage]]]:
    """A function-calling mock LLM answering with ``replies`` in turn, and the list of every
    prompt it is sent (the mock itself keeps only the last, in ``last_chat_messages``)."""
    queue = iter(replies)
    prompts: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        prompts.append(list(messages))
        reply = next(queue)
        return ChatMessage(role="assistant", content=reply) if isinstance(reply, str) else reply

    return MockFunctionCallingLLMWithChatMemoryOfLastCall(response_generator=respond), prompts


def as_text(messages: Iterable[ChatMessage]) -> str:
    """A prompt as one string, one ``role: content`` line per message."""
    return "\n".join(f"{m.role.value}: {m.content}" for m in messages)


def tool_call(name: str, call_id: str, **kwargs: Any) -> ChatMessage:
    return ChatMessage(
        role="assistant",
        blocks=[ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=kwargs)],
    )


class HashEmbedding(BaseEmbedding):
    """A LlamaIndex embedding model over ``solar_core``'s deterministic hash embedder."""

    _inner: HashEmbedder = PrivateAttr(default_factory=lambda: HashEmbedder(dim=64))

    def _get_query_embedding(self, query: str) -> list[float]:
        return [float(x) for x in self._inner.embed([query])[0]]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return [float(x) for x in self._inner.embed([text])[0]]


class ScriptedLLM(CustomLLM):
    """LlamaIndex's extension point for a custom LLM: fixed answers, and the prompts it got."""

    answers: list[str]
    prompts: list[str] = []

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self.prompts.append(prompt)
        return CompletionResponse(text=self.answers[len(self.prompts) - 1])

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        raise NotImplementedError


def block_memory(block: SolarMemoryBlock, session: str) -> Memory:
    """A small-window LlamaIndex ``Memory`` of ``session`` whose one block is ``block``."""
    return Memory.from_defaults(
        session_id=session,
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[block],
    )
