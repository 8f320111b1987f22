"""The synthetic experiments by name: which workloads, capacities and settings each one sweeps.

An experiment expands into :class:`Job` s (one policy, one capacity, one seed, one workload
source); :func:`run_job` runs one. Jobs are plain picklable data, so a process pool can run them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solar_core.policies.presets import PRESETS

from .generators import GENERATORS
from .policy_spec import policy_name
from .replay import load_replay, replay_variants
from .runner import run
from .workload import Workload

Source = tuple[Any, ...]  # ("gen", name, ((param, value), ...), seed) or ("replay", folder)


@dataclass(frozen=True)
class Setting:
    """One point of an experiment's sweep: a label, a capacity and where its workload comes from."""

    label: str
    capacity: int
    source: Source
    seed: int


@dataclass(frozen=True)
class Job:
    """One run: a policy on a setting. ``key`` identifies the work (shared by duplicate rows)."""

    workload: str
    setting: str
    policy: str
    capacity: int
    seed: int
    source: Source
    k: int = 3

    @property
    def key(self) -> tuple[Any, ...]:
        return (
            self.source,
            self.policy,
            run_capacity(self.policy, self.capacity),
            self.seed,
            self.k,
        )


def run_capacity(policy: str, capacity: int) -> int | None:
    """The capacity a run really uses: ``None`` for a policy that ignores it, which therefore gives
    the same run at every K (run it once, report it at each)."""
    return None if PRESETS[policy_name(policy)].unbounded else capacity


@dataclass(frozen=True)
class Experiment:
    """A named sweep: ``settings(ks, seeds, data)`` lists its points (``default_k``: capacities)."""

    name: str
    description: str
    default_k: tuple[int, ...]
    points: Callable[[Sequence[int], int], list[tuple[str, int, dict[str, Any]]]]
    replay_tag: Callable[[str, int], str] | None = None  # label, K -> reference folder tag

    def settings(
        self, ks: Sequence[int], seeds: Sequence[int], data: str | Path | None = None
    ) -> list[Setting]:
        """The sweep's points. With ``data`` (the ``solar_synthetic`` folder) only the points that
        have reference files are kept, replayed from them; none at all is an error."""
        out: list[Setting] = []
        for seed in seeds:
            for label, capacity, params in self.points(ks, seed):
                if data is None:
                    source: Source = ("gen", self.name, tuple(sorted(params.items())), seed)
                else:
                    folder = self._replay_folder(data, label, capacity, seed)
                    if folder is None:
                        continue
                    source = ("replay", str(folder))
                out.append(Setting(label, capacity, source, seed))
        if not out:
            raise FileNotFoundError(
                f"no reference files in {data} for {self.name} with these capacities and seeds"
            )
        return out

    def _replay_folder(self, data: str | Path, label: str, capacity: int, seed: int) -> Path | None:
        if self.replay_tag is None:
            raise ValueError(f"{self.name} has no reference files to replay; drop --data")
        tag = self.replay_tag(label, capacity)
        for folder in replay_variants(data, self.name):
            if folder.parent.name == tag and folder.name == f"seed{seed}":
                return folder
        return None


def _cycling(ks: Sequence[int], seed: int) -> list[tuple[str, int, dict[str, Any]]]:
    return [(f"m/K={m / k:g}", k, {"m": m}) for k in ks for m in (10, 15, 20, 30, 50)]


def _working_set(ks: Sequence[int], seed: int) -> list[tuple[str, int, dict[str, Any]]]:
    return [(d, k, {"distribution": d}) for d in ("uniform", "zipf") for k in ks]


def _drift(ks: Sequence[int], seed: int) -> list[tuple[str, int, dict[str, Any]]]:
    return [(f"phase={p}", k, {"phase_length": p}) for p in (50, 100, 200, 500) for k in ks]


def _noise_static(ks: Sequence[int], seed: int) -> list[tuple[str, int, dict[str, Any]]]:
    return [("static", k, {"capacity": k}) for k in ks]


def _noise_stream(ks: Sequence[int], seed: int) -> list[tuple[str, int, dict[str, Any]]]:
    return [("stream", k, {}) for k in ks]


NOISE_K = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000)

EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in [
        Experiment(
            "cycling",
            "m topics in a fixed cycle, K = 10: FIFO thrashes once m > K",
            (10,),
            _cycling,
            replay_tag=lambda label, k: f"m{round(float(label.split('=')[1]) * k)}",
        ),
        Experiment(
            "working-set",
            "15 topics x 10 items, 500 steps, uniform or Zipf(1.2) topics; K swept",
            (5, 10, 15, 20, 30, 50, 75, 100, 150, 200),
            _working_set,
            replay_tag=lambda label, k: f"dist{label}",
        ),
        Experiment(
            "drift",
            "30 topics, 5 active per phase sliding by 4, 6 phases, K = 20",
            (20,),
            _drift,
            replay_tag=lambda label, k: f"plen{label.split('=')[1]}",
        ),
        Experiment(
            "noise-static",
            "frozen pool of K of 5,000 items, 1,000 queries with 3 relevant items",
            NOISE_K,
            _noise_static,
            replay_tag=lambda label, k: f"K{k}_intra0.15_inter0.30",
        ),
        Experiment(
            "noise-stream",
            "the 5,000 items streamed with warm-up queries, then 1,000 scored queries",
            NOISE_K,
            _noise_stream,
        ),
    ]
}


def plan(
    experiment: str,
    policies: Sequence[str],
    ks: Sequence[int] | None,
    seeds: Sequence[int],
    data: str | Path | None = None,
) -> list[Job]:
    """Every job of ``experiment`` for these policies, capacities and seeds."""
    exp = EXPERIMENTS[experiment]
    settings = exp.settings(ks or exp.default_k, seeds, data)
    return [
        Job(experiment, s.label, p, s.capacity, s.seed, s.source)
        for s in settings
        for p in policies
    ]


@functools.lru_cache(maxsize=4)
def load(source: Source) -> Workload:
    """The workload of a job source (cached: every policy of a setting shares it)."""
    if source[0] == "replay":
        return load_replay(source[1])
    _, name, params, seed = source
    return GENERATORS[name](seed=seed, **dict(params))


def run_job(job: Job) -> dict[str, float]:
    """Run one job and return its metrics."""
    return run(load(job.source), job.policy, job.capacity, job.seed, k=job.k).metrics()
