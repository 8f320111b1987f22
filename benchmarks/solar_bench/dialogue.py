"""The conversation-memory protocol: a bounded memory of dialogue turns, measured on LoCoMo.

What replacing ``ConversationBufferWindowMemory`` means, measured without an LLM. Each
conversation's turns (``"Speaker: text"``, in session order) are streamed into one memory: for
every incoming turn, one recorded top-5 retrieval with the turn as the query, then the turn is
offered (its ``dia_id`` as metadata). The score is **evidence recall@5**: the share of a
question's evidence turns among the 5 turns retrieved for it, averaged over the questions.

- ``end``: every question is asked once after the last turn, as a look (``record=False``).
- ``interleaved``: every question is asked once, at a step drawn (``random.Random(seed)``)
  after its last evidence turn and before the end, as a recorded retrieval, then rated with
  ``score=`` its recall: the feedback a memory can learn from.

A mode may name the ratings after a plus (``end+disliked``): what an application that rates
every answer gives the memory, most of it about the answer rather than the memory.

- ``none``: nothing is rated (``interleaved+none``: the questions' recalls are not rated);
- ``evidence``: a question's recall is rated by its recall (what ``interleaved`` means alone);
- ``disliked``: every recall (each turn's, and each question's) is disliked;
- ``random``: every recall gets a score drawn uniformly (``random.Random`` of the seed);
- ``overlap``: every turn's recall gets the share of the next turn's words (the reply) found in
  the recalled turns, as a score; a question's recall, as ``evidence``.

Two reference rows: ``unlimited`` (every turn stored) and ``oracle``, the K turns that the most
questions cite as evidence (earlier turns first on ties), stored and nothing else: an upper
bound for a K-turn memory that knows the questions in advance. The step time is the median of
one turn's retrieval plus offer, embedding excluded (the vectors are precomputed).

>>> raw = [{"sample_id": "c", "conversation": {"speaker_a": "A", "speaker_b": "B",
...     "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I adopted a cat."},
...                   {"speaker": "B", "dia_id": "D1:2", "text": "Nice!"}]},
...     "qa": [{"question": "What did A adopt?", "answer": "a cat", "evidence": ["D1:1"]}]}]
>>> dialogue = dialogues_from(raw)[0]
>>> [turn.text for turn in dialogue.turns], dialogue.questions[0].evidence
(['A: I adopted a cat.', 'B: Nice!'], frozenset({'D1:1'}))
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core import SolarMemory
from solar_core.policies.eviction import SalienceEviction
from solar_core.policies.presets import PRESETS
from solar_core.policies.salience import SaliencePrior
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

from .experiments import run_capacity
from .locomo import normalise_evidence
from .policy_spec import memory_for, parse_policy
from .report import record

MODES = ("end", "interleaved")
#: what a mode's recalls are rated with (the default: ``end`` rates nothing, ``interleaved``
#: each question by its evidence)
RATINGS = ("none", "evidence", "disliked", "random", "overlap")
_WORD = re.compile(r"\w+")
DEFAULT_K = (25, 50, 100, 200)
TOP = 5  # turns retrieved per query
ORACLE = "oracle"
_SESSION = re.compile(r"session_(\d+)")

Vectors = Callable[[str], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]  # dia_ids of turns of the same conversation
    last: int  # index of its last evidence turn in the stream


@dataclass(frozen=True)
class Dialogue:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]
    skipped: int  # questions without evidence among the turns


def dialogues_from(data: object, where: str = "data") -> list[Dialogue]:
    """The turn streams and questions of LoCoMo-format conversations (``json.load``-ed).

    Evidence ids that name no turn are dropped; a question left without evidence is skipped
    (counted in ``skipped``). Raises ``ValueError`` naming ``where`` and the entry when the
    schema is not LoCoMo's.
    """
    if not isinstance(data, list) or not data:
        raise ValueError(f"{where}: expected a non-empty list of LoCoMo conversations")
    out = []
    for n, conv in enumerate(data):
        body = conv.get("conversation") if isinstance(conv, dict) else None
        if not isinstance(body, dict) or not isinstance(conv.get("qa"), list):
            raise ValueError(f"{where}: conversation #{n} has no 'conversation' and 'qa'")
        name = str(conv.get("sample_id", f"conv#{n}"))
        sessions = sorted(
            (int(m.group(1)), key)
            for key in body
            if (m := _SESSION.fullmatch(key)) and isinstance(body[key], list)
        )
        turns: list[Turn] = []
        index: dict[str, int] = {}
        for _, key in sessions:
            for t in body[key]:
                if not isinstance(t, dict) or not isinstance(t.get("text"), str):
                    raise ValueError(f"{where}: {name} {key} holds a turn without 'text'")
                dia_id = str(t.get("dia_id", ""))
                if dia_id in index:  # a repeated id names the first turn that had it
                    continue
                index[dia_id] = len(turns)
                turns.append(Turn(dia_id, f"{t.get('speaker', '?')}: {t['text']}"))
        questions, skipped = [], 0
        for qa in conv["qa"]:
            if not isinstance(qa, dict) or not isinstance(qa.get("question"), str):
                raise ValueError(f"{where}: {name} has a QA entry without a 'question' string")
            evidence = frozenset(e for e in normalise_evidence(qa.get("evidence")) if e in index)
            if not evidence:
                skipped += 1
                continue
            last = max(index[e] for e in evidence)
            questions.append(Question(qa["question"], evidence, last))
        out.append(Dialogue(name, tuple(turns), tuple(questions), skipped))
    return out


def read_json(path: str | Path) -> Any:
    """The JSON value of a file (a LoCoMo file); ``ValueError`` naming the file if it is not
    JSON."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON ({err})") from None


def load_dialogues(path: str | Path) -> list[Dialogue]:
    """:func:`dialogues_from` a LoCoMo JSON file."""
    return dialogues_from(read_json(path), str(path))


def distinct_texts(dialogues: Sequence[Dialogue]) -> list[str]:
    """Every turn and question text, each once (what must be embedded)."""
    seen: dict[str, None] = {}
    for d in dialogues:
        for turn in d.turns:
            seen.setdefault(turn.text)
        for q in d.questions:
            seen.setdefault(q.text)
    return list(seen)


def recall(question: Question, hits: Sequence[Any]) -> float:
    """Share of the question's evidence turns among ``hits`` (each with a ``dia_id``)."""
    found = {h.metadata["dia_id"] for h in hits}
    return len(question.evidence & found) / len(question.evidence)


def schedule(dialogue: Dialogue, seed: int) -> dict[int, list[Question]]:
    """``interleaved``: the turn index after which each question is asked (after its last
    evidence turn, at the latest after the last turn), drawn with ``random.Random(seed)``."""
    rng = random.Random(seed)
    end = len(dialogue.turns) - 1
    asked: dict[int, list[Question]] = {}
    for q in dialogue.questions:
        asked.setdefault(rng.randint(q.last, end), []).append(q)
    return asked


def prior_kind(policy: str, embedder_kind: str) -> str | None:
    """Which kind of salience prior ``policy`` (a spec) reads: ``"minilm"``, ``"static"`` or
    ``"text"`` when it names a shipped one, ``embedder_kind`` (the one the benchmark's embedder
    picks) when it names none, ``None`` for a policy without a prior or with a prior file of
    its own (used as given).

    >>> prior_kind("solar-dialogue", "minilm")
    'minilm'
    >>> prior_kind("solar-dialogue[prior=dialogue-text]", "minilm")
    'text'
    >>> prior_kind("fifo", "minilm"), prior_kind(ORACLE, "minilm")
    (None, None)
    """
    if policy == ORACLE:
        return None
    name, params = parse_policy(policy)
    if PRESETS[name].eviction is not SalienceEviction:
        return None
    named = params.get("prior")
    if named is None:
        return embedder_kind
    return {"dialogue-minilm": "minilm", "dialogue-static": "static", "dialogue-text": "text"}.get(
        str(named)
    )


def oracle_turns(dialogue: Dialogue, capacity: int | None) -> list[int]:
    """Indices of the ``capacity`` turns cited by the most questions (earlier first on ties)."""
    cited = Counter(e for q in dialogue.questions for e in q.evidence)
    ranked = sorted(range(len(dialogue.turns)), key=lambda i: -cited[dialogue.turns[i].dia_id])
    chosen = [i for i in ranked if cited[dialogue.turns[i].dia_id]][:capacity]
    return sorted(chosen)


def parse_mode(mode: str) -> tuple[str, str]:
    """``(questions, ratings)`` of a mode: ``"end"``, ``"interleaved"``, or either with
    ``+RATINGS``.

    >>> parse_mode("end"), parse_mode("interleaved"), parse_mode("end+disliked")
    (('end', 'none'), ('interleaved', 'evidence'), ('end', 'disliked'))
    >>> parse_mode("end+evidence")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: mode must be end or interleaved, ... got 'end+evidence'
    """
    questions, _, ratings = mode.partition("+")
    ratings = ratings or ("evidence" if questions == "interleaved" else "none")
    if (
        questions not in MODES
        or ratings not in RATINGS
        or (questions, ratings) == ("end", "evidence")
    ):
        raise ValueError(
            "mode must be end or interleaved, optionally +none, +evidence, +disliked, +random "
            f"or +overlap (end asks nothing to rate by evidence), got {mode!r}"
        )
    return questions, ratings


def overlap(reply: str, hits: Sequence[Any]) -> float:
    """Share of ``reply``'s distinct words (case-folded) found in the texts of ``hits``.

    >>> from types import SimpleNamespace as H
    >>> overlap("I like cats and dogs", [H(text="Cats are nice"), H(text="dogs bark")])
    0.4
    """
    words = set(_WORD.findall(reply.casefold()))
    if not words:
        return 0.0
    seen = set(_WORD.findall(" ".join(h.text for h in hits).casefold()))
    return len(words & seen) / len(words)


def _rate(
    memory: SolarMemory, hits: Any, ratings: str, rng: random.Random, score: float | None
) -> None:
    """Rate ``hits`` as ``ratings`` says; ``score``: the evidence or overlap score, if any."""
    if ratings == "disliked":
        memory.feedback(like=False, retrieval=hits)
    elif ratings == "random":
        memory.feedback(score=rng.random(), retrieval=hits)
    elif ratings != "none" and score is not None:
        memory.feedback(score=score, retrieval=hits)


def run_dialogue(
    dialogue: Dialogue,
    vector: Vectors,
    policy: str,
    capacity: int,
    seed: int,
    mode: str,
    prior: SaliencePrior | None = None,
    retrieval: str = DEFAULT_RETRIEVAL,
) -> dict[str, float]:
    """The protocol on one conversation with one seed: ``score`` (mean evidence recall@5),
    ``store_rate``, ``mean_size`` (items held, averaged over the turns) and ``us_per_turn``.
    ``prior``: the salience prior of a policy that reads one (in place of the one its spec
    names: the caller's is out of sample)."""
    questions, ratings = parse_mode(mode)
    dim = len(vector(dialogue.turns[0].text))
    if policy == ORACLE:
        return _oracle(dialogue, vector, capacity, dim, seed, mode, retrieval)
    extra: dict[str, Any] = {} if prior is None else {"prior": prior}  # wins over the spec's
    extra["retrieval"] = retrieval
    memory = memory_for(policy, capacity=capacity, dim=dim, k=TOP, seed=seed, trace_size=1, **extra)
    asked = schedule(dialogue, seed) if questions == "interleaved" else {}
    rng = random.Random(f"ratings/{seed}")  # its own stream: the schedule stays the same
    scores: list[float] = []
    sizes: list[int] = []
    times: list[int] = []
    clock = time.perf_counter_ns
    for i, turn in enumerate(dialogue.turns):
        v = vector(turn.text)
        start = clock()
        recalled = memory.retrieve(turn.text, embedding=v)  # the incoming turn recalls
        memory.add(turn.text, embedding=v, metadata={"dia_id": turn.dia_id})
        times.append(clock() - start)
        sizes.append(len(memory))
        if ratings in ("disliked", "random", "overlap"):  # the answer to this turn is rated
            score = None
            if ratings == "overlap":  # the reply: the next turn
                reply = dialogue.turns[i + 1].text if i + 1 < len(dialogue.turns) else ""
                score = overlap(reply, recalled)
            _rate(memory, recalled, ratings, rng, score)
        for q in asked.get(i, ()):
            hits = memory.retrieve(q.text, embedding=vector(q.text))
            s = recall(q, hits)
            _rate(memory, hits, ratings, rng, s)
            scores.append(s)
    if questions == "end":
        scores = _ask_at_end(memory, dialogue, vector)
    stats = memory.stats()
    return {
        "score": float(np.mean(scores)),
        "store_rate": stats["store_rate"],
        "mean_size": float(np.mean(sizes)),
        "us_per_turn": float(np.median(times)) / 1000.0,
    }


def _ask_at_end(memory: SolarMemory, dialogue: Dialogue, vector: Vectors) -> list[float]:
    return [
        recall(q, memory.retrieve(q.text, embedding=vector(q.text), record=False))
        for q in dialogue.questions
    ]


def _oracle(
    dialogue: Dialogue,
    vector: Vectors,
    capacity: int,
    dim: int,
    seed: int,
    mode: str,
    retrieval: str = DEFAULT_RETRIEVAL,
) -> dict[str, float]:
    """The oracle's K turns, stored from the start (an upper bound, not a policy: it knows the
    questions), each question asked once as a look: the same figure in both modes."""
    memory = SolarMemory(
        "unlimited", None, dim=dim, k=TOP, seed=seed, trace_size=1, retrieval=retrieval
    )
    for i in oracle_turns(dialogue, capacity):
        turn = dialogue.turns[i]
        memory.add(turn.text, embedding=vector(turn.text), metadata={"dia_id": turn.dia_id})
    scores = _ask_at_end(memory, dialogue, vector)
    size = float(len(memory))
    stored = size / len(dialogue.turns)
    return {"score": float(np.mean(scores)), "store_rate": stored, "mean_size": size}


def records(
    dialogues: Sequence[Dialogue],
    vector: Vectors,
    policies: Sequence[str],
    ks: Sequence[int],
    seeds: Sequence[int],
    modes: Sequence[str] = MODES,
    progress: Callable[[], None] = lambda: None,
    priors: Callable[[str, str], SaliencePrior | None] | None = None,
    retrievals: Sequence[str] = (DEFAULT_RETRIEVAL,),
) -> list[dict[str, Any]]:
    """One record per (mode, K, policy, conversation, seed), the oracle after the policies;
    the unit is (conversation, seed). A policy that ignores K runs once per unit. The setting
    is the mode, with the ranking after a slash unless it is the default (``end/lexical``).
    ``priors``:
    ``(policy, sample_id) ->`` the salience prior that policy gets on that conversation
    (``None``: its own), out of sample (``solar_bench.salience_training.priors_for``)."""
    out: list[dict[str, Any]] = []
    memo: dict[tuple[Any, ...], dict[str, float]] = {}
    for retrieval, mode in [(r, m) for r in retrievals for m in modes]:
        setting = mode if retrieval == DEFAULT_RETRIEVAL else f"{mode}/{retrieval}"
        for capacity in ks:
            for policy in [*policies, ORACLE]:
                for dialogue in dialogues:
                    if not dialogue.questions or not dialogue.turns:
                        continue
                    for seed in seeds:
                        # the oracle's set does not depend on the seed or (its looks) the mode
                        cap = capacity if policy == ORACLE else run_capacity(policy, capacity)
                        key = (
                            (ORACLE, retrieval, cap, dialogue.sample_id)
                            if policy == ORACLE
                            else (retrieval, mode, policy, cap, dialogue.sample_id, seed)
                        )
                        if key not in memo:
                            prior = None if priors is None else priors(policy, dialogue.sample_id)
                            memo[key] = run_dialogue(
                                dialogue, vector, policy, capacity, seed, mode, prior, retrieval
                            )
                        progress()
                        out.append(
                            record(
                                "dialogue",
                                setting,
                                policy,
                                capacity,
                                seed,
                                dialogue.sample_id,
                                memo[key],
                            )
                        )
    return out
