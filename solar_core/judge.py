"""The LLM judge's public path; it lives in :mod:`solar_core.integrations.judge`.

>>> from solar_core.judge import PromptJudge
>>> PromptJudge.__module__
'solar_core.integrations.judge'
"""

from solar_core.integrations.judge import JUDGE_PROMPT, PromptJudge, judge_prompt, parse_verdict

__all__ = ["JUDGE_PROMPT", "PromptJudge", "judge_prompt", "parse_verdict"]
