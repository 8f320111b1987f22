"""Training the salience prior of dialogue turns, and the priors a benchmark may score with.

The shipped priors (``solar_core/priors``) are trained on every conversation of the LoCoMo dev
file by ``benchmarks/train_salience.py``. A benchmark scoring a conversation the shipped prior
was trained on must not use it: :func:`priors_for` trains a prior without that conversation
(leave-one-conversation-out, on the other training conversations only, never on anything
else in the file), so every figure is out of sample.

The features are made by replaying the conversation through the same
:class:`~solar_core.policies.salience.TurnContext` the policy uses, so training and use read the
same numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from solar_core.policies.salience import (
    MINILM,
    STATIC,
    SaliencePrior,
    TurnContext,
    load_prior,
    text_features,
)

from .dialogue import Dialogue

F64 = npt.NDArray[np.float64]
Vectors = Callable[[str], npt.NDArray[np.float32]]
KINDS = ("minilm", "static", "text")
#: the shipped prior of each kind
SHIPPED = {"minilm": "dialogue-minilm", "static": "dialogue-static", "text": "dialogue-text"}
#: the model whose vectors a kind's embedding weights read (the text kind reads none)
MODELS = {"minilm": MINILM, "static": STATIC}
PENALTY = 1.0  # C: the default of a logistic regression, not tuned


def default_kind(embedder: str) -> str:
    """The kind of prior a benchmark run with ``embedder`` scores ``solar-dialogue`` with when
    the policy names none: MiniLM's with ``minilm`` (the published tables, made before the
    static prior became every memory's default; ``solar-dialogue[prior=dialogue-static]`` gives
    MiniLM today's), the static one with any other.

    >>> default_kind("minilm"), default_kind("wordllama")
    ('minilm', 'static')
    """
    return "minilm" if embedder == "minilm" else "static"


def fit_logistic(
    x: F64, y: F64, c: float = PENALTY, steps: int = 50, weights: F64 | None = None
) -> F64:
    """Weights (intercept last) minimising ``c * sum(log loss) + |w|^2 / 2``, by Newton steps;
    ``weights``: each row's weight in the sum (none: all 1).

    >>> x = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array([0.0, 0.0, 1.0, 1.0])
    >>> w = fit_logistic(x, y, c=100.0)
    >>> bool(w[0] > 0) and bool(np.all((x @ w[:1] + w[1] > 0) == (y == 1)))
    True
    """
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    penalty = np.ones(a.shape[1])
    penalty[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(a @ w)))
        if weights is None:  # (not a vector of ones: the shipped priors' exact arithmetic)
            grad = c * a.T @ (p - y) + penalty * w
            hess = c * (a.T * (p * (1.0 - p))) @ a + np.diag(penalty)
        else:
            grad = c * a.T @ (weights * (p - y)) + penalty * w
            hess = c * (a.T * (weights * p * (1.0 - p))) @ a + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return w


def features(dialogue: Dialogue, vector: Vectors, kind: str) -> F64:
    """One row per turn, in the order a prior of ``kind`` weighs them: the text features, then
    (``minilm``, ``static``: ``vector`` gives that model's vectors) the two context features
    and the embedding."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    rows = []
    dim = len(vector(dialogue.turns[0].text))
    context = TurnContext(dim=dim)
    for turn in dialogue.turns:
        v = vector(turn.text)
        row = text_features(turn.text, context.previous)
        if kind in MODELS:
            row += context.vector_features(v)
            row += v.astype(np.float64).tolist()
        rows.append(row)
        context.push(turn.text, v if kind in MODELS else None)
    return np.array(rows, dtype=np.float64)


def cited(dialogue: Dialogue) -> F64:
    """1.0 for each turn some question cites as evidence."""
    evidence = {e for q in dialogue.questions for e in q.evidence}
    return np.array([t.dia_id in evidence for t in dialogue.turns], dtype=np.float64)


def train(
    dialogues: Sequence[Dialogue], vector: Vectors, kind: str, name: str | None = None
) -> SaliencePrior:
    """A prior of ``kind`` fitted on ``dialogues`` (those with questions)."""
    used = [d for d in dialogues if d.questions and d.turns]
    if not used:
        raise ValueError("a prior needs at least one conversation with questions")
    x = np.vstack([features(d, vector, kind) for d in used])
    y = np.concatenate([cited(d) for d in used])
    w = fit_logistic(x, y)
    n = 10  # text features
    emb = None
    if kind in MODELS:
        emb = w[n + 2 : -1].astype(np.float32)
    return SaliencePrior(
        name=name or SHIPPED[kind],
        text_weights=tuple(float(v) for v in w[:n]),
        bias=float(w[-1]),
        embedder=MODELS.get(kind),
        dim=len(emb) if emb is not None else None,
        vector_weights=tuple(float(v) for v in w[n : n + 2]) if kind in MODELS else (),
        embedding_weights=emb,
        trained_on=tuple(d.sample_id for d in used),
        penalty=PENALTY,
    )


def priors_for(
    dialogues: Sequence[Dialogue], vector: Vectors, kind: str
) -> dict[str, SaliencePrior]:
    """The prior each conversation may be scored with: the shipped one for a conversation it
    was not trained on; otherwise one trained on the shipped prior's other conversations
    found in ``dialogues`` (leave one out). Raises ``ValueError`` when a conversation has no
    other training conversation to learn from."""
    shipped = load_prior(SHIPPED[kind])
    training = [d for d in dialogues if d.sample_id in shipped.trained_on and d.questions]
    out: dict[str, SaliencePrior] = {}
    for d in dialogues:
        if d.sample_id not in shipped.trained_on:
            out[d.sample_id] = shipped
            continue
        others = [t for t in training if t.sample_id != d.sample_id]
        if not others:
            raise ValueError(
                f"{d.sample_id} is one of the conversations the shipped prior was trained on, "
                "and no other one is in the file: score it with the whole training file, so "
                "that a prior can be trained without it"
            )
        out[d.sample_id] = train(others, vector, kind, f"{SHIPPED[kind]} without {d.sample_id}")
    return out
