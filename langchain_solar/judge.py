"""An LLM judge for evaluator-gated addition, on any LangChain chat model or LLM."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage

from solar_core.integrations.judge import JUDGE_PROMPT, PromptJudge


class LLMJudge(PromptJudge):
    """``evaluator(query, execution, metadata) -> bool`` that asks ``llm`` "yes or no".

    This is the study's coarse evaluator ``pi_automatic``. Pass it to
    ``SolarMemory(..., evaluator=LLMJudge(llm))`` or to
    :class:`~solar_core.policies.admission.EvaluatorGate`. ``template`` takes ``{query}`` and
    ``{execution}``. An answer that is not a yes or a no raises, so the offer fails and the
    memory stays as it was.

    >>> from langchain_core.language_models import FakeListChatModel
    >>> judge = LLMJudge(FakeListChatModel(responses=["Yes.", "no"]))
    >>> judge("2 + 2?", "4", {}), judge("2 + 2?", "5", {})
    (True, False)
    """

    def __init__(self, llm: BaseLanguageModel[Any], template: str = JUDGE_PROMPT) -> None:
        if not isinstance(llm, BaseLanguageModel):
            raise TypeError(f"llm must be a LangChain language model, got {type(llm).__name__}")
        super().__init__(template)
        self.llm = llm

    def ask(self, prompt: str) -> str:
        reply = self.llm.invoke(prompt)
        return reply.text if isinstance(reply, BaseMessage) else str(reply)
