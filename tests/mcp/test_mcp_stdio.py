"""``solar-memory mcp`` over stdio, driven by the official SDK's client in a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import anyio

from solar_core.persistence import MemoryStore, Scope
from tests.support.mcp_servers import SERVER_ENV, TOOLS, call, command, refused, stdio_session
from tests.support.postgres import postgres_schema_url


async def test_the_six_tools_say_what_they_do_and_return_structured_results(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "m.db")
    with anyio.fail_after(60):
        async with stdio_session(tmp_path / "log", db, "--scope", "user=alice") as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert list(tools) == TOOLS
            for tool in tools.values():
                assert tool.description and len(tool.description) > 60, tool.name
                assert tool.outputSchema is not None, tool.name
                # a dialect whose metaschema is quick to check (clients check it every call)
                assert tool.outputSchema["$schema"] == "http://json-schema.org/draft-07/schema#"
                assert tool.annotations is not None, tool.name
            hints = {n: (t.annotations.readOnlyHint, t.annotations.destructiveHint)
                     for n, t in tools.items() if t.annotations}  # fmt: skip
            assert hints["recall"] == hints["list"] == hints["stats"] == (True, False)
            assert hints["forget"] == (False, True)
            assert tools["forget"].annotations and tools["forget"].annotations.idempotentHint
            assert "scope" not in json.dumps([t.inputSchema for t in tools.values()])

            empty = await call(session, "recall", query="anything yet?")  # an empty memory
            assert empty["items"] == []
            assert (await call(session, "rate", handle=empty["handle"], like=True))["rated"] == []
            verdict = await call(session, "remember", text="Alice prefers green tea")
            assert verdict["stored"] and verdict["id"]
            assert verdict["capacity"] == {"used": 1, "limit": 1000}
            assert "Stored as" in verdict["explanation"]
            other = await call(
                session, "remember", text="Alice's flight to Lisbon leaves on Friday",
                metadata={"topic": "travel"},
            )  # fmt: skip

            found = await call(session, "recall", query="what tea does Alice like?", k=1)
            assert [i["id"] for i in found["items"]] == [verdict["id"]]
            item = found["items"][0]
            assert item["text"] == "Alice prefers green tea" and item["stored_at"].endswith(
                "+00:00"
            )
            travel = await call(session, "recall", query="Alice", filter={"topic": "travel"})
            assert [i["id"] for i in travel["items"]] == [other["id"]]

            rated = await call(session, "rate", handle=found["handle"], rating="like")
            assert rated == {"handle": found["handle"], "rated": [verdict["id"]], "reward": 1.0}
            again = await refused(session, "rate", handle=found["handle"], rating="like")
            assert "already rated" in again
            assert "unknown recall handle" in await refused(
                session, "rate", handle="r-nope", like=True
            )
            assert (await call(session, "rate", handle=travel["handle"], dislike=True))[
                "reward"
            ] == 0

            page = await call(session, "list", limit=1)
            assert page["total"] == 2 and len(page["items"]) == 1 and page["next_cursor"]
            assert page["items"][0]["posterior"]  # what the policy learned of it
            rest = await call(session, "list", cursor=page["next_cursor"], limit=5)
            assert [i["id"] for i in page["items"] + rest["items"]] == [verdict["id"], other["id"]]
            assert rest["next_cursor"] is None

            stats = await call(session, "stats")
            assert stats["scope"] == "user=alice" and stats["policy"] == "solar-adaptive"
            assert stats["counts"]["feedbacks"] == 2 and stats["counts"]["admitted"] == 2
            assert [d["reason"] for d in stats["latest_decisions"]] == ["free slot"] * 2

            uris = {str(r.uri) for r in (await session.list_resources()).resources}
            assert uris == {"memory://items", "memory://stats", "memory://decisions"}
            kept = json.loads((await session.read_resource("memory://items")).contents[0].text)
            assert [i["text"] for i in kept][0] == "Alice prefers green tea"

            gone = await call(session, "forget", ids=[other["id"]])
            assert gone == {"forgotten": 1, "ids": [other["id"]]}
    with MemoryStore(db, embedder="static") as store:  # what the server stored, read directly
        assert [i.text for i in store.get(Scope(user="alice")).items()] == [
            "Alice prefers green tea"
        ]
        assert store.names() == ["user=alice"]


async def test_bad_input_is_refused_with_the_fix_and_changes_nothing(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    with anyio.fail_after(60):
        async with stdio_session(tmp_path / "log", db, "--scope", "user=alice") as session:
            kept = await call(session, "remember", text="the deploy key rotates monthly")
            found = await call(session, "recall", query="deploy key")
            before = (await call(session, "list"), await call(session, "stats"))
            bad = [
                ("remember", {"text": ""}, "non-empty"),
                ("remember", {"text": "   "}, "non-empty"),
                ("remember", {"text": "x" * 20_001}, "at most 20000"),
                ("remember", {"text": 42}, "text"),
                ("remember", {"text": "ok", "metadata": "topic"}, "metadata"),
                ("remember", {"text": "ok", "metadata": {"a": [[[[1]]]] * 5000}}, "at most"),
                ("recall", {"query": "deploy", "k": 0}, "greater than or equal to 1"),
                ("recall", {"query": "deploy", "k": 10_000}, "less than or equal to 50"),
                ("recall", {"query": "deploy", "filter": {"n": {"$gt": [1]}}}, "pass a number"),
                ("recall", {"query": "deploy", "filter": {"n": {"$in": 3}}}, "use one of"),
                ("recall", {"query": ""}, "non-empty"),
                ("rate", {"handle": found["handle"]}, "rate takes one of"),
                ("rate", {"handle": found["handle"], "rating": "meh"}, "'like' or 'dislike'"),
                ("rate", {"handle": found["handle"], "score": 2}, "less than or equal to 1"),
                ("rate", {"handle": found["handle"], "like": True, "score": 1}, "one of"),
                ("rate", {"handle": found["handle"], "like": True, "dislike": True}, "one of"),
                ("forget", {"ids": []}, "at least 1"),
                ("forget", {"ids": [kept["id"], "m999"]}, "nothing was forgotten"),
                ("list", {"cursor": "not-a-cursor"}, "unknown cursor"),
                ("list", {"limit": 0}, "greater than or equal to 1"),
            ]
            for tool, args, fix in bad:
                message = await refused(session, tool, **args)
                assert fix in message, (tool, args, message)
                after = (await call(session, "list"), await call(session, "stats"))
                assert after[0] == before[0], (tool, args)
                assert after[1]["counts"] == before[1]["counts"], (tool, args)
            # the handle was refused above, not used up: it still rates
            await call(session, "rate", handle=found["handle"], rating="dislike")


async def test_a_store_that_cannot_be_opened_is_a_tool_error_and_the_server_keeps_serving(
    tmp_path: Path,
) -> None:
    (tmp_path / "a-folder.db").mkdir()
    with anyio.fail_after(60):
        async with stdio_session(tmp_path / "log", str(tmp_path / "a-folder.db")) as session:
            for _ in range(2):  # refused each time, and still serving
                message = await refused(session, "remember", text="prefers tea")
                assert "cannot be opened" in message and "STORE" in message
            assert len((await session.list_tools()).tools) == 6


async def test_the_scope_comes_from_the_environment_when_not_on_the_command_line(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "m.db")
    env = {"SOLAR_MEMORY_SCOPE": "user=bob,project=atlas", "SOLAR_MEMORY_STORE": db}
    with anyio.fail_after(60):
        async with stdio_session(tmp_path / "log", env=env) as session:
            await call(session, "remember", text="Bob's build runs on Tuesdays")
            assert (await call(session, "stats"))["scope"] == "project=atlas&user=bob"
    with MemoryStore(db, embedder="static") as store:
        assert store.names() == ["project=atlas&user=bob"]


async def test_a_scope_made_with_other_settings_names_the_option_to_drop(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    with MemoryStore(db, embedder="static", capacity=1000) as store:
        store.scope(user="alice").add("prefers tea")
    with anyio.fail_after(60):
        async with stdio_session(
            tmp_path / "log", db, "--scope", "user=alice", "--capacity", "50"
        ) as session:
            message = await refused(session, "recall", query="tea")
            assert "restart it without --capacity" in message and "--capacity 1000" in message
        async with stdio_session(
            tmp_path / "log", db, "--scope", "user=alice", "--embedder", "hash"
        ) as session:
            message = await refused(session, "recall", query="tea")
            assert "restart the server with the --embedder" in message, message
            assert "store.forget" not in message  # (the library's advice, not the server's)


async def test_a_database_password_is_never_printed(tmp_path: Path) -> None:
    url = "postgresql://app:S3cretPW@127.0.0.1:1/agents?connect_timeout=1"
    log = tmp_path / "log"
    with anyio.fail_after(60):
        async with stdio_session(log, url, "--scope", "user=alice") as session:
            message = await refused(session, "remember", text="prefers tea")
            assert "cannot be opened" in message and "S3cretPW" not in message
    assert "app:***@" in log.read_text() and "S3cretPW" not in log.read_text()


def test_ctrl_c_stops_a_stdio_server_at_once(tmp_path: Path) -> None:
    """Even with its client's pipe still open, and without a traceback."""
    server = subprocess.Popen(
        command("mcp", str(tmp_path / "m.db"), "--scope", "user=alice"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **SERVER_ENV},
    )
    assert server.stderr is not None
    assert b"serving user=alice" in server.stderr.readline()  # (the handler is set by then)
    server.send_signal(signal.SIGINT)
    try:
        assert server.wait(timeout=10) == 130
    finally:
        server.kill()
        server.communicate()
    assert b"Traceback" not in server.stderr.read() if not server.stderr.closed else True


async def test_a_postgresql_store_serves_as_a_sqlite_one(tmp_path: Path) -> None:
    url = postgres_schema_url("mcp_server")
    with anyio.fail_after(60):
        async with stdio_session(tmp_path / "log", url, "--scope", "user=alice") as session:
            kept = await call(session, "remember", text="the standup moved to 9:30")
            found = await call(session, "recall", query="when is the standup?")
            assert [i["id"] for i in found["items"]] == [kept["id"]]
            assert (await call(session, "rate", handle=found["handle"], like=True))["rated"]
    with MemoryStore(url, embedder="static") as store:
        memory = store.get(Scope(user="alice"))
        assert [i.text for i in memory.items()] == ["the standup moved to 9:30"]
        assert memory.stats()["feedbacks"] == 1


async def test_forget_reaches_a_value_a_newer_one_of_its_key_superseded(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    with anyio.fail_after(60):
        async with stdio_session(tmp_path / "log", db, "--scope", "user=alice") as session:
            key = {"key": "alice/address"}
            old = await call(session, "remember", text="Alice lives at 12 Elm Street", metadata=key)
            await call(session, "remember", text="Alice lives at 5 Oak Road", metadata=key)
            gone = await call(session, "forget", ids=[old["id"]])  # kept for as_of: erasable
            assert gone == {"forgotten": 1, "ids": [old["id"]]}
    with MemoryStore(db, embedder="static") as store:
        memory = store.get(Scope(user="alice"))
        assert [i.text for i in memory.items(include_superseded=True)] == [
            "Alice lives at 5 Oak Road"
        ]
