"""Test doubles built from LangChain's own fakes: a chat model that can call tools and a callback
that records every prompt a chat model receives."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage


class ToolCallingFakeModel(GenericFakeChatModel):
    """``GenericFakeChatModel`` plus ``bind_tools`` (the base raises), for tool-calling agents."""

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self


class PromptRecorder(BaseCallbackHandler):
    """Records the messages of every chat model call it is attached to."""

    def __init__(self) -> None:
        self.prompts: list[list[BaseMessage]] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        **kwargs: Any,
    ) -> None:
        self.prompts.extend(messages)

    def text(self, i: int = -1) -> str:
        """The whole prompt of call ``i`` as one string."""
        return "\n".join(f"{m.type}: {m.text}" for m in self.prompts[i])


def tool_call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": args, "id": call_id, "type": "tool_call"}]
    )
