"""The runnable examples run offline and show what they claim (real MiniLM, fake chat models)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

pytest.importorskip("langchain")  # the LangChain examples; LlamaIndex ones check their own

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
pytestmark = [pytest.mark.minilm, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def run(name: str, capsys: pytest.CaptureFixture[str]) -> str:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_conversation_chain_example_recalls_the_diet(capsys: pytest.CaptureFixture[str]) -> None:
    out = run("langchain_conversation.py", capsys)
    last_history = out.split("without the diet):\n")[1].split("\nposteriors")[0]
    assert "Human: I'm vegetarian, by the way." in last_history
    assert "Human: What should I pack for the weather?" in last_history  # the window
    assert "How do I get from the airport" not in last_history


def test_agent_example_keeps_users_apart(capsys: pytest.CaptureFixture[str]) -> None:
    out = run("langchain_agent.py", capsys)
    assert "- Human: Please always answer me in French." in out
    assert out.count("Relevant past experiences") == 2  # alice's 2nd turn, 2 model calls
    memories = out.split("never shared):\n")[1]
    assert "alice: 'Please always answer me in French.'  posterior {'alpha': 4.0" in memories
    assert "bob: 'Where is my order A-17?'" in memories
    assert "bob: 'Please" not in memories


def test_llamaindex_agent_example_recalls_the_diet(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_index.core")
    out = run("llamaindex_agent.py", capsys)
    last_call = out.split("sent on the last call:\n")[1].split("\nposteriors")[0]
    assert "- Human: I'm vegetarian, by the way." in last_call  # recalled into the system message
    assert "[user] I'm vegetarian" not in last_call  # no longer in the window
    assert "[user] What food should I try?" in last_call


def test_llamaindex_block_example_keeps_sessions_apart(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("llama_index.core")
    out = run("llamaindex_memory_block.py", capsys)
    last_call = out.split("alice's last call:\n")[1].split("\nmemories per session")[0]
    assert "<solar_memories>\n- Human: Please always answer me in French." in last_call
    memories = out.split("never shared):\n")[1]
    assert "alice: 'Please always answer me in French.'  alpha=4" in memories
    assert "bob: 'Where is my order A-17?'" in memories and "bob: 'Please" not in memories


def test_response_cache_example_tiers_invalidation_and_scopes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = run("response_cache_chain.py", capsys).splitlines()
    tiers = [line.split("] tier ")[1][0] for line in lines if "] tier " in line]
    assert tiers == ["3", "1", "2", "3", "3"]
    assert lines[3].endswith("'You are on the Team plan now.'")  # the stale answer was evicted
    assert lines[4].startswith("[bob]") and lines[4].endswith("'Free plan.'")
