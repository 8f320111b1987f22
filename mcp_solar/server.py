"""The MCP server: six tools and three resources over one scope's memory, served over stdio or
streamable HTTP with the official MCP Python SDK (the ``mcp`` extra).

The scope is never an argument: over stdio the server serves the one scope it was started
with; over HTTP each request's bearer token names its scope (:mod:`mcp_solar.auth`).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

try:
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.types import ToolAnnotations
except ImportError as err:  # pragma: no cover - the extra is missing
    raise ImportError(
        "solar-memory mcp needs the MCP SDK: pip install 'solar-memory[mcp]'"
    ) from err
import anyio
from pydantic import Field

from mcp_solar.auth import SCOPE_KEY, BearerScopes
from mcp_solar.results import Forgotten, Page, Rated, Recall, Stats, Verdict
from mcp_solar.service import MAX_IDS, MAX_K, MAX_PAGE, MAX_TEXT, MemoryService, ToolProblem
from mcp_solar.settings import DEFAULT_CAPACITY, Settings
from solar_core.persistence.reader import shown_url
from solar_core.persistence.scope import Scope, shown_scope
from solar_core.policies.presets import DEFAULT_POLICY

_T = TypeVar("_T")

INSTRUCTIONS = """\
A bounded long-term memory that learns what is worth keeping from your ratings.
- Call recall at the start of a task and whenever earlier conversations may hold the answer.
- Call remember for each durable fact, preference or lesson (one per call, in a sentence).
- After answering with recalled items, call rate with the recall's handle: like if they helped,
  dislike if they were irrelevant or wrong. Ratings decide what stays when the memory is full.
- Call forget when the user asks you to forget something (ids from recall or list)."""


class Ctx(Context[Any, Any, Any]):
    """The request's context, as a parameter's annotation: the SDK passes the context to the
    parameter whose annotation is a subclass of its ``Context`` (a parameterised alias is not)."""


_Text = Annotated[str, Field(description="the fact, preference or lesson, in a sentence or two")]
_Query = Annotated[str, Field(description="what you want to know, in words")]


def _hints(
    title: str, *, read_only: bool = False, destructive: bool = False, idempotent: bool = False
) -> ToolAnnotations:
    """What a client may assume of a tool (none of them reaches outside the store)."""
    return ToolAnnotations(
        title=title,
        readOnlyHint=read_only,
        destructiveHint=destructive,
        idempotentHint=idempotent,
        openWorldHint=False,
    )


def _scope_getter(settings: Settings) -> Callable[[Context[Any, Any, Any]], Scope]:
    """How a call's scope is found: the command line's (stdio), or its request's token (HTTP)."""
    if not settings.http:
        fixed = settings.scope
        assert fixed is not None

        def from_command_line(ctx: Context[Any, Any, Any]) -> Scope:
            return fixed

        return from_command_line

    def from_token(ctx: Context[Any, Any, Any]) -> Scope:
        request = ctx.request_context.request
        scope = None if request is None else request.scope.get(SCOPE_KEY)
        if not isinstance(scope, Scope):  # not through BearerScopes: never serve it
            raise ToolError("no scope for this request: send the bearer token of your scope")
        return scope

    return from_token


def build_server(settings: Settings, service: MemoryService) -> FastMCP[Any]:
    """The server's tools and resources over ``service``, for the transport ``settings`` name."""
    server: FastMCP[Any] = FastMCP(
        "solar-memory",
        instructions=INSTRUCTIONS,
        host=settings.host,
        port=settings.port,
        log_level="WARNING",
        # Each HTTP request stands alone: a session would be a second credential (its id),
        # which another token could present to read this one's answers or end its session.
        # Nothing needs one: the scope is each request's token's and recall handles are
        # stateless.
        stateless_http=True,
    )
    scope_of = _scope_getter(settings)

    def run(ctx: Ctx, work: Callable[[Scope], _T]) -> _T:
        try:
            return work(scope_of(ctx))
        except ToolProblem as err:
            raise ToolError(str(err)) from None

    @server.tool(annotations=_hints("Remember", destructive=True))
    def remember(
        text: _Text,
        ctx: Ctx,
        metadata: Annotated[
            dict[str, Any] | None,
            Field(
                description="optional JSON object to filter recalls by, e.g. {'topic': 'travel'}"
            ),
        ] = None,
    ) -> Verdict:
        """Offer one durable fact, preference or lesson to the long-term memory.

        Call it when the user tells you something about themselves, asks you to remember
        something, or when you learn what will help next time. The memory is bounded and
        decides: the verdict says whether it was stored (with its id) or refused and why, what
        was evicted to make room, and how full the memory is. At most 20,000 characters.
        """
        return run(ctx, lambda scope: service.remember(scope, text, metadata))

    @server.tool(annotations=_hints("Recall", read_only=True))
    def recall(
        query: _Query,
        ctx: Ctx,
        k: Annotated[int, Field(ge=1, le=MAX_K, description="how many items at most")] = 5,
        filter: Annotated[
            dict[str, Any] | None,
            Field(description="only items whose metadata match, e.g. {'topic': 'travel'}"),
        ] = None,
    ) -> Recall:
        """Search the long-term memory for what may help with the current task.

        Call it at the start of a task and whenever earlier conversations may hold the answer.
        Returns the closest items (id, text, score, when stored, metadata), best first, and a
        handle: after answering, pass the handle to rate to say whether these items helped.
        Changes no item (it only counts the recall, so that rating it can teach the memory).
        """
        return run(ctx, lambda scope: service.recall(scope, query, k, filter))

    @server.tool(annotations=_hints("Rate a recall", idempotent=True))
    def rate(
        handle: Annotated[str, Field(description="the handle a recall returned")],
        ctx: Ctx,
        rating: Annotated[
            str | float | None,
            Field(
                description="'like' (the items helped), 'dislike' (irrelevant or wrong), or a "
                "score from 0 to 1"
            ),
        ] = None,  # fmt: skip
        like: Annotated[bool | None, Field(description="true: the items helped")] = None,
        dislike: Annotated[bool | None, Field(description="true: irrelevant or wrong")] = None,
        score: Annotated[
            float | None, Field(ge=0.0, le=1.0, description="how much the items helped, 0 to 1")
        ] = None,
    ) -> Rated:
        """Tell the memory whether the items of one recall helped.

        Call it once per recall, after you answered: 'like' if the recalled items helped,
        'dislike' if they were irrelevant or wrong (or a score from 0 to 1). It rates exactly
        the items that recall returned. Ratings decide what stays when the memory is full.
        A handle from another client, an unknown one or one already rated is refused.
        """
        return run(ctx, lambda scope: service.rate(scope, handle, rating, like, score, dislike))

    @server.tool(annotations=_hints("Forget", destructive=True, idempotent=True))
    def forget(
        ids: Annotated[
            list[str],
            Field(min_length=1, max_length=MAX_IDS, description="item ids from recall or list"),
        ],
        ctx: Ctx,
    ) -> Forgotten:
        """Delete these items from the memory for good (their text leaves the store too).

        Call it when the user asks you to forget something, or an item is wrong. If any id is
        not kept, nothing is deleted and the error names it.
        """
        return run(ctx, lambda scope: service.forget(scope, ids))

    @server.tool(
        name="list", annotations=_hints("List the memory", read_only=True, idempotent=True)
    )
    def list_items(
        ctx: Ctx,
        cursor: Annotated[
            str | None, Field(description="the next_cursor of the previous page; none: first")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_PAGE, description="items per page")] = 50,
    ) -> Page:
        """Page through everything the memory keeps, oldest first, with what the policy has
        learned of each item (its posterior). Use it to review or clean up the memory."""
        return run(ctx, lambda scope: service.list(scope, cursor, limit))

    @server.tool(annotations=_hints("Memory statistics", read_only=True, idempotent=True))
    def stats(ctx: Ctx) -> Stats:
        """The memory's policy, capacity, counts (stored, refused, evicted, rated, ...) and its
        latest decisions with their reasons."""
        return run(ctx, service.stats)

    def resource(work: Callable[[Scope], Any]) -> str:
        ctx = server.get_context()
        try:
            return json.dumps(work(scope_of(ctx)), indent=2)
        except ToolProblem as err:
            raise ValueError(str(err)) from None

    @server.resource("memory://items", mime_type="application/json")
    def items() -> str:
        """Every item the memory keeps, oldest first, with its posterior."""
        return resource(lambda scope: _all_items(service, scope))

    @server.resource("memory://stats", mime_type="application/json")
    def statistics() -> str:
        """The memory's policy, capacity and counts."""
        return resource(lambda scope: service.stats(scope).model_dump(exclude={"latest_decisions"}))

    @server.resource("memory://decisions", mime_type="application/json")
    def decisions() -> str:
        """The latest decisions: what was stored or refused, what was evicted, and why."""
        return resource(
            lambda scope: [d.model_dump() for d in service.stats(scope).latest_decisions]
        )

    return server


def _all_items(service: MemoryService, scope: Scope) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = service.list(scope, cursor, MAX_PAGE)
        found += [item.model_dump() for item in page.items]
        if page.next_cursor is None:
            return found
        cursor = page.next_cursor


def serve(settings: Settings) -> None:
    """Serve until the client goes (stdio) or the process is stopped (HTTP)."""
    service = MemoryService(settings)
    server = build_server(settings, service)
    policy = settings.policy or DEFAULT_POLICY
    capacity = settings.capacity or DEFAULT_CAPACITY
    where = f"store {shown_url(settings.store)}; new scopes: {policy}, capacity {capacity}"
    try:
        if settings.http:
            import uvicorn

            logging.getLogger("mcp.server.streamable_http").addFilter(_ClientWentAway())
            url = f"http://{settings.host}:{settings.port}/mcp"
            say(f"solar-memory mcp: serving {url} to {len(settings.tokens)} token(s); {where}")
            app = BearerScopes(server.streamable_http_app(), settings.tokens)
            config = uvicorn.Config(
                app, host=settings.host, port=settings.port, log_level="warning", lifespan="on"
            )
            uvicorn.Server(config).run()
        else:
            assert settings.scope is not None
            say(f"solar-memory mcp: serving {shown_scope(settings.scope)} over stdio; {where}")
            # Ctrl-C: leave at once, as SIGTERM does. Python's KeyboardInterrupt would wait for
            # the SDK's thread blocked reading stdin, forever if the client keeps it open; every
            # answered call is committed already, and a reopened store replays its log.
            signal.signal(signal.SIGINT, lambda number, frame: os._exit(130))
            server.run("stdio")
    finally:
        service.close()


class _ClientWentAway(logging.Filter):
    """Drop the SDK's traceback for a client that closed its event stream (as every client
    does when it disconnects): an ERROR for the normal end of a session."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, anyio.ClosedResourceError)


def say(message: str) -> None:
    """A line on standard error (standard output is the protocol's over stdio)."""
    print(message, file=sys.stderr, flush=True)


__all__ = ["INSTRUCTIONS", "MAX_TEXT", "build_server", "serve"]
