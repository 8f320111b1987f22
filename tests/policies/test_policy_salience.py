"""``solar-dialogue``: salience eviction over a prior of dialogue turns (docs/DESIGN.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import HashEmbedder, SolarMemory
from solar_core.persistence import MemoryStore
from solar_core.policies.eviction import SalienceEviction
from solar_core.policies.salience import (
    PRIORS,
    TEXT_FEATURES,
    SaliencePrior,
    TurnContext,
    load_prior,
    prior_for,
    text_features,
)

FACTS = [
    "Ann: I adopted a beagle named Max in March 2022.",
    "Bo: My sister Jo moved to Lisbon last week for her new job at Siemens.",
    "Ann: We ran the Boston marathon yesterday, 4 hours 12 minutes!",
]
CHATTER = ["Bo: Wow, cool!", "Ann: Haha yes.", "Bo: Nice!", "Ann: Thanks, bye!"]


def unit(rng: np.random.Generator, dim: int) -> np.ndarray:
    v = rng.standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def text_prior(**weights: float) -> SaliencePrior:
    """A text prior that weighs only the named features (by their index in TEXT_FEATURES)."""
    w = [0.0] * len(TEXT_FEATURES)
    for name, value in weights.items():
        w[int(name[1:])] = value
    return SaliencePrior("test", tuple(w), 0.0)


# -- the prior --------------------------------------------------------------------------------
def test_the_shipped_priors_load_and_say_what_they_read() -> None:
    minilm, text = load_prior("dialogue-minilm"), load_prior("dialogue-text")
    static = load_prior("dialogue-static")
    assert (minilm.embedder, minilm.dim, minilm.reads_vectors) == ("all-MiniLM-L6-v2", 384, True)
    assert (static.embedder, static.dim, static.own_vectors) == ("minilm-static-256", 256, True)
    assert (text.embedder, text.dim, text.reads_vectors) == (None, None, False)
    assert not minilm.own_vectors and not text.own_vectors
    assert minilm.trained_on == text.trained_on == static.trained_on
    assert len(text.trained_on) >= 2
    assert set(PRIORS) == {"dialogue-minilm", "dialogue-static", "dialogue-text"}


def test_the_text_prior_ranks_facts_above_chatter() -> None:
    prior = load_prior("dialogue-text")
    context = TurnContext(dim=8)
    scores = {}
    for text in [*CHATTER, *FACTS]:
        scores[text] = prior.score(text, None, context)
        context.push(text, None)
    assert min(scores[t] for t in FACTS) > max(scores[t] for t in CHATTER)


def test_text_features_count_what_their_names_say() -> None:
    f = dict(
        zip(
            TEXT_FEATURES,
            text_features("Ann: Hi! I met Jo in Paris yesterday. See you", "Bo: So?"),
            strict=True,
        )
    )
    assert f["words/30"] == pytest.approx(9 / 30)
    assert f["has a digit"] == 0.0 and f["is a question"] == 0.0
    assert f["capitalised words/10"] == pytest.approx(0.4)  # I, Jo, Paris, See (not "Hi!")
    assert f["answers a question"] == 1.0
    assert f["time words/3"] == pytest.approx(1 / 3)
    assert f["first-person rate"] == pytest.approx(1 / 9)
    assert f["greetings/2"] == pytest.approx(1.0)  # "hi" and "see you"
    assert text_features("no speaker 7?", None)[2:4] == [1.0, 1.0]


def test_a_prior_file_round_trips_and_a_bad_one_names_the_problem(tmp_path: Path) -> None:
    prior = load_prior("dialogue-minilm")
    path = tmp_path / "p.json"
    prior.save(path)
    again = load_prior(path)
    assert again.text_weights == prior.text_weights and again.bias == prior.bias
    assert again.embedding_weights is not None and prior.embedding_weights is not None
    assert np.array_equal(again.embedding_weights, prior.embedding_weights)
    data = json.loads(path.read_text())
    data["embedding_weights"] = data["embedding_weights"][:10]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="do not match dim=384"):
        load_prior(path)
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="not a salience prior"):
        load_prior(path)
    with pytest.raises(ValueError, match="unknown salience prior 'nope'"):
        load_prior("nope")


# -- which prior a memory uses ------------------------------------------------------------------
def test_a_non_minilm_embedder_gets_the_static_prior_which_embeds_each_turn_itself() -> None:
    """Any embedder but MiniLM (another model, or vectors given without one) gets the whole
    prior: it reads the built-in static embedder's vectors of each turn's text, not the
    memory's, so the memory's dimension does not matter."""
    memory = SolarMemory("solar-dialogue", capacity=3, embedder=HashEmbedder(dim=384), seed=0)
    policy = memory.core.eviction
    assert isinstance(policy, SalienceEviction) and policy.prior is load_prior("dialogue-static")
    vectors_only = SolarMemory("solar-dialogue", capacity=3, dim=64, seed=0)
    assert vectors_only.core.eviction.prior.name == "dialogue-static"  # type: ignore[attr-defined]
    default = SolarMemory("solar-dialogue", capacity=3, seed=0)
    assert default.core.eviction.prior.name == "dialogue-static"  # type: ignore[attr-defined]
    # the same turns, whatever vectors the memory holds: the same saliences
    turns = [*FACTS, "Bo: Haha, nice.", "Ann: Hi!"]
    rng = np.random.default_rng(0)
    for text in turns:
        memory.add(text)
        vectors_only.add(text, embedding=unit(rng, 64))
        default.add(text)
    values = [
        sorted(m.core.eviction._value[: len(turns)].tolist())  # type: ignore[attr-defined]
        for m in (memory, vectors_only, default)
    ]
    assert values[0] == values[1] == values[2]


def test_a_prior_that_reads_the_memorys_vectors_is_unchanged() -> None:
    """An explicit text or MiniLM prior works as before: the text prior reads no vector."""
    memory = SolarMemory(
        "solar-dialogue", capacity=3, embedder="hash", dim=384, prior="dialogue-text", seed=0
    )
    assert memory.core.eviction.prior.name == "dialogue-text"  # type: ignore[attr-defined]


def test_the_minilm_embedder_gets_the_static_prior_without_loading_the_model() -> None:
    from solar_core.embedders.cached_embedder import CachedEmbedder
    from solar_core.embedders.minilm import MiniLMEmbedder

    model = MiniLMEmbedder()
    assert prior_for(model, 384).name == "dialogue-static"
    assert prior_for(CachedEmbedder(model), 384).name == "dialogue-static"
    memory = SolarMemory("solar-dialogue", capacity=3, embedder=model, prior="dialogue-minilm")
    assert memory.core.eviction.prior.name == "dialogue-minilm"  # type: ignore[attr-defined]
    assert model._model is None  # choosing the prior embeds nothing


def test_a_minilm_prior_on_other_dimensions_is_refused_before_a_memory_exists() -> None:
    with pytest.raises(ValueError, match="use prior='dialogue-text'"):
        SolarMemory("solar-dialogue", capacity=3, embedder="hash", dim=64, prior="dialogue-minilm")
    with pytest.raises(ValueError, match="unknown salience prior"):
        SolarMemory("solar-dialogue", capacity=3, embedder="hash", dim=64, prior="minilm")
    with pytest.raises(TypeError, match="prior must be"):
        SalienceEviction(prior=3)  # type: ignore[arg-type]


def test_the_minilm_prior_reads_vectors_a_text_prior_does_not() -> None:
    rng = np.random.default_rng(1)
    prior = load_prior("dialogue-minilm")
    context = TurnContext(dim=384)
    a, b = unit(rng, 384), unit(rng, 384)
    assert prior.score(FACTS[0], a, context) != prior.score(FACTS[0], b, context)
    text = load_prior("dialogue-text")
    assert text.score(FACTS[0], a, context) == text.score(FACTS[0], b, context)


# -- the policy ---------------------------------------------------------------------------------
def test_a_full_memory_keeps_the_most_salient_turns_seen() -> None:
    prior = load_prior("dialogue-text")
    memory = SolarMemory("solar-dialogue", capacity=3, embedder="hash", dim=64, seed=0)
    context = TurnContext(dim=64)
    scores = {}
    stream = [CHATTER[0], FACTS[0], CHATTER[1], FACTS[1], CHATTER[2], FACTS[2], CHATTER[3]]
    for text in stream:
        scores[text] = prior.score(text, None, context)
        context.push(text, None)
        memory.add(text)
    kept = {item.text for item in memory.items()}
    assert kept == set(sorted(stream, key=lambda t: -scores[t])[:3]) == set(FACTS)
    memory.check_invariants()
    refused = [d for d in memory.trace() if not d.admitted]
    assert refused and all(d.reason == "salience <= lowest value" for d in refused)
    assert all(d.regret is not None and d.tau is not None for d in refused)  # score, bar


def test_every_offer_is_context_even_a_refused_one() -> None:
    prior = text_prior(f6=5.0)  # only "answers a question" counts
    memory = SolarMemory("solar-dialogue", capacity=1, embedder="hash", dim=32, prior=prior)
    memory.add("Ann: plain")
    memory.add("Bo: really?")  # refused (its score 0 is not above 0) but it is a question
    memory.add("Ann: yes, it is")  # answers it: 5 > 0
    assert [i.text for i in memory.items()] == ["Ann: yes, it is"]


def test_among_equal_values_the_oldest_leaves_first() -> None:
    prior = text_prior(f3=1.0)  # a question scores 1, anything else 0
    memory = SolarMemory("solar-dialogue", capacity=2, embedder="hash", dim=32, prior=prior)
    a = memory.add("Ann: a").item_id
    b = memory.add("Bo: b").item_id
    assert not memory.add("Ann: c").admitted  # 0 is not above the lowest value, 0
    assert memory.add("Bo: d?").evicted == a
    assert {item.id for item in memory.items()} == {b, memory.trace()[-1].item_id}


def test_a_rating_moves_values_by_how_it_differs_from_the_usual_rating() -> None:
    prior = text_prior()
    memory = SolarMemory("solar-dialogue", capacity=2, embedder="hash", dim=64, prior=prior, k=1)
    first = memory.add("alpha beta gamma").item_id
    second = memory.add("delta epsilon zeta").item_id
    hits = memory.retrieve("alpha beta gamma")
    assert [h.id for h in hits] == [first]
    # The baseline starts at 0.5: + (1 - 0.5), shrunk by 4 pseudo-ratings: 2 * 0.5 / (1 + 4)
    memory.feedback(score=1.0, retrieval=hits)
    # The baseline is now (1 + 0.5) / 2 = 0.75: 2 * (0 - 0.75) / (1 + 4)
    memory.feedback(score=0.0, retrieval=memory.retrieve("delta epsilon zeta"))
    assert memory.get(first).policy == pytest.approx({"value": 0.2, "ratings": 0.2})
    assert memory.get(second).policy == pytest.approx({"value": -0.3, "ratings": -0.3})
    decision = memory.add("eta theta iota")
    assert decision.evicted == second  # 0 > -0.3: the disliked turn leaves
    assert second not in memory and first in memory
    # Without ratings the new turn would have stayed out (0 is not above the lowest value, 0)
    assert decision.reason == "salience > lowest value; ratings made room"
    assert memory.stats()["ratings"] == {"ratings": 2, "baseline": 0.5, "decisions_changed": 1}


def test_a_memory_whose_every_recall_is_disliked_keeps_what_it_would_unrated() -> None:
    """An application that dislikes every answer says nothing about one turn against another:
    the memory keeps the same turns as without ratings (before, each dislike took a full unit
    of value from what it recalled, and recalled turns were pushed out)."""
    turns = [
        f"{'Ann' if i % 2 else 'Bo'}: {word} {i} "
        + ("I moved to Lisbon in 2021." if i % 3 else "ok")
        for i, word in enumerate(["hi", "so", "well", "yes", "right", "hmm"] * 12)
    ]

    def kept(rate: bool) -> list[str]:
        memory = SolarMemory("solar-dialogue", capacity=8, embedder="hash", dim=64, seed=1, k=3)
        for turn in turns:
            hits = memory.retrieve(turn)
            memory.add(turn)
            if rate and hits:
                memory.feedback(like=False, retrieval=hits)
        return sorted(item.text for item in memory.items())

    assert kept(rate=True) == kept(rate=False)


def test_without_feedback_weight_ratings_change_nothing() -> None:
    memory = SolarMemory(
        "solar-dialogue", capacity=2, embedder="hash", dim=64, prior=text_prior(), feedback_weight=0
    )
    first = memory.add("alpha beta").item_id
    memory.feedback(score=1.0, retrieval=memory.retrieve("alpha beta"))
    assert memory.get(first).policy["value"] == 0.0


def test_a_reopened_scope_continues_exactly(tmp_path: Path) -> None:
    """The prior's weights, the recent-turn context and what ratings said (each turn's credit,
    the usual rating, the decisions they changed) are part of the snapshot."""
    rng = np.random.default_rng(3)
    stream = [f"Ann: turn {i} about topic {i % 5}{'?' if i % 3 == 0 else ''}" for i in range(40)]
    vectors = [unit(rng, 384) for _ in stream]

    def run(reopen: bool) -> list[Any]:
        path = tmp_path / f"{reopen}.db"
        store = MemoryStore(path, policy="solar-dialogue", capacity=6, dim=384, seed=0)
        out: list[Any] = []
        for i, (text, v) in enumerate(zip(stream, vectors, strict=True)):
            if reopen and i == 20:
                store.close()
                store = MemoryStore(path, policy="solar-dialogue", capacity=6, dim=384, seed=0)
            scope = store.scope("u")
            hits = scope.retrieve(embedding=v, k=3)
            if hits and i % 4:
                scope.feedback(like=i % 3 == 0, retrieval=hits)
            d = scope.add(text, embedding=v)
            out.append((d.admitted, d.evicted, d.reason))
        scope = store.scope("u")
        out += [scope.stats()["ratings"], sorted(str(i.policy) for i in scope.items())]
        store.close()
        return out

    ran = run(False)
    assert ran[-2]["decisions_changed"] > 0  # the ratings did change decisions
    assert run(True) == ran
