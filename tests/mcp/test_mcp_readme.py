"""The README's Claude Desktop block, run as the app runs it: the command it names, with its
arguments, over stdio; the SDK's client lists the six tools, and the store is made in the
user's data folder, where the server says it is."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.mcp_servers import ROOT, TOOLS, call


def claude_desktop_block() -> dict[str, object]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    after = readme[readme.index("**Claude Desktop**") :]
    found = re.search(r"```json\n(.*?)```", after, re.DOTALL)
    assert found is not None, "the README has no JSON block after **Claude Desktop**"
    config: dict[str, object] = json.loads(found.group(1))["mcpServers"]["memory"]
    return config


async def test_the_readme_claude_desktop_block_starts_a_server_with_six_tools(
    tmp_path: Path,
) -> None:
    config = claude_desktop_block()
    assert config["command"] == "solar-memory"
    # the command this environment installed (the app would find it on its PATH)
    command = shutil.which("solar-memory") or str(Path(sys.executable).with_name("solar-memory"))
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}
    args = config["args"]
    assert isinstance(args, list)
    params = StdioServerParameters(command=command, args=args, env=env)
    log = tmp_path / "server.log"
    with anyio.fail_after(60), log.open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert [t.name for t in (await session.list_tools()).tools] == TOOLS
                assert (await call(session, "remember", text="prefers aisle seats"))["stored"]
    store = tmp_path / "data" / "solar-memory" / "memory.db"
    assert store.exists()
    assert str(store) in log.read_text()
