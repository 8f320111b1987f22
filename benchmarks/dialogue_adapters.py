"""The dialogue-turn protocol through LangChain's chain-memory API, at an equal prompt budget.

What a LangChain user gets from each memory when a chain's history is a long conversation.
The turns of each LoCoMo conversation (``"Speaker: text"``, in session order, as in
``solar-bench dialogue``) are paired into exchanges: turn 1 is the input, turn 2 the output,
turn 3 the next input, and so on. For every exchange the chain first loads its history for the
input (``load_memory_variables``), then saves the exchange (``save_context``). After the last
one every question is asked once (``load_memory_variables({"input": question})``) and scored by
**evidence recall**: the share of its evidence turns among the turns the history shows.

Every memory shows at most ``B`` exchanges (``B = 8``, the size of ``SolarConversationMemory``'s
default prompt: a window of 5 plus 3 recalled):

- ``ConversationBufferWindowMemory(k=8)``: the last 8 exchanges;
- ``VectorStoreRetrieverMemory`` over LangChain's ``InMemoryVectorStore`` (``k=8``): every
  exchange stored, the 8 most similar shown; and LangChain's ``EnsembleRetriever`` (a
  ``BM25Retriever`` and that vector store, reciprocal-rank fusion) showing its 8 best;
- the same shape as ``SolarConversationMemory``'s default prompt, assembled from LangChain's
  parts: a window of 5 plus the 3 best other exchanges of a store-everything retriever
  (vectors, or the ensemble): :class:`WindowAndRecall`;
- ``SolarConversationMemory`` with its defaults (``k=5``, ``top_k=3``, ``solar-dialogue``,
  hybrid ranking) at 100 stored exchanges, its salience prior trained without the
  conversation scored (out of sample); the same showing 8 recalled and no window (``k=0,
  top_k=8``); the defaults with vector ranking; and over ``solar-adaptive``, ``fifo`` (100)
  and ``unlimited``, which separate "recall helps" from "curation helps".

**LlamaIndex** (``--only llamaindex``), the same exchanges through ``put``/``get``: for every
exchange the input is put, the prompt loaded (``get()``), the output put; after the last, every
question is asked once with ``get(input=question)`` and scored on the turns the messages show
(the window's messages and the recall message's bullets). ``ChatMemoryBuffer`` and
``SolarChatMemory`` get the same ``token_limit``: ``B`` mean exchanges plus a mean question
(the buffer then shows about ``B`` exchanges); LlamaIndex's ``VectorMemory`` keeps every
exchange and shows its ``B`` most similar. (LlamaIndex's newer ``Memory`` with a
``VectorMemoryBlock`` refuses the core ``SimpleVectorStore``, which does not store text; the
core has no vector store that does, so ``VectorMemory`` over its default in-memory index is the
store-everything memory LlamaIndex ships.) LlamaIndex's keyword + vector search over every
exchange is a ``QueryFusionRetriever`` of a ``BM25Retriever`` and the vector index
(:class:`FusionMemory`), showing its ``B`` best; and in ``SolarChatMemory``'s shape, a
``ChatMemoryBuffer`` window plus that retriever's 3 best other exchanges within 0.3 of the
budget (:class:`WindowAndFusion`). ``SolarChatMemory`` runs with its defaults
(``recall_token_ratio=0.3``, ``top_k=3``, ``solar-dialogue``, hybrid ranking) and over
``solar-adaptive``, ``fifo`` (100 stored exchanges each) and ``unlimited``.

Every memory embeds with the same MiniLM vectors (from the benchmark's on-disk cache; the
vector stores through a LangChain ``Embeddings`` or LlamaIndex ``BaseEmbedding`` that serves
them). The SOLAR memories run with each seed; the others are deterministic and run once.

    python benchmarks/dialogue_adapters.py --data locomo-dev.json [--seeds 42 1337 2024]
        [--out-dir docs/results] [--conversations N] [--embedder minilm|static|hash]
        [--only langchain|llamaindex] [--kinds buffer,window-fusion,...]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from langchain_classic.base_memory import BaseMemory
from langchain_core.embeddings import Embeddings

from langchain_solar import SolarConversationMemory
from solar_bench.dialogue import Dialogue, Turn, load_dialogues
from solar_bench.embed_cache import EmbeddingCache, LookupEmbedder
from solar_bench.embedders import NAMES, embedder_for
from solar_bench.salience_training import default_kind, priors_for
from solar_core import SolarMemory
from solar_core.integrations.turns import turn_text
from solar_core.policies.salience import SaliencePrior

F32 = npt.NDArray[np.float32]
BUDGET = 8  # exchanges shown per prompt: SolarConversationMemory's default 5 + 3
CAPACITY = 100
SEEDS = (42, 1337, 2024)
_HEADS = ("Human: ", "input: ")  # the first line of a shown exchange


def exchanges(dialogue: Dialogue) -> list[tuple[Turn, Turn | None]]:
    """Consecutive turns as (input, output) pairs; an odd last turn has no output."""
    turns = dialogue.turns
    return [
        (turns[i], turns[i + 1] if i + 1 < len(turns) else None) for i in range(0, len(turns), 2)
    ]


def line_ids(dialogue: Dialogue) -> dict[str, frozenset[str]]:
    """A shown line -> the turns it is: the window's ``Human:``/``AI:`` lines and the vector
    memory's ``input:``/``output:`` lines (a text said twice names both turns). A line may
    span several lines of the history: 17 LoCoMo turns hold a newline."""
    out: dict[str, frozenset[str]] = {}
    for a, b in exchanges(dialogue):
        forms = [(f"Human: {a.text}", a), (f"input: {a.text}", a)]
        if b is not None:
            forms += [(f"AI: {b.text}", b), (f"output: {b.text}", b)]
        for line, turn in forms:
            out[line] = out.get(line, frozenset()) | {turn.dia_id}
    return out


def shown(history: str, names: dict[str, frozenset[str]]) -> frozenset[str]:
    """The turns whose whole line is in ``history`` (from a line start to a line end)."""
    framed = f"\n{history}\n"
    return frozenset().union(*(ids for line, ids in names.items() if f"\n{line}\n" in framed))


def texts(dialogue: Dialogue) -> list[str]:
    """Every text a memory embeds: inputs and questions (queries), stored exchanges."""
    out = [t.text for t in dialogue.turns] + [q.text for q in dialogue.questions]
    out += [q.text.strip() for q in dialogue.questions]  # as SolarChatMemory asks them
    for a, b in exchanges(dialogue):
        out.append(turn_text(a.text, "" if b is None else b.text))
        out.append(f"input: {a.text}\noutput: {'' if b is None else b.text}")
        # LlamaIndex's VectorMemory embeds an exchange's messages joined by a space;
        # SolarChatMemory strips a message's text before it asks or stores
        out.append(f"{a.text} {'' if b is None else b.text}")
        out.append(a.text.strip())
        out.append(turn_text(a.text.strip(), "" if b is None else b.text.strip()))
    return out


class Lookup(LookupEmbedder):
    """The precomputed vectors, as a SOLAR embedder and as LangChain ``Embeddings``."""

    def langchain(self) -> Embeddings:
        vectors = self.vectors

        class Served(Embeddings):
            def embed_documents(self, batch: list[str]) -> list[list[float]]:
                return [vectors[t].tolist() for t in batch]

            def embed_query(self, text: str) -> list[float]:
                return vectors[text].tolist()

        return Served()


@dataclass(frozen=True)
class Variant:
    label: str
    build: Callable[[Lookup, int, SaliencePrior | None], BaseMemory]
    seeded: bool


def _quiet(make: Callable[[], BaseMemory]) -> BaseMemory:
    with warnings.catch_warnings():  # LangChain's classic memories warn that they are legacy
        warnings.simplefilter("ignore", DeprecationWarning)
        return make()


def _window(lookup: Lookup, seed: int, prior: SaliencePrior | None) -> BaseMemory:
    from langchain_classic.memory import ConversationBufferWindowMemory

    return _quiet(lambda: ConversationBufferWindowMemory(k=BUDGET))


def _vectors(lookup: Lookup, seed: int, prior: SaliencePrior | None) -> BaseMemory:
    from langchain_classic.memory import VectorStoreRetrieverMemory
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(embedding=lookup.langchain())
    retriever = store.as_retriever(search_kwargs={"k": BUDGET})
    return _quiet(lambda: VectorStoreRetrieverMemory(retriever=retriever))


class WindowAndRecall:
    """What a LangChain user assembles from LangChain's own parts: the last ``window``
    exchanges (``ConversationBufferWindowMemory``) plus the ``shown`` exchanges a retriever over
    every exchange ranks first among those not in the window (a ``VectorStoreRetrieverMemory``
    stores each exchange as ``"input: ...\noutput: ..."``; ``hybrid``: LangChain's
    ``EnsembleRetriever`` fuses a ``BM25Retriever`` over the same documents with the vector
    store's retriever, equal weights, its reciprocal-rank fusion). Window exchanges are skipped
    in the recall (the strongest way to fill the slots), and the BM25 index is rebuilt when an
    exchange was saved since the last lookup (``BM25Retriever`` indexes a fixed list)."""

    def __init__(self, lookup: Lookup, window: int, shown: int, hybrid: bool) -> None:
        from langchain_classic.memory import (
            ConversationBufferWindowMemory,
            VectorStoreRetrieverMemory,
        )
        from langchain_core.vectorstores import InMemoryVectorStore

        self.window = _quiet(lambda: ConversationBufferWindowMemory(k=window)) if window else None
        self.k, self.shown, self.hybrid = window, shown, hybrid
        store = InMemoryVectorStore(embedding=lookup.langchain())
        self.vectors = store.as_retriever(search_kwargs={"k": shown + window})
        self.saver = _quiet(lambda: VectorStoreRetrieverMemory(retriever=self.vectors))
        self.documents: list[str] = []
        self.recent: list[str] = []  # the window's exchanges, as stored
        self._fused: Any = None

    def save_context(self, inputs: dict[str, str], outputs: dict[str, str]) -> None:
        if self.window is not None:
            self.window.save_context(inputs, outputs)
        self.saver.save_context(inputs, outputs)
        text = f"input: {inputs['input']}\noutput: {outputs['output']}"
        self.documents.append(text)
        self.recent = self.documents[-self.k :] if self.k else []
        self._fused = None

    def _retriever(self) -> Any:
        if not self.hybrid:
            return self.vectors
        if self._fused is None:
            from langchain_classic.retrievers import EnsembleRetriever
            from langchain_community.retrievers import BM25Retriever

            bm25 = BM25Retriever.from_texts(self.documents, k=self.shown + self.k)
            self._fused = EnsembleRetriever(retrievers=[bm25, self.vectors], weights=[0.5, 0.5])
        return self._fused

    def load_memory_variables(self, inputs: dict[str, str]) -> dict[str, str]:
        recalled: list[str] = []
        if self.documents:
            for doc in self._retriever().invoke(inputs["input"]):
                if doc.page_content not in self.recent and doc.page_content not in recalled:
                    recalled.append(doc.page_content)
                if len(recalled) == self.shown:
                    break
        window = "" if self.window is None else self.window.load_memory_variables({})["history"]
        return {"history": "\n".join([*recalled, window]).strip("\n")}


def _assembled(window: int, shown: int, hybrid: bool) -> Callable[..., Any]:
    def build(lookup: Lookup, seed: int, prior: SaliencePrior | None) -> Any:
        return WindowAndRecall(lookup, window, shown, hybrid)

    return build


def _solar(
    policy: str, capacity: int | None, **settings: Any
) -> Callable[[Lookup, int, SaliencePrior | None], BaseMemory]:
    def build(lookup: Lookup, seed: int, prior: SaliencePrior | None) -> BaseMemory:
        reading = {k: v for k, v in settings.items() if k in ("retrieval", "min_score")}
        shape = {k: v for k, v in settings.items() if k not in reading}
        if policy == "solar-dialogue":  # the conversation's out-of-sample prior
            inner = SolarMemory(
                policy, capacity, embedder=lookup, seed=seed, prior=prior, **reading
            )
            return SolarConversationMemory(memory=inner, **shape)
        return SolarConversationMemory(
            capacity=capacity, seed=seed, embedder=lookup, policy=policy, **settings
        )

    return build


VARIANTS = (
    Variant(f"ConversationBufferWindowMemory k={BUDGET}", _window, False),
    Variant(f"VectorStoreRetrieverMemory k={BUDGET}, every exchange", _vectors, False),
    Variant(
        f"EnsembleRetriever (BM25 + vectors) top {BUDGET}, every exchange",
        _assembled(0, BUDGET, True),
        False,
    ),  # fmt: skip
    Variant("window 5 + VectorStoreRetriever 3, every exchange", _assembled(5, 3, False), False),
    Variant("window 5 + EnsembleRetriever 3, every exchange", _assembled(5, 3, True), False),
    Variant(
        f"SolarConversationMemory defaults, C={CAPACITY}",
        _solar("solar-dialogue", CAPACITY),
        True,
    ),
    Variant(
        f"SolarConversationMemory k=0, top_k={BUDGET}, C={CAPACITY}",
        _solar("solar-dialogue", CAPACITY, k=0, top_k=BUDGET),
        True,
    ),
    Variant(
        f"SolarConversationMemory defaults, vector ranking, C={CAPACITY}",
        _solar("solar-dialogue", CAPACITY, retrieval="vector"),
        True,
    ),
    Variant(
        f"SolarConversationMemory solar-adaptive, C={CAPACITY}",
        _solar("solar-adaptive", CAPACITY),
        True,
    ),
    Variant(f"SolarConversationMemory fifo, C={CAPACITY}", _solar("fifo", CAPACITY), True),
    Variant("SolarConversationMemory unlimited", _solar("unlimited", None), True),
)


def run(
    dialogue: Dialogue,
    variant: Variant,
    lookup: Lookup,
    seed: int,
    prior: SaliencePrior | None = None,
) -> dict[str, float]:
    """The protocol on one conversation: mean evidence recall of its questions at the end.
    ``prior``: the salience prior of a ``solar-dialogue`` memory (out of sample for it)."""
    names = line_ids(dialogue)
    memory = variant.build(lookup, seed, prior)
    for a, b in exchanges(dialogue):
        memory.load_memory_variables({"input": a.text})
        memory.save_context({"input": a.text}, {"output": "" if b is None else b.text})
    heads_known = {line.split("\n", 1)[0] for line in names if line.startswith(_HEADS)}
    recalls, counts = [], []
    for q in dialogue.questions:
        history = memory.load_memory_variables({"input": q.text})["history"]
        heads = [line for line in history.split("\n") if line.startswith(_HEADS)]
        if len(heads) > BUDGET:
            raise AssertionError(f"{variant.label} showed {len(heads)} exchanges, budget {BUDGET}")
        if not set(heads) <= heads_known:  # a memory rendered an exchange some other way
            raise KeyError(f"{variant.label} showed an exchange the chain never saved")
        recalls.append(len(q.evidence & shown(history, names)) / len(q.evidence))
        counts.append(len(heads))
    out = {"recall": float(np.mean(recalls)), "shown": float(np.mean(counts))}
    if isinstance(memory, SolarConversationMemory):
        out["stored"] = float(len(memory.memory))
    return out


def rows(
    dialogues: Sequence[Dialogue],
    lookup: Lookup,
    seeds: Sequence[int],
    progress: Callable[[], None],
    priors: dict[str, SaliencePrior] | None = None,
) -> list[dict[str, Any]]:
    """One row per variant: recall averaged over (conversation, seed) units, its standard
    error, and the paired difference to the window memory. ``priors``: each conversation's
    salience prior (by ``sample_id``) for the ``solar-dialogue`` memory."""
    per: dict[str, dict[tuple[str, int], dict[str, float]]] = {}
    for variant in VARIANTS:
        for d in dialogues:
            once: dict[str, float] | None = None
            for seed in seeds:
                if variant.seeded or once is None:
                    prior = None if priors is None else priors.get(d.sample_id)
                    once = run(d, variant, lookup, seed, prior)
                per.setdefault(variant.label, {})[(d.sample_id, seed)] = once
                progress()
    return summarise(per, "dialogue-adapters", BUDGET)


def summarise(
    per: dict[str, dict[tuple[str, int], dict[str, float]]], workload: str, budget: int
) -> list[dict[str, Any]]:
    """One row per memory (in ``per``'s order): recall over its (conversation, seed) units, its
    standard error, the paired difference to the first memory (the window), turns shown and,
    for SOLAR memories, items stored."""
    base = next(iter(per.values()))
    out = []
    for label, units in per.items():
        values = [u["recall"] for u in units.values()]
        diffs = [units[k]["recall"] - base[k]["recall"] for k in units]
        row = {
            "workload": workload,
            "memory": label,
            "budget": budget,
            "units": len(units),
            "recall": float(np.mean(values)),
            "recall_se": _se(values),
            "d_window": float(np.mean(diffs)),
            "d_window_se": _se(diffs),
            "shown": float(np.mean([u["shown"] for u in units.values()])),
        }
        stored = [u["stored"] for u in units.values() if "stored" in u]
        if stored:
            row["stored"] = float(np.mean(stored))
        out.append(row)
    return out


def _se(values: Sequence[float]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def table(result: Sequence[dict[str, Any]]) -> str:
    head = ["memory", "recall", "±se", "Δ vs window", "±se", "shown", "stored"]
    body = [
        [
            r["memory"],
            f"{r['recall']:.3f}",
            f"{r['recall_se']:.3f}",
            f"{r['d_window']:+.3f}",
            f"{r['d_window_se']:.3f}",
            f"{r['shown']:.1f}",
            f"{r['stored']:.0f}" if "stored" in r else "all",
        ]
        for r in result
    ]
    widths = [max(len(line[c]) for line in [head, *body]) for c in range(len(head))]
    return "\n".join(
        "  ".join(
            cell.ljust(widths[c]) if c == 0 else cell.rjust(widths[c])
            for c, cell in enumerate(line)
        )
        for line in [head, *body]
    )


# -- LlamaIndex ---------------------------------------------------------------------------------
LI_KINDS = (
    *("buffer", "vector", "fusion", "window-fusion", "solar-dialogue", "recall-only"),
    *("solar-adaptive", "fifo", "unlimited"),
)


def li_table(dialogues: Sequence[Dialogue]) -> Any:
    """Token counts of every turn as ``ChatMemoryBuffer`` counts a history (the contents joined
    by spaces); raises unless they add up exactly on every conversation."""
    from adapter_bench import TokenTable
    from llama_index.core.utils import get_tokenizer

    tokenize = get_tokenizer()
    texts = {t.text for d in dialogues for t in d.turns} | {""}  # "": an odd last turn's output
    table = TokenTable(
        {t: len(tokenize(t)) for t in texts}, {t: len(tokenize(" " + t)) for t in texts}
    )
    for d in dialogues:
        contents = [t.text for t in d.turns]
        added = table.first[contents[0]] + sum(table.rest[t] for t in contents[1:])
        if len(tokenize(" ".join(contents))) != added:
            raise AssertionError(f"token counts do not add up on {d.sample_id}")
    return table


def li_budget(dialogues: Sequence[Dialogue], table: Any) -> int:
    """Tokens of ``BUDGET`` mean exchanges plus a mean question, rounded up to 8: the window of
    ``ChatMemoryBuffer`` then shows about ``BUDGET`` exchanges, as the LangChain window does."""
    exchange = float(
        np.mean(
            [
                table.rest[a.text] + (table.rest[b.text] if b else 0)
                for d in dialogues
                for a, b in exchanges(d)
            ]
        )
    )
    from llama_index.core.utils import get_tokenizer

    tokenize = get_tokenizer()
    question = float(np.mean([len(tokenize(" " + q.text)) for d in dialogues for q in d.questions]))
    return 8 * math.ceil((BUDGET * exchange + question) / 8)


class LiLookup(Lookup):
    """The precomputed vectors as a LlamaIndex embedding model too."""

    def llamaindex(self) -> Any:
        from llama_index.core.embeddings import BaseEmbedding

        vectors = self.vectors

        class Served(BaseEmbedding):
            def _get_query_embedding(self, query: str) -> list[float]:
                return [float(x) for x in vectors[query]]

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return self._get_query_embedding(query)

            def _get_text_embedding(self, text: str) -> list[float]:
                return [float(x) for x in vectors[text]]

        return Served(model_name="served", embed_batch_size=256)


class FusionMemory:
    """LlamaIndex's keyword + vector search over every exchange, from its own parts: a
    ``QueryFusionRetriever`` (reciprocal rerank, no generated queries) over a
    ``VectorStoreIndex`` retriever and a ``BM25Retriever`` (``llama-index-retrievers-bm25``) of
    the same nodes, one node per exchange (its input and output joined, as ``VectorMemory``
    embeds them); ``get(input=...)`` shows the ``BUDGET`` best exchanges as their user and
    assistant messages. The index is rebuilt when exchanges were put since the last look (the
    BM25 retriever indexes a fixed list); a retriever is built per ``top`` (each of its parts
    is told how many to return), and a put drops them all."""

    def __init__(self, lookup: LiLookup) -> None:
        self.embed = lookup.llamaindex()
        self.exchanges: list[tuple[str, str]] = []
        self.pending: str | None = None
        self._retrievers: dict[int, Any] = {}

    def put(self, message: Any) -> None:
        from llama_index.core.base.llms.types import MessageRole

        if message.role == MessageRole.USER:
            self.pending = str(message.content)
        elif self.pending is not None:
            self.exchanges.append((self.pending, str(message.content)))
            self.pending = None
            self._retrievers.clear()

    def get(self, input: str | None = None) -> list[Any]:
        from llama_index.core.base.llms.types import ChatMessage, MessageRole

        out: list[Any] = []
        for a, b in self.ranked(input)[:BUDGET]:
            out.append(ChatMessage(role=MessageRole.USER, content=a))
            out.append(ChatMessage(role=MessageRole.ASSISTANT, content=b))
        return out

    def ranked(self, input: str | None, top: int = BUDGET) -> list[tuple[str, str]]:
        """The ``top`` exchanges the fused retriever ranks first for ``input``."""
        from llama_index.core import VectorStoreIndex
        from llama_index.core.llms.mock import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever
        from llama_index.core.schema import TextNode
        from llama_index.retrievers.bm25 import BM25Retriever

        if input is None or not self.exchanges:
            return []
        retriever = self._retrievers.get(top)
        if retriever is None:
            nodes = [
                TextNode(text=f"{a} {b}", id_=str(i)) for i, (a, b) in enumerate(self.exchanges)
            ]
            index = VectorStoreIndex(nodes, embed_model=self.embed)
            retriever = self._retrievers[top] = QueryFusionRetriever(
                [
                    index.as_retriever(similarity_top_k=top),
                    BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=top),
                ],
                llm=MockLLM(),  # never asked: num_queries=1 generates no variants
                mode="reciprocal_rerank",
                num_queries=1,  # the question itself
                use_async=False,
                similarity_top_k=top,
            )
        return [self.exchanges[int(f.node.node_id)] for f in retriever.retrieve(input)]


class WindowAndFusion:
    """``SolarChatMemory``'s default prompt shape from LlamaIndex's parts: a
    ``ChatMemoryBuffer`` window plus at most 3 exchanges that :class:`FusionMemory`'s retriever
    ranks first among those not in the window, taking at most 0.3 of ``token_limit``
    (``SolarChatMemory``'s ``recall_token_ratio``); the window gets the rest."""

    def __init__(self, tokens: int, lookup: LiLookup, table: Any, store: Any, counter: Any) -> None:
        from llama_index.core.memory import ChatMemoryBuffer

        self.buffer = ChatMemoryBuffer.from_defaults(
            token_limit=tokens, chat_store=store, tokenizer_fn=counter
        )
        self.fusion, self.tokens, self.table = FusionMemory(lookup), tokens, table

    def put(self, message: Any) -> None:
        self.buffer.put(message)
        self.fusion.put(message)

    def get(self, input: str | None = None) -> list[Any]:
        from llama_index.core.base.llms.types import ChatMessage, MessageRole

        if input is None:
            return list(self.buffer.get())
        budget = int(self.tokens * 0.3)
        least = {str(m.content) for m in self.buffer.get(initial_token_count=budget)}
        recalled: list[Any] = []
        used = 0
        for a, b in self.fusion.ranked(input, 3 + len(least)):
            cost = self.table.rest[a] + self.table.rest[b]
            if a in least or used + cost > budget:
                continue
            recalled += [
                ChatMessage(role=MessageRole.USER, content=a),
                ChatMessage(role=MessageRole.ASSISTANT, content=b),
            ]
            used += cost
            if len(recalled) == 6:
                break
        return [*recalled, *self.buffer.get(initial_token_count=used)]


def li_memory(
    kind: str, tokens: int, lookup: LiLookup, table: Any, seed: int, prior: SaliencePrior | None
) -> Any:
    """A LlamaIndex memory of ``kind``: the buffer and SOLAR memories at ``tokens``; the vector
    memory (every exchange kept) shows its ``BUDGET`` most similar exchanges."""
    from adapter_bench import TailTokenCounter
    from llama_index.core.memory import ChatMemoryBuffer, VectorMemory
    from llama_index.core.storage.chat_store import SimpleChatStore

    from llamaindex_solar import SolarChatMemory

    if kind == "vector":
        return VectorMemory.from_defaults(
            embed_model=lookup.llamaindex(), retriever_kwargs={"similarity_top_k": BUDGET}
        )
    if kind == "fusion":
        return FusionMemory(lookup)
    store = SimpleChatStore()
    counter = TailTokenCounter(store, table)
    if kind == "window-fusion":
        return WindowAndFusion(tokens, lookup, table, store, counter)
    if kind == "buffer":
        return ChatMemoryBuffer.from_defaults(
            token_limit=tokens, chat_store=store, tokenizer_fn=counter
        )
    if kind in ("solar-dialogue", "recall-only"):  # the defaults; or recall alone, 8 turns
        inner = SolarMemory("solar-dialogue", CAPACITY, embedder=lookup, seed=seed, prior=prior)
        shape = {"recall_token_ratio": 0.99, "top_k": BUDGET} if kind == "recall-only" else {}
        return SolarChatMemory.from_defaults(
            token_limit=tokens, chat_store=store, tokenizer_fn=counter, memory=inner, **shape
        )
    capacity = None if kind == "unlimited" else CAPACITY
    return SolarChatMemory.from_defaults(
        token_limit=tokens,
        chat_store=store,
        tokenizer_fn=counter,
        capacity=capacity,
        seed=seed,
        embedder=lookup,
        policy=kind,
    )


def li_label(kind: str, tokens: int) -> str:
    if kind == "buffer":
        return f"ChatMemoryBuffer token_limit={tokens}"
    if kind == "vector":
        return f"VectorMemory top {BUDGET}, every exchange"
    if kind == "fusion":
        return f"QueryFusionRetriever (BM25 + vectors) top {BUDGET}, every exchange"
    if kind == "window-fusion":
        return f"ChatMemoryBuffer token_limit={tokens} + QueryFusionRetriever 3 (0.3 of it)"
    if kind == "unlimited":
        return "SolarChatMemory unlimited"
    if kind == "recall-only":
        return f"SolarChatMemory recall_token_ratio=0.99, top_k={BUDGET}, C={CAPACITY}"
    name = "defaults" if kind == "solar-dialogue" else kind
    return f"SolarChatMemory {name}, C={CAPACITY}"


def li_shown(messages: Sequence[Any], dialogue: Dialogue) -> frozenset[str]:
    """The turns a LlamaIndex prompt shows: its user/assistant messages, and the recall
    message's bullets (``- Human: <turn>`` / ``  AI: <turn>``)."""
    from llama_index.core.base.llms.types import MessageRole

    from solar_core.integrations.turns import HEADER

    by_text: dict[str, frozenset[str]] = {}
    for t in dialogue.turns:
        by_text[t.text] = by_text.get(t.text, frozenset()) | {t.dia_id}
    bullets: dict[str, frozenset[str]] = {}
    for a, b in exchanges(dialogue):
        rendered = turn_text(a.text.strip(), "" if b is None else b.text.strip())
        ids = {a.dia_id} | ({b.dia_id} if b is not None else set())
        bullets[rendered] = bullets.get(rendered, frozenset()) | ids
    shown: set[str] = set()
    for m in messages:
        text = str(m.content or "")
        if m.role == MessageRole.SYSTEM and text.startswith(HEADER):
            from adapter_bench import recalled_turns

            for turn in recalled_turns(text.strip()):
                shown |= bullets[turn]
        elif text in by_text:
            shown |= by_text[text]
    return frozenset(shown)


def li_run(
    dialogue: Dialogue,
    kind: str,
    tokens: int,
    lookup: LiLookup,
    table: Any,
    seed: int,
    prior: SaliencePrior | None = None,
) -> dict[str, float]:
    """The protocol through ``put``/``get``: for every exchange the input is put, the prompt
    is loaded (``get``), the output put; after the last, each question is asked once with
    ``get(input=question)``."""
    from llama_index.core.base.llms.types import ChatMessage, MessageRole

    memory = li_memory(kind, tokens, lookup, table, seed, prior)
    for a, b in exchanges(dialogue):
        memory.put(ChatMessage(role=MessageRole.USER, content=a.text))
        if kind not in ("vector", "fusion"):  # they have nothing to show without an input
            memory.get()
        memory.put(ChatMessage(role=MessageRole.ASSISTANT, content="" if b is None else b.text))
    recalls, counts = [], []
    for q in dialogue.questions:
        messages = memory.get(input=q.text)
        ids = li_shown(messages, dialogue)
        recalls.append(len(q.evidence & ids) / len(q.evidence))
        counts.append(len(ids))
    out = {"recall": float(np.mean(recalls)), "shown": float(np.mean(counts))}
    if kind not in ("buffer", "vector", "fusion", "window-fusion"):
        out["stored"] = float(len(memory.memory))
    return out


def li_rows(
    dialogues: Sequence[Dialogue],
    lookup: LiLookup,
    seeds: Sequence[int],
    progress: Callable[[], None],
    priors: dict[str, SaliencePrior] | None = None,
    kinds: Sequence[str] = LI_KINDS,
) -> list[dict[str, Any]]:
    """One row per LlamaIndex memory, as :func:`rows` (``shown``: turns per prompt)."""
    table = li_table(dialogues)
    tokens = li_budget(dialogues, table)
    per: dict[str, dict[tuple[str, int], dict[str, float]]] = {}
    for kind in kinds:
        seeded = kind not in ("buffer", "vector", "fusion", "window-fusion")
        for d in dialogues:
            once: dict[str, float] | None = None
            for seed in seeds:
                if seeded or once is None:
                    prior = None if priors is None else priors.get(d.sample_id)
                    once = li_run(d, kind, tokens, lookup, table, seed, prior)
                per.setdefault(li_label(kind, tokens), {})[(d.sample_id, seed)] = once
                progress()
    return summarise(per, "dialogue-adapters-llamaindex", tokens)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    p.add_argument("--out-dir", type=Path, default=None, help="write dialogue-adapters.jsonl/.txt")
    p.add_argument("--conversations", type=int, default=None, help="the first N only")
    p.add_argument(
        "--embedder",
        default="minilm",
        help=f"the text embedder, of {', '.join(NAMES)} (default minilm: the published tables)",
    )
    p.add_argument(
        "--suffix", default="", help="appended to the result files' names (e.g. -static)"
    )
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    p.add_argument("--only", choices=("langchain", "llamaindex"), help="one framework only")
    p.add_argument("--kinds", help="llamaindex: comma-separated memories of LI_KINDS only")
    args = p.parse_args(argv)
    every = [d for d in load_dialogues(args.data) if d.questions]
    dialogues = every[: args.conversations]
    cache = EmbeddingCache(*embedder_for(args.embedder), args.cache_dir)
    every_text = [t for d in every for t in texts(d)]
    lookup = LiLookup(cache.vectors(every_text))
    done = [0]

    def tick() -> None:
        done[0] += 1
        print(f"\rdialogue-adapters: {done[0]} runs", end="", file=sys.stderr)

    kind = default_kind(args.embedder)
    prior_vectors = lookup.vectors
    if args.embedder not in ("minilm", "static"):
        prior_vectors = EmbeddingCache(*embedder_for("static"), args.cache_dir).vectors(every_text)
    # Out of sample: a conversation the shipped prior was trained on gets one trained without it.
    # (trained on the file's other conversations, also when only some are scored)
    priors = priors_for(every, prior_vectors.__getitem__, kind)
    parts = []
    if args.only in (None, "langchain"):
        parts.append(("dialogue-adapters", rows(dialogues, lookup, args.seeds, tick, priors)))
    if args.only in (None, "llamaindex"):
        kinds = LI_KINDS if args.kinds is None else tuple(args.kinds.split(","))
        li = li_rows(dialogues, lookup, args.seeds, tick, priors, kinds)
        parts.append(("dialogue-adapters-llamaindex", li))
    print(file=sys.stderr)
    for name, result in parts:
        text = table(result)
        print(f"== {name} ==\n{text}")
        if args.out_dir is not None:
            args.out_dir.mkdir(parents=True, exist_ok=True)
            lines = "".join(json.dumps(r) + "\n" for r in result)
            (args.out_dir / f"{name}{args.suffix}.jsonl").write_text(lines, encoding="utf-8")
            (args.out_dir / f"{name}{args.suffix}.txt").write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
