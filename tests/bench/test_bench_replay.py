"""Replaying workloads: the reader of the reference files (generators checked against them) and
the runner that replays a workload against one policy."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_bench import generators as gen
from solar_bench.replay import EXPERIMENTS, load_replay, replay_variants
from solar_bench.runner import LAMBDA, run, set_f1
from solar_bench.workload import NO_ITEM, Workload
from tests.support.data import data_path

SHARED = data_path("solar_synthetic")
needs_shared = pytest.mark.skipif(
    not SHARED.is_dir(), reason=f"{SHARED} not available: set SOLAR_DATA to the data folder"
)

# (folder under solar_synthetic, generator call)
REFERENCE: list[tuple[str, Callable[[int], Workload]]] = [
    ("cycling/m10", lambda s: gen.cycling(10, seed=s)),
    ("cycling/m50", lambda s: gen.cycling(50, seed=s)),
    ("working_set/distuniform", lambda s: gen.working_set("uniform", seed=s)),
    ("topic_drift/plen100", lambda s: gen.drift(100, seed=s)),
]
NOISE_TAG = "retrieval_noise_static/K{}_intra0.15_inter0.30"


def assert_same(ours: Workload, ref: Workload) -> None:
    assert ours.item_ids == ref.item_ids
    assert ours.items.dtype == ref.items.dtype == np.float32
    assert ours.items.tobytes() == ref.items.tobytes()
    assert ours.queries.tobytes() == ref.queries.tobytes()
    assert np.array_equal(ours.item_topics, ref.item_topics)
    assert np.array_equal(ours.query_topics, ref.query_topics)
    assert [tuple(r) for r in ours.relevant] == [tuple(r) for r in ref.relevant]
    assert ours.stream.tobytes() == ref.stream.tobytes()
    assert list(ours.prefill) == list(ref.prefill)
    assert ours.warmup == ref.warmup
    assert ours.name == ref.name


@needs_shared
@pytest.mark.parametrize("seed", gen.SEEDS)
@pytest.mark.parametrize("folder", [f for f, _ in REFERENCE])
def test_generator_equals_reference_files(folder: str, seed: int) -> None:
    make = dict(REFERENCE)[folder]
    ref = load_replay(SHARED / folder / f"seed{seed}")
    assert_same(make(seed), ref)
    assert ref.params["tag"] == folder.split("/")[1]
    assert ref.params["seed"] == seed


@needs_shared
@pytest.mark.parametrize("capacity", [20, 500, 5000])
def test_noise_static_equals_reference_files(capacity: int) -> None:
    folder = SHARED / NOISE_TAG.format(capacity) / "seed42"
    ref = load_replay(folder)
    assert ref.name == "noise-static" and len(ref.prefill) == capacity
    assert np.all(ref.stream == NO_ITEM)
    assert_same(gen.noise_static(capacity, seed=42), ref)


@needs_shared
def test_k20_variant_borrows_its_pool_from_k500() -> None:
    k20 = SHARED / NOISE_TAG.format(20) / "seed42"
    assert not (k20 / "items.jsonl").exists() and (k20 / "prefill.jsonl").exists()
    a, b = load_replay(k20), load_replay(SHARED / NOISE_TAG.format(500) / "seed42")
    assert a.item_ids == b.item_ids and np.array_equal(a.items, b.items)
    assert a.relevant == b.relevant and a.prefill != b.prefill


@needs_shared
def test_replay_variants_lists_the_stored_folders() -> None:
    cyc = replay_variants(SHARED, "cycling")
    assert SHARED / "cycling/m10/seed42" in cyc and len(cyc) == 15
    assert cyc == sorted(cyc)
    noise = replay_variants(SHARED, "noise-static")
    assert len(noise) == 9 and all(p.name == "seed42" for p in noise)


def test_replay_variants_rejects_unknown_workloads(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="replayable") as err:
        replay_variants(tmp_path, "noise-stream")
    for name in EXPERIMENTS:
        assert name in str(err.value)
    with pytest.raises(FileNotFoundError):
        replay_variants(tmp_path, "cycling")  # a folder without the experiment


# -- a tiny hand-written replay folder ---------------------------------------------------------
def write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")


def tiny_folder(root: Path, *, exp: str = "cycling", warmup: int | None = 1) -> Path:
    """3 items on 2 topics, 3 queries; step 1 streams nothing."""
    folder = root / exp / "m2" / "seed7"
    folder.mkdir(parents=True)
    ids = ["a", "b", "c"]
    write_jsonl(
        folder / "items.jsonl",
        [
            {"id": i, "topic_id": t, "created_at": n}
            for n, (i, t) in enumerate(zip(ids, [0, 0, 1], strict=True))
        ],
    )
    # queries listed in step order; the npz stores them in a different order
    write_jsonl(
        folder / "queries.jsonl",
        [
            {"id": "q0", "topic_id": 1, "timestep": 0, "relevant_item_ids": ["c"]},
            {"id": "q1", "topic_id": 0, "timestep": 1, "relevant_item_ids": ["a", "b"]},
            {"id": "q2", "topic_id": 0, "timestep": 2, "relevant_item_ids": ["b"]},
        ],
    )
    write_jsonl(
        folder / "stream.jsonl",
        [
            {"t": 0, "streamed_item_id": "b"},
            {"t": 1, "streamed_item_id": None},
            {"t": 2, "streamed_item_id": "c"},
        ],
    )
    eye = np.eye(4, dtype=np.float32)
    np.savez(
        folder / "embeddings.npz",
        item_ids=np.array(["c", "a", "b"]),  # not the order of items.jsonl
        item_embs=eye[[2, 0, 1]],
        query_ids=np.array(["q2", "q0", "q1"]),
        query_embs=eye[[3, 2, 0]] * 1.0,
    )
    meta = {"workload_type": exp, "params": {"n_topics": 2, "seed": 7}, "n_warmup_steps": warmup}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return folder


def test_tiny_replay_folder(tmp_path: Path) -> None:
    w = load_replay(tiny_folder(tmp_path))
    assert w.name == "cycling"
    assert w.item_ids == ["c", "a", "b"]  # the npz order
    assert w.item_topics.tolist() == [1, 0, 0]
    assert np.array_equal(w.items, np.eye(4, dtype=np.float32)[[2, 0, 1]])
    # queries come back in step order (queries.jsonl), their vectors matched by id
    assert np.array_equal(w.queries, np.eye(4, dtype=np.float32)[[2, 0, 3]])
    assert w.query_topics.tolist() == [1, 0, 0]
    assert w.relevant == [("c",), ("a", "b"), ("b",)]
    assert w.stream.tolist() == [2, NO_ITEM, 0]  # indices into item_ids
    assert w.prefill == [] and w.warmup == 1 and w.scored_steps == 2
    assert w.params["tag"] == "m2" and w.params["seed"] == 7 and w.params["n_topics"] == 2
    assert w.params["source"] == str(tmp_path / "cycling" / "m2" / "seed7")
    assert w.offered == 2


def test_tiny_replay_prefill_and_null_warmup(tmp_path: Path) -> None:
    folder = tiny_folder(tmp_path, exp="retrieval_noise_static", warmup=None)
    write_jsonl(folder / "prefill.jsonl", [{"id": "b"}, {"id": "c"}])
    w = load_replay(folder)
    assert w.name == "noise-static" and w.prefill == [2, 0] and w.warmup == 0
    assert w.offered == 4


def test_tiny_replay_sibling_pool(tmp_path: Path) -> None:
    folder = tiny_folder(tmp_path, exp="retrieval_noise_static")
    other = tmp_path / "retrieval_noise_static" / "K1" / "seed7"
    other.mkdir(parents=True)
    (other / "meta.json").write_text(json.dumps({"params": {"seed": 7}}), encoding="utf-8")
    write_jsonl(other / "prefill.jsonl", [{"id": "a"}])
    w = load_replay(other)
    assert w.item_ids == load_replay(folder).item_ids and w.prefill == [1]
    assert np.all(w.stream == NO_ITEM)  # the sibling's stream is not this variant's
    assert w.params["tag"] == "K1"
    assert replay_variants(tmp_path, "noise-static") == [other, folder]


def test_missing_pool_everywhere(tmp_path: Path) -> None:
    lonely = tmp_path / "cycling" / "m3" / "seed1"
    lonely.mkdir(parents=True)
    (lonely / "meta.json").write_text("{}", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match="items.jsonl"):
        load_replay(lonely)


def test_missing_meta_json(tmp_path: Path) -> None:
    folder = tiny_folder(tmp_path)
    (folder / "meta.json").unlink()
    with pytest.raises(FileNotFoundError, match="meta.json"):
        load_replay(folder)


def test_items_disagreeing_with_embeddings(tmp_path: Path) -> None:
    folder = tiny_folder(tmp_path)
    write_jsonl(
        folder / "items.jsonl",
        [{"id": i, "topic_id": 0, "created_at": 0} for i in ["a", "b", "zzz"]],
    )
    with pytest.raises(ValueError, match="different items"):
        load_replay(folder)


# -- the runner: one policy replayed over a workload --------------------------------------------
def axis(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def hand_workload(warmup: int = 0) -> Workload:
    """Items a, b, c, d on axes 0-3; ``a`` is prefilled; see the comments of the test below."""
    q2 = axis(2) + 0.5 * axis(3)
    queries = np.stack([axis(0), axis(2), q2 / np.linalg.norm(q2), axis(3), axis(0)])
    return Workload(
        "hand",
        ["a", "b", "c", "d"],
        np.arange(4, dtype=np.int64),
        np.stack([axis(i) for i in range(4)]),
        queries,
        np.zeros(5, dtype=np.int64),
        [("a", "b"), ("c",), ("c", "d"), ("d",), ("a",)],
        np.array([1, 2, 0, 3, NO_ITEM], dtype=np.int64),  # b, c, a again, d, nothing
        prefill=[0],
        warmup=warmup,
    )


def test_runner_hand_checked_fifo() -> None:
    r = run(hand_workload(), "fifo", 3, seed=0)
    # t0: cache {a}, query a -> [a]: hit, P 1, R 1/2, F1 2/3; then b stored
    # t1: cache {a, b}, query c -> no hit; then c stored
    # t2: cache {a, b, c}, query c (+d) -> c first: hit, P 1/3, R 1/2, F1 0.4; a re-offered
    # t3: query d -> no hit; d stored, FIFO evicts a (the oldest insert)
    # t4: query a -> a is gone: no hit
    assert r.hits.tolist() == [1, 0, 1, 0, 0]
    np.testing.assert_allclose(r.scores, [2 / 3, 0, 0.4, 0, 0])
    assert (r.admitted, r.offered, r.evicted, r.steps) == (4, 5, 1, 5)
    m = r.metrics()
    assert m["hit_rate"] == pytest.approx(0.4)
    assert m["score"] == pytest.approx((2 / 3 + 0.4) / 5)
    assert m["first_half"] == pytest.approx(0.5) and m["second_half"] == pytest.approx(1 / 3)
    assert m["store_rate"] == pytest.approx(0.8)
    assert m["modifications"] == 4 and m["evictions"] == 1
    assert m["cost"] == pytest.approx(5 - (2 / 3 + 0.4) + LAMBDA * 4)
    assert m["mean_size"] == pytest.approx((1 + 2 + 3 + 3 + 3) / 5)
    assert m["us_per_step"] > 0


def test_runner_does_not_score_warmup_steps() -> None:
    r = run(hand_workload(warmup=2), "fifo", 3, seed=0)
    assert r.hits.tolist() == [1, 0, 0]  # steps 2-4 only
    np.testing.assert_allclose(r.scores, [0.4, 0, 0])
    assert r.mean_size == pytest.approx(3.0)
    assert r.admitted == 4 and r.steps == 5  # warm-up steps still run and stream


def test_runner_all_warmup_gives_zero_metrics() -> None:
    m = run(hand_workload(warmup=5), "fifo", 3, seed=0).metrics()
    assert m["hit_rate"] == m["score"] == m["first_half"] == m["second_half"] == 0.0
    assert m["mean_size"] == 0.0 and m["modifications"] == 4


def test_runner_k_limits_the_retrieved_set() -> None:
    r = run(hand_workload(), "fifo", 3, seed=0, k=1)
    # t2 now retrieves [c] only: P 1, R 1/2
    np.testing.assert_allclose(r.scores, [2 / 3, 0, 2 / 3, 0, 0])


def test_runner_reoffer_stores_no_duplicate() -> None:
    v = np.stack([axis(0), axis(1)])
    w = Workload(
        "again", ["a", "z"], np.zeros(2, dtype=np.int64), v, np.stack([axis(0)] * 5),
        np.zeros(5, dtype=np.int64), [("a",)] * 5, np.zeros(5, dtype=np.int64),
    )  # fmt: skip
    r = run(w, "fifo", 10, seed=0)
    assert r.offered == 5 and r.admitted == 1 and r.evicted == 0
    assert r.metrics()["store_rate"] == pytest.approx(0.2)
    assert r.mean_size == pytest.approx(4 / 5)  # sizes 0, 1, 1, 1, 1: never a second copy
    assert r.hits.tolist() == [0, 1, 1, 1, 1]
    np.testing.assert_allclose(r.scores, [0, 1, 1, 1, 1])


def test_runner_reoffer_after_eviction_is_admitted_again() -> None:
    # cycling m = K = 10: every item is re-offered 50 steps later, long after FIFO evicted it
    r = run(gen.cycling(10, seed=42), "fifo", 10, seed=42)
    assert r.offered == 100 and r.admitted == 100 and r.evicted == 90


@pytest.mark.parametrize(
    ("policy", "admitted"),
    [("fifo", 40), ("solar-e", 40), ("solar", 20), ("solar-a", 20)],
)
def test_runner_prefill_goes_through_admission(policy: str, admitted: int) -> None:
    # 40 prefill items in one direction: after the bootstrap (min(max(40 // 2, 5), 25) = 20
    # items) the regret gate sees zero information gain and stores nothing more
    v = np.full((40, 8), 1 / np.sqrt(8), dtype=np.float32)
    w = Workload(
        "prefill", [f"x{i}" for i in range(40)], np.zeros(40, dtype=np.int64), v, v[:2],
        np.zeros(2, dtype=np.int64), [("x0",), ("x39",)], np.full(2, NO_ITEM, dtype=np.int64),
        prefill=list(range(40)),
    )  # fmt: skip
    r = run(w, policy, 40, seed=1)
    assert r.offered == 40 and r.admitted == admitted
    assert r.mean_size == admitted
    assert r.metrics()["store_rate"] == pytest.approx(admitted / 40)


def test_runner_prefill_is_retrievable_at_step_0() -> None:
    r = run(hand_workload(), "fifo", 3, seed=0)
    assert r.hits[0] == 1  # only the prefilled "a" is stored at step 0


def test_set_f1() -> None:
    assert set_f1(["a", "x", "y"], frozenset({"a", "b"})) == pytest.approx(0.4)
    assert set_f1([], frozenset({"a"})) == 0.0
    assert set_f1(["a"], frozenset()) == 0.0
    assert set_f1(["a", "b"], frozenset({"a", "b"})) == pytest.approx(1.0)
    assert set_f1(["x", "y", "z"], frozenset({"a"})) == 0.0


# -- the paper's deterministic reference figures (cycling, K = 10) ------------------------------
@pytest.mark.parametrize("seed", gen.SEEDS)
def test_cycling_fifo_reference_figures(seed: int) -> None:
    assert run(gen.cycling(10, seed=seed), "fifo", 10, seed).metrics()["hit_rate"] == 0.9
    for m in (15, 20, 30, 50):
        assert run(gen.cycling(m, seed=seed), "fifo", 10, seed).metrics()["hit_rate"] == 0.0


def test_cycling_lru_reference_figure() -> None:
    rates = [run(gen.cycling(10, seed=s), "lru", 10, s).metrics()["hit_rate"] for s in gen.SEEDS]
    assert np.mean(rates) == pytest.approx(0.377, abs=0.005)


def test_runner_is_deterministic_per_seed() -> None:
    w = gen.working_set("uniform", steps=120, seed=3)
    a, b = run(w, "solar", 10, seed=5), run(w, "solar", 10, seed=5)
    assert np.array_equal(a.hits, b.hits) and np.array_equal(a.scores, b.scores)
    assert (a.admitted, a.evicted) == (b.admitted, b.evicted)


# -- the Workload container -----------------------------------------------------------------------
def test_workload_rejects_inconsistent_arrays() -> None:
    good = hand_workload()
    fields = dict(
        name="x", item_ids=good.item_ids, item_topics=good.item_topics, items=good.items,
        queries=good.queries, query_topics=good.query_topics, relevant=good.relevant,
        stream=good.stream,
    )  # fmt: skip
    Workload(**fields)  # type: ignore[arg-type]
    bad: list[dict[str, Any]] = [
        {"item_ids": ["a", "b", "c"]},
        {"relevant": good.relevant[:-1]},
        {"stream": good.stream[:-1]},
        {"query_topics": good.query_topics[:-1]},
        {"queries": good.queries[:, :4]},
        {"stream": np.array([0, 1, 2, 4, NO_ITEM])},
        {"stream": np.array([0, 1, 2, -2, NO_ITEM])},
    ]
    for change in bad:
        with pytest.raises(ValueError):
            Workload(**{**fields, **change})
    with pytest.raises(ValueError, match="unknown item index 9"):
        Workload(**fields, prefill=[0, 9])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="warmup"):
        Workload(**fields, warmup=6)  # type: ignore[arg-type]
    assert Workload(**fields, warmup=5).scored_steps == 0  # type: ignore[arg-type]
