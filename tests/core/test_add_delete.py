"""Evaluator-gated addition and deletion sweeps (the experience-following study), through
SolarMemory, with every preset."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest

from solar_core import PRESETS, SolarMemory, available_policies
from solar_core.policies.admission import Candidate, EvaluatorGate, NeverAdmit, RegretGate
from solar_core.policies.deletion import CombinedDeletion, HistoryDeletion, PeriodicDeletion
from solar_core.policies.eviction import FifoEviction, UtilityEviction


def accept_if_ok(query: str | None, execution: str, metadata: Mapping[str, Any]) -> bool:
    return bool(metadata.get("ok", True))


def v(i: int, dim: int = 8) -> np.ndarray:
    out = np.zeros(dim, dtype=np.float32)
    out[i % dim] = 1.0
    out[(i + 1) % dim] = 0.3 * (i // dim + 1)
    return out


# -- addition -----------------------------------------------------------------------------------
@pytest.mark.parametrize("policy", available_policies())
def test_the_evaluator_composes_with_every_preset(policy: str) -> None:
    capacity = None if PRESETS[policy].unbounded else 4
    m = SolarMemory(policy, capacity=capacity, dim=8, seed=0, evaluator=accept_if_ok)
    assert m.policy == f"{policy}+evaluator"
    for i in range(12):
        m.retrieve(embedding=v(i))
        d = m.add(f"x{i}", embedding=v(i), metadata={"ok": i % 3 != 0})
        if i % 3 == 0:
            assert (d.admitted, d.reason) == (False, "evaluator rejects")
        m.check_invariants()
    assert all(item.metadata["ok"] for item in m.items())


def test_the_evaluator_sees_query_execution_and_metadata() -> None:
    seen: list[tuple[Any, ...]] = []

    def spy(query: str | None, execution: str, metadata: Mapping[str, Any]) -> float:
        seen.append((query, execution, dict(metadata)))
        return 0.7

    m = SolarMemory("fifo", capacity=3, dim=8, evaluator=spy)
    assert m.add("did X", embedding=v(0), metadata={"query": "do X", "k": 1}).admitted
    assert m.add("did Y", embedding=v(1)).admitted  # 0.7 >= 0.5
    assert seen == [("do X", "did X", {"query": "do X", "k": 1}), (None, "did Y", {})]


def test_a_score_is_compared_with_the_threshold() -> None:
    gate = EvaluatorGate(lambda q, e, m: m["s"], threshold=0.8)
    verdicts = [gate.admit(Candidate(0, None, text="e", metadata={"s": s})).admitted
                for s in (0.79, 0.8, 1.0)]  # fmt: skip
    assert verdicts == [False, True, True]


@pytest.mark.parametrize("answer", ["yes", None, float("nan"), [1]])
def test_an_unusable_verdict_fails_the_offer_and_changes_nothing(answer: object) -> None:
    m = SolarMemory("fifo", capacity=3, dim=8, evaluator=lambda q, e, meta: answer)
    with pytest.raises(ValueError, match="expected a bool or a number"):
        m.add("x", embedding=v(0))
    assert len(m) == 0 and m.stats()["steps"] == 0
    m.check_invariants()


def test_both_must_accept_and_the_regret_gate_sees_every_step() -> None:
    gate = EvaluatorGate(accept_if_ok, inner=RegretGate(bootstrap=0))
    m = SolarMemory(admission=gate, eviction=FifoEviction(), capacity=10, dim=8)
    rejected = m.add("bad", embedding=v(0), metadata={"ok": False})
    assert rejected.reason == "evaluator rejects" and gate.regret == 1.0  # seen, not stored
    d = m.add("good", embedding=v(1))  # accepted by the evaluator; the regret gate decides
    assert (d.admitted, d.reason, d.regret) == (False, "regret <= tau", 2.0)


def test_initial_offers_skip_the_evaluator() -> None:
    m = SolarMemory(
        admission=EvaluatorGate(accept_if_ok, initial=2), eviction=FifoEviction(), dim=8
    )
    reasons = [m.add(f"x{i}", embedding=v(i), metadata={"ok": False}).reason for i in range(3)]
    assert reasons == ["initial", "initial", "evaluator rejects"]


def test_never_admit_keeps_the_seed_memory_fixed() -> None:
    m = SolarMemory(admission=NeverAdmit(initial=3), eviction=FifoEviction(), dim=8)
    for i in range(6):
        m.add(f"x{i}", embedding=v(i))
    assert [i.text for i in m.items()] == ["x0", "x1", "x2"]
    m.clear()
    assert m.add("again", embedding=v(0)).reason == "initial"  # clear() restarts the count


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: EvaluatorGate("not callable"), TypeError),  # type: ignore[arg-type]
        (lambda: EvaluatorGate(accept_if_ok, threshold=float("nan")), ValueError),
        (lambda: EvaluatorGate(accept_if_ok, threshold="0.5"), TypeError),  # type: ignore[arg-type]
        (lambda: EvaluatorGate(accept_if_ok, initial=-1), ValueError),
        (lambda: EvaluatorGate(accept_if_ok, inner=FifoEviction()), TypeError),  # type: ignore[arg-type]
        (lambda: NeverAdmit(initial=True), TypeError),
        (lambda: PeriodicDeletion(window=0), ValueError),
        (lambda: PeriodicDeletion(alpha=-1), ValueError),
        (lambda: HistoryDeletion(n=-1), ValueError),
        (lambda: HistoryDeletion(beta=1.5), ValueError),
        (lambda: CombinedDeletion(), ValueError),
        (lambda: CombinedDeletion("periodic"), TypeError),  # type: ignore[arg-type]
        (lambda: UtilityEviction(prior=2.0), ValueError),
        (lambda: UtilityEviction(prior=True), TypeError),
        (lambda: SolarMemory("fifo", dim=8, deletion="history"), TypeError),  # type: ignore[arg-type]
    ],
)
def test_bad_parameters_are_refused(make: Any, error: type[Exception]) -> None:
    with pytest.raises(error):
        make()


# -- deletion -----------------------------------------------------------------------------------
def test_history_deletion_sequence() -> None:
    m = SolarMemory("fifo", capacity=None, dim=8, deletion=HistoryDeletion(n=2, beta=0.5))
    ids = [m.add(f"x{i}", embedding=v(i)).item_id for i in range(3)]
    scores = {ids[0]: [0.0, 1.0, 0.0], ids[1]: [1.0, 1.0, 0.0], ids[2]: [0.0, 0.0]}
    deleted: list[tuple[str, str]] = []
    for item_id, qualities in scores.items():
        for q in qualities:
            m.retrieve(embedding=m.vector(item_id), k=1)
            m.feedback(score=q)
            deleted += m.add(f"filler {len(deleted)} {q}", embedding=-m.vector(item_id)).deleted
    # x0: 3 uses, mean 1/3 -> deleted at its third rating; x1: mean 2/3 kept; x2: 2 uses, not > n
    assert [d[0] for d in deleted] == [ids[0]]
    assert deleted[0][1] == "history: mean downstream quality 0.33 <= 0.5 over 3 uses"
    assert m.stats()["deleted"] == 1 and ids[0] not in m
    m.check_invariants()


def test_periodic_deletion_sequence() -> None:
    m = SolarMemory("fifo", capacity=None, dim=8, deletion=PeriodicDeletion(window=3, alpha=1))
    m.add("a", embedding=v(0))  # step 1
    m.add("b", embedding=v(1))  # step 2
    log = {}
    for step in range(3, 10):
        m.retrieve(embedding=v(0), k=1)  # "a" is used every step
        if step in (4, 5):
            m.retrieve(embedding=v(1), k=1)  # "b" twice in steps 4-5
        log[step] = [i for i, _ in m.add(f"s{step}", embedding=v(step + 2)).deleted]
    # sweeps at steps 3, 6, 9 (every window); "b" was used twice in (3, 6], then 0 times in (6, 9]
    assert log[3] == []  # only a is 3 steps old, and it is used
    assert log[6] == ["m3"]  # s3: stored at 3, never used; b: 2 uses > alpha = 1
    assert log[9] == ["m2", "m4", "m5", "m6"]  # b idle since 5; s4-s6 never used
    m.check_invariants()


def test_combined_deletion_names_each_item_once() -> None:
    history = HistoryDeletion(n=1, beta=0.9)
    periodic = PeriodicDeletion(window=2)
    m = SolarMemory("fifo", capacity=None, dim=8, deletion=CombinedDeletion(periodic, history))
    a = m.add("a", embedding=v(0)).item_id
    for _ in range(2):
        m.retrieve(embedding=v(0), k=1)
        m.feedback(score=0.0)
    d = m.add("b", embedding=v(1))  # step 2: history and (old enough? no) periodic
    assert d.deleted == ((a, "history: mean downstream quality 0.00 <= 0.9 over 2 uses"),)
    m.check_invariants()


@pytest.mark.parametrize("policy", available_policies())
def test_deletion_composes_with_every_preset(policy: str) -> None:
    capacity = None if PRESETS[policy].unbounded else 5
    deletion = CombinedDeletion(PeriodicDeletion(window=4), HistoryDeletion(n=1, beta=0.5))
    m = SolarMemory(policy, capacity=capacity, dim=8, seed=1, deletion=deletion)
    rng = np.random.default_rng(0)
    for step in range(40):
        hits = m.retrieve(embedding=v(int(rng.integers(0, 16))))
        if hits:
            m.feedback(score=float(rng.random()), retrieval=hits)
        m.add(f"x{step}", embedding=v(step))
        m.check_invariants()
    stats = m.stats()
    assert stats["admitted"] - stats["evicted"] - stats["deleted"] == len(m)
    assert stats["deleted"] == sum(len(d.deleted) for d in m.trace())


def test_one_deletion_policy_serves_one_memory() -> None:
    deletion = HistoryDeletion()
    SolarMemory("fifo", dim=8, deletion=deletion)
    with pytest.raises(ValueError, match="already serves another memory"):
        SolarMemory("fifo", dim=8, deletion=deletion)


def test_clear_resets_the_deletion_policy() -> None:
    m = SolarMemory("fifo", capacity=None, dim=8, deletion=HistoryDeletion(n=1, beta=0.5))
    m.add("a", embedding=v(0))
    m.retrieve(embedding=v(0), k=1)
    m.feedback(score=0.0)
    m.clear()
    m.add("b", embedding=v(0))
    m.retrieve(embedding=v(0), k=1)
    m.feedback(score=0.0)
    assert m.add("c", embedding=v(1)).deleted == ()  # one use since clear(): not > n
    assert m.get(m.items()[0].id).policy["uses"] == 1.0


def test_utility_eviction_drops_the_worst_informant() -> None:
    m = SolarMemory(eviction=UtilityEviction(), capacity=3, dim=8)
    ids = [m.add(f"x{i}", embedding=v(i)).item_id for i in range(3)]
    for item_id, q in zip(ids, (1.0, 0.0, 0.5), strict=True):
        m.retrieve(embedding=m.vector(item_id), k=1)
        m.feedback(score=q)
    assert m.add("new", embedding=v(5)).evicted == ids[1]
    assert m.add("newer", embedding=v(6)).evicted == ids[2]  # 0.5 (rated) ~ prior: oldest first
    m.check_invariants()


def test_metadata_threshold_is_the_ground_truth_evaluator() -> None:
    from solar_core.policies.admission import MetadataThreshold

    m = SolarMemory("fifo", capacity=5, dim=8, evaluator=MetadataThreshold("error", at_most=1.0))
    assert m.add("good", embedding=v(0), metadata={"error": 0.3}).admitted
    assert not m.add("bad", embedding=v(1), metadata={"error": 1.2}).admitted
    with pytest.raises(ValueError, match="must be a number"):
        m.add("unknown", embedding=v(2))
    both = MetadataThreshold("score", at_least=0.2, at_most=0.8)
    assert [both(None, "x", {"score": s}) for s in (0.1, 0.5, 0.9)] == [False, True, False]
    with pytest.raises(ValueError, match="at_most, at_least or both"):
        MetadataThreshold("error")
