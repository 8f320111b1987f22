"""``solar-memory mcp``: the memory as a Model Context Protocol server, for any MCP client
(Claude Desktop and Code, Cursor, Codex, LangChain and LlamaIndex agents).

Six tools (``remember``, ``recall``, ``rate``, ``forget``, ``list``, ``stats``) and three
resources over one scope's memory; the scope comes from the command line (stdio) or the
client's bearer token (HTTP), never from the model.

- :mod:`mcp_solar.settings`: what a server serves (no dependency beyond the core);
- :mod:`mcp_solar.service`: the tools' work on the memory, transport aside;
- :mod:`mcp_solar.server`: the tools and resources on the MCP SDK (the ``mcp`` extra:
  ``pip install 'solar-memory[mcp]'``); :mod:`mcp_solar.auth`: the HTTP server's tokens.
"""
