"""``ScopedMemories``: one :class:`SolarMemory` per scope (user, thread, session), never shared."""

from __future__ import annotations

import threading
import zlib
from typing import Any

from solar_core.embedders.embedder import Embedder
from solar_core.engine.memory import SolarMemory
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL


class ScopedMemories:
    """A memory per scope (user, thread, session), created on first use with the same policy
    and one embedder, resolved once (a neural model loads once). A scope's seed is derived from
    ``seed`` and the scope's name, so it does not depend on which scope came first.

    Example:
        >>> scopes = ScopedMemories("fifo", capacity=5, embedder="hash", seed=0)
        >>> _ = scopes.get("alice").add("my code is 1234")
        >>> len(scopes.get("alice")), len(scopes.get("bob")), scopes.names()
        (1, 0, ['alice', 'bob'])
        >>> scopes.forget("alice"); scopes.names()
        ['bob']
    """

    def __init__(
        self,
        policy: str | None = None,
        capacity: int | None = 50,
        *,
        embedder: object = None,
        seed: int | None = None,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
    ) -> None:
        # Building one memory checks every parameter now, and resolves the embedder to share.
        probe = SolarMemory(
            policy, capacity, embedder=embedder, seed=seed, retrieval=retrieval, min_score=min_score
        )
        self.policy, self.capacity, self.seed = probe.policy, capacity, seed
        self._reading: dict[str, Any] = {"retrieval": probe.retrieval, "min_score": probe.min_score}
        self.embedder: Embedder | None = probe.embedder
        self._memories: dict[str, SolarMemory] = {}
        self._lock = threading.Lock()
        self._shared: SolarMemory | None = None

    @classmethod
    def shared(cls, memory: SolarMemory) -> ScopedMemories:
        """Every scope gets the same ``memory``: ``forget`` empties it, ``names`` lists none.

        >>> shared = SolarMemory("fifo", capacity=5, embedder="hash")
        >>> scopes = ScopedMemories.shared(shared)
        >>> scopes.get("alice") is scopes.get("bob") is shared, scopes.names()
        (True, [])
        """
        scopes = cls.__new__(cls)
        scopes.policy, scopes.capacity, scopes.seed = memory.policy, memory.capacity, None
        scopes.embedder = memory.embedder
        scopes._reading = {"retrieval": memory.retrieval, "min_score": memory.min_score}
        scopes._memories, scopes._lock, scopes._shared = {}, threading.Lock(), memory
        return scopes

    @staticmethod
    def check(scope: object) -> str:
        """``scope`` as a key: a non-empty str (ints are accepted and converted)."""
        if isinstance(scope, bool) or not isinstance(scope, str | int) or scope == "":
            raise ValueError(f"a scope must be a non-empty str, got {scope!r}")
        return str(scope)

    def get(self, scope: str) -> SolarMemory:
        """The memory of ``scope``, created empty on first use."""
        if self._shared is not None:
            return self._shared
        key = self.check(scope)
        with self._lock:
            memory = self._memories.get(key)
            if memory is None:
                seed = None if self.seed is None else (self.seed + zlib.crc32(key.encode())) % 2**32
                memory = SolarMemory(
                    self.policy, self.capacity, embedder=self.embedder, seed=seed, **self._reading
                )
                self._memories[key] = memory
            return memory

    def forget(self, scope: str) -> None:
        """Drop ``scope``'s memory (a shared memory is emptied instead)."""
        if self._shared is not None:
            self._shared.clear()
            return
        key = self.check(scope)
        with self._lock:
            self._memories.pop(key, None)

    def names(self) -> list[str]:
        """The scopes that have a memory, in order of creation."""
        with self._lock:
            return list(self._memories)

    def __contains__(self, scope: object) -> bool:
        return scope in self._memories

    def __len__(self) -> int:
        return len(self._memories)

    def __repr__(self) -> str:
        return (
            f"ScopedMemories(policy={self.policy!r}, capacity={self.capacity}, scopes={len(self)})"
        )
