"""A memory's calls for asyncio code (``aretrieve``, ``afeedback``, ``aadd``, ``aremove``,
``aclear``): each runs the plain call in a worker thread, so the event loop never waits on an
embedder, the memory's lock or a database. They take the plain calls' arguments and return
what they return; the memory's lock orders them as it orders threads.

>>> import asyncio
>>> from solar_core import SolarMemory
>>> memory = SolarMemory("fifo", 5, embedder="hash", seed=0)
>>> async def turn() -> list[str]:
...     _ = await memory.aadd("My dog is called Max")
...     hits = await memory.aretrieve("What is my dog called?", k=1)
...     await memory.afeedback(like=True, retrieval=hits)
...     return [hit.text for hit in hits]
>>> asyncio.run(turn())
['My dog is called Max']
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .types import Decision, Hits


class AsyncCalls:
    """The ``a``-prefixed calls of :class:`~solar_core.SolarMemory` (a base class)."""

    retrieve: Callable[..., Hits]
    feedback: Callable[..., None]
    add: Callable[..., Decision]
    remove: Callable[[str], None]
    clear: Callable[[], None]

    async def aretrieve(self, query: str | None = None, **kwargs: Any) -> Hits:
        """:meth:`~solar_core.SolarMemory.retrieve`, awaited in a worker thread."""
        return await asyncio.to_thread(self.retrieve, query, **kwargs)

    async def afeedback(self, **kwargs: Any) -> None:
        """:meth:`~solar_core.SolarMemory.feedback`, awaited in a worker thread. Name the
        retrieval (``retrieval=hits``): concurrent tasks share one memory object."""
        await asyncio.to_thread(self.feedback, **kwargs)

    async def aadd(self, text: str, **kwargs: Any) -> Decision:
        """:meth:`~solar_core.SolarMemory.add`, awaited in a worker thread."""
        return await asyncio.to_thread(self.add, text, **kwargs)

    async def aremove(self, item_id: str) -> None:
        """:meth:`~solar_core.SolarMemory.remove`, awaited in a worker thread."""
        await asyncio.to_thread(self.remove, item_id)

    async def aclear(self) -> None:
        """:meth:`~solar_core.SolarMemory.clear`, awaited in a worker thread."""
        await asyncio.to_thread(self.clear)
