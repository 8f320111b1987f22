"""A synthetic workload as the runner consumes it: items, scored queries and the item stream."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

NO_ITEM = -1  # a stream slot with no new item (the scored phase of the noise workloads)


@dataclass(frozen=True, eq=False)
class Workload:
    """Items, per-step queries and the item offered at each step, as index arrays.

    One step ``t`` of the paper's protocol: retrieve top-k for ``queries[t]``, score the hit against
    ``relevant[t]``, then offer item ``stream[t]`` (``NO_ITEM``: none). ``prefill`` items are
    offered before step 0, unscored; the first ``warmup`` steps run but are not scored.

    Attributes:
        name: the workload family (``"cycling"``, ...).
        item_ids: the id of each item (the reference implementation's ids).
        item_topics: each item's topic.
        items: ``[n_items, dim]`` unit rows.
        queries: ``[n_steps, dim]`` unit rows.
        query_topics: each query's topic.
        relevant: for each step, the ids of the items that count as a hit.
        stream: for each step, the index of the item offered, or ``NO_ITEM``.
        prefill: indices of the items offered before step 0.
        warmup: number of leading steps that are run but not scored.
        params: the generator's parameters (for reports).

    >>> w = Workload("toy", ["a"], np.zeros(1, np.int64), np.eye(2, dtype=np.float32)[:1],
    ...              np.eye(2, dtype=np.float32), np.zeros(2, np.int64), [("a",), ("a",)],
    ...              np.array([0, NO_ITEM]))
    >>> w.steps, w.dim, w.scored_steps
    (2, 2, 2)
    """

    name: str
    item_ids: list[str]
    item_topics: I64
    items: F32
    queries: F32
    query_topics: I64
    relevant: list[tuple[str, ...]]
    stream: I64
    prefill: list[int] = field(default_factory=list)
    warmup: int = 0
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n, steps = len(self.item_ids), len(self.queries)
        if self.items.shape[0] != n or len(self.item_topics) != n:
            raise ValueError("item_ids, item_topics and items must have one entry per item")
        if (
            len(self.relevant) != steps
            or len(self.stream) != steps
            or len(self.query_topics) != steps
        ):
            raise ValueError("queries, query_topics, relevant and stream need one entry per step")
        if self.items.ndim != 2 or self.queries.ndim != 2 or self.items.shape[1] != self.dim:
            raise ValueError("items and queries must be 2-D arrays of the same dimension")
        if not 0 <= self.warmup <= steps:
            raise ValueError(f"warmup must be in [0, {steps}], got {self.warmup}")
        bad = [i for i in [*self.stream.tolist(), *self.prefill] if not NO_ITEM <= i < n]
        if bad:
            raise ValueError(f"stream/prefill refer to unknown item index {bad[0]}")

    @property
    def steps(self) -> int:
        return len(self.queries)

    @property
    def dim(self) -> int:
        return int(self.queries.shape[1])

    @property
    def scored_steps(self) -> int:
        return self.steps - self.warmup

    @property
    def offered(self) -> int:
        """Items offered in total (prefill + stream): the denominator of the store rate."""
        return len(self.prefill) + int(np.count_nonzero(self.stream != NO_ITEM))
