"""A per-user (per-session) adapter called without saying whose memory: the error names the fix,
and nothing is created, rated or forgotten."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solar_core import SolarMemory

# -- LangChain: SolarMemoryMiddleware(scope="user_id") ---------------------------------------------
MIDDLEWARE_CALLS: list[tuple[Callable[[Any], object], str]] = [
    (lambda mw: mw.feedback(like=True), "feedback(like=True, scope='alice')"),
    (lambda mw: mw.recalled(), "recalled(scope='alice')"),
    (lambda mw: mw.last_decision(), "last_decision(scope='alice')"),
    (lambda mw: mw.memory_for(), "memory_for(scope='alice')"),
    (lambda mw: mw.forget(), "forget(scope='alice')"),
]


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize(("call", "example"), MIDDLEWARE_CALLS)
def test_a_scoped_middleware_called_without_scope_names_the_fix(
    call: Callable[[Any], object], example: str, persistent: bool, tmp_path: Path
) -> None:
    pytest.importorskip("langchain")
    from langchain_solar import SolarMemoryMiddleware

    store = tmp_path / "agent.db" if persistent else None
    mw = SolarMemoryMiddleware(scope="user_id", store=store, embedder="hash", seed=0)
    _ = mw.memory_for("alice").add("Human: call me Al\nAI: Sure, Al.")
    with pytest.raises(ValueError) as error:
        call(mw)
    assert str(error.value) == (
        f"this middleware keeps one memory per 'user_id': pass scope=, e.g. {example}"
    )
    assert mw.scopes == ["alice"] and len(mw.memory_for("alice")) == 1  # nothing changed
    mw.close()


def test_a_shared_middleware_needs_no_scope() -> None:
    pytest.importorskip("langchain")
    from langchain_solar import SolarMemoryMiddleware

    mw = SolarMemoryMiddleware(embedder="hash", shared=True)
    assert mw.recalled() == [] and mw.last_decision() is None
    with pytest.raises(ValueError, match="nothing to rate"):
        mw.feedback(like=True)
    with pytest.raises(ValueError, match="has no scope= key"):
        mw.memory_for("alice")


# -- LlamaIndex: SolarMemoryBlock, one memory per Memory session ----------------------------------
BLOCK_CALLS: list[tuple[Callable[[Any], object], str]] = [
    (lambda block: block.feedback(like=True), "feedback(like=True, session_id='alice')"),
    (lambda block: block.recalled(), "recalled('alice')"),
    (lambda block: block.last_decision(), "last_decision('alice')"),
    (lambda block: block.memory_for(), "memory_for('alice')"),
    (lambda block: block.forget(), "forget('alice')"),
]


def converse(block: Any, **session: str) -> str:
    """A finished turn (offered), then a question the history no longer holds: its recall."""
    from llama_index.core.base.llms.types import ChatMessage

    told = [
        ChatMessage(role="user", content="my dog is called Rex"),
        ChatMessage(role="assistant", content="Noted: Rex."),
    ]
    asyncio.run(block.aget(told, **session))
    asked = [ChatMessage(role="user", content="what is my dog called?")]
    recalled: str = asyncio.run(block.aget(asked, **session))
    return recalled


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize(("call", "example"), BLOCK_CALLS)
def test_a_block_serving_sessions_called_without_session_id_names_the_fix(
    call: Callable[[Any], object], example: str, persistent: bool, tmp_path: Path
) -> None:
    pytest.importorskip("llama_index.core")
    from llamaindex_solar import SolarMemoryBlock

    store = tmp_path / "agent.db" if persistent else None
    block = SolarMemoryBlock(store=store, embedder="hash", top_k=1, seed=0)
    assert "my dog is called Rex" in converse(block, session_id="alice")
    with pytest.raises(ValueError, match=re.escape(f"pass session_id=, e.g. {example}")):
        call(block)
    assert block.sessions == ["alice"]  # no unnamed memory was created, alice's is intact
    assert [hit.metadata["human"] for hit in block.recalled("alice")] == ["my dog is called Rex"]
    block.feedback(like=True, session_id="alice")  # the fix
    assert block.memory_for("alice").stats()["feedbacks"] == 1
    block.close()


def test_a_block_used_on_its_own_needs_no_session_id() -> None:
    pytest.importorskip("llama_index.core")
    from llamaindex_solar import SolarMemoryBlock

    block = SolarMemoryBlock(embedder="hash", top_k=1, seed=0)
    assert block.recalled() == [] and block.last_decision() is None  # nothing yet: no error
    with pytest.raises(ValueError, match="nothing to rate"):
        block.feedback(like=True)
    assert "my dog is called Rex" in converse(block)
    converse(block, session_id="bob")  # sessions beside it are fine
    assert [hit.metadata["human"] for hit in block.recalled()] == ["my dog is called Rex"]
    block.feedback(like=True)
    assert block.memory_for().stats()["feedbacks"] == 1
    block.forget()
    assert block.sessions == ["bob"]


def test_a_block_over_one_shared_memory_still_names_a_forgotten_session_id() -> None:
    pytest.importorskip("llama_index.core")
    from llamaindex_solar import SolarMemoryBlock

    shared = SolarMemory("fifo", capacity=5, embedder="hash")
    block = SolarMemoryBlock(shared, top_k=1)
    converse(block, session_id="alice")
    with pytest.raises(ValueError, match=re.escape("pass session_id=, e.g. feedback(")):
        block.feedback(like=True)
    assert block.memory_for() is shared  # the one memory: no session needed to reach it
    block.feedback(like=True, session_id="alice")
    assert shared.stats()["feedbacks"] == 1
