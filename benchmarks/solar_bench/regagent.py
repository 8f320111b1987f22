"""RegAgent: the experience-following study's synthetic agent, rebuilt from its description.

The study (arXiv:2505.16067) does not publish RegAgent's code. This is our reconstruction; every
choice the description leaves open is stated here.

- **Task.** A hidden ``w`` in R^6 (standard normal, one per seed). An input ``x`` comes from one
  of three Gaussians with means -0.5, 0 and +0.5 in every coordinate and unit variance (the
  study's default), the component chosen uniformly. The true answer is ``y = w . x``.
- **Initial memory.** 100 records ``(x, w . x + eps)`` with ``eps ~ U[-1, 1]``, all stored (the
  curated seed memory; even ``pi_fixed`` starts from it).
- **Agent.** For each of 4,000 tasks it retrieves the 6 stored records whose ``x`` is most
  similar to the task's: an RBF kernel ``exp(-0.1 |x - x'|^2)``, which the memory's cosine
  retrieval computes on 256 random Fourier features of ``x``. Its in-context learner is ridge
  regression through the origin (``lambda = 0.1``) fitted on those 6 demonstrations, which it
  follows: a wrong stored ``y`` bends the fit. We tried a local fit with a free intercept;
  it let errors drift until every policy declined. It predicts ``y_hat``, and the task succeeds
  iff ``|y_hat - y| <= 1``.
- **Experience.** The agent offers its own record ``(x, y_hat)``, tagged with its true error for
  the evaluators. The step's quality (1 if it succeeded, else 0) is fed back to the retrieval
  that informed it, which is what history-based deletion reads.
- **Evaluators (addition).** ``fixed`` (nothing added), ``all``, coarse ``C1`` / ``C2`` / ``C3``
  (accept error <= 1.6 / 1.4 / 1.2) and ``strict`` (error <= 1.0).
- **Deletion.** none; periodic (window 500, alpha 0); history (n 5, beta 0.5); combined.
- **Variants.** ``shift``: the stream is ordered by mixture component, so the task distribution
  moves twice. We use the generating component rather than a fitted GMM, so the grouping is
  exact. ``constrained``: capacity 100, and when full the lowest-utility record (mean
  downstream quality, Laplace prior) is evicted.
- **Experience following.** For every task, we take the input similarity to its top
  demonstration (the RBF kernel above) and the output similarity
  ``exp(-(y_hat - y_demo)^2)`` (the study's RBF kernel, gamma = 1). We report the Pearson r of
  the two over the stream.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from solar_core.engine.memory import SolarMemory
from solar_core.policies.admission import (
    AdmissionPolicy,
    EvaluatorGate,
    MetadataThreshold,
    NeverAdmit,
)
from solar_core.policies.deletion import (
    CombinedDeletion,
    DeletionPolicy,
    HistoryDeletion,
    PeriodicDeletion,
)
from solar_core.policies.eviction import FifoEviction
from solar_core.policies.eviction.utility import UtilityEviction

F64 = npt.NDArray[np.float64]

DIM = 6
MEANS = (-0.5, 0.0, 0.5)
INITIAL = 100
TASKS = 4000
DEMOS = 6
RIDGE = 0.1
GAMMA_IN = 0.1  # input kernel width: typical |x - x'|^2 ~ 12 -> similarity ~0.3 between strangers
FEATURES = 256
SUCCESS = 1.0
BLOCK = 250  # success rate is plotted per block of tasks

#: addition policies: name -> error threshold (None: never add; inf: add all)
ADDITION: dict[str, float | None] = {
    "fixed": None,
    "all": float("inf"),
    "C1": 1.6,
    "C2": 1.4,
    "C3": 1.2,
    "strict": 1.0,
}
DELETION = ("none", "periodic", "history", "combined")
VARIANTS = ("standard", "shift", "constrained")


@dataclass(frozen=True)
class Tasks:
    """One seed's environment: the seed memory and the task stream."""

    seed: int
    w: F64
    seed_x: F64
    seed_y: F64
    x: F64
    y: F64
    component: npt.NDArray[np.int64]


def make_tasks(seed: int, *, shift: bool = False, tasks: int = TASKS) -> Tasks:
    """The environment of ``seed`` (``shift``: the stream ordered by mixture component).

    >>> t = make_tasks(42)
    >>> t.seed_x.shape, t.x.shape, bool(np.all(np.abs(t.seed_y - t.seed_x @ t.w) <= 1))
    ((100, 6), (4000, 6), True)
    """
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(DIM)
    means = np.asarray(MEANS)

    def draw(n: int) -> tuple[F64, npt.NDArray[np.int64]]:
        comp = rng.integers(0, len(MEANS), n)
        return means[comp][:, None] + rng.standard_normal((n, DIM)), comp

    seed_x, _ = draw(INITIAL)
    seed_y = seed_x @ w + rng.uniform(-1.0, 1.0, INITIAL)
    x, comp = draw(tasks)
    if shift:
        order = np.argsort(comp, kind="stable")
        x, comp = x[order], comp[order]
    return Tasks(seed, w, seed_x, seed_y, x, x @ w, comp)


def ridge_predict(demo_x: F64, demo_y: F64, x: F64, lam: float = RIDGE) -> float:
    """The in-context learner: ridge regression through the origin (the task's form,
    ``y = w . x``) fitted on the demonstrations, applied to ``x``. It follows them: a wrong
    stored ``y`` bends the fitted ``w`` for every task near it.

    >>> X = np.eye(6); round(ridge_predict(X, np.arange(6.0), np.ones(6), lam=0.0), 6)
    15.0
    """
    gram = demo_x.T @ demo_x + lam * np.eye(demo_x.shape[1])
    coef = np.linalg.solve(gram, demo_x.T @ demo_y)
    return float(x @ coef)


class Features:
    """Random Fourier features: ``phi(x) . phi(x') ~ exp(-gamma |x - x'|^2)``, so the memory's
    cosine retrieval ranks demonstrations by an RBF input similarity, as the study's does."""

    def __init__(self, seed: int, gamma: float = GAMMA_IN, size: int = FEATURES) -> None:
        rng = np.random.default_rng([seed, 7])
        self.omega = rng.normal(scale=np.sqrt(2 * gamma), size=(DIM, size))
        self.phase = rng.uniform(0, 2 * np.pi, size)
        self.gamma = gamma

    def __call__(self, x: F64) -> F64:
        out: F64 = np.cos(x @ self.omega + self.phase)
        return out

    def similarity(self, a: F64, b: F64) -> float:
        """The exact kernel the features approximate."""
        return float(np.exp(-self.gamma * float(np.sum((a - b) ** 2))))


def _admission(addition: str) -> AdmissionPolicy:
    limit = ADDITION[addition]
    if limit is None:
        return NeverAdmit(initial=INITIAL)
    return EvaluatorGate(MetadataThreshold("error", at_most=limit), initial=INITIAL)


def _deletion(name: str) -> DeletionPolicy | None:
    if name == "none":
        return None
    if name == "periodic":
        return PeriodicDeletion(window=500, alpha=0)
    if name == "history":
        return HistoryDeletion(n=5, beta=0.5)
    if name == "combined":
        return CombinedDeletion(PeriodicDeletion(window=500, alpha=0), HistoryDeletion(5, 0.5))
    raise ValueError(f"unknown deletion {name!r}; known: {', '.join(DELETION)}")


def run(tasks: Tasks, addition: str, deletion: str, *, constrained: bool = False) -> dict[str, Any]:
    """One agent over the stream; per-run metrics (success rates, memory size, Pearson r).

    >>> r = run(make_tasks(1, tasks=300), "strict", "history")
    >>> 0 < r["success_rate"] <= 1 and r["final_size"] >= 100
    True
    """
    if addition not in ADDITION:
        raise ValueError(f"unknown addition {addition!r}; known: {', '.join(ADDITION)}")
    phi = Features(tasks.seed)
    memory = SolarMemory(
        admission=_admission(addition),
        eviction=UtilityEviction() if constrained else FifoEviction(),
        capacity=INITIAL if constrained else None,
        dim=FEATURES,
        k=DEMOS,
        deletion=_deletion(deletion),
        trace_size=1,
    )
    for i, (x, y) in enumerate(zip(tasks.seed_x, tasks.seed_y, strict=True)):
        meta = {"x": x.tolist(), "y": float(y), "error": abs(float(y - x @ tasks.w))}
        memory.add(f"seed {i}: y={y:.3f}", embedding=phi(x), metadata=meta)
    success = np.zeros(len(tasks.x), dtype=bool)
    input_sim = np.zeros(len(tasks.x))
    output_sim = np.zeros(len(tasks.x))
    sizes = np.zeros(len(tasks.x), dtype=np.int64)
    deleted = 0
    for t, (x, y) in enumerate(zip(tasks.x, tasks.y, strict=True)):
        hits = memory.retrieve(embedding=phi(x))
        demo_x = np.asarray([h.metadata["x"] for h in hits])
        demo_y = np.asarray([h.metadata["y"] for h in hits])
        y_hat = ridge_predict(demo_x, demo_y, x)
        err = abs(y_hat - float(y))
        success[t] = err <= SUCCESS
        input_sim[t] = phi.similarity(x, demo_x[0])
        output_sim[t] = np.exp(-((y_hat - demo_y[0]) ** 2))
        memory.feedback(score=float(success[t]), retrieval=hits)
        meta = {"x": x.tolist(), "y": y_hat, "error": err, "query": f"task {t}"}
        decision = memory.add(f"task {t}: y={y_hat:.3f}", embedding=phi(x), metadata=meta)
        deleted += len(decision.deleted)
        sizes[t] = len(memory)
    blocks = success[: len(success) // BLOCK * BLOCK].reshape(-1, BLOCK).mean(axis=1)
    r = float(np.corrcoef(input_sim, output_sim)[0, 1]) if output_sim.std() > 0 else float("nan")
    stats = memory.stats()
    return {
        "success_rate": float(success.mean()),
        "first_quarter": float(success[: len(success) // 4].mean()),
        "last_quarter": float(success[-(len(success) // 4) :].mean()),
        "final_size": int(len(memory)),
        "mean_size": float(sizes.mean()),
        "added": int(stats["admitted"] - INITIAL),
        "deleted": deleted,
        "pearson_r": r,
        "blocks": blocks.tolist(),
    }


def records(
    seeds: Sequence[int],
    *,
    tasks: int = TASKS,
    additions: Sequence[str] = tuple(ADDITION),
    deletions: Sequence[str] = DELETION,
    variants: Sequence[str] = VARIANTS,
    progress: Callable[[], None] = lambda: None,
) -> list[dict[str, Any]]:
    """One record per (variant, addition, deletion, seed). ``constrained`` runs combined
    deletion only (the study's setting), with every addition policy."""
    out = []
    for variant in variants:
        for seed in seeds:
            env = make_tasks(seed, shift=variant == "shift", tasks=tasks)
            dels = ("combined",) if variant == "constrained" else deletions
            for addition in additions:
                for deletion in dels:
                    metrics = run(env, addition, deletion, constrained=variant == "constrained")
                    progress()
                    out.append(
                        dict(
                            workload="regagent",
                            setting=variant,
                            policy=addition,
                            deletion=deletion,
                            seed=seed,
                            **metrics,
                        )
                    )
    return out


METRICS = (
    "success_rate",
    "first_quarter",
    "last_quarter",
    "final_size",
    "added",
    "deleted",
    "pearson_r",
)
#: the table's columns (``solar-bench regagent``)
COLUMNS = ("setting", "policy", "deletion", METRICS[0], "success_rate_se", *METRICS[1:])


def aggregate(recs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean of each metric over seeds, the standard error of the success rate, mean blocks."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in recs:
        groups.setdefault((r["setting"], r["policy"], r["deletion"]), []).append(r)
    rows = []
    for (setting, policy, deletion), rs in groups.items():
        row: dict[str, Any] = dict(
            workload="regagent", setting=setting, policy=policy, deletion=deletion
        )
        row["seeds"] = [r["seed"] for r in rs]
        for m in METRICS:
            row[m] = float(np.nanmean([r[m] for r in rs]))
        rates = [r["success_rate"] for r in rs]
        row["success_rate_se"] = (
            float(np.std(rates, ddof=1) / np.sqrt(len(rs))) if len(rs) > 1 else 0.0
        )
        row["blocks"] = np.mean([r["blocks"] for r in rs], axis=0).tolist()
        rows.append(row)
    return rows
