"""Vectors and memories for exact tests: topic clusters, one axis per item, state snapshots."""

from __future__ import annotations

import pickle

import numpy as np

from solar_core import SolarMemory, available_policies

POLICIES = available_policies()


def full_state(memory: SolarMemory) -> bytes:
    """Everything a memory holds (store, policies, RNG, counters, trace) as bytes.

    Two equal results mean the memory is exactly as it was: tests for bad input compare this
    before and after the failing call.
    """
    return pickle.dumps(memory, protocol=pickle.HIGHEST_PROTOCOL)


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def topic_vectors(
    n_topics: int, per_topic: int, dim: int = 32, spread: float = 0.1, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Topic centres ``(n_topics, dim)`` and items ``(n_topics, per_topic, dim)``, unit rows."""
    rng = np.random.default_rng(seed)
    centres = unit(rng.normal(size=(n_topics, dim)))
    items = unit(centres[:, None, :] + rng.normal(scale=spread, size=(n_topics, per_topic, dim)))
    return centres, items


# -- exact-sequence helpers: one axis per item, so retrieval hits are fully controlled ----------
def onehot(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def stored_ids(memory: SolarMemory) -> list[str]:
    return [item.id for item in memory.items()]


def add_onehot(memory: SolarMemory, name: str, axis: int) -> str | None:
    """Add item ``name`` on ``axis``; it must be admitted. Returns the evicted id, if any."""
    decision = memory.add(f"text {name}", embedding=onehot(axis, memory.dim), item_id=name)
    assert decision.admitted and decision.item_id == name
    memory.check_invariants()
    return decision.evicted


def hit_axes(memory: SolarMemory, *weighted: tuple[int, float]) -> list[str]:
    """Retrieve with a query that ranks the given axes by weight (k = number of axes)."""
    query = np.zeros(memory.dim, dtype=np.float32)
    for axis, weight in weighted:
        query[axis] = weight
    hits = memory.retrieve(embedding=query, k=len(weighted))
    memory.check_invariants()
    return [h.id for h in hits]
