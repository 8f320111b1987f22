"""A memory's calls for asyncio code (``aretrieve``, ``afeedback``, ``aadd``, ``aremove``,
``aclear``): each runs the plain call in a worker thread, so the event loop never waits on an
embedder, the memory's lock or a database. They take the plain calls' arguments and return
what they return; the memory's lock orders them as it orders threads.

A cancelled call (``task.cancel()``, an ``asyncio.wait_for`` or ``asyncio.timeout`` that ran
out) is never undone nor cut short: once its coroutine has started, the plain call runs to its
end in the worker thread, and only its result (or its error) is dropped. Only a call cancelled
before the event loop ever ran it (e.g. a task cancelled right after it was created) does
nothing. The step itself is all or nothing either way. A thread cannot be stopped halfway, and
a call that were dropped only while it waited for a worker would make "did it run?" a race.

So a write that timed out may have happened: retry an add with the same ``item_id``. The
retry finds the item stored (``Decision.reason == "already stored"``: nothing is stored
twice, the persisted log and other processes included) or stores it if the first never ran:

>>> import asyncio
>>> from solar_core import SolarMemory
>>> memory = SolarMemory("fifo", 5, embedder="hash", seed=0)
>>> async def remember(text: str, key: str) -> str:
...     try:
...         decision = await asyncio.wait_for(memory.aadd(text, item_id=key), timeout=5)
...     except asyncio.TimeoutError:
...         decision = await memory.aadd(text, item_id=key)  # the same key: no second copy
...     return decision.reason
>>> asyncio.run(remember("My dog is called Max", "dog"))
'always'
>>> asyncio.run(remember("My dog is called Max", "dog"))
'already stored'
>>> async def turn() -> list[str]:
...     hits = await memory.aretrieve("What is my dog called?", k=1)
...     await memory.afeedback(like=True, retrieval=hits)
...     return [hit.text for hit in hits]
>>> asyncio.run(turn())
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
    """``call(*args, **kwargs)`` in the loop's default executor (with the caller's context
    variables, as :func:`asyncio.to_thread`), awaited so that cancelling the await does not
    cancel the call: a call still waiting for a free worker would otherwise be dropped, one
    already running not, and the caller could not tell which. A dropped call's error is
    not logged as never retrieved: its caller went away, and a retry meets the error again."""
    loop = asyncio.get_running_loop()
    bound = functools.partial(contextvars.copy_context().run, call, *args, **kwargs)
    running = loop.run_in_executor(None, bound)
    running.add_done_callback(_retrieved)
    return await asyncio.shield(running)


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Mark ``future``'s error as seen (:func:`asyncio.shield` forgets it once its caller is
    cancelled); an awaited call still raises it."""
    if not future.cancelled():
        future.exception()


class AsyncCalls:
    """The ``a``-prefixed calls of :class:`~solar_core.SolarMemory` (a base class). Cancelled,
    each still completes in its worker thread (see the module's docs)."""

    retrieve: Callable[..., Hits]
    feedback: Callable[..., None]
    add: Callable[..., Decision]
    remove: Callable[[str], None]
    clear: Callable[[], None]

    async def aretrieve(self, query: str | None = None, **kwargs: Any) -> Hits:
        """:meth:`~solar_core.SolarMemory.retrieve`, awaited in a worker thread. Cancelled, the
        retrieval still happens (a recorded one credits its hits) and its hits are dropped."""
        return await in_worker(self.retrieve, query, **kwargs)

    async def afeedback(self, **kwargs: Any) -> None:
        """:meth:`~solar_core.SolarMemory.feedback`, awaited in a worker thread. Name the
        retrieval (``retrieval=hits``): concurrent tasks share one memory object. Cancelled,
        the rating still happens; a retry of it is refused (a retrieval is rated once)."""
        await in_worker(self.feedback, **kwargs)

    async def aadd(self, text: str, **kwargs: Any) -> Decision:
        """:meth:`~solar_core.SolarMemory.add`, awaited in a worker thread. Cancelled or timed
        out, the add still runs to its end and its :class:`~solar_core.Decision` is dropped:
        give an ``item_id`` to retry it safely (the retry's reason is ``"already stored"`` if
        the first stored it)."""
        return await in_worker(self.add, text, **kwargs)

    async def aremove(self, item_id: str) -> None:
        """:meth:`~solar_core.SolarMemory.remove`, awaited in a worker thread. Cancelled, the
        item is still removed (a retry then raises :class:`~solar_core.UnknownItemError`)."""
        await in_worker(self.remove, item_id)

    async def aclear(self) -> None:
        """:meth:`~solar_core.SolarMemory.clear`, awaited in a worker thread. Cancelled, the
        memory is still cleared."""
        await in_worker(self.clear)
