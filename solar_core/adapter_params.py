"""How framework adapters get their :class:`SolarMemory`: a ready one, or the parameters to build
one. Shared by the LangChain and LlamaIndex adapters, which differ only in the embedders they
accept (:meth:`MemoryParams.convert_embedder`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .memory import SolarMemory

BUILD_DEFAULTS: dict[str, Any] = {"policy": "solar", "capacity": 50, "embedder": None, "seed": None}


def check_not_both(memory: object, build: dict[str, Any]) -> None:
    """A ready memory plus parameters that would build another is a contradiction: refuse it.

    >>> check_not_both(None, {"policy": "lru"})
    >>> check_not_both(SolarMemory(embedder="hash"), {"policy": "lru", "seed": None})
    Traceback (most recent call last):
    ...
    ValueError: pass memory= or the parameters to build one (policy), not both
    """
    given = sorted(name for name, value in build.items() if value != BUILD_DEFAULTS[name])
    if memory is not None and given:
        raise ValueError(
            f"pass memory= or the parameters to build one ({', '.join(given)}), not both"
        )


class MemoryParams(BaseModel):
    """The ``memory`` field of a pydantic adapter, and how it gets built.

    Pass ``memory=`` (a :class:`SolarMemory`, e.g. one shared with other components) *or* the
    parameters to build one: ``policy`` (a preset, default ``"solar"``), ``capacity`` (default
    50; ``None`` = unbounded), ``embedder`` and ``seed``. They are constructor arguments, not
    fields: the memory is the state, so a framework that rebuilds a component from its fields
    (LangChain's ``configurable_fields``, copies) keeps the same memory.
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
            data["memory"] = self.build_memory(**build)
        super().__init__(**data)

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        """Turn a framework's embedding model into a ``solar_core`` embedder (adapters override)."""
        return embedder

    @classmethod
    def build_memory(
        cls,
        policy: str = "solar",
        capacity: int | None = 50,
        embedder: object = None,
        seed: int | None = None,
    ) -> SolarMemory:
        return SolarMemory(policy, capacity, embedder=cls.convert_embedder(embedder), seed=seed)

    @property
    def policy(self) -> str:
        """The memory's policy (a preset name, or ``admission+eviction``)."""
        return self.memory.policy

    @property
    def capacity(self) -> int | None:
        return self.memory.capacity
