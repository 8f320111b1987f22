"""The LoCoMo offline protocol: experience memory measured on retrieval, with no LLM.

No LLM runs offline, so a step's quality is the *soft hit*: the share of the question's evidence
turns covered by the evidence of the retrieved experiences. Per conversation and seed the QA are
shuffled with ``random.Random(seed)``; the first 80 % (floor) warm the memory up, the rest are
scored. One QA is one step: retrieve top-3 for the question, score it, give feedback (in the
``feedback`` setting: ``like = s >= 0.5`` and ``score = s``), then offer the experience
``"Q: <question>\\nCorrect: <answer>"`` with its evidence ids as metadata.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

from .experiments import run_capacity
from .policy_spec import memory_for
from .report import record
from .runner import LAMBDA

WARMUP_SHARE = 0.8
SETTINGS = ("feedback", "no feedback")
DEFAULT_K = (10, 20, 50, 100)
_EVIDENCE = re.compile(r"D\d+:\d+")
_ARTICLES = {"a", "an", "the"}
_PUNCT = str.maketrans(string.punctuation, " " * len(string.punctuation))


@dataclass(frozen=True)
class QA:
    """One question with its gold answer and normalised evidence ids (``"D<session>:<turn>"``)."""

    question: str
    answer: str
    evidence: frozenset[str]
    category: int

    @property
    def experience(self) -> str:
        return f"Q: {self.question}\nCorrect: {self.answer}"


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    qa: tuple[QA, ...]
    skipped: int  # QA dropped for having no usable evidence


def normalise_evidence(raw: object) -> frozenset[str]:
    """Evidence ids from LoCoMo's ``evidence`` list, whose strings may hold several ids or junk.

    >>> sorted(normalise_evidence(["D8:6; D9:17", "D", "D:11:26", "D1:3 D1:4"]))
    ['D1:3', 'D1:4', 'D8:6', 'D9:17']
    """
    if not isinstance(raw, list):
        return frozenset()
    tokens = (t for s in raw if isinstance(s, str) for t in re.split(r"[;\s]+", s))
    return frozenset(t for t in tokens if _EVIDENCE.fullmatch(t))


def answer_tokens(text: str) -> set[str]:
    """SQuAD-style normalisation: lower case, punctuation to spaces, articles dropped.

    >>> sorted(answer_tokens("The sunset, painted in 2022!"))
    ['2022', 'in', 'painted', 'sunset']
    """
    return {t for t in text.lower().translate(_PUNCT).split() if t not in _ARTICLES}


def load_locomo(path: str | Path) -> list[Conversation]:
    """Conversations and their QA from a LoCoMo-format JSON file.

    Category-5 (adversarial) items carry ``adversarial_answer`` instead of ``answer``; evidence is
    normalised by :func:`normalise_evidence`; QA left without evidence are skipped (counted).
    Raises ``ValueError`` naming the file and the offending entry when the schema is not LoCoMo's.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not JSON ({err})") from None
    if not isinstance(data, list) or not data:
        raise ValueError(f"{path}: expected a non-empty list of LoCoMo conversations")
    out = []
    for n, conv in enumerate(data):
        if not isinstance(conv, dict) or not isinstance(conv.get("qa"), list):
            raise ValueError(f"{path}: conversation #{n} has no 'qa' list")
        name = str(conv.get("sample_id", f"conv#{n}"))
        items, skipped = [], 0
        for i, qa in enumerate(conv["qa"]):
            if not isinstance(qa, dict) or not isinstance(qa.get("question"), str):
                raise ValueError(f"{path}: {name} qa #{i} has no 'question' string")
            answer = qa.get("answer", qa.get("adversarial_answer"))
            evidence = normalise_evidence(qa.get("evidence"))
            if answer is None or not evidence:
                skipped += 1
                continue
            items.append(QA(qa["question"], str(answer), evidence, int(qa.get("category", 0))))
        out.append(Conversation(name, tuple(items), skipped))
    return out


def distinct_texts(conversations: Sequence[Conversation]) -> list[str]:
    """Every question and experience text, each once (what must be embedded)."""
    seen: dict[str, None] = {}
    for conv in conversations:
        for qa in conv.qa:
            seen.setdefault(qa.question)
            seen.setdefault(qa.experience)
    return list(seen)


Vectors = Callable[[str], npt.NDArray[np.float32]]


def run_conversation(
    conv: Conversation,
    vector: Vectors,
    policy: str,
    capacity: int,
    seed: int,
    *,
    feedback: bool,
    k: int = 3,
    retrieval: str = DEFAULT_RETRIEVAL,
) -> dict[str, float]:
    """The protocol on one conversation with one seed; metrics over its scored steps, except
    ``cost`` (paper Eq. 1 over the whole run: ``sum(1 - s) + LAMBDA * N``), ``store_rate`` and
    ``modifications`` ``N``, which count every step."""
    order = list(conv.qa)
    random.Random(seed).shuffle(order)
    warmup = int(len(order) * WARMUP_SHARE)
    dim = len(vector(order[0].question))
    memory = memory_for(
        policy, capacity=capacity, dim=dim, k=k, seed=seed, trace_size=1, retrieval=retrieval
    )
    soft: list[float] = []
    recall: list[float] = []
    sizes: list[int] = []
    cost = 0.0
    for t, qa in enumerate(order):
        # the question's text ranks too (the library's default, hybrid); its floor does not
        # apply: the protocol scores the top k, whatever they score
        hits = memory.retrieve(qa.question, embedding=vector(qa.question), min_score=None)
        covered: set[str] = set()
        words: set[str] = set()
        for h in hits:
            covered.update(h.metadata["evidence"])
            words |= answer_tokens(h.text)
        s = len(qa.evidence & covered) / len(qa.evidence)
        cost += 1.0 - s
        if t >= warmup:
            soft.append(s)
            sizes.append(len(memory))
            gold = answer_tokens(qa.answer)
            recall.append(len(gold & words) / len(gold) if gold else 0.0)
        if feedback:
            memory.feedback(like=s >= 0.5, score=s, retrieval=hits)
        memory.add(
            qa.experience,
            embedding=vector(qa.experience),
            metadata={"evidence": sorted(qa.evidence)},
        )
    stats = memory.stats()
    arr = np.asarray(soft)
    half = len(arr) // 2
    return {
        "score": float(arr.mean()),
        "hit_rate": float((arr > 0).mean()),
        "recall": float(np.mean(recall)),
        "first_half": float(arr[:half].mean()) if half else float(arr.mean()),
        "second_half": float(arr[half:].mean()),
        "store_rate": stats["store_rate"],
        "modifications": float(stats["admitted"]),
        "cost": cost + LAMBDA * stats["admitted"],
        "mean_size": float(np.mean(sizes)),
    }


def records(
    conversations: Sequence[Conversation],
    vector: Vectors,
    policies: Sequence[str],
    ks: Sequence[int],
    seeds: Sequence[int],
    settings: Sequence[str] = SETTINGS,
    progress: Callable[[], None] = lambda: None,
    retrievals: Sequence[str] = (DEFAULT_RETRIEVAL,),
) -> list[dict[str, Any]]:
    """One record per (setting, K, policy, conversation, seed); the unit is (conversation, seed).

    A policy that ignores capacity (``unlimited``) runs once per unit and is reported at every K.
    The setting is ``feedback`` or ``no-feedback``, with the ranking after a slash unless it is
    the default (``feedback/vector``).
    """
    out: list[dict[str, Any]] = []
    memo: dict[tuple[Any, ...], dict[str, float]] = {}
    for retrieval, setting in [(r, s) for r in retrievals for s in settings]:
        label = setting if retrieval == DEFAULT_RETRIEVAL else f"{setting}/{retrieval}"
        for capacity in ks:
            for policy in policies:
                for conv in conversations:
                    if len(conv.qa) < 2:
                        continue
                    for seed in seeds:
                        cap = run_capacity(policy, capacity)
                        key = (retrieval, setting, policy, cap, conv.sample_id, seed)
                        if key not in memo:
                            memo[key] = run_conversation(
                                conv,
                                vector,
                                policy,
                                capacity,
                                seed,
                                feedback=setting == "feedback",
                                retrieval=retrieval,
                            )
                        progress()
                        out.append(
                            record(
                                "locomo", label, policy, capacity, seed, conv.sample_id, memo[key]
                            )
                        )
    return out
