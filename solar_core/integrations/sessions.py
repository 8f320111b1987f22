"""``Sessions``: the memories a framework adapter serves, one per session key, in this process or
in a ``MemoryStore``. The key ``""`` is the *unnamed* session, which never collides with a
session of any name, not even ``"default"``."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from solar_core.engine.extraction import Extraction
from solar_core.engine.memory import SolarMemory
from solar_core.engine.scoped_memories import ScopedMemories
from solar_core.persistence import MemoryStore, Scope
from solar_core.persistence.memory_store import ScopeView

#: the name the unnamed session has in a per-process table of memories
UNNAMED = "default"


class Sessions:
    """One memory per session key, made on first use; ``unnamed``: what holds the unnamed
    session's memory, and its name there (a table's :data:`UNNAMED`, a store's default scope);
    ``extraction``: what each memory made in this process does with what it is offered (a
    store's scopes have the store's, a shared memory its own)."""

    def __init__(
        self,
        named: ScopedMemories | ScopeView,
        unnamed: tuple[ScopedMemories, str] | tuple[MemoryStore, Scope],
        store: MemoryStore | None = None,
        owns_store: bool = False,
        extraction: Extraction | None = None,
    ) -> None:
        self._named, self._unnamed = named, unnamed
        self._store, self.owns_store = store, owns_store
        self._extraction = extraction
        # the memories given the extraction (once: a caller may change one's afterwards)
        self._extracting: weakref.WeakSet[SolarMemory] = weakref.WeakSet()
        self._lock = threading.Lock()

    @classmethod
    def shared(cls, memory: SolarMemory) -> Sessions:
        """Every session is ``memory`` (one memory shared on purpose: forgetting empties it)."""
        named = ScopedMemories.shared(memory)
        return cls(named, (named, UNNAMED))

    @classmethod
    def in_process(
        cls,
        policy: str | None,
        capacity: int | None,
        *,
        extraction: Extraction | None = None,
        **settings: Any,
    ) -> Sessions:
        """A memory per session in this process, all sharing one embedder (and ``extraction``,
        set on each memory as it is made).

        >>> from solar_core.engine.extraction import Extraction
        >>> sessions = Sessions.in_process("fifo", 5, embedder="hash", seed=0,
        ...     extraction=Extraction.of(lambda text: [("Ana lives in Rome", "ana/home")]))
        >>> _ = sessions.get("ana").add("Ana: we moved to Rome!")
        >>> [(item.text, item.key) for item in sessions.get("ana").items()]
        [('Ana lives in Rome', 'ana/home'), ('Ana: we moved to Rome!', None)]
        """
        named = ScopedMemories(policy, capacity, **settings)
        unnamed = ScopedMemories(policy, capacity, **{**settings, "embedder": named.embedder})
        return cls(named, (unnamed, UNNAMED), extraction=extraction)

    @classmethod
    def stored(
        cls, store: MemoryStore, part: str, default_scope: Scope, *, owns_store: bool
    ) -> Sessions:
        """A scope of ``store`` per session, named by the scope part ``part``; the unnamed
        session is ``default_scope`` (``owns_store``: :meth:`close` closes the store)."""
        return cls(store.view(part), (store, default_scope), store, owns_store)

    @property
    def store(self) -> MemoryStore | None:
        return self._store

    def check(self, key: object) -> str:
        """``key`` as a session key (refused with a clear error if it cannot be one)."""
        return self._named.check(key)

    def _holder(self, key: str) -> tuple[Any, Any]:
        """What holds session ``key``'s memory, and under which name."""
        return (self._named, key) if key else self._unnamed

    def get(self, key: str) -> SolarMemory:
        """The memory of session ``key`` (``""``: the unnamed one), made on first use."""
        holder, name = self._holder(key)
        memory: SolarMemory = holder.get(name)
        if self._extraction is not None:
            with self._lock:  # before any caller offers it a text: under the lock
                if memory not in self._extracting:
                    memory.extraction = self._extraction
                    self._extracting.add(memory)
        return memory

    def existing(self, key: str) -> SolarMemory | None:
        """The memory of session ``key`` if it exists (never makes one)."""
        holder, name = self._holder(key)
        if isinstance(self._named, ScopeView):
            return self._named.store.existing(Scope.of({self._named.part: key}) if key else name)
        if self._unnamed[0] is self._named:  # shared: every session is the one memory
            return self._named.get(UNNAMED)
        return holder.get(name) if name in holder.names() else None

    def forget(self, key: str) -> None:
        """Drop session ``key``'s memory (with a store: its rows; shared: empty it)."""
        holder, name = self._holder(key)
        holder.forget(name)

    def names(self) -> list[str]:
        """The named sessions that have a memory (with a store: those of other processes too)."""
        return self._named.names()

    def close(self) -> None:
        """Snapshot and close the store if these sessions opened it (else a no-op)."""
        if self._store is not None and self.owns_store:
            self._store.close()

    def unowned(self) -> Sessions:
        """The same sessions, never closing the store (for an adapter's shallow copy)."""
        twin = Sessions(self._named, self._unnamed, self._store, False, self._extraction)
        twin._extracting, twin._lock = self._extracting, self._lock  # the same memories
        return twin
