"""The seeded synthetic workloads of ``solar_bench.generators``.

Protocols and results: docs/benchmarks/synthetic-workloads.md.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from solar_bench import generators as gen
from solar_bench.workload import NO_ITEM, Workload

# the noise workloads are the slowest to build (~0.1-0.2 s each): build them once per module
_CACHE: dict[tuple[object, ...], Workload] = {}


def cached(name: str, *args: object, **kwargs: object) -> Workload:
    key = (name, args, tuple(sorted(kwargs.items())))
    if key not in _CACHE:
        _CACHE[key] = gen.GENERATORS[name](*args, **kwargs)
    return _CACHE[key]


SMALL = {
    "cycling": lambda seed: gen.cycling(10, seed=seed),
    "working-set": lambda seed: gen.working_set("uniform", seed=seed),
    "working-set-zipf": lambda seed: gen.working_set("zipf", seed=seed),
    "drift": lambda seed: gen.drift(50, seed=seed),
}


def all_workloads() -> list[tuple[str, Workload]]:
    return [
        ("cycling", cached("cycling", 10)),
        ("cycling-m50", cached("cycling", 50)),
        ("working-set", cached("working-set", "uniform")),
        ("working-set-zipf", cached("working-set", "zipf")),
        ("drift", cached("drift", 100)),
        ("noise-static-20", cached("noise-static", 20)),
        ("noise-static-5000", cached("noise-static", 5000)),
        ("noise-stream", cached("noise-stream")),
    ]


def arrays(w: Workload) -> tuple[object, ...]:
    return (
        w.item_ids,
        w.item_topics.tobytes(),
        w.items.tobytes(),
        w.queries.tobytes(),
        w.query_topics.tobytes(),
        [tuple(r) for r in w.relevant],
        w.stream.tobytes(),
        list(w.prefill),
        w.warmup,
    )


# -- shapes, dtypes, unit rows, valid indices --------------------------------------------------
@pytest.mark.parametrize(("m", "items", "steps"), [(10, 50, 100), (15, 75, 150), (50, 250, 500)])
def test_cycling_shapes(m: int, items: int, steps: int) -> None:
    w = gen.cycling(m, seed=42)
    assert w.name == "cycling"
    assert w.items.shape == (items, gen.DIM) and w.queries.shape == (steps, gen.DIM)
    assert len(w.item_ids) == items == len(set(w.item_ids)) == len(w.item_topics)
    assert len(w.relevant) == len(w.stream) == len(w.query_topics) == steps
    assert w.prefill == [] and w.warmup == 0 and w.scored_steps == steps
    assert w.offered == steps
    assert w.params == {"m": m, "cycles": 10, "seed": 42}


def test_other_shapes() -> None:
    ws = cached("working-set", "uniform")
    assert ws.items.shape == (150, 128) and ws.steps == 500 and ws.offered == 500
    dr = cached("drift", 100)
    assert dr.items.shape == (240, 128) and dr.steps == 600 and dr.offered == 600
    ns = cached("noise-static", 20)
    assert ns.items.shape == (5000, 128) and ns.steps == 1000 and ns.offered == 20
    st = cached("noise-stream")
    assert st.items.shape == (5000, 128) and st.steps == 6000 and st.offered == 5000


NAMES = ["cycling", "cycling-m50", "working-set", "working-set-zipf", "drift", "noise-static-20",
         "noise-static-5000", "noise-stream"]  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_rows_are_float32_unit_vectors_and_indices_valid(name: str) -> None:
    w = dict(all_workloads())[name]
    assert w.items.dtype == np.float32 and w.queries.dtype == np.float32
    assert w.dim == 128
    np.testing.assert_allclose(np.linalg.norm(w.items, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(w.queries, axis=1), 1.0, atol=1e-5)
    n = len(w.item_ids)
    stream = w.stream
    assert stream.dtype == np.int64
    assert np.all((stream == NO_ITEM) | ((stream >= 0) & (stream < n)))
    assert all(0 <= i < n for i in w.prefill)
    known = set(w.item_ids)
    assert all(r and set(r) <= known for r in w.relevant)
    # relevant items belong to the query's topic
    topic = dict(zip(w.item_ids, w.item_topics.tolist(), strict=True))
    for t, rel in enumerate(w.relevant):
        assert {topic[i] for i in rel} == {int(w.query_topics[t])}


# -- determinism -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SMALL))
def test_same_seed_gives_identical_arrays(name: str) -> None:
    assert arrays(SMALL[name](7)) == arrays(SMALL[name](7))


@pytest.mark.parametrize("name", sorted(SMALL))
def test_different_seed_gives_different_arrays(name: str) -> None:
    a, b = SMALL[name](42), SMALL[name](1337)
    assert a.item_ids == b.item_ids  # ids name the structure, not the draws
    assert not np.array_equal(a.items, b.items)
    assert not np.array_equal(a.queries, b.queries)


def test_noise_generators_are_seeded() -> None:
    a = cached("noise-static", 20)
    assert arrays(a) == arrays(gen.noise_static(20, seed=42))
    other = gen.noise_static(20, seed=1337)
    assert not np.array_equal(a.items, other.items) and a.prefill != other.prefill


# -- cycling structure --------------------------------------------------------------------------
@pytest.mark.parametrize("m", [10, 15, 30])
def test_cycling_round_robin(m: int) -> None:
    w = gen.cycling(m, seed=1337)
    assert w.steps == 10 * m
    for t in range(w.steps):
        topic = t % m
        assert w.query_topics[t] == topic
        assert w.relevant[t] == tuple(f"cy_t{topic}_i{j}" for j in range(5))
        assert w.item_ids[w.stream[t]] == f"cy_t{topic}_i{(t // m) % 5}"
        assert w.item_topics[w.stream[t]] == topic


def test_cycling_items_are_grouped_by_topic() -> None:
    w = gen.cycling(10, seed=42)
    assert w.item_ids[:6] == [f"cy_t0_i{j}" for j in range(5)] + ["cy_t1_i0"]
    assert w.item_topics.tolist() == [t for t in range(10) for _ in range(5)]


# -- working set --------------------------------------------------------------------------------
def test_working_set_streams_each_topic_round_robin() -> None:
    w = cached("working-set", "uniform")
    seen: dict[int, int] = {}
    for t in range(w.steps):
        topic = int(w.query_topics[t])
        k = seen.get(topic, 0)
        seen[topic] = k + 1
        assert w.item_ids[w.stream[t]] == f"ws_t{topic}_i{k % 10}"
        assert len(w.relevant[t]) == 10


def test_working_set_zipf_skews_towards_topic_0() -> None:
    uni = Counter(cached("working-set", "uniform").query_topics.tolist())
    zipf = Counter(cached("working-set", "zipf").query_topics.tolist())
    assert set(uni) == set(range(15))
    assert max(uni.values()) < 70  # uniform: ~33 per topic
    weights = 1.0 / np.arange(1, 16) ** 1.2
    p0 = weights[0] / weights.sum()  # ~0.37
    assert zipf.most_common(1)[0][0] == 0
    assert abs(zipf[0] / 500 - p0) < 0.06
    assert zipf[0] > 1.6 * zipf[1] and zipf[0] + zipf[1] + zipf[2] > 250
    assert zipf[14] < zipf[0] / 5


def test_working_set_rejects_unknown_distribution() -> None:
    with pytest.raises(ValueError, match="uniform"):
        gen.working_set("pareto")


# -- drift ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("plen", [50, 100])
def test_drift_phases_use_only_their_active_topics(plen: int) -> None:
    w = gen.drift(plen, seed=2024)
    assert w.steps == 6 * plen
    for phase in range(6):
        live = set(range(4 * phase, 4 * phase + 5))
        topics = w.query_topics[phase * plen : (phase + 1) * plen].tolist()
        assert set(topics) <= live
        assert len(set(topics)) >= 4  # uniform over 5 topics: all (or nearly all) appear
        streamed = w.item_topics[w.stream[phase * plen : (phase + 1) * plen]]
        assert np.array_equal(streamed, np.asarray(topics))
    # consecutive phases share exactly one topic (overlap 1)
    assert set(range(0, 5)) & set(range(4, 9)) == {4}


def test_drift_rejects_impossible_phases() -> None:
    with pytest.raises(ValueError):
        gen.drift(10, active=5, overlap=5)
    with pytest.raises(ValueError):
        gen.drift(10, topics=20, phases=6)  # needs 5 * 4 + 5 = 25 topics


def test_drift_rejects_negative_overlap() -> None:
    with pytest.raises(ValueError):
        gen.drift(10, topics=30, active=4, overlap=-1, phases=3)


# -- noise-static ------------------------------------------------------------------------------
def relevant_indices(w: Workload) -> set[int]:
    index = {item_id: i for i, item_id in enumerate(w.item_ids)}
    return {index[i] for rel in w.relevant for i in rel}


def test_noise_static_queries() -> None:
    w = cached("noise-static", 20)
    assert np.all(w.stream == NO_ITEM)
    assert all(len(r) == len(set(r)) == 3 for r in w.relevant)
    assert w.name == "noise-static" and w.warmup == 0


@pytest.mark.parametrize("capacity", [20, 500, 5000])
def test_noise_static_pool_rules(capacity: int) -> None:
    w = cached("noise-static", capacity)
    needed = relevant_indices(w)
    pool = list(w.prefill)
    assert len(pool) == capacity == len(set(pool))
    assert len(needed) > 500  # ~2,600 distinct relevant items
    if capacity >= len(needed):
        assert needed <= set(pool)
    else:
        assert set(pool) <= needed


def test_noise_static_pool_between_relevant_count_and_all() -> None:
    w = gen.noise_static(3000, seed=42)
    needed = relevant_indices(w)
    assert len(needed) < 3000
    pool = set(w.prefill)
    assert len(pool) == 3000 and needed < pool  # all relevant + distractors


def test_noise_static_pool_is_shuffled_and_capped() -> None:
    w = gen.noise_static(6000, seed=42)
    assert sorted(w.prefill) == list(range(5000))
    assert w.prefill != sorted(w.prefill)


def test_noise_static_same_items_for_every_capacity() -> None:
    a, b = cached("noise-static", 20), cached("noise-static", 5000)
    assert np.array_equal(a.items, b.items) and np.array_equal(a.queries, b.queries)
    assert a.relevant == b.relevant


# -- noise-stream -------------------------------------------------------------------------------
def test_noise_stream_warmup_then_queries_without_stream() -> None:
    w = cached("noise-stream")
    assert w.warmup == 5000 and w.scored_steps == 1000
    warm, scored = w.stream[:5000], w.stream[5000:]
    assert sorted(warm.tolist()) == list(range(5000))  # every item once, in random order
    assert warm.tolist() != list(range(5000))
    assert np.all(scored == NO_ITEM)
    # warm-up queries are aligned with the streamed item's topic
    assert np.array_equal(w.query_topics[:5000], w.item_topics[warm])
    # the scored part is the static workload's queries
    static = cached("noise-static", 20)
    assert w.relevant[5000:] == static.relevant
    assert np.array_equal(w.query_topics[5000:], static.query_topics)


# -- geometry -------------------------------------------------------------------------------------
def topic_stats(w: Workload, topics: int | None = None) -> tuple[float, float, float]:
    """Mean intra-topic item-item cosine, mean inter-topic one, max cosine of topic means
    (over the first ``topics`` topics: the full noise pool's 5,000 x 5,000 matrix is slow)."""
    keep = w.item_topics < (topics if topics is not None else w.item_topics.max() + 1)
    items, labels = w.items[keep], w.item_topics[keep]
    sims = items @ items.T
    same = labels[:, None] == labels[None, :]
    off = ~np.eye(len(labels), dtype=bool)
    intra = float(sims[same & off].mean())
    inter = float(sims[~same].mean())
    means = np.stack([items[labels == t].mean(axis=0) for t in np.unique(labels)])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    cm = means @ means.T
    return intra, inter, float(cm[~np.eye(len(means), dtype=bool)].max())


@pytest.mark.parametrize("seed", gen.SEEDS)
def test_intra_and_inter_topic_cosines(seed: int) -> None:
    # std 0.1 at d=128: |noise|^2 ~ 1.28, so item-item cosine ~ 1 / 2.28 ~ 0.44
    intra, inter, centre_max = topic_stats(gen.working_set("uniform", seed=seed))
    assert 0.40 < intra < 0.48
    assert abs(inter) < 0.05
    assert centre_max < 0.5


def test_noise_pool_cosines() -> None:
    # std 0.15: item-item cosine ~ 1 / (1 + 0.0225 * 128) ~ 0.26
    intra, inter, _ = topic_stats(cached("noise-static", 20), topics=12)
    assert 0.22 < intra < 0.30
    assert abs(inter) < 0.05


def test_queries_lie_close_to_their_topic() -> None:
    w = cached("cycling", 10)
    # query noise 0.05: query-centre cosine ~ 0.87, query-item ~ 0.87 * 0.66 ~ 0.57
    own = np.array(
        [w.items[w.item_topics == w.query_topics[t]] @ w.queries[t] for t in range(w.steps)]
    )
    assert 0.50 < own.mean() < 0.64
    other = np.array(
        [w.items[w.item_topics != w.query_topics[t]] @ w.queries[t] for t in range(w.steps)]
    )
    assert abs(other.mean()) < 0.05


@pytest.mark.parametrize(("dim", "n", "min_sep"), [(128, 50, 0.5), (8, 12, 0.5), (16, 20, 0.3)])
def test_topic_centres_are_separated(dim: int, n: int, min_sep: float) -> None:
    c = gen.topic_centres(n, dim, min_sep, np.random.default_rng(0))
    assert c.shape == (n, dim)
    np.testing.assert_allclose(np.linalg.norm(c, axis=1), 1.0, atol=1e-9)
    cos = c @ c.T
    assert cos[~np.eye(n, dtype=bool)].max() < 1 - min_sep


def test_topic_centres_give_up_after_the_try_budget() -> None:
    # 40 centres pairwise cos < 0 in d=2 cannot exist: the rest are accepted unchecked
    c = gen.topic_centres(40, 2, 1.0, np.random.default_rng(0))
    assert c.shape == (40, 2)
