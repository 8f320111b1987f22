"""A memory's calls for asyncio code: each runs the plain call in a worker thread, shielded: a
cancelled call that has started runs to its end, so retry an add with the same ``item_id``
(DESIGN.md, "Interface choices"; docs/GUIDE.md):

>>> import asyncio
>>> from solar_core import SolarMemory
>>> memory = SolarMemory("fifo", 5, embedder="hash", seed=0)
>>> [asyncio.run(memory.aadd("My dog is called Max", item_id="dog")).reason for _ in "12"]
['always', 'already stored']
>>> [hit.text for hit in asyncio.run(memory.aretrieve("What is my dog called?", k=1))]
['My dog is called Max']
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from solar_core.basics.types import Decision, Hits

_T = TypeVar("_T")


async def in_worker(call: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``call(*args, **kwargs)`` in the loop's default executor, with the caller's context
    variables (as :func:`asyncio.to_thread`), shielded (see the module's docs)."""
    loop = asyncio.get_running_loop()
    bound = functools.partial(contextvars.copy_context().run, call, *args, **kwargs)
    running = loop.run_in_executor(None, bound)
    running.add_done_callback(_retrieved)
    return await asyncio.shield(running)


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark ``future``'s error as seen, not logged: a dropped call's caller went away, and a
    retry meets it again (an awaited call still raises it)."""
    if not future.cancelled():
        future.exception()


class AsyncCalls:
    """The ``a``-prefixed calls of :class:`~solar_core.SolarMemory` (a base class). Cancelled,
    each still completes in its worker thread."""

    retrieve: Callable[..., Hits]
    feedback: Callable[..., None]
    add: Callable[..., Decision]
    remove: Callable[[str], None]
    clear: Callable[[], None]

    async def aretrieve(self, query: str | None = None, **kwargs: Any) -> Hits:
        """:meth:`~solar_core.SolarMemory.retrieve` in a worker thread."""
        return await in_worker(self.retrieve, query, **kwargs)

    async def afeedback(self, **kwargs: Any) -> None:
        """:meth:`~solar_core.SolarMemory.feedback` in a worker thread: name the retrieval
        (``retrieval=hits``), as concurrent tasks share one memory object."""
        await in_worker(self.feedback, **kwargs)

    async def aadd(self, text: str, **kwargs: Any) -> Decision:
        """:meth:`~solar_core.SolarMemory.add` in a worker thread (give an ``item_id`` to retry
        one that timed out safely)."""
        return await in_worker(self.add, text, **kwargs)

    async def aremove(self, item_id: str) -> None:
        """:meth:`~solar_core.SolarMemory.remove` in a worker thread."""
        await in_worker(self.remove, item_id)

    async def aclear(self) -> None:
        """:meth:`~solar_core.SolarMemory.clear` in a worker thread."""
        await in_worker(self.clear)
