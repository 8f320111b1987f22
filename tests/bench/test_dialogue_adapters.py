"""The dialogue-turn protocol through LangChain's memories (``benchmarks/dialogue_adapters.py``):
the exchanges, what each memory shows, and the recall it is scored by."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from solar_bench.dialogue import dialogues_from
from tests.support.scripts import load_script

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.ranking,  # orders of cosine scores: CI runs them under two BLAS kernels
]


def _script() -> ModuleType:
    return load_script("dialogue_adapters")


#: one word per turn that no other turn says: a keyword ranking has a clear winner too
WORDS = (
    *("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"),
    *("juliett", "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo"),
    *("sierra", "tango", "uniform"),
)


def _turn(n: int) -> dict[str, str]:
    text = f"fact number {n} {WORDS[n - 1]}"
    return {"speaker": "Ann" if n % 2 else "Bo", "dia_id": f"D1:{n}", "text": text}


#: 21 turns (10 exchanges and a last input without output); q-early cites turn 1, q-late turn 20.
#: Each question says its evidence turn's word, and its vector points at that turn: the
#: evidence's exchange ranks first by keywords and by vectors alike. (A question no keyword
#: ranking can match leaves the rest tied at zero, and rank fusion then orders the exchanges by
#: the vectors' ties, which differ in the last bit from one BLAS kernel to another.)
RAW = [
    {
        "sample_id": "c",
        "conversation": {"session_1": [_turn(n) for n in range(1, 22)]},
        "qa": [
            {"question": "q-early alpha", "answer": "x", "evidence": ["D1:1"]},
            {"question": "q-late tango", "answer": "x", "evidence": ["D1:20"]},
        ],
    }
]


def _lookup(bench: ModuleType, raw: list[dict[str, object]] = RAW) -> object:
    """One basis vector per turn number; a stored exchange points at its input; q-early at turn
    1 and q-late at turn 20 (their evidence)."""
    d = dialogues_from(raw)[0]
    vectors: dict[str, np.ndarray] = {}

    def unit(n: int) -> np.ndarray:
        v = np.full(32, 0.01, np.float32)
        v[n] = 1.0
        return v / np.linalg.norm(v)

    for i, turn in enumerate(d.turns):
        vectors[turn.text] = unit(i + 1)
    for a, b in bench.exchanges(d):
        n = int(a.dia_id.split(":")[1])
        vectors[bench.turn_text(a.text, "" if b is None else b.text)] = unit(n)
        vectors[f"input: {a.text}\noutput: {'' if b is None else b.text}"] = unit(n)
        both = unit(n) + unit(n + 1)  # LlamaIndex's VectorMemory embeds the exchange whole
        vectors[f"{a.text} {'' if b is None else b.text}"] = both / np.linalg.norm(both)
        vectors[a.text.strip()] = unit(n)
        vectors[bench.turn_text(a.text.strip(), "" if b is None else b.text.strip())] = unit(n)
    vectors["q-early alpha"], vectors["q-late tango"] = unit(1), unit(20)
    assert set(bench.texts(d)) <= set(vectors)
    return bench.LiLookup(vectors)


def test_turns_pair_into_exchanges_and_lines_name_their_turns() -> None:
    bench = _script()
    d = dialogues_from(RAW)[0]
    pairs = bench.exchanges(d)
    assert len(pairs) == 11 and pairs[-1][1] is None
    assert [t.dia_id for t in pairs[0]] == ["D1:1", "D1:2"]
    names = bench.line_ids(d)
    assert names["Human: Ann: fact number 1 alpha"] == {"D1:1"}
    assert names["output: Bo: fact number 20 tango"] == {"D1:20"}


def test_each_memory_shows_at_most_the_budget_and_is_scored_by_what_it_shows() -> None:
    bench = _script()
    d = dialogues_from(RAW)[0]
    lookup = _lookup(bench)
    by_label = {v.label: v for v in bench.VARIANTS}
    window = bench.run(d, bench.VARIANTS[0], lookup, seed=1)
    # The last 8 exchanges hold turns 6..21: turn 20 yes, turn 1 no.
    assert window == {"recall": 0.5, "shown": 8.0}
    vector = bench.run(d, bench.VARIANTS[1], lookup, seed=1)
    assert vector["recall"] == 1.0  # every exchange kept, the nearest shown
    everything = bench.run(d, by_label["SolarConversationMemory unlimited"], lookup, seed=1)
    assert everything["recall"] == 1.0 and everything["stored"] == 11.0
    # LangChain's parts in SolarConversationMemory's shape: the window shows turn 20, the
    # retriever the exchange of turn 1 (the nearest not in the window), by vectors or fused
    for label in ("window 5 + VectorStoreRetriever 3", "window 5 + EnsembleRetriever 3"):
        assembled = bench.run(d, by_label[f"{label}, every exchange"], lookup, seed=1)
        assert assembled == {"recall": 1.0, "shown": 8.0}


def test_the_command_writes_one_row_per_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = _script()
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(RAW))
    argv = ["--data", str(data), "--embedder", "hash", "--seeds", "1", "2",
            "--out-dir", str(tmp_path), "--cache-dir", str(tmp_path)]  # fmt: skip
    assert bench.main(argv) == 0
    rows = [
        json.loads(line) for line in (tmp_path / "dialogue-adapters.jsonl").read_text().splitlines()
    ]
    assert [r["memory"] for r in rows] == [v.label for v in bench.VARIANTS]
    assert all(r["units"] == 2 and 0.0 <= r["recall"] <= 1.0 and r["shown"] <= 8 for r in rows)
    assert rows[0]["d_window"] == 0.0
    li = (tmp_path / "dialogue-adapters-llamaindex.jsonl").read_text().splitlines()
    assert len(li) == len(bench.LI_KINDS) and all(json.loads(r)["units"] == 2 for r in li)
    out = capsys.readouterr().out
    assert "VectorStoreRetrieverMemory" in out and "VectorMemory top 8" in out


def test_a_turn_that_spans_lines_is_still_recognised() -> None:
    # LoCoMo holds turns with a newline inside: a shown line is matched whole, not per line.
    bench = _script()
    raw = json.loads(json.dumps(RAW))
    raw[0]["conversation"]["session_1"][19]["text"] = "fact number 20,\nand more"
    d = dialogues_from(raw)[0]
    names = bench.line_ids(d)
    history = "Human: Ann: fact number 19 sierra\nAI: Bo: fact number 20,\nand more"
    assert bench.shown(history, names) == {"D1:19", "D1:20"}
    part = "Human: Ann: fact number 1 alpha and 2"
    assert bench.shown(part, names) == frozenset()  # whole lines only
    lookup = _lookup(bench, raw)
    assert bench.run(d, bench.VARIANTS[0], lookup, seed=1) == {"recall": 0.5, "shown": 8.0}


def test_the_llamaindex_memories_are_scored_by_what_their_messages_show() -> None:
    bench = _script()
    d = dialogues_from(RAW)[0]
    lookup = _lookup(bench)
    table = bench.li_table([d])
    tokens = bench.li_budget([d], table)
    buffer = bench.li_run(d, "buffer", tokens, lookup, table, seed=1)
    assert buffer["recall"] == 0.5  # its window holds turn 20, not turn 1
    assert bench.li_run(d, "vector", tokens, lookup, table, seed=1)["recall"] == 1.0
    assert bench.li_run(d, "fusion", tokens, lookup, table, seed=1)["recall"] == 1.0
    assembled = bench.li_run(d, "window-fusion", tokens, lookup, table, seed=1)
    assert assembled["recall"] == 1.0  # the window shows turn 20, the retriever turn 1
    # Every exchange kept: the early one is recalled for the question that cites it (a budget
    # these tiny turns leave room to recall in: 0.3 x 120 tokens).
    everything = bench.li_run(d, "unlimited", 120, lookup, table, seed=1)
    # (the last input has an empty output: no answer, so no finished turn to offer)
    assert everything["recall"] == 1.0 and everything["stored"] == 10.0
    labels = [bench.li_label(kind, tokens) for kind in bench.LI_KINDS]
    assert labels[:2] == [
        f"ChatMemoryBuffer token_limit={tokens}",
        "VectorMemory top 8, every exchange",
    ]


def test_the_fused_retriever_returns_as_many_exchanges_as_each_call_asks() -> None:
    # WindowAndFusion asks for 3 more than its window holds: a later call with another count
    # gets that count, not the first call's.
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    bench = _script()
    d = dialogues_from(RAW)[0]
    memory = bench.FusionMemory(_lookup(bench))
    for a, b in bench.exchanges(d):
        memory.put(ChatMessage(role=MessageRole.USER, content=a.text))
        memory.put(ChatMessage(role=MessageRole.ASSISTANT, content="" if b is None else b.text))
    first = (d.turns[0].text, d.turns[1].text)
    for top in (2, 5, 2, 11):
        ranked = memory.ranked("q-early alpha", top)
        assert len(ranked) == top and ranked[0] == first
