"""Bearer tokens for the HTTP server: each token maps to the one scope its client may use.

A request without a known token is answered 401 before the MCP app sees it (nothing is read
or stored); a known one carries its scope to the tools in the request's ASGI scope.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from solar_core.persistence.scope import Scope

#: where a request's scope travels, in its ASGI scope (read by the tools through the request)
SCOPE_KEY = "solar_memory.scope"

_Message = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[_Message]]
_Send = Callable[[_Message], Awaitable[None]]
_App = Callable[[MutableMapping[str, Any], _Receive, _Send], Awaitable[None]]


class BearerScopes:
    """ASGI middleware: ``Authorization: Bearer <token>`` -> the token's scope, else 401."""

    def __init__(self, app: _App, tokens: Mapping[str, Scope]) -> None:
        self.app = app
        self._tokens = [(token.encode(), scope) for token, scope in tokens.items()]

    def scope_of(self, header: bytes | None) -> Scope | None:
        """The scope of the token in an ``Authorization`` header, else ``None``."""
        scheme, _, token = (header or b"").partition(b" ")
        if scheme.lower() != b"bearer":
            return None
        given, found = token.strip(), None
        for known, scope in self._tokens:  # every token compared: the time tells nothing
            if hmac.compare_digest(known, given):
                found = scope
        return found

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: _Receive,
        send: _Send,
    ) -> None:
        if scope["type"] != "http":  # the lifespan: the app's own
            await self.app(scope, receive, send)
            return
        header = next((v for k, v in scope["headers"] if k == b"authorization"), None)
        found = self.scope_of(header)
        if found is None:
            body = json.dumps(
                {
                    "error": "unauthorized",
                    "message": "send Authorization: Bearer <token>, a token from the server's "
                    "--tokens file",
                }
            ).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"www-authenticate", b'Bearer realm="solar-memory"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app({**scope, SCOPE_KEY: found}, receive, send)


__all__ = ["SCOPE_KEY", "BearerScopes"]
