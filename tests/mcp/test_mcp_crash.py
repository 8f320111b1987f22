"""A server killed (SIGKILL) while remembering loses nothing it acknowledged: every item whose
verdict reached the client is in the store when it is opened again."""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import McpError

from solar_core.persistence import MemoryStore, Scope
from tests.support.mcp_servers import stdio_session

pytestmark = pytest.mark.slow

ROUNDS = 30


def server_pid(db: Path) -> int:
    """The pid of the server process serving ``db`` (a path no other process names)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(db).encode() in argv and b"mcp" in argv:
                return int(entry.name)
    raise AssertionError(f"no server process for {db}")


def disconnected(err: BaseException) -> bool:
    """Whether ``err`` (a group's every leaf) is the client losing its server."""
    leaves = getattr(err, "exceptions", None)
    if leaves is not None:
        return all(disconnected(leaf) for leaf in leaves)
    return isinstance(err, McpError | anyio.BrokenResourceError | ConnectionError)


async def remember_until_killed(
    session: ClientSession, label: str, rng: random.Random, acknowledged: list[str]
) -> None:
    """``remember`` in a loop, noting each acknowledged id, until the server is gone."""
    n = 0
    while True:
        text = f"{label} fact {n}: the value is {rng.random()}"
        try:
            result = await session.call_tool("remember", {"text": text})
        except (McpError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return  # killed: this call was never acknowledged
        assert not result.isError and result.structuredContent, result
        assert result.structuredContent["stored"]
        acknowledged.append(result.structuredContent["id"])
        n += 1


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="finds the server in /proc")
async def test_a_server_killed_while_remembering_loses_nothing_it_acknowledged(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    rng = random.Random(3)
    acknowledged: dict[str, list[str]] = {}
    for round_ in range(ROUNDS):
        scope = f"user=r{round_}"
        mine = acknowledged[scope] = []
        with anyio.fail_after(60):
            try:
                async with stdio_session(tmp_path / "log", str(db), "--scope", scope) as session:
                    pid = server_pid(db)
                    async with anyio.create_task_group() as group:
                        group.start_soon(remember_until_killed, session, scope, rng, mine)
                        await anyio.sleep(rng.uniform(0.05, 0.6))
                        os.kill(pid, signal.SIGKILL)
            except Exception as err:  # the client's pipe to the killed server broke: that only
                if not disconnected(err):
                    raise
    assert sum(map(len, acknowledged.values())) > ROUNDS  # it did remember before each kill
    with MemoryStore(str(db), embedder="static") as store:
        for scope, ids in acknowledged.items():
            kept = {i.id for i in store.get(Scope.from_key(scope)).items()}
            assert set(ids) <= kept, f"{scope}: lost {sorted(set(ids) - kept)}"
