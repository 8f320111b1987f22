"""Run many jobs, in parallel processes when asked, each distinct piece of work once."""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, TypeVar

from .progress import Progress

J = TypeVar("J")


_limits: list[Any] = []  # keeps the active threadpoolctl limiter alive


def limit_blas_threads(n: int | None) -> bool:
    """Cap BLAS at ``n`` threads in this process (``None``: leave it). False if not possible.

    Why: on a shared 2-core VM, OpenBLAS's threaded matrix-vector product oversubscribes the
    cores as soon as anything else runs (our own worker processes included): a 10,000 x 384
    product measured 4 ms with 2 threads against 0.3 ms with 1. Uses threadpoolctl when installed
    (the ``bench`` extra).
    """
    if n is None:
        return True
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return False
    _limits[:] = [threadpool_limits(limits=n, user_api="blas")]
    return True


def default_workers() -> int:
    """One worker per core, at most 4 (the suite is sized for a 2-core machine)."""
    return max(1, min(4, os.cpu_count() or 1))


def execute(
    jobs: Sequence[J],
    work: Callable[[J], Any],
    *,
    key: Callable[[J], Hashable] = lambda job: job,
    workers: int = 1,
    label: str = "runs",
    progress: bool = True,
    blas_threads: int | None = None,
) -> list[Any]:
    """``[work(job) for job in jobs]``, computing each distinct ``key(job)`` once.

    ``work`` and the jobs must be picklable when ``workers > 1`` (a process pool runs them).
    """
    unique: dict[Hashable, J] = {}
    for job in jobs:
        unique.setdefault(key(job), job)
    bar = Progress(label, len(unique), enabled=progress)
    done: dict[Hashable, Any] = {}
    if workers <= 1 or len(unique) <= 1:
        for k, job in unique.items():
            done[k] = work(job)
            bar.advance()
    else:
        with ProcessPoolExecutor(
            max_workers=workers, initializer=limit_blas_threads, initargs=(blas_threads,)
        ) as pool:
            futures = {pool.submit(work, job): k for k, job in unique.items()}
            for future in as_completed(futures):
                done[futures[future]] = future.result()
                bar.advance()
    bar.close()
    return [done[key(job)] for job in jobs]
