"""The LLM judges drive evaluator-gated addition through real framework model objects."""

from __future__ import annotations

import pytest
from langchain_core.language_models import FakeListChatModel, FakeListLLM

from langchain_solar import LLMJudge as LangChainJudge
from llamaindex_solar import LLMJudge as LlamaIndexJudge
from solar_core import SolarMemory
from solar_core.integrations.judge import parse_verdict
from tests.support.llamaindex_fakes import as_text, scripted_llm


def test_langchain_chat_model_decides_what_is_stored() -> None:
    llm = FakeListChatModel(responses=["Yes, correct.", "No - 2 + 2 is 4.", "yes"])
    m = SolarMemory("fifo", capacity=5, embedder="hash", evaluator=LangChainJudge(llm))
    outcomes = [
        m.add("Q: 2 + 2?\nA: 4", metadata={"query": "2 + 2?"}).admitted,
        m.add("Q: 2 + 2?\nA: 5", metadata={"query": "2 + 2?"}).admitted,
        m.add("Q: 3 + 3?\nA: 6").admitted,
    ]
    assert outcomes == [True, False, True]
    assert [i.text.splitlines()[1] for i in m.items()] == ["A: 4", "A: 6"]


def test_langchain_plain_llm_and_custom_template() -> None:
    judge = LangChainJudge(FakeListLLM(responses=["no"]), template="{query} -> {execution}?")
    assert judge("task", "answer", {}) is False


def test_langchain_judge_sees_the_task_and_the_execution() -> None:
    llm = FakeListChatModel(responses=["yes"])
    prompts: list[str] = []
    original = llm.invoke

    def spy(prompt: object, *args: object, **kwargs: object) -> object:
        prompts.append(str(prompt))
        return original(prompt, *args, **kwargs)  # type: ignore[arg-type]

    object.__setattr__(llm, "invoke", spy)
    LangChainJudge(llm)("What is the capital of France?", "Paris", {})
    assert "What is the capital of France?" in prompts[0] and "Paris" in prompts[0]
    assert "yes or no" in prompts[0]


def test_llamaindex_llm_decides_what_is_stored() -> None:
    llm, prompts = scripted_llm(["no", "YES"])
    m = SolarMemory("solar", capacity=5, embedder="hash", evaluator=LlamaIndexJudge(llm))
    first = m.add("Q: capital of France?\nA: Lyon", metadata={"query": "capital of France?"})
    second = m.add("Q: capital of France?\nA: Paris", metadata={"query": "capital of France?"})
    assert (first.admitted, first.reason) == (False, "evaluator rejects")
    assert second.admitted and second.reason.startswith("evaluator accepts")
    assert "capital of France?" in as_text(prompts[0]) and "Lyon" in as_text(prompts[0])


def test_an_unclear_answer_fails_the_offer_and_changes_nothing() -> None:
    llm = FakeListChatModel(responses=["Probably fine"])
    m = SolarMemory("fifo", capacity=5, embedder="hash", evaluator=LangChainJudge(llm))
    with pytest.raises(ValueError, match="expected yes or no"):
        m.add("Q: x\nA: y")
    assert len(m) == 0 and m.stats()["steps"] == 0


@pytest.mark.parametrize("judge", [LangChainJudge, LlamaIndexJudge])
def test_judges_refuse_what_is_not_a_model(judge: type) -> None:
    with pytest.raises(TypeError, match="must be a"):
        judge("gpt-4o-mini")


def test_a_template_without_its_fields_is_refused_at_once() -> None:
    with pytest.raises(KeyError):
        LangChainJudge(FakeListChatModel(responses=["yes"]), template="{task} {execution}")


@pytest.mark.parametrize(
    ("text", "verdict"), [("yes", True), ("No.", False), ("  Yes - it is right", True)]
)
def test_verdicts(text: str, verdict: bool) -> None:
    assert parse_verdict(text) is verdict
