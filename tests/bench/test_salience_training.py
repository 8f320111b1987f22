"""Training the salience prior, and scoring only out of sample (docs/benchmarks/dialogue.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_bench import dialogue as bench
from solar_bench import salience_training as training
from solar_bench.dialogue import dialogues_from
from solar_core.policies.salience import load_prior
from tests.support.data import data_path
from tests.support.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


FACTS = ["I adopted a beagle named Max in March 2022.", "My sister moved to Lisbon last week."]
CHATTER = ["Wow, cool!", "Haha yes.", "Nice!", "See you!"]


def conversation(name: str, seed: int) -> dict[str, Any]:
    """Twelve turns; the facts among them are the evidence of its questions."""
    rng = np.random.default_rng(seed)
    turns, qa = [], []
    for i in range(12):
        fact = i % 4 == 1
        pool = FACTS if fact else CHATTER
        text = pool[int(rng.integers(len(pool)))] + f" ({name} {i})"
        turns.append({"speaker": "Ann" if i % 2 else "Bo", "dia_id": f"D1:{i + 1}", "text": text})
        if fact:
            qa.append({"question": f"what about {i}?", "answer": "x", "evidence": [f"D1:{i + 1}"]})
    return {"sample_id": name, "conversation": {"session_1": turns}, "qa": qa}


DIALOGUES = dialogues_from([conversation(f"c{i}", i) for i in range(4)])


def vector_of(dim: int = 16) -> bench.Vectors:
    cache: dict[str, np.ndarray] = {}

    def vector(text: str) -> np.ndarray:
        if text not in cache:
            v = np.random.default_rng(abs(hash(text)) % 2**32).standard_normal(dim)
            cache[text] = (v / np.linalg.norm(v)).astype(np.float32)
        return cache[text]

    return vector


def test_a_trained_text_prior_scores_the_cited_turns_higher() -> None:
    prior = training.train(DIALOGUES, vector_of(), "text", "t")
    assert prior.trained_on == ("c0", "c1", "c2", "c3") and not prior.reads_vectors
    x = training.features(DIALOGUES[0], vector_of(), "text")
    score = x @ np.array(prior.text_weights) + prior.bias
    cited = training.cited(DIALOGUES[0]).astype(bool)
    assert score[cited].min() > score[~cited].max()


def test_the_features_are_what_the_policy_reads() -> None:
    """Training replays the conversation through the policy's own context."""
    vector = vector_of(16)
    prior = training.train(DIALOGUES, vector, "minilm", "m")  # any 16-d space here
    assert prior.dim == 16 and prior.reads_vectors
    from solar_core.policies.salience import TurnContext

    context = TurnContext(dim=16)
    rows = training.features(DIALOGUES[1], vector, "minilm")
    weights = np.array([*prior.text_weights, *prior.vector_weights, *prior.embedding_weights])
    for turn, row in zip(DIALOGUES[1].turns, rows, strict=True):
        v = vector(turn.text)
        assert prior.score(turn.text, v, context) == pytest.approx(row @ weights + prior.bias)
        context.push(turn.text, v)


def test_no_conversation_is_scored_with_a_prior_trained_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shipped = training.train(DIALOGUES[:3], vector_of(), "text", "dialogue-text")
    assert shipped.trained_on == ("c0", "c1", "c2")
    monkeypatch.setattr(training, "load_prior", lambda name: shipped)
    priors = training.priors_for(DIALOGUES, vector_of(), "text")
    for d in DIALOGUES[:3]:
        assert d.sample_id not in priors[d.sample_id].trained_on
        assert set(priors[d.sample_id].trained_on) == {"c0", "c1", "c2"} - {d.sample_id}
    assert priors["c3"] is shipped  # never trained on: the shipped prior itself
    with pytest.raises(ValueError, match="no other one is in the file"):
        training.priors_for(DIALOGUES[:1], vector_of(), "text")


def test_the_benchmark_hands_each_conversation_its_prior() -> None:
    vector = vector_of(16)
    prior = training.train(DIALOGUES, vector, "text", "t")
    rows = bench.records(
        DIALOGUES[:2],
        vector,
        ["solar-dialogue", "solar-dialogue[prior=dialogue-text]", "fifo"],
        [3],
        [1],
        ["end"],
        priors=lambda policy, sample: prior if bench.prior_kind(policy, "text") else None,
    )
    by = {(r["policy"], r["unit"][0]): r["score"] for r in rows}
    # the facts are cited and a 3-turn memory of the trained prior holds all three of c0's
    assert by[("solar-dialogue", "c0")] == 1.0 > by[("fifo", "c0")]
    assert bench.prior_kind("solar-dialogue", "text") == "text"
    assert bench.prior_kind("fifo", "text") is None


def test_a_prior_given_to_the_benchmark_reaches_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    real = bench.memory_for

    def spy(policy: str, **kwargs: Any) -> Any:
        seen.append(kwargs.get("prior"))
        return real(policy, **kwargs)

    monkeypatch.setattr(bench, "memory_for", spy)
    prior = training.train(DIALOGUES, vector_of(), "text", "t")
    named = "solar-dialogue[prior=dialogue-minilm]"  # the caller's prior wins over the spec's
    bench.run_dialogue(DIALOGUES[0], vector_of(), named, 3, 1, "end", prior)
    bench.run_dialogue(DIALOGUES[0], vector_of(), "fifo", 3, 1, "end")
    assert seen == [prior, None]


@pytest.mark.slow
def test_the_training_script_rebuilds_the_shipped_priors(tmp_path: Any) -> None:
    """The shipped weights are what ``benchmarks/train_salience.py`` makes from the dev file."""
    path = data_path("locomo/locomo-dev.json")
    if not path.is_file():
        pytest.skip("set SOLAR_DATA to the reference data folder")
    train_salience = load_script("train_salience")
    assert train_salience.main(["--data", str(path), "--out", str(tmp_path)]) == 0
    for name in ("dialogue-minilm", "dialogue-static", "dialogue-text"):
        made, shipped = load_prior(tmp_path / f"{name}.json"), load_prior(name)
        assert made.trained_on == shipped.trained_on
        assert np.allclose(made.text_weights, shipped.text_weights, atol=1e-5)
        assert made.bias == pytest.approx(shipped.bias, abs=1e-5)
        if shipped.embedding_weights is not None:
            assert made.embedding_weights is not None
            assert np.allclose(made.embedding_weights, shipped.embedding_weights, atol=1e-5)
