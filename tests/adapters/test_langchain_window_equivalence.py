"""Hypothesis: whatever the sequence of turns, loads and clears, SolarConversationMemory's window
is exactly ConversationBufferWindowMemory's, and recall never repeats what the window shows."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("langchain_classic")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from langchain_classic.memory import ConversationBufferWindowMemory  # noqa: E402
from langchain_core.messages import BaseMessage  # noqa: E402

from langchain_solar import SolarConversationMemory  # noqa: E402
from tests.support.profiles import examples

WORDS = st.sampled_from(["dog", "Rex", "beach", "tea", "python", "sort", "Paris", "the", "is"])
TEXT = st.lists(WORDS, min_size=1, max_size=5).map(" ".join)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("save"), TEXT, TEXT),
        st.tuples(st.just("load"), TEXT, st.just("")),
        st.tuples(st.just("clear"), st.just(""), st.just("")),
    ),
    max_size=25,
)


@settings(max_examples=examples(100), deadline=None)
@given(
    ops=OPS,
    k=st.integers(0, 4),
    top_k=st.integers(0, 3),
    policy=st.sampled_from(["solar", "fifo", "lru"]),
    return_messages=st.booleans(),
)
def test_window_matches_and_recall_is_disjoint(
    ops: list[tuple[str, str, str]], k: int, top_k: int, policy: str, return_messages: bool
) -> None:
    ours = SolarConversationMemory(
        k=k,
        top_k=top_k,
        policy=policy,
        capacity=6,
        embedder="hash",
        seed=0,
        recall_key="recalled",
        return_messages=return_messages,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = ConversationBufferWindowMemory(k=k, return_messages=return_messages)
    for op, a, b in ops:
        if op == "save":
            ours.save_context({"input": a}, {"output": b})
            theirs.save_context({"input": a}, {"output": b})
        elif op == "clear":
            ours.clear()
            theirs.clear()
        else:
            got = ours.load_memory_variables({"input": a})
            assert got["history"] == theirs.load_memory_variables({"input": a})["history"]
            assert len(ours.recalled) <= top_k
            if return_messages:  # shown as Human/AI pairs: compare turns exactly
                window = _pairs(ours.buffer_as_messages)
                recalled = _pairs(got["recalled"])
                assert not set(recalled) & set(window)  # never what the window shows
                assert len(set(recalled)) == len(recalled)  # nor the same turn twice
        assert len(ours.memory) <= 6
        ours.memory.check_invariants()


def _pairs(messages: list[BaseMessage]) -> list[tuple[str, str]]:
    assert [m.type for m in messages] == ["human", "ai"] * (len(messages) // 2)
    return [(h.text, a.text) for h, a in zip(messages[::2], messages[1::2], strict=True)]
