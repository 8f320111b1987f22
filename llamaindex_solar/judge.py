"""An LLM judge for evaluator-gated addition, on any LlamaIndex LLM."""

from __future__ import annotations

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.llms import LLM

from solar_core.integrations.judge import JUDGE_PROMPT, PromptJudge


class LLMJudge(PromptJudge):
    """``evaluator(query, execution, metadata) -> bool`` that asks ``llm`` "yes or no".

    This is the study's coarse evaluator ``pi_automatic``. It sends one user message through
    ``llm.chat``. Pass it to ``SolarMemory(..., evaluator=LLMJudge(llm))``. An answer that is
    not a yes or a no raises, so the offer fails and the memory stays as it was.
    """

    def __init__(self, llm: LLM, template: str = JUDGE_PROMPT) -> None:
        if not isinstance(llm, LLM):
            raise TypeError(f"llm must be a LlamaIndex LLM, got {type(llm).__name__}")
        super().__init__(template)
        self.llm = llm

    def ask(self, prompt: str) -> str:
        reply = self.llm.chat([ChatMessage(role="user", content=prompt)])
        return reply.message.content or ""
