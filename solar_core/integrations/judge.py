"""The framework-free part of the adapters' ``LLMJudge``: is an execution correct (for
:class:`~solar_core.policies.admission.EvaluatorGate`)?"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

#: the default prompt: ``{query}`` and ``{execution}`` are filled in
JUDGE_PROMPT = (
    "You review an AI agent's work before it is saved as an example for future tasks.\n"
    "Task:\n{query}\n\nThe agent's execution:\n{execution}\n\n"
    "Is this execution correct and worth reusing? Answer with one word: yes or no."
)

_WORD = re.compile(r"[a-z]+")


def judge_prompt(
    query: str | None, execution: str, metadata: Mapping[str, Any], template: str = JUDGE_PROMPT
) -> str:
    """The prompt for one (query, execution) pair (``"(not given)"`` when there is no query).

    >>> print(judge_prompt("2 + 2?", "4", {}, "Q: {query} A: {execution}"))
    Q: 2 + 2? A: 4
    """
    return template.format(query=query if query is not None else "(not given)", execution=execution)


def parse_verdict(text: str) -> bool:
    """``True`` for a yes, ``False`` for a no: the first word of the answer decides.

    >>> parse_verdict("Yes, it is correct."), parse_verdict("**No**")
    (True, False)
    """
    words: list[str] = _WORD.findall(text.lower())
    if words and words[0] in ("yes", "no"):
        return words[0] == "yes"
    raise ValueError(f"the judge answered {text[:80]!r}: expected yes or no")


class PromptJudge(ABC):
    """An evaluator that asks a model :func:`judge_prompt` (subclasses send it in :meth:`ask`)
    and reads :func:`parse_verdict`. A bad ``template`` fails here, not at the first offer."""

    def __init__(self, template: str = JUDGE_PROMPT) -> None:
        judge_prompt("q", "e", {}, template)
        self.template = template

    @abstractmethod
    def ask(self, prompt: str) -> str:
        """The model's answer to ``prompt``."""

    def __call__(self, query: str | None, execution: str, metadata: Mapping[str, Any]) -> bool:
        return parse_verdict(self.ask(judge_prompt(query, execution, metadata, self.template)))
