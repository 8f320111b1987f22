"""Facts that change over time, and turns said again: two streams for a conversation memory.

``solar-bench updates`` (``--workload facts``, the default) injects into each LoCoMo conversation
statements of facts that change: for each speaker a few attributes (where they live, where they
work, their partner, their pet, their diet, their car, their club), each with a first value and
1 to 4 changes, every statement a first-person turn of that speaker in a session, dated by the
session (``session_N_date_time``), with a dia_id of its own (``F1``, ``F2``, ...) that no
question of the conversation cites. Each chain of values is then asked about after the last
turn: its current value ("Where does Caroline live?") and, for each earlier value, its value
on a day it was current ("Where did Caroline live on 12 May 2023?"). A question is judged on the
texts of the top-5 it retrieves (:func:`judge`): is the first text that names a value of the
chain the one that names the answer, does a wrong value rank above the answer, is the answer
in the top-5 at all. The memory's evidence recall@5 of the conversation's own questions (the
dialogue protocol's ``end`` mode) is measured with the injected turns and without them.

The memories: ``unlimited`` (every turn, hybrid ranking); ``solar-dialogue`` at K (what the chat
adapters build); the same with **keys** (each injected statement offered with
``key="Speaker/attribute"``, questions about a past day asked with ``as_of=``), and with the
:func:`scripted_extractor` beside the turns (the raw turn, then each fact it extracts with its
key).

``--workload repeats``: 30 % of a conversation's turns said again, lightly reworded
(:func:`solar_bench.rewording.reword`), 3 to 50 turns later, under the original's dia_id
(recalling either copy counts). Evidence recall@5 (``end``) and the median step time of
``solar-dialogue`` with ``repeats=True`` and ``repeats=False`` (a constructor parameter:
skipped with a note where it does not exist) beside the same memory on the conversation
without repeats.

>>> raw = [{"sample_id": "c", "conversation": {"speaker_a": "Ann", "speaker_b": "Bo",
...     "session_1_date_time": "1:56 pm on 8 May, 2023",
...     "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat."}],
...     "session_2_date_time": "7:55 pm on 9 June, 2023",
...     "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "How is the cat?"}]},
...     "qa": [{"question": "What did Ann adopt?", "answer": "a cat", "evidence": ["D1:1"]}]}]
>>> conv = conversations_from(raw)[0]
>>> [(t.dia_id, t.text, day(t.time)) for t in conv.turns]  # doctest: +NORMALIZE_WHITESPACE
[('D1:1', 'Ann: I adopted a cat.', '8 May 2023'), ('D2:1', 'Bo: How is the cat?', '9 June 2023')]
>>> stream = fact_stream(conv, seed=1)
>>> chain = stream.chains[0]
>>> len(chain.values) == len(set(chain.values)) == 2  # two sessions: one change at most
True
>>> chain.value_at(chain.since[1]) == chain.values[-1]
True
"""

from __future__ import annotations

import random
import re
import statistics
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core import SolarMemory

from .dialogue import TOP, Dialogue, Question, Turn, dialogues_from, read_json, recall
from .rewording import reword

WORKLOADS = ("facts", "repeats")
#: capacities of the ``facts`` rows and of the ``repeats`` rows (``--k`` overrides both)
FACTS_K = (100, 200)
REPEATS_K = (100, 1000)
CHAT_POLICY = "solar-dialogue"
#: share of a conversation's turns said again, and how many turns later (original turns)
REPEAT_SHARE = 0.3
REPEAT_LAG = (3, 50)
#: attributes per speaker, changes per chain
ATTRIBUTES_PER_SPEAKER = (3, 5)
CHANGES = (1, 4)
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"  # LoCoMo's "1:56 pm on 8 May, 2023"
_SESSION = re.compile(r"session_(\d+)")

Vectors = Callable[[str], npt.NDArray[np.float32]]
Extractor = Callable[[str], list[tuple[str, str]]]

# -- what the speakers say

ATTRIBUTES = ("home", "employer", "partner", "pet", "diet", "car", "club")
#: the values each attribute draws from (disjoint: no value names another's)
VALUES: dict[str, tuple[str, ...]] = {
    "home": (
        "Lyon", "Porto", "Leeds", "Utrecht", "Gdansk", "Valencia", "Tampere", "Ghent", "Bergen",
        "Bologna", "Krakow", "Aarhus", "Graz", "Seville", "Bristol", "Geneva", "Lille", "Turin",
        "Malmo", "Antwerp", "Cork", "Leipzig", "Brno", "Nantes", "Salzburg", "Bilbao",
    ),
    "employer": (
        "Northwind Logistics", "Bluefin Analytics", "Cedar Health", "Orbital Foods",
        "Kestrel Insurance", "Maple Robotics", "Harbor Credit Union", "Quillon Labs",
        "Summit Outfitters", "Lumen Energy", "Pinecrest Bank", "Redwood Media",
        "Silverline Rail", "Brightwater Pharma", "Ironleaf Games", "Copperfield Books",
        "Tidewater Shipping", "Vantor Software",
    ),
    "partner": (
        "Theo", "Priya", "Marcus", "Ingrid", "Rafael", "Yuki", "Tobias", "Amara", "Lucian",
        "Freya", "Dmitri", "Soraya", "Emil", "Noor", "Cormac", "Svetlana", "Matteo", "Leilani",
        "Anders", "Zainab",
    ),
    "pet": (
        "Biscuit", "Pickles", "Mochi", "Waffles", "Noodle", "Ziggy", "Clementine", "Bramble",
        "Marmalade", "Pistachio", "Nugget", "Sprocket", "Crumpet", "Dumpling", "Gizmo", "Kiwi",
    ),
    "diet": (
        "vegetarian", "vegan", "pescatarian", "keto", "paleo", "flexitarian", "gluten-free",
        "low-carb", "raw-food", "carnivore", "dairy-free", "macrobiotic", "Mediterranean",
        "low-FODMAP",
    ),
    "car": (
        "Subaru Outback", "Honda Civic", "Mazda MX-5", "Toyota Prius", "Skoda Octavia",
        "Kia Niro", "Fiat Panda", "Tesla Model 3", "Renault Clio", "Hyundai Kona", "Mini Cooper",
        "Peugeot 208", "Nissan Leaf", "Audi A4", "Volvo V60", "Seat Ibiza",
    ),
    "club": (
        "Harbor Rowing Club", "Oakwood Chess Club", "Riverside Running Club",
        "Northside Book Club", "Eastgate Climbing Club", "Lakeside Sailing Club",
        "Hilltop Astronomy Club", "Westbrook Cycling Club", "Old Town Choir",
        "Meadow Pottery Circle", "Greenway Birdwatching Society", "Brookfield Tennis Club",
        "Parkside Photography Club", "Southbank Salsa Club",
    ),
}  # fmt: skip
PET_KINDS = ("dog", "cat", "rabbit", "parrot", "hamster", "tortoise", "ferret", "guinea pig",
             "cockatiel", "gecko", "corgi", "beagle")  # fmt: skip
#: first statements of a value; ``{v}`` the value, ``{a}`` its article, ``{kind}`` a pet's kind
INITIAL: dict[str, tuple[str, ...]] = {
    "home": (
        "I live in {v}.",
        "Home for me is {v}.",
        "I've been living in {v} for a few years now.",
        "Our place is in {v}, it's a lovely city.",
    ),
    "employer": (
        "I work at {v}.",
        "My job is at {v}.",
        "I'm employed by {v}.",
        "These days I spend my weekdays at {v}, that's where I work.",
    ),
    "partner": (
        "My partner {v} says hi.",
        "I'm with {v}, we've been together a while.",
        "{v} and I have been dating for a couple of years.",
        "My partner is called {v}.",
    ),
    "pet": (
        "I have a {kind} called {v}.",
        "My {kind} {v} keeps me busy.",
        "Our {kind}'s name is {v}.",
        "I share my home with a {kind} named {v}.",
    ),
    "diet": (
        "I follow {a} {v} diet.",
        "I'm on {a} {v} diet.",
        "My diet is {v}.",
        "I eat {v}, mostly.",
    ),
    "car": (
        "I drive {a} {v}.",
        "My car is {a} {v}.",
        "I get around in my {v}.",
        "I've had my {v} for years.",
    ),
    "club": (
        "I'm a member of the {v}.",
        "I go to the {v} every week.",
        "My evenings belong to the {v}.",
        "I've been with the {v} for ages.",
    ),
}
#: statements of a new value
CHANGE: dict[str, tuple[str, ...]] = {
    "home": (
        "I live in {v} now.",
        "We moved to {v} last month!",
        "Home is {v} these days.",
        "Just settled into our new flat in {v}.",
    ),
    "employer": (
        "I started a new job at {v}!",
        "I switched jobs, I'm at {v} now.",
        "Big news: I just joined {v}.",
        "I left my old job, {v} hired me last week.",
    ),
    "partner": (
        "I'm seeing someone new, {v}.",
        "I've started dating {v}.",
        "{v} and I got together recently.",
        "My new partner is {v}, I'm so happy.",
    ),
    "pet": (
        "We adopted a {kind} named {v}!",
        "Meet {v}, my new {kind}.",
        "I've got a new {kind} now, {v}.",
        "We brought home a {kind} called {v} last week.",
    ),
    "diet": (
        "I went {v} last month.",
        "I switched to {a} {v} diet.",
        "I'm {v} now!",
        "Diet update: {v} from now on.",
    ),
    "car": (
        "I just bought {a} {v}!",
        "I traded in my car for {a} {v}.",
        "New car: {a} {v}!",
        "I'm driving {a} {v} now.",
    ),
    "club": (
        "I joined the {v}!",
        "I switched clubs, I'm with the {v} now.",
        "I signed up for the {v} last month.",
        "The {v} is my new club.",
    ),
}
#: what the scripted extractor writes of a statement; ``{s}`` the speaker
FACT: dict[str, str] = {
    "home": "{s} lives in {v}",
    "employer": "{s} works at {v}",
    "partner": "{s}'s partner is {v}",
    "pet": "{s}'s pet is a {kind} called {v}",
    "diet": "{s} follows {a} {v} diet",
    "car": "{s} drives {a} {v}",
    "club": "{s} is a member of the {v}",
}
#: questions about the current value, asked after the last turn
CURRENT_QUESTIONS: dict[str, tuple[str, ...]] = {
    "home": ("Where does {s} live?", "Which city does {s} live in?", "What city is {s}'s home?"),
    "employer": (
        "Where does {s} work?",
        "Who is {s}'s employer?",
        "Which company does {s} work for?",
    ),
    "partner": (
        "Who is {s}'s partner?",
        "Who is {s} dating?",
        "What is the name of {s}'s partner?",
    ),
    "pet": (
        "What is {s}'s pet called?",
        "What's the name of {s}'s pet?",
        "What pet does {s} have?",
    ),
    "diet": ("What diet does {s} follow?", "What does {s} eat?", "Which diet is {s} on?"),
    "car": ("What car does {s} drive?", "Which car does {s} have?", "What does {s} drive?"),
    "club": (
        "Which club is {s} a member of?",
        "What club does {s} go to?",
        "Which club does {s} belong to?",
    ),
}
#: questions about the value on a day (``{d}``: "12 May 2023")
AS_OF_QUESTIONS: dict[str, tuple[str, ...]] = {
    "home": ("Where did {s} live on {d}?", "Which city was {s} living in on {d}?"),
    "employer": ("Where did {s} work on {d}?", "Who was {s}'s employer on {d}?"),
    "partner": ("Who was {s}'s partner on {d}?", "Who was {s} dating on {d}?"),
    "pet": ("What was {s}'s pet called on {d}?", "What pet did {s} have on {d}?"),
    "diet": ("What diet did {s} follow on {d}?", "What was {s} eating on {d}?"),
    "car": ("What car did {s} drive on {d}?", "Which car did {s} have on {d}?"),
    "club": ("Which club was {s} a member of on {d}?", "What club did {s} go to on {d}?"),
}


def article(word: str) -> str:
    """``a`` or ``an`` before ``word`` (by its first letter).

    >>> article("Audi A4"), article("keto diet")
    ('an', 'a')
    """
    return "an" if word[:1].lower() in "aeiou" else "a"


def say(template: str, value: str, kind: str | None = None, speaker: str = "") -> str:
    """``template`` filled in.

    >>> say("I drive {a} {v}.", "Audi A4")
    'I drive an Audi A4.'
    >>> say("{s}'s pet is a {kind} called {v}", "Mochi", "cat", "Ann")
    "Ann's pet is a cat called Mochi"
    """
    return template.format(v=value, a=article(value), kind=kind or "", s=speaker)


# -- conversations with their session dates


@dataclass(frozen=True)
class TimedTurn:
    """A turn (``"Speaker: text"``) with its session's time (UTC seconds) and number."""

    dia_id: str
    text: str
    time: float
    session: int


@dataclass(frozen=True)
class Conversation:
    """A LoCoMo conversation: its turns in session order, each dated by its session."""

    sample_id: str
    speakers: tuple[str, ...]
    turns: tuple[TimedTurn, ...]
    questions: tuple[Question, ...]  # its own questions (the dialogue protocol's)

    @property
    def dialogue(self) -> Dialogue:
        """The conversation as the dialogue protocol reads it."""
        return Dialogue(
            self.sample_id, tuple(Turn(t.dia_id, t.text) for t in self.turns), self.questions, 0
        )


def session_time(text: str) -> float:
    """A LoCoMo session date (``"1:56 pm on 8 May, 2023"``) as UTC seconds.

    >>> day(session_time("1:56 pm on 8 May, 2023"))
    '8 May 2023'
    """
    moment = datetime.strptime(text.strip(), _DATE_FORMAT)
    return moment.replace(tzinfo=timezone.utc).timestamp()


def day(t: float) -> str:
    """The calendar day of UTC seconds ``t``, as the questions write it.

    >>> day(0.0)
    '1 January 1970'
    """
    d = _date(t)
    return f"{d.day} {d.strftime('%B')} {d.year}"


def _date(t: float) -> date:
    return datetime.fromtimestamp(t, timezone.utc).date()


def conversations_from(data: object, where: str = "data") -> list[Conversation]:
    """The dated turns and questions of LoCoMo-format conversations (``json.load``-ed).

    The turns and questions are :func:`solar_bench.dialogue.dialogues_from`'s; each session
    needs its ``session_N_date_time`` (``ValueError`` naming ``where`` and the session if not).
    """
    dialogues = dialogues_from(data, where)
    assert isinstance(data, list)
    out = []
    for conv, dialogue in zip(data, dialogues, strict=True):
        body = conv["conversation"]
        sessions = sorted(
            (int(m.group(1)), key)
            for key in body
            if (m := _SESSION.fullmatch(key)) and isinstance(body[key], list)
        )
        turns: list[TimedTurn] = []
        seen: set[str] = set()
        speakers: dict[str, None] = {}
        for number, key in sessions:
            stamp = body.get(f"{key}_date_time")
            try:
                when = session_time(str(stamp))
            except ValueError:
                raise ValueError(
                    f"{where}: {dialogue.sample_id} {key} has no date like '1:56 pm on 8 May, "
                    f"2023' in {key}_date_time (got {stamp!r}): the facts are dated by sessions"
                ) from None
            for t in body[key]:
                dia_id = str(t.get("dia_id", ""))
                if dia_id in seen:  # as dialogues_from: a repeated id names the first turn
                    continue
                seen.add(dia_id)
                speakers.setdefault(str(t.get("speaker", "?")))
                turns.append(
                    TimedTurn(dia_id, f"{t.get('speaker', '?')}: {t['text']}", when, number)
                )
        named = tuple(str(body[k]) for k in ("speaker_a", "speaker_b") if k in body)
        out.append(
            Conversation(
                dialogue.sample_id, named or tuple(speakers)[:2], tuple(turns), dialogue.questions
            )
        )
    return out


def load_conversations(path: str | Path) -> list[Conversation]:
    """:func:`conversations_from` a LoCoMo JSON file."""
    return conversations_from(read_json(path), str(path))


# -- injected facts


@dataclass(frozen=True)
class Chain:
    """One attribute of one speaker: its values in order, the time each became current (its
    statement's session time) and the dia_ids of the statements."""

    speaker: str
    attribute: str
    values: tuple[str, ...]
    since: tuple[float, ...]
    dia_ids: tuple[str, ...]

    @property
    def key(self) -> str:
        """The memory key of the chain's statements: ``"Speaker/attribute"``."""
        return f"{self.speaker}/{self.attribute}"

    def value_at(self, t: float) -> str:
        """The value current at time ``t`` (the first one before the first statement).

        >>> Chain("A", "home", ("Lyon", "Porto"), (10.0, 20.0), ("F1", "F2")).value_at(15.0)
        'Lyon'
        """
        current = self.values[0]
        for value, since in zip(self.values, self.since, strict=True):
            if since <= t:
                current = value
        return current


@dataclass(frozen=True)
class FactQuestion:
    """A question about a chain: ``as_of`` ``None`` asks for the current value (after the last
    turn), a time asks for the value current then."""

    text: str
    chain: Chain
    answer: str
    as_of: float | None

    @property
    def wrong(self) -> tuple[str, ...]:
        """The chain's other values (earlier ones; for a past day, later ones too)."""
        return tuple(v for v in self.chain.values if v != self.answer)


@dataclass(frozen=True)
class FactStream:
    """A conversation with facts injected (one seed): the turns to stream, the chains, the
    questions about them and the conversation's own questions."""

    sample_id: str
    seed: int
    turns: tuple[TimedTurn, ...]
    chains: tuple[Chain, ...]
    fact_questions: tuple[FactQuestion, ...]
    questions: tuple[Question, ...]

    @property
    def keys(self) -> dict[str, str]:
        """dia_id of each injected statement -> its chain's key."""
        return {i: c.key for c in self.chains for i in c.dia_ids}


@lru_cache(maxsize=4096)
def _mention(value: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(value) + r"(?!\w)", re.IGNORECASE)


def mentions(text: str, value: str) -> bool:
    """Whether ``text`` names ``value`` (a whole-word match, case-insensitive).

    >>> mentions("We moved to Lyon!", "lyon"), mentions("vegetarian", "vegan")
    (True, False)
    """
    return _mention(value).search(text) is not None


def _pick_sessions(
    sessions: Sequence[tuple[int, float]], wanted: int, rng: random.Random
) -> list[tuple[int, float]] | None:
    """``wanted`` sessions (fewer, at least 2, if that many cannot be found), in order, with a
    whole calendar day between each and the next; ``None`` if not even two."""
    for n in range(min(wanted, len(sessions)), 1, -1):
        for _ in range(50):
            chosen = sorted(rng.sample(range(len(sessions)), n))
            days = [_date(sessions[i][1]) for i in chosen]
            if all((b - a).days >= 2 for a, b in zip(days, days[1:], strict=False)):
                return [sessions[i] for i in chosen]
    return None


def inject_facts(conv: Conversation, rng: random.Random) -> tuple[list[TimedTurn], list[Chain]]:
    """The conversation's turns with fact statements inserted, and the chains of values.

    For each speaker, 3 to 5 attributes (``rng``); each gets a first value and 1 to 4 changes
    (fewer if the conversation has too few sessions a calendar day apart), each statement in a
    later session than the one before, at a random place among that session's turns, as a turn
    of the speaker with dia_id ``F<n>``. The values of a chain are distinct, and distinct from
    the other speaker's for the same attribute; no value is named in the conversation's own
    turns or is a speaker's name.
    """
    text = "\n".join([*(t.text for t in conv.turns), *conv.speakers])
    pools = {
        a: [v for v in VALUES[a] if not mentions(text, v)] for a in ATTRIBUTES
    }  # the conversation never names them: a text naming one is a statement
    for pool in pools.values():
        rng.shuffle(pool)
    sessions = list(dict.fromkeys((t.session, t.time) for t in conv.turns))
    by_session: dict[int, list[TimedTurn]] = {}
    for t in conv.turns:
        by_session.setdefault(t.session, []).append(t)
    inserted: dict[int, list[tuple[int, TimedTurn]]] = {}  # session -> (place, turn)
    chains: list[Chain] = []
    count = 0
    low, high = ATTRIBUTES_PER_SPEAKER
    for speaker in conv.speakers:
        for attribute in rng.sample(ATTRIBUTES, rng.randint(low, high)):
            chosen = _pick_sessions(sessions, rng.randint(*CHANGES) + 1, rng)
            pool = pools[attribute]
            if chosen is None or len(pool) < 2:
                continue
            chosen = chosen[: len(pool)]
            values, ids = [], []
            for n, (session, when) in enumerate(chosen):
                value = pool.pop()
                kind = rng.choice(PET_KINDS) if attribute == "pet" else None
                template = rng.choice((CHANGE if n else INITIAL)[attribute])
                count += 1
                turn = TimedTurn(
                    f"F{count}", f"{speaker}: {say(template, value, kind)}", when, session
                )
                place = rng.randint(0, len(by_session[session]))
                inserted.setdefault(session, []).append((place, turn))
                values.append(value)
                ids.append(turn.dia_id)
            chains.append(
                Chain(speaker, attribute, tuple(values), tuple(w for _, w in chosen), tuple(ids))
            )
    turns: list[TimedTurn] = []
    for session, own in by_session.items():
        extra = sorted(inserted.get(session, []), key=lambda pair: pair[0])  # stable: in order
        k = 0
        for i, said in enumerate([*own, None]):
            while k < len(extra) and extra[k][0] == i:
                turns.append(extra[k][1])
                k += 1
            if said is not None:
                turns.append(said)
    return turns, chains


def fact_questions(chains: Sequence[Chain], rng: random.Random) -> list[FactQuestion]:
    """For each chain, its current value's question, and for each earlier value a question
    about a day strictly inside the time it was current (noon UTC of a calendar day after the
    day it was said and before the day the next was).

    >>> chain = Chain("Ann", "home", ("Lyon", "Porto"), (session_time("1:56 pm on 8 May, 2023"),
    ...     session_time("7:55 pm on 11 May, 2023")), ("F1", "F2"))
    >>> [(q.answer, q.as_of is not None) for q in fact_questions([chain], random.Random(0))]
    [('Porto', False), ('Lyon', True)]
    >>> past = fact_questions([chain], random.Random(0))[1]
    >>> day(past.as_of or 0.0) in ("9 May 2023", "10 May 2023"), past.text.endswith("2023?")
    (True, True)
    """
    out = []
    for chain in chains:
        s = chain.speaker
        current = rng.choice(CURRENT_QUESTIONS[chain.attribute]).format(s=s)
        out.append(FactQuestion(current, chain, chain.values[-1], None))
        for value, start, end in zip(chain.values, chain.since, chain.since[1:], strict=False):
            first = _date(start) + timedelta(days=1)
            last = _date(end) - timedelta(days=1)
            when = first + timedelta(days=rng.randint(0, (last - first).days))
            noon = datetime(when.year, when.month, when.day, 12, tzinfo=timezone.utc)
            text = rng.choice(AS_OF_QUESTIONS[chain.attribute]).format(s=s, d=day(noon.timestamp()))
            out.append(FactQuestion(text, chain, value, noon.timestamp()))
    return out


def fact_stream(conv: Conversation, seed: int) -> FactStream:
    """:func:`inject_facts` and :func:`fact_questions` with ``random.Random`` of the seed and
    the conversation (the same stream for the same seed)."""
    rng = random.Random(f"updates/facts/{seed}/{conv.sample_id}")
    turns, chains = inject_facts(conv, rng)
    return FactStream(
        conv.sample_id,
        seed,
        tuple(turns),
        tuple(chains),
        tuple(fact_questions(chains, rng)),
        conv.questions,
    )


# -- the scripted extractor

_NAME = (
    r"[A-Z][\w'-]*(?: [A-Z0-9][\w'-]*)*"  # capitalised words ("Tesla Model 3", "Old Town Choir")
)
_WORDY = r"[A-Za-z][a-z]*(?:-[A-Za-z]+)*"  # one word, hyphens allowed ("low-FODMAP", "keto")
_VALUE_PATTERN = {a: _WORDY if a == "diet" else _NAME for a in ATTRIBUTES}
_SLOT = re.compile(r"\{(v|a|kind)\}")


def _template_regex(template: str, attribute: str) -> re.Pattern[str]:
    parts, last = [], 0
    for m in _SLOT.finditer(template):
        parts.append(re.escape(template[last : m.start()]))
        parts.append(
            {
                "v": f"(?P<v>{_VALUE_PATTERN[attribute]})",
                "a": "an?",
                "kind": "(?P<kind>[a-z]+(?: [a-z]+)?)",
            }[m.group(1)]
        )
        last = m.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts))


_PATTERNS = [
    (attribute, _template_regex(t, attribute))
    for attribute in ATTRIBUTES
    for t in (*INITIAL[attribute], *CHANGE[attribute])
]


def scripted_extractor(turn_text: str) -> list[tuple[str, str]]:
    """``[(fact, key)]`` of a turn (``"Speaker: text"``) that states one of the injected facts:
    a deterministic stand-in for an LLM extractor, reading the statements' templates.

    >>> scripted_extractor("Caroline: We moved to Lyon last month!")
    [('Caroline lives in Lyon', 'Caroline/home')]
    >>> scripted_extractor("Bo: Meet Mochi, my new guinea pig.")
    [("Bo's pet is a guinea pig called Mochi", 'Bo/pet')]
    >>> scripted_extractor("Caroline: I love hiking in Lyon.")
    []
    """
    speaker, sep, said = turn_text.partition(": ")
    if not sep:
        return []
    for attribute, pattern in _PATTERNS:
        m = pattern.fullmatch(said)
        if m is not None:
            kind = m.groupdict().get("kind")
            fact = say(FACT[attribute], m.group("v"), kind, speaker)
            return [(fact, f"{speaker}/{attribute}")]
    return []


# -- judging a retrieval


@dataclass(frozen=True)
class Verdict:
    """A fact question's retrieval judged on its texts, best first."""

    first: bool  # the first text naming a value of the chain names the answer
    stale_above: bool  # a wrong value ranks above the first text naming the answer (or the
    # answer is missing and a wrong value is there)
    in_top: bool  # some text names the answer


def judge(answer: str, wrong: Iterable[str], texts: Sequence[str]) -> Verdict:
    """Judge a retrieval (``texts``, best first) of a question whose answer is ``answer`` and
    whose chain's other values are ``wrong``. A text naming the answer and a wrong value counts
    as naming the answer.

    >>> judge("Porto", ["Lyon"], ["A: hi", "A: We moved to Porto!", "A: I live in Lyon."])
    Verdict(first=True, stale_above=False, in_top=True)
    >>> judge("Porto", ["Lyon"], ["A: I live in Lyon.", "A: We moved to Porto!"])
    Verdict(first=False, stale_above=True, in_top=True)
    >>> judge("Porto", ["Lyon"], ["A: I live in Lyon."])
    Verdict(first=False, stale_above=True, in_top=False)
    >>> judge("Porto", ["Lyon"], ["A: hi"])
    Verdict(first=False, stale_above=False, in_top=False)
    """
    wrong = tuple(wrong)
    for text in texts:
        if mentions(text, answer):
            return Verdict(first=True, stale_above=False, in_top=True)
        if any(mentions(text, w) for w in wrong):
            found = any(mentions(t, answer) for t in texts)
            return Verdict(first=False, stale_above=True, in_top=found)
    return Verdict(first=False, stale_above=False, in_top=False)


# -- the memories


@dataclass(frozen=True)
class Setup:
    """A memory of the ``facts`` rows: its policy and capacity, and how it is fed (``plain``:
    each turn; ``keys``: each statement with its chain's key, past days asked with ``as_of``;
    ``extractor``: each turn, then each fact :func:`scripted_extractor` finds in it, keyed)."""

    policy: str
    capacity: int | None
    feed: str = "plain"

    @property
    def label(self) -> str:
        return (
            self.policy + {"plain": "", "keys": " + keys", "extractor": " + extractor"}[self.feed]
        )

    @property
    def keyed(self) -> bool:
        return self.feed != "plain"


def setups(ks: Sequence[int]) -> list[Setup]:
    """``unlimited`` plain and with keys, then at each K the chat default plain, with keys,
    with the extractor.

    >>> [(s.label, s.capacity) for s in setups([100])]  # doctest: +NORMALIZE_WHITESPACE
    [('unlimited', None), ('unlimited + keys', None), ('solar-dialogue', 100),
     ('solar-dialogue + keys', 100), ('solar-dialogue + extractor', 100)]
    """
    out = [Setup("unlimited", None), Setup("unlimited", None, "keys")]
    for k in ks:
        out += [Setup(CHAT_POLICY, k, feed) for feed in ("plain", "keys", "extractor")]
    return out


def _memory(
    policy: str, capacity: int | None, dim: int, seed: int, clock: Callable[[], float], **extra: Any
) -> SolarMemory:
    """The library's memory as an application builds it (vectors given: ``dim``), top-5."""
    return SolarMemory(policy, capacity, dim=dim, k=TOP, seed=seed, clock=clock, **extra)


def _stream(
    memory: SolarMemory,
    turns: Sequence[TimedTurn],
    vector: Vectors,
    now: list[float],
    keys: Mapping[str, str] | None = None,
    extractor: Extractor | None = None,
) -> tuple[list[int], list[int]]:
    """Each turn: a recorded top-5 retrieval with it as the query, then the offer (with its key
    if ``keys`` has one; then each fact of ``extractor``, keyed). Returns the step times in ns
    (extraction excluded) and the sizes after each step."""
    times, sizes = [], []
    clock = time.perf_counter_ns
    for turn in turns:
        now[0] = turn.time
        v = vector(turn.text)
        facts = [] if extractor is None else extractor(turn.text)
        key = None if keys is None else keys.get(turn.dia_id)
        start = clock()
        memory.retrieve(turn.text, embedding=v)
        extra: dict[str, Any] = {} if key is None else {"key": key}
        memory.add(turn.text, embedding=v, metadata={"dia_id": turn.dia_id}, **extra)
        for fact, fact_key in facts:
            keyed: dict[str, Any] = {"key": fact_key}
            memory.add(fact, embedding=vector(fact), metadata={"dia_id": turn.dia_id}, **keyed)
        times.append(clock() - start)
        sizes.append(len(memory))
    return times, sizes


def own_recall(memory: SolarMemory, questions: Sequence[Question], vector: Vectors) -> float:
    """Mean evidence recall@5 of the conversation's own questions, asked as looks."""
    return float(
        np.mean(
            [
                recall(q, memory.retrieve(q.text, embedding=vector(q.text), record=False))
                for q in questions
            ]
        )
    )


def ask_facts(
    memory: SolarMemory, questions: Sequence[FactQuestion], vector: Vectors, as_of: bool
) -> dict[str, list[Verdict]]:
    """Each question asked as a look (top-5), judged: ``{"current": [...], "as_of": [...]}``.
    ``as_of`` (the rows with keys): a question is asked with its chain's key as a filter
    (``filter={"key": ...}``: an application that keys its facts knows which one a question is
    about), a past day's with ``as_of=`` its time too; otherwise every question is asked
    plainly."""
    verdicts: dict[str, list[Verdict]] = {"current": [], "as_of": []}
    for q in questions:
        extra: dict[str, Any] = {}
        if as_of:  # an application that keys facts asks by the key the question is about
            extra["filter"] = {"key": q.chain.key}
            if q.as_of is not None:
                extra["as_of"] = q.as_of
        hits = memory.retrieve(q.text, embedding=vector(q.text), record=False, **extra)
        kind = "current" if q.as_of is None else "as_of"
        verdicts[kind].append(judge(q.answer, q.wrong, [h.text for h in hits]))
    return verdicts


def run_facts(
    stream: FactStream,
    vector: Vectors,
    setup: Setup,
    seed: int,
    extractor: Extractor = scripted_extractor,
) -> dict[str, float]:
    """One memory through one stream: per kind of fact question (``current``, ``as_of``) the
    shares ranked first / stale above / in the top-5, ``recall`` (own questions, ``end``),
    ``mean_size`` and ``us_per_turn`` (median step: retrieval and offers, embedding and
    extraction excluded). The clock reads the current turn's session time."""
    dim = len(vector(stream.turns[0].text))
    now = [stream.turns[0].time]
    memory = _memory(setup.policy, setup.capacity, dim, seed, lambda: now[0])
    times, sizes = _stream(
        memory,
        stream.turns,
        vector,
        now,
        keys=stream.keys if setup.feed == "keys" else None,
        extractor=extractor if setup.feed == "extractor" else None,
    )
    verdicts = ask_facts(memory, stream.fact_questions, vector, as_of=setup.keyed)
    out: dict[str, float] = {}
    for kind, found in verdicts.items():
        for what in ("first", "stale_above", "in_top"):
            values = [getattr(v, what) for v in found]
            out[f"{kind}_{what}"] = float(np.mean(values)) if values else float("nan")
        out[f"{kind}_questions"] = float(len(found))
    out["recall"] = own_recall(memory, stream.questions, vector)
    out["mean_size"] = float(np.mean(sizes))
    out["us_per_turn"] = float(np.median(times)) / 1000.0
    return out


def run_plain(conv: Conversation, vector: Vectors, setup: Setup, seed: int) -> float:
    """The memory's recall of the conversation's own questions without injected turns (keys
    and the extractor have nothing to do there: the plain memory's figure)."""
    dim = len(vector(conv.turns[0].text))
    now = [conv.turns[0].time]
    memory = _memory(setup.policy, setup.capacity, dim, seed, lambda: now[0])
    _stream(memory, conv.turns, vector, now)
    return own_recall(memory, conv.questions, vector)


def fact_texts(
    streams: Sequence[FactStream], extractor: Extractor = scripted_extractor
) -> list[str]:
    """Every text the ``facts`` rows embed, each once: turns, extracted facts, questions."""
    seen: dict[str, None] = {}
    for s in streams:
        for t in s.turns:
            seen.setdefault(t.text)
            for fact, _ in extractor(t.text):
                seen.setdefault(fact)
        for q in s.questions:
            seen.setdefault(q.text)
        for fq in s.fact_questions:
            seen.setdefault(fq.text)
    return list(seen)


def fact_records(
    convs: Sequence[Conversation],
    vector: Vectors,
    ks: Sequence[int],
    seeds: Sequence[int],
    progress: Callable[[], None] = lambda: None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """One record per (memory, conversation, seed), and the notes (none: every row runs)."""
    runnable = setups(ks)
    out: list[dict[str, Any]] = []
    plain: dict[tuple[Any, ...], float] = {}
    for conv in convs:
        if not conv.turns or not conv.questions:
            continue
        for seed in seeds:
            stream = fact_stream(conv, seed)
            for setup in runnable:
                metrics = run_facts(stream, vector, setup, seed)
                memo = (setup.policy, setup.capacity, conv.sample_id, seed)
                if memo not in plain:
                    plain[memo] = run_plain(conv, vector, setup, seed)
                metrics["recall_plain"] = plain[memo]
                metrics["d_recall"] = metrics["recall"] - plain[memo]
                metrics["chains"] = float(len(stream.chains))
                out.append(
                    _record("facts", setup.label, setup.capacity, conv.sample_id, seed, metrics)
                )
                progress()
    return out, []


def facts_total(convs: Sequence[Conversation], ks: Sequence[int], seeds: Sequence[int]) -> int:
    """How many runs :func:`fact_records` makes (for a progress bar)."""
    return sum(bool(c.turns and c.questions) for c in convs) * len(seeds) * len(setups(ks))


# -- turns said again


def with_repeats(
    dialogue: Dialogue,
    rng: random.Random,
    share: float = REPEAT_SHARE,
    lag: tuple[int, int] = REPEAT_LAG,
    rewording: Callable[[str, random.Random], str] = reword,
) -> tuple[Dialogue, list[tuple[int, int]]]:
    """The dialogue with ``share`` of its turns said again, each ``lag`` turns later (drawn
    uniformly; counted in original turns, at the latest after the last turn), reworded by
    ``rewording`` (the words after ``"Speaker: "``), under the original's dia_id. Only turns
    with at least ``lag[0]`` turns after them are chosen.

    Returns the dialogue and, for each repeat, ``(original index, index in the new stream)``.

    >>> d = Dialogue("c", tuple(Turn(f"D{i}", f"A: turn {i}.") for i in range(10)), (), 0)
    >>> out, where = with_repeats(d, random.Random(0), lag=(2, 3), rewording=lambda s, r: s.upper())
    >>> where, [t.text for t in out.turns][5:8]
    ([(3, 6), (6, 11), (7, 12)], ['A: turn 5.', 'A: TURN 3.', 'A: turn 6.'])
    >>> out.turns[6].dia_id
    'D3'
    """
    turns = dialogue.turns
    n = len(turns)
    low, high = lag
    eligible = [i for i in range(n) if i + low <= n - 1]
    chosen = rng.sample(eligible, min(len(eligible), round(share * n)))
    after: dict[int, list[int]] = {}  # original index -> the originals repeated after it
    for i in sorted(chosen):
        after.setdefault(min(i + rng.randint(low, high), n - 1), []).append(i)
    out: list[Turn] = []
    where: list[tuple[int, int]] = []
    for j, turn in enumerate(turns):
        out.append(turn)
        for i in after.get(j, ()):
            speaker, sep, said = turns[i].text.partition(": ")
            text = f"{speaker}{sep}{rewording(said, rng)}" if sep else rewording(said, rng)
            where.append((i, len(out)))
            out.append(Turn(turns[i].dia_id, text))
    first: dict[str, int] = {}
    for k, t in enumerate(out):
        first.setdefault(t.dia_id, k)
    questions = tuple(
        replace(q, last=max(first[e] for e in q.evidence)) for q in dialogue.questions
    )
    return replace(dialogue, turns=tuple(out), questions=questions), where


def repeat_stream(dialogue: Dialogue, seed: int) -> Dialogue:
    """:func:`with_repeats` with ``random.Random`` of the seed and the conversation."""
    return with_repeats(dialogue, random.Random(f"updates/repeats/{seed}/{dialogue.sample_id}"))[0]


def run_repeats(
    dialogue: Dialogue, vector: Vectors, capacity: int, seed: int, repeats: bool | None
) -> dict[str, float]:
    """``solar-dialogue`` at ``capacity`` through the dialogue (``repeats``: the constructor's
    ``repeats=``; ``None``: not passed): ``score`` (evidence recall@5, ``end``), ``mean_size``,
    ``us_per_turn`` (median step: retrieval and offer, embedding excluded)."""
    return run_repeats_together(dialogue, vector, capacity, seed, [repeats])[0]


def run_repeats_together(
    dialogue: Dialogue,
    vector: Vectors,
    capacity: int,
    seed: int,
    flags: Sequence[bool | None],
) -> list[dict[str, float]]:
    """:func:`run_repeats` of each of ``flags``, in lockstep: every memory takes a turn before
    the next turn, in an order that alternates, so that the machine's slow moments fall on
    each alike and the step times compare (the thread's CPU time: another process's work is
    not counted)."""
    dim = len(vector(dialogue.turns[0].text))
    memories = []
    for flag in flags:
        extra: dict[str, Any] = {} if flag is None else {"repeats": flag}
        memories.append(SolarMemory(CHAT_POLICY, capacity, dim=dim, k=TOP, seed=seed, **extra))
    times: list[list[int]] = [[] for _ in flags]
    sizes: list[list[int]] = [[] for _ in flags]
    clock = time.thread_time_ns
    for i, turn in enumerate(dialogue.turns):
        v = vector(turn.text)
        order = range(len(flags)) if i % 2 == 0 else range(len(flags) - 1, -1, -1)
        for j in order:
            memory = memories[j]
            start = clock()
            memory.retrieve(turn.text, embedding=v)
            memory.add(turn.text, embedding=v, metadata={"dia_id": turn.dia_id})
            times[j].append(clock() - start)
            sizes[j].append(len(memory))
    return [
        {
            "score": own_recall(memory, dialogue.questions, vector),
            "mean_size": float(np.mean(sizes[j])),
            "us_per_turn": float(np.median(times[j])) / 1000.0,
        }
        for j, memory in enumerate(memories)
    ]


#: the ``repeats`` rows: (stream, label, ``repeats=``), the reference first
REFERENCE = "no repeats (reference)"


def repeat_variants() -> tuple[list[tuple[str, str, bool | None]], list[str]]:
    """The rows and their notes (none): the reference (the memory as built by default on the
    conversation without repeats), then ``repeats=True`` and ``repeats=False`` on the
    conversation with repeats."""
    rows: list[tuple[str, str, bool | None]] = [("plain", REFERENCE, None)]
    rows += [("repeated", "repeats=True", True), ("repeated", "repeats=False", False)]
    return rows, []


def repeat_texts(streams: Iterable[Dialogue]) -> list[str]:
    """Every turn and question text of ``streams``, each once."""
    seen: dict[str, None] = {}
    for d in streams:
        for t in d.turns:
            seen.setdefault(t.text)
        for q in d.questions:
            seen.setdefault(q.text)
    return list(seen)


def repeat_records(
    dialogues: Sequence[Dialogue],
    vector: Vectors,
    ks: Sequence[int],
    seeds: Sequence[int],
    progress: Callable[[], None] = lambda: None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """One record per (K, row, conversation, seed), the rows of one stream of one (K,
    conversation, seed) run in lockstep (their step times measured side by side), and the
    notes."""
    variants, notes = repeat_variants()
    out: list[dict[str, Any]] = []
    for capacity in ks:
        for dialogue in dialogues:
            if not dialogue.turns or not dialogue.questions:
                continue
            for seed in seeds:
                streams = {"plain": dialogue, "repeated": repeat_stream(dialogue, seed)}
                for stream, source in streams.items():  # the variants of a stream in lockstep
                    rows = [(label, flag) for name, label, flag in variants if name == stream]
                    runs = run_repeats_together(
                        source, vector, capacity, seed, [flag for _, flag in rows]
                    )
                    for (label, _), metrics in zip(rows, runs, strict=True):
                        metrics["turns"] = float(len(source.turns))
                        out.append(
                            _record("repeats", label, capacity, dialogue.sample_id, seed, metrics)
                        )
                        progress()
    return out, notes


def repeats_total(dialogues: Sequence[Dialogue], ks: Sequence[int], seeds: Sequence[int]) -> int:
    """How many runs :func:`repeat_records` makes."""
    runnable = sum(bool(d.turns and d.questions) for d in dialogues)
    return len(ks) * runnable * len(seeds) * len(repeat_variants()[0])


# -- rows and tables


def _record(
    setting: str, policy: str, capacity: int | None, sample: str, seed: int, m: dict[str, float]
) -> dict[str, Any]:
    return dict(
        workload="updates",
        setting=setting,
        policy=policy,
        capacity=capacity,
        sample=sample,
        seed=seed,
        **m,
    )


def _se(values: Sequence[float]) -> float:
    return float(np.std(values, ddof=1) / np.sqrt(len(values))) if len(values) > 1 else 0.0


_MEDIAN = {"us_per_turn"}  # the median of the runs' medians; other metrics: the mean of the runs
_SE = {"current_first", "as_of_first", "recall", "d_recall", "score", "d_score"}


def aggregate(
    records: Sequence[dict[str, Any]], per_conversation: bool = False
) -> list[dict[str, Any]]:
    """One row per (setting, memory, K), over conversations and seeds (``per_conversation``:
    also one per conversation, over seeds, after them): the mean of each metric (NaN-free
    runs), its standard error for the headline ones, the median of the runs' step times; the
    ``repeats`` rows also ``d_score``, the paired difference to the reference.

    >>> recs = [_record("repeats", p, 100, c, 1, {"score": s, "us_per_turn": u})
    ...         for p, c, s, u in [(REFERENCE, "a", .5, 10), (REFERENCE, "b", .75, 30),
    ...                            ("x", "a", .25, 20), ("x", "b", .75, 40)]]
    >>> [(r["policy"], r["score"], r["d_score"], r["us_per_turn"]) for r in aggregate(recs)]
    [('no repeats (reference)', 0.625, 0.0, 20.0), ('x', 0.5, -0.125, 30.0)]
    """
    keys: list[tuple[str, ...]] = [("setting", "policy", "capacity")]
    if per_conversation:
        keys.append(("setting", "policy", "capacity", "sample"))
    rows = []
    for key in keys:
        groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
        for r in records:
            groups.setdefault(tuple(r[k] for k in key), []).append(r)
        for group, recs in groups.items():
            row: dict[str, Any] = {"workload": "updates", **dict(zip(key, group, strict=True))}
            row.setdefault("sample", "all")
            row["seeds"] = sorted({r["seed"] for r in recs})
            row["units"] = len(recs)
            metrics = [m for m in recs[0] if m not in {"workload", *key, "sample", "seed"}]
            for m in metrics:
                values = [r[m] for r in recs if not np.isnan(r[m])]
                if not values:
                    row[m] = float("nan")
                elif m in _MEDIAN:
                    row[m] = float(statistics.median(values))
                else:
                    row[m] = float(np.mean(values))
                    if m in _SE:
                        row[f"{m}_se"] = _se(values)
            if row["setting"] == "repeats":
                base = {
                    (r["sample"], r["seed"]): r["score"]
                    for r in records
                    if r["setting"] == "repeats"
                    and r["policy"] == REFERENCE
                    and r["capacity"] == row["capacity"]
                }
                diffs = [
                    r["score"] - base[(r["sample"], r["seed"])]
                    for r in recs
                    if (r["sample"], r["seed"]) in base
                ]
                if diffs:
                    row["d_score"], row["d_score_se"] = float(np.mean(diffs)), _se(diffs)
            rows.append(row)
    return rows


def skipped(notes: Sequence[str], setting: str) -> list[dict[str, Any]]:
    """The rows that did not run, as rows of their own (``setting`` ``skipped``)."""
    return [dict(workload="updates", setting="skipped", part=setting, note=n) for n in notes]


def _fmt(value: Any, spec: str = "{:.3f}") -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "-"
    return spec.format(value)


def _markdown(head: Sequence[str], body: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def render(rows: Sequence[dict[str, Any]]) -> str:
    """The ``facts`` and ``repeats`` tables as Markdown, each followed by its skipped rows.

    >>> print(render([dict(workload="updates", setting="skipped", part="facts", note="why")]))
    ### updates: facts that change
    <BLANKLINE>
    skipped: why
    <BLANKLINE>
    """
    out = []
    facts = [r for r in rows if r["setting"] == "facts"]
    notes = {
        part: [r["note"] for r in rows if r["setting"] == "skipped" and r["part"] == part]
        for part in WORKLOADS
    }
    if facts or notes["facts"]:
        out.append("### updates: facts that change")
        out.append("")
        if facts:
            head = [
                "memory",
                "K",
                "conv",
                "current: first",
                "stale above",
                "in top-5",
                "as of a day: first",
                "stale above",
                "in top-5",
                "recall@5",
                "no facts",
                "Δ",
                "us/step",
            ]
            body = [
                [
                    r["policy"],
                    _fmt(r["capacity"], "{}"),
                    r["sample"],
                    _fmt(r.get("current_first")),
                    _fmt(r.get("current_stale_above")),
                    _fmt(r.get("current_in_top")),
                    _fmt(r.get("as_of_first")),
                    _fmt(r.get("as_of_stale_above")),
                    _fmt(r.get("as_of_in_top")),
                    _fmt(r.get("recall")),
                    _fmt(r.get("recall_plain")),
                    _fmt(r.get("d_recall"), "{:+.3f}"),
                    _fmt(r.get("us_per_turn"), "{:.1f}"),
                ]
                for r in facts
            ]
            first = facts[0]
            out.append(
                f"{first['units']} runs (conversation x seed) per row; per run "
                f"{first['current_questions']:.1f} current-value and "
                f"{first['as_of_questions']:.1f} past-day questions, {first['chains']:.1f} chains"
            )
            out.append("")
            out.append(_markdown(head, body))
        out += ["", *(f"skipped: {n}" for n in notes["facts"])] if notes["facts"] else []
        out.append("")
    reps = [r for r in rows if r["setting"] == "repeats"]
    if reps or notes["repeats"]:
        out.append("### updates --workload repeats: 30 % of turns said again, reworded")
        out.append("")
        if reps:
            head = [
                "memory",
                "K",
                "conv",
                "recall@5",
                "±se",
                "Δ vs reference",
                "±se",
                "fill",
                "turns",
                "us/step",
            ]
            body = [
                [
                    r["policy"],
                    _fmt(r["capacity"], "{}"),
                    r["sample"],
                    _fmt(r.get("score")),
                    _fmt(r.get("score_se")),
                    _fmt(r.get("d_score"), "{:+.3f}"),
                    _fmt(r.get("d_score_se")),
                    _fmt(r.get("mean_size"), "{:.1f}"),
                    _fmt(r.get("turns"), "{:.0f}"),
                    _fmt(r.get("us_per_turn"), "{:.1f}"),
                ]
                for r in reps
            ]
            out.append(_markdown(head, body))
        out += ["", *(f"skipped: {n}" for n in notes["repeats"])] if notes["repeats"] else []
        out.append("")
    return "\n".join(out) + "\n"
