"""What every adapter accepts to get its :class:`~solar_core.SolarMemory`: a ready one, or how to
build one (policy, capacity, embedder, seed)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from solar_core import SolarMemory

from .embeddings import to_embedder

BUILD_DEFAULTS: dict[str, Any] = {"policy": "solar", "capacity": 50, "embedder": None, "seed": None}


def build_memory(
    policy: str = "solar",
    capacity: int | None = 50,
    embedder: object = None,
    seed: int | None = None,
) -> SolarMemory:
    """A new memory; ``embedder`` may also be a LangChain ``Embeddings``."""
    return SolarMemory(policy, capacity, embedder=to_embedder(embedder), seed=seed)


def check_not_both(memory: object, build: dict[str, Any]) -> None:
    """A ready memory and parameters that would build another are a contradiction: refuse it."""
    given = sorted(name for name, value in build.items() if value != BUILD_DEFAULTS[name])
    if memory is not None and given:
        raise ValueError(
            f"pass memory= or the parameters to build one ({', '.join(given)}), not both"
        )


class SolarParams(BaseModel):
    """The ``memory`` field shared by the pydantic LangChain adapters, and how it gets built.

    Pass ``memory=`` (a :class:`~solar_core.SolarMemory`, e.g. one shared with other components)
    *or* the parameters to build one: ``policy`` (a preset, default ``"solar"``), ``capacity``
    (default 50; ``None`` = unbounded), ``embedder`` (``None``/``"minilm"``, ``"hash"``, a
    ``solar_core`` embedder or any LangChain ``Embeddings``) and ``seed``. They are constructor
    arguments, not fields: the memory is the state, so LangChain's ``configurable_fields`` and
    copies rebuild the adapter around the same memory.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    # Always set after __init__ (the annotation says what every reader sees).
    memory: SolarMemory = Field(default=None, exclude=True)  # type: ignore[assignment]
    """The SOLAR memory."""

    def __init__(self, **data: Any) -> None:
        build = {name: data.pop(name) for name in list(data) if name in BUILD_DEFAULTS}
        memory = data.get("memory")
        check_not_both(memory, build)
        if memory is None:
            data["memory"] = build_memory(**build)
        super().__init__(**data)

    @property
    def policy(self) -> str:
        """The memory's policy (a preset name, or ``admission+eviction``)."""
        return self.memory.policy

    @property
    def capacity(self) -> int | None:
        return self.memory.capacity
