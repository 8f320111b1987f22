"""``solar-memory mcp`` servers for the tests, reached through the official SDK's clients only:
a stdio server is a subprocess the client starts; an HTTP server is a subprocess on a free port
of 127.0.0.1, ready once it accepts a connection."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

ROOT = Path(__file__).resolve().parents[2]
#: what a server needs of the environment (the stdio client passes nothing else on)
SERVER_ENV = {
    "PYTHONPATH": str(ROOT),
    "HF_HUB_OFFLINE": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "HOME": os.environ.get("HOME", "/tmp"),
}
#: the six tools, in the order the server lists them
TOOLS = ["remember", "recall", "rate", "forget", "list", "stats"]


def command(*args: str) -> list[str]:
    """``solar-memory`` with ``args``, run by this interpreter (the test venv's)."""
    return [sys.executable, "-m", "solar_core.cli", *args]


@asynccontextmanager
async def stdio_session(
    log: Path, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """A session with ``solar-memory mcp ARGS`` over stdio (the server's log in ``log``)."""
    first, *rest = command("mcp", *args)
    params = StdioServerParameters(command=first, args=rest, env={**SERVER_ENV, **(env or {})})
    with log.open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


@asynccontextmanager
async def http_session(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    """A session with the HTTP server at ``url``, sending ``token`` as its bearer token."""
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=30) as client:
        async with streamable_http_client(url, http_client=client) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def http_server(folder: Path, tokens: dict[str, str], *args: str) -> Iterator[str]:
    """``solar-memory mcp --http`` on a free port with these tokens; yields its URL."""
    token_file = folder / "tokens.json"
    token_file.write_text(json.dumps(tokens), encoding="utf-8")
    token_file.chmod(0o600)
    port = free_port()
    log = folder / "http-server.log"
    argv = command("mcp", *args, "--http", "--port", str(port), "--tokens", str(token_file))
    with log.open("w") as errlog:
        proc = subprocess.Popen(
            argv, env={**os.environ, **SERVER_ENV}, stdout=subprocess.DEVNULL, stderr=errlog
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the server stopped ({proc.returncode}): {log.read_text()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"the server never listened: {log.read_text()}")
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
            proc.kill()
            proc.wait()


async def call(session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
    """``tool``'s structured result; a tool error fails the test with its message."""
    result = await session.call_tool(tool, args)
    assert not result.isError, f"{tool}({args}) failed: {text(result)}"
    assert result.structuredContent is not None
    return result.structuredContent


async def refused(session: ClientSession, tool: str, **args: Any) -> str:
    """The message of the tool error ``tool(args)`` must give."""
    result = await session.call_tool(tool, args)
    assert result.isError, f"{tool}({args}) was not refused: {result.structuredContent}"
    return text(result)


def text(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


__all__ = [
    "TOOLS",
    "call",
    "command",
    "free_port",
    "http_server",
    "http_session",
    "refused",
    "stdio_session",
    "text",
]
