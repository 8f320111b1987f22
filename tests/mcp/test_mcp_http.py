"""``solar-memory mcp --http``: each bearer token is one scope, and nothing crosses between
them; a request without a known token is answered 401 before anything is read."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import ClientSession

from tests.support.mcp_servers import call, http_server, http_session, refused

ALICE, BOB, EVE = "alice-" + "a" * 30, "bob-" + "b" * 30, "eve-" + "e" * 30


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("mcp-http")
    db = folder / "m.db"
    tokens = {ALICE: "user=alice", BOB: "user=bob"}  # EVE's is in no file
    with http_server(folder, tokens, str(db)) as url:
        yield url, db
    # clients came and went, some turned away: none of it is an error in the server's log
    log = (folder / "http-server.log").read_text()
    assert "Traceback" not in log and "ERROR" not in log, log


async def everything(session: ClientSession) -> list[dict[str, Any]]:
    """Every item ``list`` pages through."""
    items, cursor = [], None
    while True:
        page = await call(session, "list", limit=200, **({"cursor": cursor} if cursor else {}))
        items += page["items"]
        if (cursor := page["next_cursor"]) is None:
            return items


def stored_scopes(db: Path) -> list[str]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        tables = {r[0] for r in conn.execute("select name from sqlite_master")}
        if "scopes" not in tables:
            return []
        return sorted(r[0] for r in conn.execute("select key from scopes"))


def initialize(token: str | None) -> dict[str, Any]:
    """The JSON-RPC initialize request, with ``token`` as bearer."""
    headers = {"Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    return {"json": body, "headers": headers}


@pytest.mark.parametrize(
    "authorization",
    [None, f"Bearer {EVE}", f"Bearer {ALICE[:-1]}", f"Bearer {ALICE}x", f"Basic {ALICE}", ALICE],
)
def test_a_request_without_a_known_token_gets_401_and_reads_nothing(
    server: tuple[str, Path], authorization: str | None
) -> None:
    url, db = server
    before = stored_scopes(db)
    request = initialize(None)
    if authorization is not None:
        request["headers"]["Authorization"] = authorization
    for method in ("POST", "GET", "DELETE"):
        answer = httpx.request(method, url, timeout=10, **request)
        assert answer.status_code == 401, (method, answer.text)
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert "Authorization: Bearer" in answer.json()["message"]
    assert stored_scopes(db) == before


async def test_the_sdk_client_with_a_wrong_token_is_turned_away(server: tuple[str, Path]) -> None:
    url, _ = server
    with anyio.fail_after(30), pytest.raises(BaseException) as caught:
        async with http_session(url, EVE):
            pass
    assert "401" in repr(caught.value) or "Unauthorized" in repr(caught.value)


async def test_two_tokens_never_see_or_rate_each_others_memories(server: tuple[str, Path]) -> None:
    url, _ = server
    with anyio.fail_after(60):
        async with http_session(url, ALICE) as alice, http_session(url, BOB) as bob:
            kept = await call(alice, "remember", text="alice: the vault code is 1234")
            found = await call(alice, "recall", query="vault code")
            assert [i["id"] for i in found["items"]] == [kept["id"]]
            assert (await call(bob, "recall", query="vault code"))["items"] == []
            assert all("alice" not in i["text"] for i in (await call(bob, "list"))["items"])
            assert (await call(bob, "stats"))["scope"] == "user=bob"
            message = await refused(bob, "rate", handle=found["handle"], rating="dislike")
            assert "another scope" in message
            bob_ids = {i["id"] for i in (await call(bob, "list"))["items"]}
            if kept["id"] not in bob_ids:  # the same id in bob's memory would be bob's own item
                assert "not kept" in await refused(bob, "forget", ids=[kept["id"]])
            # alice's item and her handle are untouched
            assert (await call(alice, "rate", handle=found["handle"], rating="like"))["rated"]
            assert kept["id"] in {i["id"] for i in (await call(alice, "list"))["items"]}


async def test_no_session_lets_one_token_read_anothers_answers(server: tuple[str, Path]) -> None:
    """Alice's and bob's requests race with the same JSON-RPC id and alice's session id (if the
    server gave her one): each gets its own answer, and bob never alice's."""
    url, _ = server

    async def rpc(client: httpx.AsyncClient, token: str, body: dict[str, Any]) -> Any:
        request = initialize(token)
        request["json"] = body
        if session is not None:
            request["headers"]["mcp-session-id"] = session
            request["headers"]["mcp-protocol-version"] = "2025-06-18"
        answer = await client.post(url, **request)
        data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1]) if data else answer.status_code

    async with httpx.AsyncClient(timeout=10) as client:
        session = None
        opened = await client.post(url, **initialize(ALICE))
        session = opened.headers.get("mcp-session-id")
        await rpc(client, ALICE, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for n in range(120):  # (enough that reading them all takes a few milliseconds)
            remember = {"name": "remember", "arguments": {"text": f"alice: safe {n} opens at 0420"}}
            await rpc(client, ALICE, {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                      "params": remember})  # fmt: skip
        for n in range(12):
            read = {"jsonrpc": "2.0", "id": 100 + n, "method": "resources/read",
                    "params": {"uri": "memory://items"}}  # fmt: skip
            stats = {"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call",
                     "params": {"name": "stats", "arguments": {}}}  # fmt: skip

            async def later(body: dict[str, Any]) -> Any:
                await anyio.sleep(0.002)
                return await rpc(client, BOB, body)

            theirs, bobs = await asyncio.gather(rpc(client, ALICE, read), later(stats))
            assert "0420" in json.dumps(theirs), theirs
            assert "0420" not in json.dumps(bobs), bobs
            assert bobs["result"]["structuredContent"]["scope"] == "user=bob"


async def test_a_thousand_interleaved_calls_of_two_tokens_never_cross(
    server: tuple[str, Path],
) -> None:
    url, _ = server
    rng = random.Random(7)
    mine: dict[str, set[str]] = {"alice": set(), "bob": set()}
    rated = {"alice": 0, "bob": 0}
    handles: dict[str, list[str]] = {"alice": [], "bob": []}
    with anyio.fail_after(300):
        async with http_session(url, ALICE) as alice, http_session(url, BOB) as bob:
            sessions = {"alice": alice, "bob": bob}
            for who, session in sessions.items():
                # (a scope is stored from its first write: a recall before it rates nothing)
                await call(session, "remember", text=f"{who} note: the first")
                mine[who] = {i["id"] for i in await everything(session)}  # and earlier tests'
            start = {who: (await call(s, "stats"))["counts"] for who, s in sessions.items()}
            for n in range(1000):
                who = rng.choice(["alice", "bob"])
                session, other = sessions[who], "bob" if who == "alice" else "alice"
                action = rng.choice(
                    ["remember", "recall", "recall", "rate", "rate", "steal", "list"]
                )
                if action == "remember":
                    verdict = await call(session, "remember", text=f"{who} note {n}: port {n}")
                    mine[who].add(verdict["id"])
                elif action == "recall":
                    found = await call(session, "recall", query=f"note {rng.randrange(n + 1)}")
                    assert all(i["text"].startswith(who) for i in found["items"])
                    handles[who].append(found["handle"])
                elif action == "steal" and handles[other]:  # the other's handle: refused
                    message = await refused(session, "rate", handle=handles[other][-1], like=True)
                    assert "another scope" in message
                elif action == "rate" and handles[who]:
                    how = rng.choice([{"like": True}, {"dislike": True}, {"score": 0.3},
                                      {"rating": "dislike"}, {"rating": 0.9}])  # fmt: skip
                    await call(session, "rate", handle=handles[who].pop(), **how)
                    rated[who] += 1
                else:
                    page = await call(session, "list", limit=200)
                    assert all(i["text"].startswith(who) for i in page["items"])
            for who, session in sessions.items():
                assert {i["id"] for i in await everything(session)} == mine[who]
                counts = (await call(session, "stats"))["counts"]
                assert counts["feedbacks"] - (start[who]["feedbacks"] or 0) == rated[who]
    assert rated["alice"] and rated["bob"]
