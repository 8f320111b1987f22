"""A Hypothesis state machine over SolarMemory, against a model: the set of stored ids.

Rules: add / retrieve / feedback / remove / clear, with bad inputs mixed in. Every bad input must
raise and leave the memory exactly as it was (``full_state``); after every rule the memory's
invariants hold, it is within capacity, and it stores exactly the model's ids.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from solar_core import (
    PRESETS,
    AlwaysAdmit,
    RegretGate,
    SolarMemory,
    UnknownItemError,
    available_policies,
)
from solar_core.retrieval.repeats import normalise
from tests.support.memories import full_state, unit
from tests.support.profiles import examples

CAPACITY = 4
DIM = 8
TOPICS = unit(np.random.default_rng(2024).normal(size=(3, DIM)))

# A small set of texts and user ids, so that re-offers and id clashes happen. "m2" and "m5" look
# like the ids the memory generates itself.
TEXTS = ["retry on 429", "use backoff", "Caroline paints sunsets", "postgres is on 5432", "x"]
USER_IDS = ["alpha", "beta", "m2", "m5"]


def fixed_clock() -> float:
    return 0.0


NOISE = np.random.default_rng(7).uniform(-0.3, 0.3, size=(16, DIM))
NOISE[0] = 0.0  # noise 0: exactly the topic direction, so exact duplicates happen too


def _vector(topic: int, noise: int, scale: float) -> np.ndarray:
    # never zero: |NOISE[i]| <= 0.3 * sqrt(8) < 1 = |TOPICS[topic]|; the memory normalises
    return scale * (TOPICS[topic] + NOISE[noise])


# Small integers rather than raw floats keep the failing examples short and readable.
vectors = st.builds(
    _vector,
    st.integers(0, len(TOPICS) - 1),
    st.integers(0, len(NOISE) - 1),
    st.sampled_from([1.0, 0.5, 3.0]),
)
metadata = st.none() | st.dictionaries(st.sampled_from(["turn", "tag"]), st.integers(0, 9))

GOOD = unit(np.ones(DIM))
BAD_INPUTS: list[tuple[str, Callable[[SolarMemory], object], type[Exception]]] = [
    ("empty text", lambda m: m.add("", embedding=GOOD), ValueError),
    ("blank text", lambda m: m.add("  \n", embedding=GOOD), ValueError),
    ("non-str text", lambda m: m.add(17, embedding=GOOD), TypeError),
    ("blank query", lambda m: m.retrieve(" ", embedding=GOOD), ValueError),
    ("no query", lambda m: m.retrieve(), ValueError),
    ("text without embedder", lambda m: m.add("no embedder here"), ValueError),
    ("wrong dimension", lambda m: m.add("t", embedding=np.ones(DIM + 1)), ValueError),
    ("wrong query dimension", lambda m: m.retrieve(embedding=np.ones(DIM - 1)), ValueError),
    ("nan", lambda m: m.add("t", embedding=[np.nan] + [1.0] * (DIM - 1)), ValueError),
    ("inf query", lambda m: m.retrieve(embedding=[np.inf] + [1.0] * (DIM - 1)), ValueError),
    ("zero vector", lambda m: m.add("t", embedding=np.zeros(DIM)), ValueError),
    ("zero query", lambda m: m.retrieve(embedding=np.zeros(DIM)), ValueError),
    ("k = 0", lambda m: m.retrieve(embedding=GOOD, k=0), ValueError),
    ("k float", lambda m: m.retrieve(embedding=GOOD, k=1.0), TypeError),
    ("k bool", lambda m: m.retrieve(embedding=GOOD, k=True), TypeError),
    ("score > 1", lambda m: m.feedback(score=1.01), ValueError),
    ("score < 0", lambda m: m.feedback(score=-1e-9), ValueError),
    ("score nan", lambda m: m.feedback(score=float("nan")), ValueError),
    ("like int", lambda m: m.feedback(like=1), TypeError),
    ("no feedback value", lambda m: m.feedback(), ValueError),
    ("unknown get", lambda m: m.get("never-stored"), UnknownItemError),
    ("unknown remove", lambda m: m.remove("never-stored"), UnknownItemError),
    ("non-str id", lambda m: m.get(3), TypeError),
    ("metadata list", lambda m: m.add("t", embedding=GOOD, metadata=[1]), TypeError),
    ("metadata int key", lambda m: m.add("t", embedding=GOOD, metadata={2: 1}), TypeError),
    ("empty item_id", lambda m: m.add("t", embedding=GOOD, item_id=" "), ValueError),
]


class MemoryMachine(RuleBasedStateMachine):
    policy = "solar"

    def __init__(self) -> None:
        super().__init__()
        # With capacity 4 the default bootstrap (5 items) would admit everything: open the
        # regret gate after 2 items (and lower its threshold) so that both rejections and
        # evictions happen.
        gated = PRESETS[self.policy].admission is RegretGate
        params: dict[str, Any] = {"bootstrap": 2, "switching_cost": 0.5} if gated else {}
        self.memory = SolarMemory(
            self.policy, capacity=CAPACITY, dim=DIM, seed=0, clock=fixed_clock, **params
        )
        self.capacity = None if PRESETS[self.policy].unbounded else CAPACITY
        self.model: set[str] = set()
        self.steps = 0
        self.since_clear = 0
        self.retrieval: str | None = None  # None (none since clear), "unrated" or "rated"
        self.rated_ids: set[str] = set()  # what the latest retrieval returned

    def expect_failure(self, call: Callable[[], object], error: type[Exception]) -> None:
        before = full_state(self.memory)
        with pytest.raises(error):
            call()
        assert full_state(self.memory) == before, "a rejected call changed the memory"

    # -- operations, checked against the model ----------------------------------------------------
    def do_add(
        self, text: str, vector: np.ndarray, meta: dict[str, Any] | None, item_id: str | None
    ) -> None:
        if item_id is not None and item_id in self.model:
            if self.memory.get(item_id).text != text:
                self.expect_failure(
                    lambda: self.memory.add(text, embedding=vector, item_id=item_id), ValueError
                )
                return
            # the same id and text again: a re-offer ends the step and stores nothing
            size_before = len(self.memory)
            decision = self.memory.add(text, embedding=vector, item_id=item_id)
            self.steps += 1
            self.since_clear += 1
            assert decision.step == self.steps and not decision.admitted
            assert decision.reason == "already stored" and decision.item_id == item_id
            assert decision.evicted is None and len(self.memory) == size_before
            return
        size_before = len(self.memory)
        decision = self.memory.add(text, embedding=vector, metadata=meta, item_id=item_id)
        self.steps += 1
        self.since_clear += 1
        assert decision.step == self.steps
        if decision.reason == "repeat":  # the same words as a stored item: that one refreshed
            assert not decision.admitted and decision.item_id in self.model
            assert normalise(self.memory.get(decision.item_id).text) == normalise(text)
            assert decision.evicted is None and len(self.memory) == size_before
            return
        if not decision.admitted:
            assert decision.item_id is None and decision.evicted is None
            assert PRESETS[self.policy].admission is not AlwaysAdmit
            return
        assert decision.item_id is not None and decision.item_id not in self.model
        if item_id is not None:
            assert decision.item_id == item_id
        if decision.evicted is not None:
            assert size_before == self.capacity, "evicted although not full"
            assert decision.evicted in self.model
            self.model.remove(decision.evicted)
        else:
            assert self.capacity is None or size_before < self.capacity, "grew past capacity"
        self.model.add(decision.item_id)
        item = self.memory.get(decision.item_id)
        assert item.text == text and dict(item.metadata) == (meta or {})

    def do_retrieve(self, vector: np.ndarray, k: int | None) -> None:
        hits = self.memory.retrieve(embedding=vector, k=k)
        assert len(hits) == min(self.memory.k if k is None else k, len(self.model))
        ids = {h.id for h in hits}
        assert ids <= self.model and len(ids) == len(hits)
        assert [h.rank for h in hits] == list(range(len(hits)))
        assert all(a.score >= b.score for a, b in zip(hits, hits[1:], strict=False))
        self.retrieval = "unrated"
        self.rated_ids = ids

    def do_feedback(self, like: bool | None, score: float | None) -> None:
        if like is None and score is None:
            self.expect_failure(lambda: self.memory.feedback(), ValueError)
        elif self.retrieval != "unrated" or (
            like is not None and score is not None and (score < 0.5 if like else score > 0.5)
        ):  # no retrieval since clear(), already rated, or a like and a score that disagree
            self.expect_failure(lambda: self.memory.feedback(like=like, score=score), ValueError)
        else:
            beliefs = {item.id: dict(item.policy) for item in self.memory.items()}
            self.memory.feedback(like=like, score=score)
            self.retrieval = "rated"
            # only the rated retrieval's items (those still stored) may learn from it
            changed = {i for i, b in beliefs.items() if self.memory.get(i).policy != b}
            assert changed <= self.rated_ids

    # -- rules ------------------------------------------------------------------------------------
    @rule(
        query=vectors,
        like=st.none() | st.booleans(),
        score=st.none() | st.floats(0.0, 1.0),
        text=st.sampled_from(TEXTS),
        vector=vectors,
    )
    def agent_step(
        self,
        query: np.ndarray,
        like: bool | None,
        score: float | None,
        text: str,
        vector: np.ndarray,
    ) -> None:
        """One whole agent step: retrieve, rate (unless both are None), add."""
        self.do_retrieve(query, None)
        if like is not None or score is not None:
            self.do_feedback(like, score)
        self.do_add(text, vector, None, None)

    @rule(
        text=st.sampled_from(TEXTS),
        vector=vectors,
        meta=metadata,
        item_id=st.none() | st.sampled_from(USER_IDS),
    )
    def add(
        self, text: str, vector: np.ndarray, meta: dict[str, Any] | None, item_id: str | None
    ) -> None:
        self.do_add(text, vector, meta, item_id)

    @rule(vector=vectors, k=st.none() | st.integers(1, CAPACITY + 2))
    def retrieve(self, vector: np.ndarray, k: int | None) -> None:
        self.do_retrieve(vector, k)

    @rule(like=st.none() | st.booleans(), score=st.none() | st.floats(0.0, 1.0))
    def feedback(self, like: bool | None, score: float | None) -> None:
        self.do_feedback(like, score)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        item_id = data.draw(st.sampled_from(sorted(self.model)), label="item_id")
        assert self.memory.get(item_id).id == item_id
        self.memory.remove(item_id)
        self.model.remove(item_id)
        self.expect_failure(lambda: self.memory.remove(item_id), UnknownItemError)
        self.expect_failure(lambda: self.memory.get(item_id), UnknownItemError)

    @precondition(lambda self: self.since_clear >= 3)  # rarer than other rules: memory fills up
    @rule()
    def clear(self) -> None:
        self.memory.clear()
        self.model.clear()
        self.steps = self.since_clear = 0
        self.retrieval = None
        assert self.memory.stats()["steps"] == 0 and self.memory.trace() == []

    @rule(bad=st.sampled_from(BAD_INPUTS))
    def bad_input(self, bad: tuple[str, Callable[[SolarMemory], object], type[Exception]]) -> None:
        _, call, error = bad
        self.expect_failure(lambda: call(self.memory), error)

    @invariant()
    def consistent(self) -> None:
        self.memory.check_invariants()
        if self.capacity is not None:
            assert len(self.memory) <= self.capacity
        ids = [item.id for item in self.memory.items()]
        assert len(ids) == len(set(ids)) == len(self.memory)
        assert set(ids) == self.model
        stats = self.memory.stats()
        assert stats["size"] == len(self.model) and stats["steps"] == self.steps
        assert stats["admitted"] - stats["evicted"] - stats["removed"] == stats["size"]
        assert stats["admitted"] + stats["rejected"] + stats["reoffered"] == stats["steps"]


SETTINGS = settings(
    max_examples=examples(100),
    stateful_step_count=40,
    deadline=None,
    derandomize=True,  # deterministic: the same examples on every run
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.parametrize("policy", available_policies())
def test_memory_state_machine(policy: str) -> None:
    machine = type(f"MemoryMachine[{policy}]", (MemoryMachine,), {"policy": policy})
    run_state_machine_as_test(machine, settings=SETTINGS)
