"""The runnable examples run offline and show what they claim (real MiniLM, fake chat models)."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain")  # the LangChain examples; LlamaIndex ones check their own

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def run(name: str, capsys: pytest.CaptureFixture[str]) -> str:
    runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    return capsys.readouterr().out


def test_conversation_chain_example_recalls_the_diet(capsys: pytest.CaptureFixture[str]) -> None:
    out = run("langchain_conversation.py", capsys)
    last_history = out.split("without the diet):\n")[1].split("\nposteriors")[0]
    assert "Human: I'm vegetarian, by the way." in last_history
    assert "Human: What should I pack for the weather?" in last_history  # the window
    assert last_history.count("Human: ") == 4  # top_k=2 recalled, k=2 in the window


def test_agent_example_keeps_users_apart(capsys: pytest.CaptureFixture[str]) -> None:
    out = run("langchain_agent.py", capsys)
    assert "- Human: Please always answer me in French." in out
    assert out.count("Relevant past experiences") == 2  # alice's 2nd turn, 2 model calls
    memories = out.split("never shared):\n")[1]
    # the chat policy, solar-dialogue, keeps a salience value per item
    assert "alice: 'Please always answer me in French.'  posterior {'value': " in memories
    assert "bob: 'Where is my order A-17?'" in memories
    assert "bob: 'Please" not in memories


def test_langgraph_store_example_curates_a_users_namespace(
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run("langgraph_store.py", capsys)
    assert "tools: saved diet" in out and "tools: saved city" in out  # runtime.store.put
    assert "tools: Alice is vegetarian." in out  # runtime.store.search, best match first
    assert "put name: stored=True" in out  # pinned: stored, evicting a weaker item
    held = out.split("namespace now holds:\n")[1].splitlines()
    assert len(held) == 2 and "  name: Her name is Alice." in held


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
    assert "alice: 'Please always answer me in French.'  policy {'value': " in memories
    assert "bob: 'Where is my order A-17?'" in memories and "bob: 'Please" not in memories


def test_response_cache_example_tiers_invalidation_and_scopes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = run("response_cache_chain.py", capsys).splitlines()
    tiers = [line.split("] tier ")[1][0] for line in lines if "] tier " in line]
    assert tiers == ["3", "1", "2", "3", "3"]
    assert lines[3].endswith("'You are on the Team plan now.'")  # the stale answer was evicted
    assert lines[4].startswith("[bob]") and lines[4].endswith("'Free plan.'")


def test_persistent_example_resumes_in_a_new_process(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("llama_index.core")
    monkeypatch.setattr(sys, "argv", ["persistent_conversation.py", "--keep", str(tmp_path)])
    out = run("persistent_conversation.py", capsys)
    first, resumed = out.split("process 2 (pid ")
    assert first.split("process 1 (pid ")[1].split(")")[0] != resumed.split(")")[0]
    # the same memories, with the same posteriors, before and after the restart
    stored = first.split("as process 1 leaves them:\n")[1].split("\n\n")[0]
    reopened = resumed.split("reopened:\n")[1].split("\n\n")[0]
    assert stored == reopened
    assert "alice: 'Please always answer me in French.'  (value=" in stored  # solar-adaptive's
    assert "bob: 'Where is my order A-17?'" in stored
    lc_prompt = resumed.split("the model's system message:\n")[1].split("\n\nLlamaIndex")[0]
    assert "- Human: Please always answer me in French." in lc_prompt
    assert "A-17" not in lc_prompt  # bob's memory stays bob's
    trip = first.split("as process 1 leaves it:\n")[1].split("\n\n")[0]
    assert trip == resumed.split("'alice-trip', reopened:\n")[1].split("\n\n")[0]
    li_prompt = resumed.split("the LLM was sent:\n")[1]
    assert "- Human: I'm vegetarian, by the way." in li_prompt
    assert "OK: the resumed process recalled exactly what the first one stored." in out

    # A resumed process whose memories differ from what was stored exits non-zero.
    expected = json.loads((tmp_path / "stored.json").read_text())
    (alice,) = [k for k, v in expected["langchain"]["alice"].items() if "French" in v["text"]]
    expected["langchain"]["alice"][alice]["policy"]["value"] += 1.0
    (tmp_path / "stored.json").write_text(json.dumps(expected))
    monkeypatch.setattr(sys, "argv", ["persistent_conversation.py", "--resume", str(tmp_path)])
    with pytest.raises(SystemExit) as exit_:
        run("persistent_conversation.py", capsys)
    assert exit_.value.code == 1
    assert "WRONG:\n  LangChain memories differ after reopening" in capsys.readouterr().out
