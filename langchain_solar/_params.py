"""The LangChain adapters' memory parameters: ``solar_core``'s, plus LangChain ``Embeddings``."""

from __future__ import annotations

from typing import Any

from solar_core import SolarMemory
from solar_core.adapter_params import MemoryParams
from solar_core.persistence import MemoryStore, PersistenceError, Scope

from .embeddings import to_embedder


class SolarParams(MemoryParams):
    """``memory=`` or ``policy``/``capacity``/``embedder``/``seed``; ``embedder`` may also be any
    LangChain ``Embeddings``."""

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        return to_embedder(embedder)


def build_memory(
    policy: str = "solar",
    capacity: int | None = 50,
    embedder: object = None,
    seed: int | None = None,
) -> SolarMemory:
    """A new memory; ``embedder`` may also be a LangChain ``Embeddings``."""
    return SolarParams.build_memory(policy, capacity, embedder, seed)


def open_store(store: object, build: dict[str, Any]) -> tuple[MemoryStore, bool]:
    """An adapter's ``store=`` (see :meth:`~solar_core.adapter_params.MemoryParams.open_store`);
    ``embedder`` may be a framework embedding model."""
    return SolarParams.open_store(store, build)


def existing_memory(store: MemoryStore, scope: Scope) -> SolarMemory | None:
    """``scope``'s memory in ``store`` if the scope exists (never creates it): ``None`` once it
    was forgotten, here or by another process (a memory that missed that notices it here)."""
    for _ in range(2):
        if scope not in store:
            return None
        memory = store.get(scope)
        try:
            len(memory)  # catches up with the database: a forget elsewhere closes the memory
        except PersistenceError:
            if memory._journal is None or not memory._journal.closed:
                raise
            continue  # forgotten elsewhere (perhaps recreated since): look again
        return memory
    return None
