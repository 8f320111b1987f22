"""Extraction turns an exchange into facts with keys: the answer parser, the framework models
(LangChain's and LlamaIndex's own fakes), plain callables, and the time-limited call."""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import FakeListChatModel, FakeListLLM, GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.runnables import RunnableLambda
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.llms import MockLLM

from solar_core.engine import extraction
from solar_core.engine.extraction import (
    EXTRACT_PROMPT,
    MAX_FACTS,
    ExtractionError,
    Fact,
    as_extractor,
    check_extract_mode,
    check_template,
    check_timeout,
    extract,
    parse_facts,
)
from tests.support.llamaindex_fakes import ScriptedLLM

EXCHANGE = "Human: I'm Caroline. We moved to Paris last month.\nAI: Congratulations!"
ANSWER = '[{"fact": "Caroline lives in Paris", "key": "caroline/home"}]'
PARIS = [Fact("Caroline lives in Paris", "caroline/home")]


def items(*pairs: tuple[str, str]) -> str:
    return json.dumps([{"fact": text, "key": key} for text, key in pairs])


# -- parse_facts: what a model may answer --------------------------------------------------------


def test_a_json_list_of_facts_is_read() -> None:
    answer = items(("Caroline lives in Paris", "caroline/home"), ("Ana is vegan", "ana/diet"))
    assert parse_facts(answer) == [
        Fact("Caroline lives in Paris", "caroline/home"),
        Fact("Ana is vegan", "ana/diet"),
    ]
    fact = parse_facts(answer)[0]
    assert (fact.text, fact.key) == tuple(fact) == ("Caroline lives in Paris", "caroline/home")


def test_an_empty_list_is_zero_facts() -> None:
    assert parse_facts("[]") == []
    assert parse_facts("No lasting facts here: []") == []
    assert parse_facts("```json\n[]\n```") == []


@pytest.mark.parametrize(
    "answer",
    [
        f"```json\n{ANSWER}\n```",
        f"```\n{ANSWER}\n```",
        f"Here are the facts I found:\n\n{ANSWER}\n\nLet me know if you need more.",
        f"Sure [as asked], the facts:\n```json\n{ANSWER}\n```\nDone.",  # a bracket that is not JSON
        f"  {ANSWER}  \n",
    ],
    ids=["fenced", "bare-fence", "prose", "stray-bracket", "whitespace"],
)
def test_the_first_json_list_is_found_in_a_fence_or_in_prose(answer: str) -> None:
    assert parse_facts(answer) == PARIS


def test_texts_and_keys_are_tidied_and_duplicates_collapsed() -> None:
    answer = json.dumps(
        [
            {"fact": "  Caroline lives in Paris ", "key": " Caroline/Home ", "confidence": 0.9},
            {"fact": "Caroline lives in Paris", "key": "caroline/home"},
            {"fact": "Caroline lives in Paris", "key": "caroline/city"},
        ]
    )
    assert parse_facts(answer) == [
        Fact("Caroline lives in Paris", "caroline/home"),
        Fact("Caroline lives in Paris", "caroline/city"),
    ]
    # twenty-one items, twenty-one times the same fact: one fact, within the limit
    assert parse_facts(items(*[("Ana is vegan", "ana/diet")] * (MAX_FACTS + 1))) == [
        Fact("Ana is vegan", "ana/diet")
    ]


def test_the_limits_are_inclusive() -> None:
    longest = parse_facts(items(("x" * 2_000, "k" * 200)))
    assert longest == [Fact("x" * 2_000, "k" * 200)]
    assert len(parse_facts(items(*[(f"fact {i}", f"user/a{i}") for i in range(MAX_FACTS)]))) == 20


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        ("I could not find any facts.", "there is no JSON list in 'I could not find any facts.'"),
        ("", "there is no JSON list in ''"),
        (
            '[{"fact": "Ana is vegan", "key": "ana/diet"}',  # cut short
            "its JSON list does not parse: Expecting ',' delimiter: line 1 column 45 (char 44)",
        ),
        ("[Ana is vegan]", "its JSON list does not parse: Expecting value"),
        ('{"fact": "Ana is vegan", "key": "ana/diet"}', "it is a JSON object, not a list"),
        ('{"facts": [{"fact": "Ana is vegan", "key": "ana/diet"}]}', "it is a JSON object"),
        ("[1, 2]", "item 1 is an int, not a {fact, key} object"),
        ('["Ana is vegan"]', "item 1 is a str, not a {fact, key} object"),
        ('[["Ana is vegan", "ana/diet"]]', "item 1 is a list, not a {fact, key} object"),
        ('[{"fact": "a", "key": "a/b"}, {"fact": "Ana is vegan"}]', "item 2 has no key"),
        ('[{"key": "ana/diet"}]', "item 1 has no fact"),
        ('[{"fact": "  ", "key": "ana/diet"}]', "item 1's fact is blank"),
        ('[{"fact": "Ana is vegan", "key": ""}]', "item 1's key is blank"),
        ('[{"fact": "Ana is vegan", "key": 7}]', "item 1's key is an int, not a string"),
        ('[{"fact": null, "key": "ana/diet"}]', "item 1's fact is None, not a string"),
        ('[{"fact": ["Ana"], "key": "ana/diet"}]', "item 1's fact is a list, not a string"),
        (items(("Ana is vegan", "k" * 201)), "item 1's key is 201 characters long, at most 200"),
        (items(("x" * 2_001, "a/b")), "item 1's fact is 2,001 characters long, at most 2,000"),
        (items(("Ana is\x00 vegan", "ana/diet")), "item 1's fact holds a NUL character"),
        (items(("Ana is vegan", "ana/\x00diet")), "item 1's key holds a NUL character"),
        (items(("Ana is vegan", "ana/\ndiet")), "item 1's key spans several lines"),
        ('[{"fact": "Ana \\ud800", "key": "a/b"}]', "item 1's fact is not valid Unicode"),
        (
            items(*[(f"fact {i}", f"user/a{i}") for i in range(MAX_FACTS + 1)]),
            "it holds more than 20 facts",
        ),
    ],
)
def test_a_malformed_answer_says_what_is_wrong(answer: str, detail: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        parse_facts(answer)
    message = str(caught.value)
    assert message.startswith("the extractor's answer is not a JSON list of {fact, key} objects: ")
    assert detail in message
    assert len(message) < 200
    assert isinstance(caught.value, ValueError)


def test_hostile_answers_fail_quickly_and_cleanly() -> None:
    started = time.monotonic()
    for answer, why in [
        ("[" * 50_000, "it is nested too deep"),
        ("[{" * 30_000, "Expecting property name"),
        ("[x" * 40_000, "Expecting value"),
        ("x]" * 40_000, "there is no JSON list"),
    ]:
        with pytest.raises(ExtractionError, match=why):
            parse_facts(answer)
    with pytest.raises(ExtractionError, match="100,001 characters long, at most 100,000"):
        parse_facts(" " * 100_001)
    assert time.monotonic() - started < 5


def test_parse_facts_takes_text() -> None:
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        parse_facts(ANSWER.encode())  # type: ignore[arg-type]


# -- LangChain: chat models, LLMs and runnables, through invoke ---------------------------------


class Prompts(BaseCallbackHandler):
    """LangChain's own hook: what every model run was sent."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.sent.extend(str(m.content) for batch in messages for m in batch)

    def on_llm_start(self, serialized: dict[str, Any], prompts: list[str], **kwargs: Any) -> None:
        self.sent.extend(prompts)


def test_a_langchain_chat_model_is_asked_the_prompt_with_the_exchange() -> None:
    seen = Prompts()
    model = FakeListChatModel(responses=[f"```json\n{ANSWER}\n```", "[]"], callbacks=[seen])
    extractor = as_extractor(model)
    assert extractor(EXCHANGE) == PARIS
    assert extractor("Human: what's the weather?\nAI: Sunny.") == []
    assert seen.sent[0] == EXTRACT_PROMPT.format(exchange=EXCHANGE)
    assert EXCHANGE in seen.sent[0] and "JSON only" in seen.sent[0]
    assert "Human: what's the weather?" in seen.sent[1]


def test_a_langchain_llm_and_a_custom_template() -> None:
    seen = Prompts()
    model = FakeListLLM(responses=[ANSWER], callbacks=[seen])
    assert as_extractor(model, template="Facts as JSON in:\n{exchange}")(EXCHANGE) == PARIS
    assert seen.sent == [f"Facts as JSON in:\n{EXCHANGE}"]


def test_a_generic_fake_chat_model_answering_in_content_blocks() -> None:
    reply = AIMessage(
        content=[{"type": "text", "text": "Facts: "}, {"type": "text", "text": ANSWER}]
    )
    model = GenericFakeChatModel(messages=iter([reply]))
    assert as_extractor(model)(EXCHANGE) == PARIS


def test_a_langchain_runnable_chain_answering_a_string() -> None:
    chain = FakeListChatModel(responses=[ANSWER]) | StrOutputParser()
    assert as_extractor(chain)(EXCHANGE) == PARIS

    def answer(prompt: str) -> str:
        return items(("The exchange was sent", "test/prompt")) if EXCHANGE in prompt else "[]"

    runnable: RunnableLambda[str, str] = RunnableLambda(answer)
    assert as_extractor(runnable)(EXCHANGE) == [Fact("The exchange was sent", "test/prompt")]


def test_a_model_answer_that_is_not_a_list_fails_with_the_reason() -> None:
    model = FakeListChatModel(responses=["Caroline lives in Paris."])
    facts, reason = extract(as_extractor(model), EXCHANGE, timeout=5)
    assert facts == []
    assert reason == (
        "the extractor's answer is not a JSON list of {fact, key} objects: there is no JSON "
        "list in 'Caroline lives in Paris.'"
    )


class OldMessage:
    """A reply of an older langchain-core, where ``text`` was a method."""

    def __init__(self, text: str) -> None:
        self._text = text

    def text(self) -> str:
        return self._text


class ContentOnly:
    def __init__(self, content: object) -> None:
        self.content = content


class Invokable:
    def __init__(self, reply: object) -> None:
        self.reply = reply

    def invoke(self, prompt: str) -> object:
        return self.reply


def test_the_answer_text_is_read_from_any_message_shape() -> None:
    assert as_extractor(Invokable(OldMessage(ANSWER)))(EXCHANGE) == PARIS
    assert as_extractor(Invokable(ContentOnly(ANSWER)))(EXCHANGE) == PARIS
    assert as_extractor(Invokable(AIMessage(content=ANSWER)))(EXCHANGE) == PARIS
    for reply, kind in [(ContentOnly([1]), "a ContentOnly"), (None, "None"), (3, "an int")]:
        with pytest.raises(ExtractionError, match=f"the extractor's answer is {kind}, not text"):
            as_extractor(Invokable(reply))(EXCHANGE)


# -- LlamaIndex: LLMs, through complete ---------------------------------------------------------


def test_a_llamaindex_llm_is_asked_the_prompt_with_the_exchange() -> None:
    llm = ScriptedLLM(answers=[f"Found one:\n```json\n{ANSWER}\n```", "[]"])
    extractor = as_extractor(llm)
    assert extractor(EXCHANGE) == PARIS
    assert extractor("Human: hi\nAI: hello") == []
    assert llm.prompts[0] == EXTRACT_PROMPT.format(exchange=EXCHANGE)


def test_llamaindex_mock_llm_echoes_the_prompt() -> None:
    # with a template of the exchange alone, the echo is the exchange: a JSON answer when the
    # exchange is one
    assert as_extractor(MockLLM(), template="{exchange}")(ANSWER) == PARIS
    # the default prompt echoed back is not an answer: its first JSON is the format's example
    facts, reason = extract(MockLLM(), EXCHANGE, timeout=5)
    assert facts == [] and reason is not None
    assert reason.startswith("the extractor's answer is not a JSON list of {fact, key} objects")


# -- plain callables ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        [Fact("Caroline lives in Paris", "caroline/home")],
        [("Caroline lives in Paris", "caroline/home")],
        [["Caroline lives in Paris", "Caroline/Home "]],
        [{"fact": "Caroline lives in Paris", "key": "caroline/home"}],
        ({"fact": "Caroline lives in Paris", "key": "caroline/home"},),
        ANSWER,
        f"```json\n{ANSWER}\n```",
    ],
    ids=["facts", "tuples", "lists", "dicts", "tuple-of-dicts", "json", "fenced-json"],
)
def test_a_callable_answers_in_any_accepted_shape(answer: object) -> None:
    got: list[str] = []

    def extractor(exchange: str) -> object:
        got.append(exchange)
        return answer

    assert as_extractor(extractor)(EXCHANGE) == PARIS
    assert extract(extractor, EXCHANGE, timeout=5) == (PARIS, None)
    assert got == [EXCHANGE, EXCHANGE]  # the exchange itself, not a prompt


def test_a_callable_may_answer_no_facts() -> None:
    assert extract(lambda exchange: [], EXCHANGE, timeout=None) == ([], None)
    assert extract(lambda exchange: "[]", EXCHANGE, timeout=None) == ([], None)


@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        (42, "it is an int"),
        (None, "it is None"),
        ({"fact": "a", "key": "a/b"}, "it is a dict"),
        ([1, 2], "item 1 is an int, not a (text, key) pair"),
        (["Caroline lives in Paris"], "item 1 is a str, not a (text, key) pair"),
        ([("a", "b", "c")], "item 1 is a tuple, not a (text, key) pair"),
        ([("Caroline lives in Paris", 3)], "item 1's key is an int, not a string"),
        ([{"text": "Caroline lives in Paris", "key": "a/b"}], "item 1 has no fact"),
        (Fact("Caroline lives in Paris", "caroline/home"), "a single (text, key) pair"),
        ([("", "a/b")], "item 1's fact is blank"),
    ],
)
def test_a_callable_answering_garbage_gives_a_reason(answer: object, detail: str) -> None:
    facts, reason = extract(lambda exchange: answer, EXCHANGE, timeout=5)
    assert facts == []
    assert reason is not None
    assert reason.startswith("the extractor's answer is not a list of facts: ")
    assert detail in reason


def test_a_callable_answering_a_bad_json_string_gives_the_json_reason() -> None:
    facts, reason = extract(lambda exchange: '{"fact": "x"}', EXCHANGE, timeout=None)
    assert (facts, reason) == (
        [],
        "the extractor's answer is not a JSON list of {fact, key} objects: it is a JSON "
        "object, not a list",
    )


# -- which duck-type wins, and what is refused -------------------------------------------------


class Everything:
    """Has an ``invoke``, a ``complete`` and a ``__call__``, each answering differently."""

    def invoke(self, prompt: str) -> str:
        return items(("via invoke", "how/invoke"))

    def complete(self, prompt: str) -> CompletionResponse:
        return CompletionResponse(text=items(("via complete", "how/complete")))

    def __call__(self, exchange: str) -> list[Fact]:
        return [Fact("via call", "how/call")]


class CompleteAndCall:
    complete = Everything.complete
    __call__ = Everything.__call__


def test_invoke_wins_over_complete_which_wins_over_call() -> None:
    assert as_extractor(Everything())(EXCHANGE) == [Fact("via invoke", "how/invoke")]
    assert as_extractor(CompleteAndCall())(EXCHANGE) == [Fact("via complete", "how/complete")]
    assert not callable(FakeListChatModel(responses=["[]"]))  # LangChain's models: invoke only
    assert not hasattr(MockLLM(), "invoke")  # LlamaIndex's: complete, no invoke


@pytest.mark.parametrize("obj", ["a string", 42, None, [Fact("a", "b")], object()])
def test_anything_else_is_refused_naming_what_is_accepted(obj: object) -> None:
    with pytest.raises(
        TypeError, match="LangChain chat model or LLM .* LlamaIndex LLM .* callable"
    ):
        as_extractor(obj)
    with pytest.raises(TypeError, match="an extractor must be"):
        extract(obj, EXCHANGE, timeout=5)


def test_a_class_is_refused_and_an_extractor_passes_through() -> None:
    with pytest.raises(TypeError, match="got the class FakeListChatModel: pass an instance"):
        as_extractor(FakeListChatModel)
    extractor = as_extractor(FakeListChatModel(responses=[ANSWER]))
    assert as_extractor(extractor) is extractor
    assert repr(extractor) == "<extractor FakeListChatModel.invoke(prompt)>"
    with pytest.raises(TypeError, match="already an extractor"):
        as_extractor(extractor, template="{exchange}")


@pytest.mark.parametrize(
    ("template", "error", "match"),
    [
        (b"{exchange}", TypeError, "template must be a str with {exchange}, got bytes"),
        ("Facts about {name} in {exchange}", ValueError, "only {exchange}"),
        ('Answer {"fact": ...} for {exchange}', ValueError, "double any literal brace"),
        ("Facts in {0}", ValueError, "only {exchange}"),
        ("Facts in {exchange", ValueError, "only {exchange}"),
        ("Facts, please.", ValueError, "must contain {exchange}"),
    ],
)
def test_a_bad_template_fails_when_the_extractor_is_built(
    template: object, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        as_extractor(FakeListLLM(responses=["[]"]), template=template)  # type: ignore[arg-type]
    with pytest.raises(error, match=match):
        check_template(template)


def test_the_default_template_is_valid_and_shows_the_format() -> None:
    assert check_template(EXTRACT_PROMPT) is EXTRACT_PROMPT
    prompt = EXTRACT_PROMPT.format(exchange=EXCHANGE)
    assert prompt.endswith(f"{EXCHANGE}\nAnswer:")
    assert '{"fact": "...", "key": "<entity>/<attribute>"}' in prompt
    assert "Answer: []" in prompt  # the example of no fact
    examples = [line.removeprefix("Answer: ") for line in prompt.splitlines()]
    assert parse_facts(next(e for e in examples if e.startswith("[{"))) == [
        Fact("Caroline lives in Paris", "caroline/home"),
        Fact("Caroline works at Renault", "caroline/employer"),
    ]


# -- extract: failures become reasons, within the time limit ------------------------------------


def test_an_extractor_that_raises_gives_a_reason() -> None:
    def failing(exchange: str) -> list[Fact]:
        raise ValueError("the model refused\nto answer")

    for timeout in (None, 5):
        assert extract(failing, EXCHANGE, timeout) == (
            [],
            "the extractor raised ValueError: the model refused to answer",
        )

    def silent(exchange: str) -> list[Fact]:
        raise RuntimeError

    assert extract(silent, EXCHANGE, None) == ([], "the extractor raised RuntimeError")

    def verbose(exchange: str) -> list[Fact]:
        raise RuntimeError("x" * 5_000)

    facts, reason = extract(verbose, EXCHANGE, 5)
    assert reason is not None and len(reason) == 300 and reason.endswith("...")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event that lets a hanging extractor return, set when the test ends."""
    event = threading.Event()
    yield event
    event.set()


def test_an_extractor_past_its_timeout_is_left_behind(release: threading.Event) -> None:
    finished = threading.Event()

    def slow(exchange: str) -> list[Fact]:
        release.wait(10)
        finished.set()
        return PARIS

    started = time.monotonic()
    assert extract(slow, EXCHANGE, timeout=0.2) == ([], "the extractor timed out after 0.2 s")
    assert time.monotonic() - started < 0.5
    assert not finished.is_set()  # still running in its thread; its result will be dropped
    release.set()
    assert finished.wait(5)
    assert extract(lambda exchange: PARIS, EXCHANGE, timeout=0.2) == (PARIS, None)


def test_a_fast_extractor_within_its_timeout_answers() -> None:
    def quick(exchange: str) -> list[Fact]:
        time.sleep(0.01)
        return PARIS

    assert extract(quick, EXCHANGE, timeout=2) == (PARIS, None)
    assert extract(FakeListChatModel(responses=[ANSWER]), EXCHANGE, timeout=2) == (PARIS, None)


def test_too_many_hung_calls_stop_new_ones_until_they_end(
    release: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    deadline = time.monotonic() + 5
    while extraction._stragglers:  # another test's (a doctest's) timed-out call, ending soon
        assert time.monotonic() < deadline, "an earlier straggler never ended"
        time.sleep(0.01)
    monkeypatch.setattr(extraction, "MAX_STRAGGLERS", 2)
    calls: list[str] = []

    def hanging(exchange: str) -> list[Fact]:
        calls.append(exchange)
        release.wait(10)
        return []

    for _ in range(2):
        assert extract(hanging, EXCHANGE, timeout=0.05)[1] == "the extractor timed out after 0.05 s"
    assert extract(hanging, EXCHANGE, timeout=0.05) == (
        [],
        "the extractor was not called: 2 earlier calls timed out and still run",
    )
    assert len(calls) == 2
    release.set()
    deadline = time.monotonic() + 5
    while extract(lambda exchange: PARIS, EXCHANGE, 1) != (PARIS, None):
        assert time.monotonic() < deadline, "the stragglers never ended"
        time.sleep(0.01)


@pytest.mark.parametrize("error", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("timeout", [None, 5])
def test_an_interrupt_propagates(error: type[BaseException], timeout: float | None) -> None:
    def interrupted(exchange: str) -> list[Fact]:
        raise error

    with pytest.raises(error):
        extract(interrupted, EXCHANGE, timeout)


def test_the_callers_context_variables_reach_the_extractor() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("run", default="unset")
    var.set("the caller's run")

    def reads(exchange: str) -> list[Fact]:
        return [Fact(var.get(), "context/run")]

    for timeout in (None, 5):
        assert extract(reads, EXCHANGE, timeout) == (
            [Fact("the caller's run", "context/run")],
            None,
        )


def test_a_bad_exchange_is_the_callers_error() -> None:
    with pytest.raises(TypeError, match="exchange must be a str, got NoneType"):
        extract(lambda exchange: [], None, timeout=5)  # type: ignore[arg-type]


# -- the arguments' checks ----------------------------------------------------------------------


@pytest.mark.parametrize("timeout", [None, 0.2, 1, 30, 3600.5, threading.TIMEOUT_MAX])
def test_a_timeout_is_a_positive_finite_number_or_none(timeout: float | None) -> None:
    assert check_timeout(timeout) == (None if timeout is None else float(timeout))


@pytest.mark.parametrize(
    ("timeout", "error"),
    [
        (0, ValueError),
        (-1, ValueError),
        (float("nan"), ValueError),
        (float("inf"), ValueError),
        (1e12, ValueError),
        ("30", TypeError),
        (True, TypeError),
        ([30], TypeError),
    ],
)
def test_a_bad_timeout_names_the_fix(timeout: object, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"timeout must be a (finite )?number of seconds > 0.*None"):
        check_timeout(timeout)
    with pytest.raises(error, match="timeout must be"):
        extract(lambda exchange: [], EXCHANGE, timeout)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["beside", "instead"])
def test_the_extract_modes(mode: str) -> None:
    assert check_extract_mode(mode) == mode


@pytest.mark.parametrize("mode", ["Beside", "both", "", None, True, ["beside"]])
def test_a_bad_extract_mode_names_both(mode: object) -> None:
    with pytest.raises(ValueError, match='extract must be "beside" or "instead"'):
        check_extract_mode(mode)
