"""Seeded synthetic workloads of the SOLAR paper: cycling, working set, drift, retrieval noise.

Every generator draws from one ``numpy.random.default_rng(seed)`` in the same order as the paper's
reference implementation, so a generated workload equals the reference's own pre-generated files
for that seed (``tests/test_bench_replay.py`` checks it when a copy of those files is at hand).

Geometry: topic centres are random unit vectors, rejection-sampled so that every pair has cosine
``< 1 - min_sep``; an item is ``normalise(centre + N(0, std^2 I))``, a query
``normalise(centre + N(0, 0.05^2 I))``.

>>> w = cycling(m=10, seed=42)
>>> w.steps, len(w.item_ids), w.dim, w.relevant[0]
(100, 50, 128, ('cy_t0_i0', 'cy_t0_i1', 'cy_t0_i2', 'cy_t0_i3', 'cy_t0_i4'))
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from .workload import NO_ITEM, Workload

F64 = npt.NDArray[np.float64]

DIM = 128
QUERY_NOISE = 0.05
SEEDS = (42, 1337, 2024)
_CENTRE_TRIES = 5000


def topic_centres(n: int, dim: int, min_sep: float, rng: np.random.Generator) -> F64:
    """``n`` unit vectors with pairwise cosine ``< 1 - min_sep`` (rejection sampling).

    After 5,000 draws the remaining centres are accepted unchecked (never needed at d = 128).
    """
    centres: list[F64] = []
    tries = 0
    while len(centres) < n and tries < _CENTRE_TRIES:
        c = _unit(rng.standard_normal(dim))
        if all(float(c @ e) < 1.0 - min_sep for e in centres):
            centres.append(c)
        tries += 1
    while len(centres) < n:
        centres.append(_unit(rng.standard_normal(dim)))
    return np.stack(centres)


def _unit(v: F64) -> F64:
    out: F64 = v / (np.linalg.norm(v) + 1e-12)  # the reference's epsilon: keeps bytes identical
    return out


def _around(centre: F64, std: float, rng: np.random.Generator) -> F64:
    return _unit(centre + rng.standard_normal(centre.shape[0]) * std)


class _Builder:
    """Accumulates items, steps and the round-robin stream pointer of a topic workload."""

    def __init__(self, prefix: str, centres: F64) -> None:
        self.prefix = prefix
        self.centres = centres
        self.ids: list[str] = []
        self.topics: list[int] = []
        self.vectors: list[F64] = []
        self.by_topic: dict[int, list[int]] = {}
        self.queries: list[F64] = []
        self.query_topics: list[int] = []
        self.relevant: list[tuple[str, ...]] = []
        self.stream: list[int] = []
        self._next: dict[int, int] = {}

    def make_items(self, per_topic: int, std: float, rng: np.random.Generator) -> None:
        for tid in range(len(self.centres)):
            for j in range(per_topic):
                self.by_topic.setdefault(tid, []).append(len(self.ids))
                self.ids.append(f"{self.prefix}_t{tid}_i{j}")
                self.topics.append(tid)
                self.vectors.append(_around(self.centres[tid], std, rng))

    def next_item(self, tid: int) -> int:
        """The topic's items in round robin (each is re-offered once the topic wraps around)."""
        pool = self.by_topic[tid]
        k = self._next.get(tid, 0)
        self._next[tid] = k + 1
        return pool[k % len(pool)]

    def step(
        self, tid: int, item: int, relevant: tuple[str, ...], rng: np.random.Generator
    ) -> None:
        self.stream.append(item)
        self.relevant.append(relevant)
        self.query_topics.append(tid)
        self.queries.append(_around(self.centres[tid], QUERY_NOISE, rng))

    def topic_step(self, tid: int, rng: np.random.Generator) -> None:
        """Stream the topic's next item; the query asks for the topic (all its items relevant)."""
        item = self.next_item(tid)
        self.step(tid, item, tuple(self.ids[i] for i in self.by_topic[tid]), rng)

    def build(self, name: str, params: dict[str, object], **extra: object) -> Workload:
        return Workload(
            name,
            self.ids,
            np.asarray(self.topics, dtype=np.int64),
            np.asarray(self.vectors, dtype=np.float32),
            np.asarray(self.queries, dtype=np.float32).reshape(-1, self.centres.shape[1]),
            np.asarray(self.query_topics, dtype=np.int64),
            self.relevant,
            np.asarray(self.stream, dtype=np.int64),
            params=params,
            **extra,  # type: ignore[arg-type]
        )


def cycling(
    m: int = 20,
    *,
    items_per_topic: int = 5,
    cycles: int = 10,
    std: float = 0.1,
    min_sep: float = 0.5,
    seed: int = 42,
    dim: int = DIM,
) -> Workload:
    """``m`` topics in a cycle: step ``t`` asks for topic ``t mod m`` and streams its next item.

    With capacity ``K < m`` FIFO has always evicted a topic's items before it comes round again.
    """
    rng = np.random.default_rng(seed)
    b = _Builder("cy", topic_centres(m, dim, min_sep, rng))
    b.make_items(items_per_topic, std, rng)
    for t in range(m * cycles):
        b.topic_step(t % m, rng)
    return b.build("cycling", {"m": m, "cycles": cycles, "seed": seed})


def working_set(
    distribution: str = "uniform",
    *,
    topics: int = 15,
    items_per_topic: int = 10,
    steps: int = 500,
    zipf: float = 1.2,
    std: float = 0.1,
    min_sep: float = 0.5,
    seed: int = 42,
    dim: int = DIM,
) -> Workload:
    """A stationary stream over ``topics`` topics drawn uniformly or Zipf(``zipf``) by rank."""
    if distribution not in ("uniform", "zipf"):
        raise ValueError(f"distribution must be 'uniform' or 'zipf', got {distribution!r}")
    rng = np.random.default_rng(seed)
    b = _Builder("ws", topic_centres(topics, dim, min_sep, rng))
    b.make_items(items_per_topic, std, rng)
    weights = 1.0 / np.arange(1, topics + 1, dtype=float) ** zipf
    weights /= weights.sum()
    for _ in range(steps):
        if distribution == "uniform":
            tid = int(rng.integers(0, topics))
        else:
            tid = int(rng.choice(topics, p=weights))
        b.topic_step(tid, rng)
    return b.build("working-set", {"distribution": distribution, "seed": seed})


def drift(
    phase_length: int = 100,
    *,
    topics: int = 30,
    active: int = 5,
    overlap: int = 1,
    phases: int = 6,
    items_per_topic: int = 8,
    std: float = 0.1,
    min_sep: float = 0.5,
    seed: int = 42,
    dim: int = DIM,
) -> Workload:
    """Phases of ``active`` topics sliding by ``active - overlap``, drawn uniformly in a phase."""
    stride = active - overlap
    if not 0 <= overlap < active or (phases - 1) * stride + active > topics:
        raise ValueError("drift needs 0 <= overlap < active and enough topics for every phase")
    rng = np.random.default_rng(seed)
    b = _Builder("dr", topic_centres(topics, dim, min_sep, rng))
    b.make_items(items_per_topic, std, rng)
    for phase in range(phases):
        live = list(range(phase * stride, phase * stride + active))
        for _ in range(phase_length):
            b.topic_step(int(rng.choice(live)), rng)
    return b.build("drift", {"phase_length": phase_length, "seed": seed})


# The retrieval-noise pool: 50 topics x 100 items, wider topics (std 0.15) closer together
# (min_sep 0.30) than elsewhere, and 1,000 scored queries with 3 relevant items each.
NOISE_TOPICS, NOISE_PER_TOPIC, NOISE_STD, NOISE_MIN_SEP = 50, 100, 0.15, 0.30
NOISE_QUERIES, NOISE_RELEVANT = 1000, 3


def _noise_pool(rng: np.random.Generator, dim: int) -> tuple[_Builder, set[int]]:
    """The retrieval-noise item pool and its scored queries (random relevant items each)."""
    b = _Builder("rn", topic_centres(NOISE_TOPICS, dim, NOISE_MIN_SEP, rng))
    b.make_items(NOISE_PER_TOPIC, NOISE_STD, rng)
    needed: set[int] = set()
    for _ in range(NOISE_QUERIES):
        tid = int(rng.integers(0, NOISE_TOPICS))
        picks = [b.by_topic[tid][int(j)] for j in _relevant(rng)]
        needed.update(picks)
        b.step(tid, NO_ITEM, tuple(b.ids[i] for i in picks), rng)
    return b, needed


def _relevant(rng: np.random.Generator) -> list[int]:
    return [int(j) for j in rng.choice(NOISE_PER_TOPIC, size=NOISE_RELEVANT, replace=False)]


def noise_static(capacity: int, *, seed: int = 42, dim: int = DIM) -> Workload:
    """A frozen pool of ``capacity`` items probed by 1,000 queries (3 relevant items each).

    The pool holds every relevant item plus random distractors when ``capacity`` allows, else a
    random subset of the relevant items; it is offered as ``prefill`` and nothing streams.
    """
    rng = np.random.default_rng(seed)
    b, needed = _noise_pool(rng, dim)
    gt = [i for i in range(len(b.ids)) if i in needed]
    others = [i for i in range(len(b.ids)) if i not in needed]
    size = min(capacity, len(b.ids))
    if size >= len(gt):
        extra = size - len(gt)
        chosen = rng.choice(len(others), size=extra, replace=False).tolist() if extra else []
        pool = gt + [others[i] for i in chosen]
    else:
        pool = [gt[i] for i in rng.choice(len(gt), size=size, replace=False).tolist()]
    rng.shuffle(pool)  # type: ignore[arg-type, unused-ignore]
    return b.build("noise-static", {"capacity": capacity, "seed": seed}, prefill=pool)


def noise_stream(*, seed: int = 42, dim: int = DIM) -> Workload:
    """Every pool item streamed in random order, each with an unscored query on its topic, then
    the 1,000 scored queries with nothing streamed."""
    rng = np.random.default_rng(seed)
    b, _ = _noise_pool(rng, dim)
    scored = (b.queries, b.query_topics, b.relevant, b.stream)
    b.queries, b.query_topics, b.relevant, b.stream = [], [], [], []
    for i in rng.permutation(len(b.ids)).tolist():
        tid = b.topics[i]
        picks = _relevant(rng)
        b.step(tid, i, tuple(b.ids[b.by_topic[tid][j]] for j in picks), rng)
    warmup = len(b.queries)
    b.queries += scored[0]
    b.query_topics += scored[1]
    b.relevant += scored[2]
    b.stream += scored[3]
    return b.build("noise-stream", {"seed": seed}, warmup=warmup)


GENERATORS: dict[str, Callable[..., Workload]] = {
    "cycling": cycling,
    "working-set": working_set,
    "drift": drift,
    "noise-static": noise_static,
    "noise-stream": noise_stream,
}
