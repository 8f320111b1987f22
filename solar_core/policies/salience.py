"""A salience prior for dialogue turns: a logistic model of "some later question cites this
turn" (its score: the log-odds) over :data:`TEXT_FEATURES`, :data:`VECTOR_FEATURES` and the
embedding, the last two in the space it was trained in (``benchmarks/train_salience.py``).

>>> prior = load_prior("dialogue-text")
>>> context = TurnContext(dim=4)
>>> plain = prior.score("Ann: Wow, nice!", None, context)
>>> context.push("Ann: Wow, nice!", None)
>>> fact = prior.score("Bo: I adopted a beagle named Max in March 2022.", None, context)
>>> bool(fact > plain)
True
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from operator import mul
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

#: the names of the text features, in the order of a prior's ``text_weights``
TEXT_FEATURES = tuple(
    "words/30|log(1+words)|has a digit|is a question|capitalised words/10|exclamations/3|"
    "answers a question|time words/3|first-person rate|greetings/2".split("|")
)
#: the names of the features read from the turn's vector and the recent turns' vectors
VECTOR_FEATURES = ("novelty", "cosine to the previous turn")
#: how many recent turns the novelty feature compares with
RECENT = 20
#: the shipped priors (``solar_core/priors/<name>.json``)
PRIORS = ("dialogue-minilm", "dialogue-static", "dialogue-text")
#: the embedder the MiniLM prior was trained for
MINILM = "all-MiniLM-L6-v2"
#: the built-in static embedder's model, as priors name it
STATIC = "minilm-static-256"
FORMAT = 1

#: the words each counted word feature looks for (after lower-casing); one pass over the words
_TIME_WORDS = frozenset(
    "yesterday today tomorrow tonight last ago weekend week month year recently just january "
    "february march april may june july august september october november december monday "
    "tuesday wednesday thursday friday saturday sunday".split()
)
_FIRST_PERSON = frozenset("i my me we our i'm i've".split())
_GREETINGS = frozenset("hey hi hello bye goodbye thanks thank".split())
#: two-word greetings ("see you"), rare enough to look for only when a first word is there
_GREETING_PAIRS = frozenset({("take", "care"), ("see", "you"), ("talk", "soon"), ("catch", "up")})
_PAIR_STARTS = frozenset(first for first, _ in _GREETING_PAIRS)
_KIND = {
    **{w: 0 for w in _TIME_WORDS},
    **{w: 1 for w in _FIRST_PERSON},
    **{w: 2 for w in _GREETINGS},
}
_WORD = re.compile(r"[a-z']+")  # of the lower-cased text
_DIGIT = re.compile(r"\d")
_CAPITALISED = re.compile(r"\s[A-Z]")  # a word after the first that starts with a capital
_SPEAKER = re.compile(r"^[^:\n]{1,40}: ")  # "Speaker: " before the words


def body(text: str) -> str:
    """A turn's words, without a leading ``"Speaker: "``."""
    match = _SPEAKER.match(text)
    return text[match.end() :] if match else text


def text_features(text: str, previous: str | None) -> list[float]:
    """:data:`TEXT_FEATURES` of ``text``, said after ``previous`` (``None``: the first turn).

    >>> [round(v, 3) for v in text_features("Ann: I ran 5 km with Bo today!", "Bo: And you?")]
    [0.233, 2.079, 1.0, 0.0, 0.1, 0.333, 1.0, 0.333, 0.143, 0.0]
    """
    words = body(text)
    n = len(words.split())
    # membership tests mapped over the words: a Python loop cost more than the rest of a step
    tokens = _WORD.findall(words.lower())
    kinds = list(map(_KIND.get, tokens))  # 0 time word, 1 first person, 2 greeting, None
    greetings = kinds.count(2)
    if not _PAIR_STARTS.isdisjoint(tokens):
        greetings += sum(map(_GREETING_PAIRS.__contains__, zip(tokens, tokens[1:], strict=False)))
    return [
        n / 30,
        math.log1p(n),
        1.0 if _DIGIT.search(words) else 0.0,
        1.0 if words.rstrip().endswith("?") else 0.0,
        len(_CAPITALISED.findall(words)) / 10,
        words.count("!") / 3,
        1.0 if previous is not None and previous.rstrip().endswith("?") else 0.0,
        kinds.count(0) / 3,
        kinds.count(1) / max(n, 1),
        greetings / 2,
    ]


@dataclass
class TurnContext:
    """The previous text and the last :data:`RECENT` unit vectors; :meth:`push` each offered
    turn after scoring it."""

    dim: int
    previous: str | None = None
    vectors: F32 = field(init=False)
    count: int = 0  # turns pushed with a vector, up to RECENT
    head: int = 0  # where the next vector goes
    last: int = -1  # row of the previous turn's vector (-1: it had none)

    def __post_init__(self) -> None:
        self.vectors = np.zeros((RECENT, self.dim), dtype=np.float32)

    def push(self, text: str, vector: F32 | None) -> None:
        self.previous = text
        if vector is None:
            self.last = -1
            return
        self.vectors[self.head] = vector
        self.last = self.head
        self.head = (self.head + 1) % RECENT
        self.count = min(self.count + 1, RECENT)

    def vector_features(self, vector: F32) -> list[float]:
        """:data:`VECTOR_FEATURES` of the unit ``vector`` against the recent turns."""
        if self.count == 0:
            return [1.0, 0.0]
        sims = (self.vectors[: self.count] @ vector).tolist()  # 20 floats: faster in Python
        best = max(max(sims), 0.0)
        previous = sims[self.last] if self.last >= 0 else 0.0
        return [1.0 - best, previous]


@dataclass(frozen=True)
class SaliencePrior:
    """Logistic weights over a turn's features; ``embedder`` and ``dim`` name the vectors the
    vector weights were trained on (``None``: a text-only prior)."""

    name: str
    text_weights: tuple[float, ...]
    bias: float
    embedder: str | None = None
    dim: int | None = None
    vector_weights: tuple[float, ...] = ()
    embedding_weights: F32 | None = None
    trained_on: tuple[str, ...] = ()
    penalty: float = 1.0  # C of the fit: C * sum(log loss) + |w|^2 / 2

    def __post_init__(self) -> None:
        if len(self.text_weights) != len(TEXT_FEATURES):
            raise ValueError(
                f"prior {self.name!r}: {len(self.text_weights)} text weights, "
                f"expected {len(TEXT_FEATURES)}"
            )
        if self.embedder is None:
            if self.vector_weights or self.embedding_weights is not None:
                raise ValueError(f"prior {self.name!r}: vector weights need an embedder and dim")
        elif self.dim is None or self.embedding_weights is None:
            raise ValueError(f"prior {self.name!r}: an embedder prior needs dim and weights")
        elif self.embedding_weights.shape != (self.dim,) or len(self.vector_weights) != len(
            VECTOR_FEATURES
        ):
            raise ValueError(f"prior {self.name!r}: weights do not match dim={self.dim}")
        values = [*self.text_weights, *self.vector_weights, self.bias]
        if not all(math.isfinite(v) for v in values) or (
            self.embedding_weights is not None and not np.isfinite(self.embedding_weights).all()
        ):
            raise ValueError(f"prior {self.name!r}: non-finite weights")

    @property
    def reads_vectors(self) -> bool:
        return self.embedding_weights is not None

    @property
    def own_vectors(self) -> bool:
        """Whether it reads the built-in static embedder's vectors, made from the text itself."""
        return self.embedder == STATIC

    def score(self, text: str, vector: F32 | None, context: TurnContext) -> float:
        """The log-odds that a later question cites ``text`` (unit ``vector``) after
        ``context``."""
        features = text_features(text, context.previous)
        logit: float = self.bias + sum(map(mul, self.text_weights, features))
        if self.embedding_weights is not None and vector is not None:
            novelty, previous = context.vector_features(vector)
            novelty_w, previous_w = self.vector_weights
            logit += novelty_w * novelty + previous_w * previous
            logit += float(self.embedding_weights @ vector)
        return logit

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "name": self.name,
            "embedder": self.embedder,
            "dim": self.dim,
            "text_features": list(TEXT_FEATURES),
            "text_weights": list(self.text_weights),
            "vector_features": list(VECTOR_FEATURES) if self.reads_vectors else [],
            "vector_weights": list(self.vector_weights),
            "embedding_weights": (
                None if self.embedding_weights is None else self.embedding_weights.tolist()
            ),
            "bias": self.bias,
            "penalty": self.penalty,
            "trained_on": list(self.trained_on),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "prior") -> SaliencePrior:
        """A prior from :meth:`to_json`'s document; ``ValueError`` naming ``where`` if not."""
        try:
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT}")
            if list(data["text_features"]) != list(TEXT_FEATURES):
                raise ValueError("its text features are not this version's")
            emb = data["embedding_weights"]
            return cls(
                name=str(data["name"]),
                text_weights=tuple(float(v) for v in data["text_weights"]),
                bias=float(data["bias"]),
                embedder=None if data["embedder"] is None else str(data["embedder"]),
                dim=None if data["dim"] is None else int(data["dim"]),
                vector_weights=tuple(float(v) for v in data["vector_weights"]),
                embedding_weights=None if emb is None else np.asarray(emb, dtype=np.float32),
                trained_on=tuple(str(s) for s in data["trained_on"]),
                penalty=float(data.get("penalty", 1.0)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ValueError(f"{where}: not a salience prior ({err})") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")


def load_prior(name_or_path: str | Path) -> SaliencePrior:
    """A shipped prior by name (:data:`PRIORS`) or a prior file written by
    :meth:`SaliencePrior.save`.

    >>> load_prior("dialogue-minilm").dim, load_prior("dialogue-text").reads_vectors
    (384, False)
    >>> load_prior("dialogue-tiny")
    Traceback (most recent call last):
    ...
    ValueError: unknown salience prior 'dialogue-tiny': give one of dialogue-minilm, ...
    """
    text = str(name_or_path)
    if text in PRIORS:
        return _shipped(text)
    path = Path(text)
    if not path.is_file():
        raise ValueError(
            f"unknown salience prior {text!r}: give one of {', '.join(PRIORS)} or a prior "
            "file's path"
        )
    try:
        data = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: cannot read the prior ({err})") from None
    return _parse(data, str(path))


@cache
def _shipped(name: str) -> SaliencePrior:
    data = (resources.files("solar_core") / "priors" / f"{name}.json").read_text("utf-8")
    return _parse(data, name)


def _parse(data: str, where: str) -> SaliencePrior:
    try:
        document = json.loads(data)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: not JSON ({err})") from None
    if not isinstance(document, dict):
        raise ValueError(f"{where}: not a salience prior (not a JSON object)")
    return SaliencePrior.from_json(document, where)


def model_name_of(model: object) -> str | None:
    """A framework embedding model's ``model_name``, else ``model``, if it has one."""
    for attribute in ("model_name", "model"):
        name = getattr(model, attribute, None)
        if isinstance(name, str) and name:
            return name
    return None


def prior_vector(text: str) -> F32:
    """``text``'s vector by the built-in static embedder (:attr:`SaliencePrior.own_vectors`)."""
    from solar_core.embedders.static_embedder import StaticEmbedder

    global _STATIC
    if _STATIC is None:
        _STATIC = StaticEmbedder()
    vector: F32 = _STATIC.embed([text])[0]
    return vector


_STATIC: Any = None


def prior_for(embedder: object, dim: int) -> SaliencePrior:
    """The prior a memory uses by default, whatever its embedder: ``dialogue-static``."""
    return load_prior("dialogue-static")


def check_prior(prior: SaliencePrior, dim: int) -> None:
    """Refuse a prior trained on vectors of another dimension than the memory's."""
    if prior.dim is not None and prior.dim != dim and not prior.own_vectors:
        raise ValueError(
            f"salience prior {prior.name!r} reads {prior.dim}-d {prior.embedder} vectors, but "
            f"this memory's are {dim}-d: use prior='dialogue-text' (any embedder) or a prior "
            "trained for this embedder"
        )
