"""Turn an exchange into facts with keys: a language model (or a plain function) reads a chat
turn and names the lasting facts it states, each with a stable key, ``"<entity>/<attribute>"``,
so that a newer fact with the same key supersedes the older one in the memory.

Framework-free: a LangChain model, a LlamaIndex LLM or a callable is duck-typed, never
imported (:func:`as_extractor`). :func:`extract` runs one with a time limit and turns any
failure of the extractor into a reason, never an exception:

>>> def extractor(exchange: str) -> list[tuple[str, str]]:
...     return [("The user lives in Paris", "User/Home")] if "Paris" in exchange else []
>>> extract(extractor, "Human: we moved to Paris last month\\nAI: Congratulations!", timeout=5)
([Fact(text='The user lives in Paris', key='user/home')], None)
>>> extract(lambda exchange: 42, "Human: hi", timeout=None)
([], "the extractor's answer is not a list of facts: it is an int")
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from solar_core.basics.types import Decision

#: the most facts one answer may hold (after duplicates are collapsed)
MAX_FACTS = 20
#: the longest key and fact text, in characters
MAX_KEY_CHARS = 200
MAX_FACT_CHARS = 2_000
#: the longest answer :func:`parse_facts` reads (20 facts of the longest fit well within it)
MAX_ANSWER_CHARS = 100_000
#: timed-out calls still running in their threads beyond which :func:`extract` calls no more
MAX_STRAGGLERS = 16

#: the default prompt: ``{exchange}`` is filled in (literal braces are doubled)
EXTRACT_PROMPT = """\
You keep an assistant's long-term memory. Read one exchange of a conversation and list the \
lasting facts it states about a person: where they live or work, their relationships, \
children and pets, health and diet, preferences and dislikes, plans with dates. Leave out \
small talk, questions, passing moods and what the assistant says about itself.

Answer with JSON only: a list of objects {{"fact": "...", "key": "<entity>/<attribute>"}}.
- "fact": one short, self-contained statement that names the person ("Caroline lives in \
Paris"; "The user is vegetarian" when the speaker's name is not known).
- "key": the stable name of what the fact sets, lowercase "<entity>/<attribute>": \
"user/home", "user/employer", "user/partner", "user/diet", "melanie/pet". A later fact that \
replaces this one (a new home, a new job) must get the same key; something a person has \
several of takes its name: "user/pet/max".
- [] when the exchange states no lasting fact.

Exchange:
Human: I'm Caroline. We moved to Paris last month, and I started at Renault on Monday.
AI: Congratulations on the move and the new job!
Answer: [{{"fact": "Caroline lives in Paris", "key": "caroline/home"}}, \
{{"fact": "Caroline works at Renault", "key": "caroline/employer"}}]

Exchange:
Human: I stopped eating meat. Max, my dog, doesn't mind.
AI: Noted - vegetarian recipes from now on.
Answer: [{{"fact": "The user is vegetarian", "key": "user/diet"}}, \
{{"fact": "The user has a dog named Max", "key": "user/pet/max"}}]

Exchange:
Human: What's the weather tomorrow?
AI: Sunny, 24 degrees.
Answer: []

Exchange:
{exchange}
Answer:"""


class Fact(NamedTuple):
    """A lasting fact and its key, ``"<entity>/<attribute>"``: the memory offers it as
    ``add(fact.text, key=fact.key)``, and a newer fact with the same key supersedes it."""

    text: str
    key: str


class ExtractionError(ValueError):
    """The extractor's answer is not a list of facts with keys (the message says why)."""


class Extractor(Protocol):
    """What :func:`as_extractor` returns: ``extractor(exchange) -> list[Fact]``."""

    def __call__(self, exchange: str, /) -> list[Fact]: ...


_JSON_SHAPE = "a JSON list of {fact, key} objects"
_CALL_SHAPE = "a list of facts"


def parse_facts(text: str) -> list[Fact]:
    """The facts in a model's answer: the first JSON list in ``text`` (bare, in a fenced block
    or with prose around it), each item an object with a string ``"fact"`` and ``"key"``
    (other fields are ignored). Texts and keys are stripped, keys lowercased, duplicates
    collapsed; anything else raises :class:`ExtractionError` saying what is wrong.

    >>> parse_facts('Sure:\\n```json\\n[{"fact": "Melanie has a cat", "key": "Melanie/pet"}]\\n```')
    [Fact(text='Melanie has a cat', key='melanie/pet')]
    >>> parse_facts("[]")
    []
    >>> parse_facts('[{"fact": "Melanie has a cat"}]')
    Traceback (most recent call last):
    ...
    solar_core.engine.extraction.ExtractionError: the extractor's answer is not a JSON list of {fact, key} objects: item 1 has no key
    """  # noqa: E501
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if len(text) > MAX_ANSWER_CHARS:
        raise _bad(
            _JSON_SHAPE, f"it is {len(text):,} characters long, at most {MAX_ANSWER_CHARS:,}"
        )
    found, broken = _first_json(text)
    if isinstance(found, list):
        return _facts(found, _JSON_SHAPE)
    if broken is not None:  # a list that is cut short or misspelt (before any object)
        raise _bad(_JSON_SHAPE, f"its JSON list does not parse: {broken}")
    if found is None:
        raise _bad(_JSON_SHAPE, f"there is no JSON list in {_preview(text)}")
    raise _bad(_JSON_SHAPE, "it is a JSON object, not a list")


def _first_json(text: str) -> tuple[object, str | None]:
    """The first JSON list or object that starts at a ``[`` or ``{`` of ``text`` (``None``
    when there is none; at most 200 starts are tried, so that a long answer of stray brackets
    stays quick), and why the first ``[`` before it failed to parse, if one did."""
    decoder = json.JSONDecoder()
    start, broken = 0, None
    for _ in range(200):
        at = min((i for i in (text.find("[", start), text.find("{", start)) if i >= 0), default=-1)
        if at < 0:
            break
        try:
            found: object = decoder.raw_decode(text, at)[0]
            return found, broken
        except ValueError as err:  # not JSON here
            why = str(err)
        except RecursionError:
            why = "it is nested too deep"
        if broken is None and text[at] == "[":
            broken = why
        start = at + 1
    return None, broken


def _facts(items: list[Any] | tuple[Any, ...], shape: str) -> list[Fact]:
    facts: dict[Fact, None] = {}  # in order, duplicates collapsed
    for number, item in enumerate(items, 1):
        if isinstance(item, Mapping):
            for field in ("fact", "key"):
                if field not in item:
                    raise _bad(shape, f"item {number} has no {field}")
            text, key = item["fact"], item["key"]
        elif isinstance(item, tuple | list) and shape == _CALL_SHAPE and len(item) == 2:
            text, key = item
        else:
            expected = "a {fact, key} object" if shape == _JSON_SHAPE else "a (text, key) pair"
            raise _bad(shape, f"item {number} is {_kind(item)}, not {expected}")
        facts[Fact(_field(text, "fact", number, shape), _field(key, "key", number, shape))] = None
        if len(facts) > MAX_FACTS:
            raise _bad(shape, f"it holds more than {MAX_FACTS} facts")
    return list(facts)


def _field(value: object, field: str, number: int, shape: str) -> str:
    where = f"item {number}'s {field}"
    if not isinstance(value, str):
        raise _bad(shape, f"{where} is {_kind(value)}, not a string")
    value = value.strip()
    most = MAX_KEY_CHARS if field == "key" else MAX_FACT_CHARS
    if not value:
        raise _bad(shape, f"{where} is blank")
    if len(value) > most:
        raise _bad(shape, f"{where} is {len(value):,} characters long, at most {most:,}")
    if "\x00" in value:
        raise _bad(shape, f"{where} holds a NUL character")
    if field == "key" and ("\n" in value or "\r" in value):
        raise _bad(shape, f"{where} spans several lines")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _bad(shape, f"{where} is not valid Unicode (a lone surrogate)") from None
    return value.lower() if field == "key" else value


def _bad(shape: str, detail: str) -> ExtractionError:
    return ExtractionError(f"the extractor's answer is not {shape}: {detail}")


def _kind(value: object) -> str:
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def _preview(text: str) -> str:
    return repr(text[:60] + "..." if len(text) > 60 else text)


def as_extractor(obj: object, template: str = EXTRACT_PROMPT) -> Extractor:
    """``obj`` as ``extractor(exchange) -> list[Fact]``. Tried in this order:

    1. an ``invoke`` method (a LangChain chat model, LLM or other runnable): it is sent
       ``template.format(exchange=...)`` and answers a message (its ``.text``, or
       ``.content`` when that is a string) or a string, read by :func:`parse_facts`;
    2. a ``complete`` method (a LlamaIndex LLM): the same prompt, the answer's ``.text``;
    3. a callable, ``obj(exchange)``: it answers a list of :class:`Fact`, ``(text, key)``
       pairs or ``{"fact", "key"}`` mappings, or a string read by :func:`parse_facts`; the
       template is not used. Its facts pass the checks of :func:`parse_facts`.

    LangChain's models are not callable and LlamaIndex's have no ``invoke``, so the order only
    matters for an object with several of these: the model's own method wins over
    ``__call__``. A bad answer raises :class:`ExtractionError`; what the model raises
    propagates (:func:`extract` turns both into a reason). Anything else is a ``TypeError``.

    >>> from langchain_core.language_models import FakeListLLM
    >>> extractor = as_extractor(FakeListLLM(responses=['[{"fact": "Ana is vegan", "key": "ana/diet"}]']))
    >>> extractor("Human: Ana is vegan now.\\nAI: Good to know.")
    [Fact(text='Ana is vegan', key='ana/diet')]
    """  # noqa: E501
    if isinstance(obj, _Bound):
        if template != EXTRACT_PROMPT:
            raise TypeError("obj is already an extractor: pass the model itself with a template")
        return obj
    check_template(template)
    if isinstance(obj, type):
        raise TypeError(f"got the class {obj.__name__}: pass an instance of it")
    if callable(getattr(obj, "invoke", None)):
        return _Bound(obj, "invoke", template)
    if callable(getattr(obj, "complete", None)):
        return _Bound(obj, "complete", template)
    if callable(obj):
        return _Bound(obj, "", template)
    raise TypeError(
        "an extractor must be a LangChain chat model or LLM (an invoke method), a LlamaIndex "
        "LLM (a complete method) or a callable extractor(exchange) -> list of facts; got "
        f"{type(obj).__name__}"
    )


def check_template(template: object) -> str:
    """``template`` if it is a string that takes ``{exchange}`` and no other field.

    >>> check_template("Facts in {exchange}?")
    'Facts in {exchange}?'
    """
    if not isinstance(template, str):
        raise TypeError(f"template must be a str with {{exchange}}, got {type(template).__name__}")
    try:
        filled = template.format(exchange="\x00")
    except (KeyError, IndexError, ValueError) as err:
        raise ValueError(
            f"template must take only {{exchange}} (double any literal brace): {err!r}"
        ) from None
    if "\x00" not in filled:
        raise ValueError("template must contain {exchange}, where the exchange goes")
    return template


class _Bound:
    """A model or callable bound to the way it is asked (see :func:`as_extractor`)."""

    def __init__(self, obj: Any, method: str, template: str) -> None:
        self.obj, self.method, self.template = obj, method, template

    def __call__(self, exchange: str, /) -> list[Fact]:
        if not self.method:
            return _normalise(self.obj(exchange))
        reply = getattr(self.obj, self.method)(self.template.format(exchange=exchange))
        return parse_facts(_reply_text(reply))

    def __repr__(self) -> str:
        how = f".{self.method}(prompt)" if self.method else "(exchange)"
        return f"<extractor {type(self.obj).__name__}{how}>"


def _reply_text(reply: object) -> str:
    """A model's answer as text: a string, or a message's ``.text`` (a property in recent
    langchain-core, a method in older ones, LlamaIndex's field), or its ``.content`` string."""
    if isinstance(reply, str):
        return reply
    text = getattr(reply, "text", None)
    if callable(text) and not isinstance(text, str):
        text = text()
    if not isinstance(text, str):
        text = getattr(reply, "content", None)
    if isinstance(text, str):
        return text
    raise ExtractionError(f"the extractor's answer is {_kind(reply)}, not text")


def _normalise(answer: object) -> list[Fact]:
    if isinstance(answer, str):
        return parse_facts(answer)
    if isinstance(answer, tuple) and len(answer) == 2 and all(isinstance(a, str) for a in answer):
        raise _bad(_CALL_SHAPE, "it is a single (text, key) pair; return a list of them")
    if not isinstance(answer, list | tuple):
        raise _bad(_CALL_SHAPE, f"it is {_kind(answer)}")
    return _facts(answer, _CALL_SHAPE)


def check_timeout(timeout: object) -> float | None:
    """``timeout`` in seconds: a finite number > 0, or ``None`` for no limit.

    >>> check_timeout(30), check_timeout(None)
    (30.0, None)
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, int | float):
        raise TypeError(
            f"timeout must be a number of seconds > 0, or None for no limit; got "
            f"{type(timeout).__name__}"
        )
    if not 0 < timeout <= threading.TIMEOUT_MAX:  # (NaN fails it too)
        raise ValueError(
            f"timeout must be a number of seconds > 0 (at most {threading.TIMEOUT_MAX:.0f}), "
            f"or None for no limit; got {timeout!r}"
        )
    return float(timeout)


_lock = threading.Lock()
_stragglers = 0  # timed-out calls whose threads still run


class _Call:
    """One call of an extractor in its own thread, and what came of it."""

    def __init__(self, extractor: Extractor, exchange: str) -> None:
        self.facts: list[Fact] = []
        self.error: BaseException | None = None
        self.finished = self.abandoned = False
        context = contextvars.copy_context()  # the caller's (LangChain's callbacks, tracing)
        self.thread = threading.Thread(
            target=context.run,
            args=(self.run, extractor, exchange),
            name="solar-extractor",
            daemon=True,
        )

    def run(self, extractor: Extractor, exchange: str) -> None:
        global _stragglers
        try:
            self.facts = extractor(exchange)
        except BaseException as err:  # handed to the caller, which re-raises what it must
            self.error = err
        finally:
            with _lock:
                self.finished = True
                if self.abandoned:
                    _stragglers -= 1


def extract(
    extractor: object, exchange: str, timeout: float | None
) -> tuple[list[Fact], str | None]:
    """Ask ``extractor`` (anything :func:`as_extractor` takes, or what it returned) for the
    facts in ``exchange``: ``(facts, None)``, or ``([], reason)`` when the extractor raised,
    gave a bad answer or took more than ``timeout`` seconds (``None``: no limit), with
    ``reason`` a short sentence for a trace. ``KeyboardInterrupt`` and ``SystemExit``
    propagate; a bad ``timeout``, ``exchange`` or ``extractor`` raises.

    >>> def failing(exchange: str) -> list[Fact]:
    ...     raise ConnectionError("the model is down")
    >>> extract(failing, "Human: hi", timeout=None)
    ([], 'the extractor raised ConnectionError: the model is down')
    >>> import time
    >>> extract(lambda exchange: time.sleep(0.3) or [], "Human: hi", timeout=0.05)
    ([], 'the extractor timed out after 0.05 s')
    """
    limit = check_timeout(timeout)
    if not isinstance(exchange, str):
        raise TypeError(f"exchange must be a str, got {type(exchange).__name__}")
    bound = as_extractor(extractor)
    if limit is None:  # no limit: in the caller's thread
        try:
            return bound(exchange), None
        except Exception as err:
            return [], _reason(err)
    global _stragglers
    with _lock:
        if _stragglers >= MAX_STRAGGLERS:
            return [], (
                f"the extractor was not called: {_stragglers} earlier calls timed out and still run"
            )
    call = _Call(bound, exchange)
    call.thread.start()
    call.thread.join(limit)
    with _lock:
        if not call.finished:
            # Python cannot stop a thread: the call runs on in its daemon thread (which does
            # not hold up the interpreter's exit) and its result is dropped
            call.abandoned = True
            _stragglers += 1
            return [], f"the extractor timed out after {limit:g} s"
    error, call.error = call.error, None  # (its traceback holds the call: no cycle kept)
    if error is None:
        return call.facts, None
    if not isinstance(error, Exception):  # KeyboardInterrupt, SystemExit
        raise error
    return [], _reason(error)


def _reason(err: Exception) -> str:
    if isinstance(err, ExtractionError):
        return _short(str(err))
    message = str(err).strip().replace("\n", " ")
    return _short(
        f"the extractor raised {type(err).__name__}" + (f": {message}" if message else "")
    )


def _short(reason: str, most: int = 300) -> str:
    return reason if len(reason) <= most else reason[: most - 3] + "..."


def check_extract_mode(mode: object) -> str:
    """``mode`` if it is ``"beside"`` (the exchange is stored and its facts too) or
    ``"instead"`` (only its facts are).

    >>> check_extract_mode("beside")
    'beside'
    """
    if not isinstance(mode, str) or mode not in ("beside", "instead"):
        raise ValueError(f'extract must be "beside" or "instead", got {mode!r}')
    return mode


#: how long a memory waits for its extractor by default, in seconds
EXTRACT_TIMEOUT = 30.0


class Extraction(NamedTuple):
    """What a memory does with the text it is offered: ask ``extractor`` (anything
    :func:`as_extractor` takes) for its facts, within ``timeout`` seconds, and offer them with
    their keys ``"beside"`` the text or ``"instead"`` of it (:meth:`of` checks them)."""

    extractor: Extractor
    mode: str = "beside"
    timeout: float | None = EXTRACT_TIMEOUT

    @classmethod
    def of(
        cls, extractor: object, mode: object = "beside", timeout: object = EXTRACT_TIMEOUT
    ) -> Extraction | None:
        """The checked extraction (``None`` for no extractor).

        >>> Extraction.of(lambda exchange: [], "instead").mode
        'instead'
        >>> Extraction.of(None) is None
        True
        """
        if extractor is None:
            return None
        return cls(as_extractor(extractor), check_extract_mode(mode), check_timeout(timeout))


def offer_extracted(
    offer: Callable[..., Decision], extraction: Extraction, text: str, metadata: dict[str, Any]
) -> Decision:
    """Offer ``text``'s facts with their keys (``offer(fact, metadata, key=..., item_id=None)``),
    then the text (``offer(text, metadata, extraction=note)``) unless ``extraction.mode``
    is ``"instead"`` and facts were found; the text's decision (else the first fact's) says
    what the extractor made of it, in ``Decision.extraction``: the facts' ids, or why none came
    (a failed or malformed answer: the text is offered then, whatever the mode). With no fact
    in ``"instead"`` mode nothing is offered and the decision (not traced, no step) says so.
    The extractor runs before any lock is taken: the write path never waits on it inside the
    memory.

    >>> from solar_core import SolarMemory
    >>> memory = SolarMemory("fifo", capacity=5, embedder="hash", seed=0,
    ...     extractor=lambda text: [("Ana lives in Rome", "ana/home")])
    >>> decision = memory.add("Ana: we moved to Rome!")
    >>> decision.extraction, [(i.text, i.key) for i in memory.items()]
    ('facts: m1', [('Ana lives in Rome', 'ana/home'), ('Ana: we moved to Rome!', None)])
    """
    facts, failed = extract(extraction.extractor, text, extraction.timeout)
    # a fact is an item of its own: its key, the text's metadata, no id of the text's
    decisions = [offer(fact.text, dict(metadata), key=fact.key, item_id=None) for fact in facts]
    ids = [str(d.item_id) for d in decisions if d.admitted or d.reason == "repeat"]
    note = f"failed: {failed}; the text was offered" if failed else f"facts: {', '.join(ids)}"
    if facts and not ids and not failed:
        note = f"facts: none stored ({decisions[0].reason})"
    if not facts and not failed:
        note = "no facts"
    if extraction.mode == "instead" and not failed:
        if not decisions:
            return Decision(0, False, None, None, "no facts extracted", extraction=note)
        decisions[0].extraction = note
        return decisions[0]
    return offer(text, metadata, extraction=note)
