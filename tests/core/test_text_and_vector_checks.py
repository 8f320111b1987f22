"""Texts that are not valid Unicode and vectors that are not real numbers are refused before
anything changes, whatever the policy, in every call that takes them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from solar_core import SolarMemory
from solar_core.basics.validation import unit_rows, unit_scale, unit_vector
from tests.support.memories import POLICIES, full_state

LONE = "hello \ud800 world"


def seeded(policy: str) -> SolarMemory:
    memory = SolarMemory(policy, capacity=3, embedder="hash", seed=0)
    for text in ("alpha fact", "beta fact", "gamma fact", "delta fact"):
        memory.add(text)
    memory.retrieve("alpha")
    return memory


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.add(LONE),
        lambda m: m.add(LONE, embedding=np.ones(m.dim)),  # no embedder call to trip over it
        lambda m: m.add("fine", item_id="id \udc80"),
        lambda m: m.retrieve(LONE),
        lambda m: m.retrieve(LONE, embedding=np.ones(m.dim)),
        lambda m: m.embed_query(LONE),
    ],
    ids=["add", "add-vector", "item-id", "retrieve", "retrieve-vector", "embed-query"],
)
def test_a_lone_surrogate_is_refused_before_any_counter_moves(
    policy: str, call: Callable[[SolarMemory], object]
) -> None:
    memory = seeded(policy)
    before = full_state(memory)
    with pytest.raises(ValueError, match="not valid Unicode"):
        call(memory)
    assert full_state(memory) == before
    memory.check_invariants()


def test_arc_with_a_lone_surrogate_keeps_its_invariants() -> None:
    memory = SolarMemory("arc", capacity=3, embedder="hash")
    with pytest.raises(ValueError, match="surrogate"):
        memory.add("hello \ud800 world")
    assert memory.stats()["steps"] == 0
    memory.check_invariants()
    assert memory.add("hello world").admitted


def _complex(dim: int) -> np.ndarray:
    vector = np.zeros(dim, dtype=np.complex128)
    vector[0] = 1 + 2j
    vector[1] = 0.5
    return vector


BAD_VECTORS: dict[str, Callable[[int], object]] = {
    "complex-array": _complex,
    "complex-list": lambda dim: [1 + 2j] + [0.5] * (dim - 1),
    "complex-real-valued": lambda dim: np.ones(dim, dtype=np.complex64),
    "bool-array": lambda dim: np.ones(dim, dtype=bool),
    "bool-list": lambda dim: [True] * dim,
    "str-array": lambda dim: np.array(["1.0"] * dim),
    "str-list": lambda dim: ["1.0"] * dim,
    "object-array": lambda dim: np.array([1.0] * dim, dtype=object),
    "bytes-array": lambda dim: np.array([b"1"] * dim),
    "datetime-array": lambda dim: np.array(["2024-01-01"] * dim, dtype="datetime64[D]"),
}


@pytest.mark.parametrize("make", BAD_VECTORS.values(), ids=BAD_VECTORS.keys())
def test_vectors_that_are_not_real_numbers_are_refused_by_add_and_retrieve(
    make: Callable[[int], object],
) -> None:
    memory = seeded("solar")
    before = full_state(memory)
    vector = make(memory.dim)
    with pytest.raises(TypeError, match=r"numbers \(real"):
        memory.add("x", embedding=vector)
    with pytest.raises(TypeError, match=r"numbers \(real"):
        memory.retrieve(embedding=vector)
    assert full_state(memory) == before


@pytest.mark.parametrize("make", BAD_VECTORS.values(), ids=BAD_VECTORS.keys())
def test_the_shared_vector_checks_refuse_them(make: Callable[[int], object]) -> None:
    vector = make(4)
    for check in (lambda: unit_vector(vector, 4), lambda: unit_scale(vector, 4)):
        with pytest.raises(TypeError, match=r"numbers \(real"):
            check()
    with pytest.raises(TypeError, match=r"numbers \(real"):
        unit_rows(np.asarray([vector]) if isinstance(vector, np.ndarray) else [vector], 4, 1)


def test_an_embedder_returning_complex_vectors_is_refused() -> None:
    class Complex:
        dim = 4

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 4), dtype=np.complex128) * (1 + 1j)

    memory = SolarMemory("fifo", capacity=3, embedder=Complex())
    with pytest.raises(TypeError, match=r"numbers \(real"):
        memory.add("x")
    assert len(memory) == 0 and memory.stats()["steps"] == 0


@pytest.mark.parametrize(
    "vector",
    [
        np.array([1, 2, 3, 4], dtype=np.int64),
        np.array([1, 2, 3, 4], dtype=np.uint8),
        np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float16),
        np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float64),
        [1, 2.5, np.float32(3), np.int16(4)],
        (1.0, 0.0, 0.0, 0.0),
    ],
)
def test_real_vectors_of_any_numeric_kind_are_still_accepted(vector: object) -> None:
    memory = SolarMemory("fifo", capacity=3, dim=4)
    assert memory.add("x", embedding=vector).admitted
    assert memory.retrieve(embedding=vector)[0].text == "x"


def test_the_response_cache_refuses_a_complex_vector() -> None:
    from solar_core.engine.response_cache import ResponseCache

    cache = ResponseCache("hash")
    vector = np.ones(cache.dim, dtype=np.complex128) * (1 + 2j)
    with pytest.raises(TypeError, match="complex"):
        cache.store("what plan", "Team", vector=vector)
    with pytest.raises(TypeError, match="complex"):
        cache.lookup("what plan", vector=vector)
    assert cache.size() == 0
