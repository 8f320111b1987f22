"""What a cancel does to an async call that has started but not yet run."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from concurrent.futures import ThreadPoolExecutor

import pytest


async def cancelled_while_queued(call: Awaitable[object]) -> None:
    """Await ``call`` while the only worker thread is busy, cancel it while it waits for the
    worker, then free the worker: what a cancel does to a call that has not run yet."""
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(1))
    free = threading.Event()
    busy = loop.run_in_executor(None, free.wait)
    task = asyncio.ensure_future(call)
    await asyncio.sleep(0)  # the call has started: it waits for the worker
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    free.set()
    await busy
