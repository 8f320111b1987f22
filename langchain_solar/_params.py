"""What every adapter accepts to get its :class:`~solar_core.SolarMemory`: a ready one, or how to
build one (policy, capacity, embedder, seed)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from solar_core import SolarMemory

from .embeddings import to_embedder

BUILD_FIELDS = ("policy", "capacity", "embedder", "seed")


def build_memory(
    policy: str = "solar",
    capacity: int | None = 50,
    embedder: object = None,
    seed: int | None = None,
) -> SolarMemory:
    """A new memory; ``embedder`` may also be a LangChain ``Embeddings``."""
    return SolarMemory(policy, capacity, embedder=to_embedder(embedder), seed=seed)


class SolarParams(BaseModel):
    """Pydantic fields shared by the LangChain adapters that own a memory.

    Pass ``memory=`` (a :class:`~solar_core.SolarMemory`, e.g. one shared with other components)
    *or* the parameters to build one; passing both is an error, as is any unknown keyword (LangChain
    bases silently drop those, which hides typos such as ``capasity=``).
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    # None only until _build_memory below runs: after validation there is always a memory.
    memory: SolarMemory = Field(default=None, exclude=True)  # type: ignore[assignment]
    """The SOLAR memory (built from the fields below when not given)."""
    policy: str = "solar"
    """A ``solar_core`` preset: ``solar``, ``solar-a``, ``solar-e``, ``fifo``, ``lru``, ..."""
    capacity: int | None = 50
    """The most experiences kept (``None``: unbounded)."""
    embedder: Any = Field(default=None, exclude=True)
    """``None``/``"minilm"`` (all-MiniLM-L6-v2, offline), ``"hash"``, a ``solar_core`` embedder or
    any LangChain ``Embeddings``."""
    seed: int | None = None
    """Seeds Thompson sampling: same seed, same decisions."""

    @model_validator(mode="after")
    def _build_memory(self) -> SolarParams:
        given = self.model_fields_set
        if self.memory is None:
            self.memory = build_memory(self.policy, self.capacity, self.embedder, self.seed)
        elif given.intersection(BUILD_FIELDS):
            both = ", ".join(sorted(given.intersection(BUILD_FIELDS)))
            raise ValueError(f"pass memory= or the parameters to build one ({both}), not both")
        else:  # describe the memory actually used
            self.policy, self.capacity = self.memory.policy, self.memory.capacity
        return self
