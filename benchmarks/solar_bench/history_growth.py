"""``solar-bench growth --history``: the cost of a chat turn as one user's history grows.

One user, a conversation of N exchanges already stored (default N = 1,000, 10,000 and
100,000), then :data:`TIMED` further chat turns, each timed: the memory's read for the prompt
plus its write of the new exchange, as the framework calls them (LangChain:
``load_memory_variables({"input": ...})`` then ``save_context``; LlamaIndex: ``get(input=...)``
then ``put`` of the user and the assistant message; mem0: ``search`` then ``add``). Reported:
the median and p95 milliseconds per turn, the process's resident memory (RSS) after the turns
and what the history added to it, and the size on disk of a peer that persists.

The conversation is generated (varied templated small talk about people, places, plans and
numbers, seeded), or with ``data`` the turns of a LoCoMo-format file, in order, paired into
exchanges and cycled to the length needed (read from its path; nothing is copied).

Every peer embeds with the library's default static embedder (``solar_core`` embedder
``"static"``), wrapped as a LangChain ``Embeddings`` or a LlamaIndex ``BaseEmbedding`` for the
others (:class:`StaticEmbeddings`, :func:`llamaindex_embedding`). The peers (:data:`PEERS`):

- ``solar``: ``SolarConversationMemory(capacity=100)`` (its defaults: a window of 5, 3
  recalled, ``solar-dialogue``, hybrid ranking);
- ``solar-sqlite``: the same over a ``MemoryStore`` scope on a SQLite file (every step
  persisted);
- ``lc-vector``: LangChain's ``VectorStoreRetrieverMemory`` over an ``InMemoryVectorStore``,
  every exchange stored, its 8 most similar shown;
- ``lc-window-ensemble``: ``ConversationBufferWindowMemory(k=5)`` plus the 3 best other
  exchanges of an ``EnsembleRetriever`` (``BM25Retriever`` + the vector store's retriever,
  equal weights): the BM25 index is rebuilt when an exchange was saved since the last read, as
  a user must (``BM25Retriever`` indexes a fixed list);
- ``li-vector``: LlamaIndex's ``VectorMemory`` over its default in-memory index, 8 shown;
- ``mem0``: mem0's ``Memory`` with ``infer=False`` (no LLM), its FAISS vector store on disk
  and the static embedder through its LangChain embedder provider, 8 shown; skipped with a note
  where ``mem0ai`` or ``faiss-cpu`` is not installed.

The stored history is written the way each memory would have written it: the SOLAR memories
turn by turn (a read and a write per exchange: their reads and writes drive what they keep);
the others, whose reads change nothing, through their own write calls, in bulk where the
store has one (the vector stores' ``add_documents``/``insert_nodes``; the same documents a
``save_context``/``put`` would store). Each (peer, N) runs in a fresh Python process. A run
times at most :data:`TIMED` turns and stops early after :data:`BUDGET_S` seconds of timed
turns (at least :data:`MIN_TIMED`); the ``timed`` column says how many.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .growth import peak_mb, rss_mb

#: stored exchanges before the timed turns, each N in a fresh process
TURNS = (1000, 10000, 100000)
#: the memories compared, in the table's order
PEERS = ("solar", "solar-sqlite", "lc-vector", "lc-window-ensemble", "li-vector", "mem0")
LABELS = {
    "solar": "SolarConversationMemory(capacity=100)",
    "solar-sqlite": "SolarConversationMemory(capacity=100), MemoryStore SQLite",
    "lc-vector": "LangChain VectorStoreRetrieverMemory (InMemoryVectorStore)",
    "lc-window-ensemble": "LangChain window 5 + EnsembleRetriever(BM25, vectors) 3",
    "li-vector": "LlamaIndex VectorMemory",
    "mem0": "mem0 (infer=False, FAISS)",
}
#: timed turns per run at most
TIMED = 100
#: a run stops timing turns after this many seconds of them ...
BUDGET_S = 60.0
#: ... once it has timed at least this many
MIN_TIMED = 5
#: exchanges shown by the store-everything memories (SolarConversationMemory's 5 + 3)
SHOWN = 8
# --- the conversation -----------------------------------------------------------------------

_NAMES = ("Maya", "Tom", "Priya", "Jonas", "Aiko", "Luis", "Grace", "Omar", "Elena", "Sam")
_PLACES = (
    "Lisbon",
    "the climbing gym",
    "my sister's place",
    "the farmers market",
    "Kyoto",
    "the office",
    "the lake house",
    "the dentist",
    "a jazz bar downtown",
    "the library",
)
_THINGS = (
    "sourdough starter",
    "marathon training",
    "new job at the hospital",
    "vegetable garden",
    "guitar lessons",
    "kitchen renovation",
    "tax return",
    "Spanish course",
    "daughter's recital",
    "old bicycle",
    "book club",
    "car insurance",
)
_FEELINGS = ("excited", "worried", "tired", "proud", "nervous", "relieved", "curious")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_USER = (
    "I met {name} at {place} on {day}, and we talked about my {thing} for an hour.",
    "Can you remind me what I said about the {thing}? I think it was {num} weeks ago.",
    "I'm feeling {feeling} about the {thing}; {name} thinks I should give it {num} more days.",
    "We're flying to {place} next {day}. Any tips for {num} days there?",
    "{name} finally finished the {thing}. It cost about {num}0 dollars in the end.",
    "My {thing} is going well: {num} sessions so far, and I'm {feeling} about it.",
    "Should I tell {name} about the {thing} before {day}, or wait?",
    "I lost my keys at {place} again. That's the {num}th time this year.",
    "What was the name of the place {name} recommended near {place}?",
    "I'm {feeling}: the {thing} deadline moved to {day} and I'm only {num}0% done.",
)
_ASSISTANT = (
    "That sounds {feeling_adj}. How did {name} react when you brought up the {thing}?",
    "You mentioned the {thing} on {day}: you wanted to spend {num} hours a week on it.",
    "For {place}, book early and leave a free day; {num} days is enough to see the highlights.",
    "It may help to split the {thing} into {num} small steps and start with the easiest one.",
    "Telling {name} early usually helps; you said trust mattered to you after {place}.",
    "Good news about the {thing}! Last time you said it would take {num} months.",
    "I'd keep a spare key with {name}; you said {place} is where you lose things most.",
    "You told me {name} suggested a small cafe near {place}, open until {num} pm.",
    "Being {feeling} is normal before a deadline; what is left on the {thing}?",
    "Noted: {name}, {place}, {day}. Want me to remind you about the {thing} later?",
)
_ADJ = ("great", "stressful", "lovely", "exhausting", "promising", "hard", "fun")


def generated(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` varied (user, assistant) exchanges, seeded.

    >>> a = generated(3)
    >>> len(a), len(set(a)), a == generated(3)
    (3, 3, True)
    """
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        slots = {
            "name": rng.choice(_NAMES),
            "place": rng.choice(_PLACES),
            "thing": rng.choice(_THINGS),
            "feeling": rng.choice(_FEELINGS),
            "feeling_adj": rng.choice(_ADJ),
            "day": rng.choice(_DAYS),
            "num": rng.randint(2, 19),
        }
        out.append((rng.choice(_USER).format(**slots), rng.choice(_ASSISTANT).format(**slots)))
    return out


def from_locomo(path: str | Path, n: int) -> list[tuple[str, str]]:
    """``n`` exchanges from a LoCoMo-format file: its turns (``"Speaker: text"``, in order)
    paired into (input, output), cycled to ``n``."""
    from .dialogue import load_dialogues

    turns = [t.text for d in load_dialogues(path) for t in d.turns]
    pairs = [(turns[i], turns[i + 1]) for i in range(0, len(turns) - 1, 2)]
    if not pairs:
        raise ValueError(f"--data {path} holds no conversation turns")
    return [pairs[i % len(pairs)] for i in range(n)]


def conversation(n: int, data: str | Path | None = None) -> list[tuple[str, str]]:
    return generated(n) if data is None else from_locomo(data, n)


# --- the shared embedder --------------------------------------------------------------------


def _static() -> Any:
    from solar_core.embedders.embedder import resolve_embedder

    return resolve_embedder("static")


def _rows(embedder: Any, texts: Sequence[str]) -> list[list[float]]:
    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms > 0, norms, 1.0)).tolist()  # type: ignore[no-any-return]


def langchain_embeddings() -> Any:
    """The static embedder as a LangChain ``Embeddings`` (unit vectors)."""
    from langchain_core.embeddings import Embeddings

    embedder = _static()

    class StaticEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return _rows(embedder, texts)

        def embed_query(self, text: str) -> list[float]:
            return _rows(embedder, [text])[0]

    return StaticEmbeddings()


def llamaindex_embedding() -> Any:
    """The static embedder as a LlamaIndex ``BaseEmbedding`` (unit vectors)."""
    from llama_index.core.embeddings import BaseEmbedding

    embedder = _static()

    class StaticEmbedding(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return _rows(embedder, [query])[0]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return _rows(embedder, [text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return _rows(embedder, texts)

    return StaticEmbedding(model_name="solar-static", embed_batch_size=256)


# --- the peers ------------------------------------------------------------------------------


class Peer:
    """One memory: ``turn`` is a timed chat turn, ``fill`` stores the history before them."""

    folder: str | None = None  # where it persists, if it does

    def fill(self, pairs: Sequence[tuple[str, str]]) -> None:
        for a, b in pairs:
            self.turn(a, b)

    def turn(self, user: str, assistant: str) -> None:
        raise NotImplementedError

    def close(self) -> None:
        return None


def _quiet(make: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():  # LangChain's classic memories warn that they are legacy
        warnings.simplefilter("ignore")
        return make()


class LangChainPeer(Peer):
    def __init__(self, memory: Any) -> None:
        self.memory = memory

    def turn(self, user: str, assistant: str) -> None:
        self.memory.load_memory_variables({"input": user})
        self.memory.save_context({"input": user}, {"output": assistant})


class SolarSQLite(LangChainPeer):
    def __init__(self, folder: str) -> None:
        from langchain_solar import SolarConversationMemory
        from solar_core.persistence import MemoryStore

        self.folder = folder
        self.store = MemoryStore(
            os.path.join(folder, "memory.db"),
            policy="solar-dialogue",  # SolarConversationMemory's default
            capacity=100,
            embedder="static",
            seed=0,
        )
        super().__init__(SolarConversationMemory(memory=self.store.scope(user="u1")))

    def close(self) -> None:
        self.store.close()


class LangChainVectors(LangChainPeer):
    """``VectorStoreRetrieverMemory``; the history stored with the store's ``add_documents``
    (the documents ``save_context`` stores: ``"input: ...\\noutput: ..."``)."""

    def __init__(self) -> None:
        from langchain_classic.memory import VectorStoreRetrieverMemory
        from langchain_core.vectorstores import InMemoryVectorStore

        self.store = InMemoryVectorStore(embedding=langchain_embeddings())
        retriever = self.store.as_retriever(search_kwargs={"k": SHOWN})
        super().__init__(_quiet(lambda: VectorStoreRetrieverMemory(retriever=retriever)))

    def fill(self, pairs: Sequence[tuple[str, str]]) -> None:
        from langchain_core.documents import Document

        docs = [Document(page_content=f"input: {a}\noutput: {b}") for a, b in pairs]
        for i in range(0, len(docs), 1000):
            self.store.add_documents(docs[i : i + 1000])


class WindowEnsemble(Peer):
    """The last 5 exchanges plus the 3 best other exchanges of an ``EnsembleRetriever``
    (``BM25Retriever`` + vectors), the BM25 index rebuilt when the history changed."""

    WINDOW, RECALLED = 5, 3

    def __init__(self) -> None:
        from langchain_classic.memory import (
            ConversationBufferWindowMemory,
            VectorStoreRetrieverMemory,
        )
        from langchain_core.vectorstores import InMemoryVectorStore

        self.window = _quiet(lambda: ConversationBufferWindowMemory(k=self.WINDOW))
        self.store = InMemoryVectorStore(embedding=langchain_embeddings())
        top = self.WINDOW + self.RECALLED
        self.vectors = self.store.as_retriever(search_kwargs={"k": top})
        self.saver = _quiet(lambda: VectorStoreRetrieverMemory(retriever=self.vectors))
        self.documents: list[str] = []
        self._fused: Any = None

    def fill(self, pairs: Sequence[tuple[str, str]]) -> None:
        from langchain_core.documents import Document
        from langchain_core.messages import AIMessage, HumanMessage

        texts = [f"input: {a}\noutput: {b}" for a, b in pairs]
        for i in range(0, len(texts), 1000):
            self.store.add_documents([Document(page_content=t) for t in texts[i : i + 1000]])
        self.documents += texts
        self.window.chat_memory.add_messages(
            [m for a, b in pairs for m in (HumanMessage(content=a), AIMessage(content=b))]
        )

    def _retriever(self) -> Any:
        if self._fused is None:
            from langchain_classic.retrievers import EnsembleRetriever

            with warnings.catch_warnings():  # langchain-community warns that it is sunset
                warnings.simplefilter("ignore", DeprecationWarning)
                from langchain_community.retrievers import BM25Retriever

            bm25 = BM25Retriever.from_texts(self.documents, k=self.WINDOW + self.RECALLED)
            self._fused = EnsembleRetriever(retrievers=[bm25, self.vectors], weights=[0.5, 0.5])
        return self._fused

    def turn(self, user: str, assistant: str) -> None:
        recent = self.documents[-self.WINDOW :]
        recalled: list[str] = []
        if self.documents:
            for doc in self._retriever().invoke(user):
                if doc.page_content not in recent and doc.page_content not in recalled:
                    recalled.append(doc.page_content)
                if len(recalled) == self.RECALLED:
                    break
        self.window.load_memory_variables({})
        self.window.save_context({"input": user}, {"output": assistant})
        self.saver.save_context({"input": user}, {"output": assistant})
        self.documents.append(f"input: {user}\noutput: {assistant}")
        self._fused = None


class LlamaIndexVectors(Peer):
    """``VectorMemory``; the history stored with the index's ``insert_nodes`` (one node per
    exchange, as its ``put`` of a user then an assistant message leaves it)."""

    def __init__(self) -> None:
        from llama_index.core.memory import VectorMemory

        self.memory = VectorMemory.from_defaults(
            embed_model=llamaindex_embedding(), retriever_kwargs={"similarity_top_k": SHOWN}
        )

    def fill(self, pairs: Sequence[tuple[str, str]]) -> None:
        from llama_index.core.base.llms.types import ChatMessage, MessageRole
        from llama_index.core.memory.vector_memory import (
            _get_starter_node_for_new_batch,
            _stringify_chat_message,
        )

        nodes = []
        for a, b in pairs:
            node = _get_starter_node_for_new_batch()
            node.text = f"{a} {b}"
            node.metadata["sub_dicts"] += [
                _stringify_chat_message(ChatMessage(role=MessageRole.USER, content=a)),
                _stringify_chat_message(ChatMessage(role=MessageRole.ASSISTANT, content=b)),
            ]
            nodes.append(node)
        for i in range(0, len(nodes), 1000):
            self.memory.vector_index.insert_nodes(nodes[i : i + 1000])

    def turn(self, user: str, assistant: str) -> None:
        from llama_index.core.base.llms.types import ChatMessage, MessageRole

        self.memory.get(input=user)
        self.memory.put(ChatMessage(role=MessageRole.USER, content=user))
        self.memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=assistant))


class Mem0(Peer):
    """mem0's ``Memory``: ``search`` then ``add(..., infer=False)`` (no LLM is called); FAISS
    on disk, its history database in the same folder."""

    def __init__(self, folder: str) -> None:
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        memory = importlib.import_module("mem0").Memory  # optional: not in the project's pins

        self.folder = folder
        dim = _static().dim
        config = {
            "vector_store": {
                "provider": "faiss",
                "config": {
                    "collection_name": "history",
                    "path": os.path.join(folder, "faiss"),
                    "embedding_model_dims": dim,
                    "distance_strategy": "cosine",
                },
            },
            "embedder": {
                "provider": "langchain",
                "config": {"model": langchain_embeddings(), "embedding_dims": dim},
            },
            "llm": {"provider": "openai", "config": {"api_key": "unused"}},  # never called
            "history_db_path": os.path.join(folder, "history.db"),
        }
        self.memory = memory.from_config(config)

    def turn(self, user: str, assistant: str) -> None:
        self.memory.search(user, filters={"user_id": "u1"}, top_k=SHOWN)
        self._add(user, assistant)

    def _add(self, user: str, assistant: str) -> None:
        messages = [{"role": "user", "content": user}, {"role": "assistant", "content": assistant}]
        self.memory.add(messages, user_id="u1", infer=False)

    def fill(self, pairs: Sequence[tuple[str, str]]) -> None:
        """What ``add(infer=False)`` does per message (``Memory._create_memory``: a vector and
        its payload in the vector store, an ``ADD`` row in the history database), in batches:
        its FAISS store rewrites its files at each insert, its database commits each row."""
        import hashlib
        import uuid
        from datetime import datetime, timezone

        lemmatize = importlib.import_module("mem0.memory.main").lemmatize_for_bm25

        messages = [
            (role, text) for a, b in pairs for role, text in (("user", a), ("assistant", b))
        ]
        embed = self.memory.embedding_model
        for i in range(0, len(messages), 2000):
            chunk = messages[i : i + 2000]
            vectors = embed.langchain_model.embed_documents([text for _, text in chunk])
            ids, payloads = [], []
            for role, text in chunk:
                now = datetime.now(timezone.utc).isoformat()
                payloads.append(
                    {
                        "user_id": "u1",
                        "role": role,
                        "data": text,
                        "hash": hashlib.md5(text.encode()).hexdigest(),
                        "created_at": now,
                        "updated_at": now,
                        "text_lemmatized": lemmatize(text),
                    }
                )
                ids.append(str(uuid.uuid4()))
            self.memory.vector_store.insert(vectors=vectors, ids=ids, payloads=payloads)
            rows = [
                (str(uuid.uuid4()), i, None, p["data"], "ADD", p["created_at"], p["updated_at"])
                + (0, None, p["role"])
                for i, p in zip(ids, payloads, strict=True)
            ]
            db = self.memory.db  # add_history's row, one transaction per chunk
            with db._lock:
                db.connection.execute("BEGIN")
                db.connection.executemany(_HISTORY_ROW, rows)
                db.connection.execute("COMMIT")


_HISTORY_ROW = (
    "INSERT INTO history (id, memory_id, old_memory, new_memory, event, created_at, "
    "updated_at, is_deleted, actor_id, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def build(peer: str, folder: str) -> Peer:
    if peer == "solar":
        from langchain_solar import SolarConversationMemory

        return LangChainPeer(SolarConversationMemory(capacity=100, seed=0))
    if peer == "solar-sqlite":
        return SolarSQLite(folder)
    if peer == "lc-vector":
        return LangChainVectors()
    if peer == "lc-window-ensemble":
        return WindowEnsemble()
    if peer == "li-vector":
        return LlamaIndexVectors()
    if peer == "mem0":
        return Mem0(folder)
    raise ValueError(f"unknown peer {peer!r}; use one of {', '.join(PEERS)}")


def missing(peer: str) -> str | None:
    """Why ``peer`` cannot run in this environment (a package is missing), else ``None``."""
    import importlib.util

    needs = {
        "solar": ("langchain_classic",),
        "solar-sqlite": ("langchain_classic",),
        "lc-vector": ("langchain_classic",),
        "lc-window-ensemble": ("langchain_classic", "langchain_community", "rank_bm25"),
        "li-vector": ("llama_index.core",),
        "mem0": ("mem0", "faiss"),
    }[peer]
    pip = {"mem0": "mem0ai", "faiss": "faiss-cpu", "llama_index.core": "llama-index-core"}
    for name in needs:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return f"not installed: pip install {pip.get(name, name.replace('_', '-'))}"
    return None


def disk_mb(folder: str | None) -> float | None:
    if folder is None:
        return None
    size = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file())
    return size / 2**20


def measure(
    peer: str,
    stored: int,
    timed: int = TIMED,
    data: str | Path | None = None,
    budget_s: float = BUDGET_S,
) -> dict[str, Any]:
    """In this process: ``stored`` exchanges, then up to ``timed`` timed turns."""
    pairs = conversation(stored + timed, data)
    with tempfile.TemporaryDirectory(prefix="solar-history-") as folder:
        memory = build(peer, folder)
        memory.turn("warming up", "ok")  # imports, first embedding; not part of the history
        start_rss = rss_mb()
        start = time.perf_counter()
        memory.fill(pairs[:stored])
        filled = time.perf_counter() - start
        times: list[float] = []
        clock = time.perf_counter
        began = clock()
        for a, b in pairs[stored:]:
            t0 = clock()
            memory.turn(a, b)
            times.append(1000.0 * (clock() - t0))
            if len(times) >= MIN_TIMED and clock() - began > budget_s:
                break
        end_rss = rss_mb()
        disk = disk_mb(memory.folder)
        memory.close()
    times.sort()
    return {
        "timed": len(times),
        "median_ms": statistics.median(times),
        "p95_ms": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))],
        "fill_s": filled,
        "rss_start_mb": start_rss,
        "rss_mb": end_rss,
        "peak_mb": peak_mb(),
        "disk_mb": disk,
    }


def run_once(
    peer: str,
    stored: int,
    timed: int = TIMED,
    data: str | Path | None = None,
    blas_threads: int = 1,
    python: str = sys.executable,
) -> dict[str, Any]:
    """One (peer, N) in a fresh Python process: its row (skipped with a note if it can't)."""
    row: dict[str, Any] = {
        "workload": "growth",
        "setting": "history",
        "case": peer,
        "peer": LABELS[peer],
        "stored_turns": stored,
    }
    env = {**os.environ}
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(blas_threads)
    argv = [python, "-m", "solar_bench.history_growth", peer, str(stored), str(timed)]
    done = subprocess.run(
        [*argv, *([] if data is None else [str(data)])],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    last = done.stdout.strip().splitlines()[-1:] if done.stdout.strip() else []
    if done.returncode != 0 or not last:
        raise RuntimeError(
            f"solar-bench growth --history: {peer} at {stored} turns failed:\n{done.stderr}"
        )
    found: dict[str, Any] = json.loads(last[0])
    if "skipped" in found:
        return {**row, "skipped": found["skipped"]}
    return {**row, **found, "history_mb": found["rss_mb"] - found["rss_start_mb"]}


def run(
    turns: Sequence[int] = TURNS,
    peers: Sequence[str] = PEERS,
    timed: int = TIMED,
    data: str | Path | None = None,
    blas_threads: int = 1,
    pythons: dict[str, str] | None = None,
    progress: Callable[[int], None] = lambda n: None,
    total: Callable[[int], None] = lambda n: None,
) -> list[dict[str, Any]]:
    """Every (peer, N) in its own process.
    ``pythons``: the interpreter of a peer, where not this one (mem0 in a venv of its own)."""
    counts = sorted(set(turns))
    total(len(peers) * len(counts))
    rows: list[dict[str, Any]] = []
    for peer in peers:
        for n in counts:
            python = (pythons or {}).get(peer, sys.executable)
            rows.append(run_once(peer, n, timed, data, blas_threads, python))
            progress(1)
    return rows


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def render(rows: Sequence[dict[str, Any]]) -> str:
    """The table, then why any row is missing."""
    out = [
        "== growth --history: one user's chat turn (read + write) after N stored exchanges "
        "(a fresh process per row) ==",
        f"{'memory':58}  {'N':>6}  {'timed':>5}  {'median ms':>9}  {'p95 ms':>8}  "
        f"{'x solar':>7}  {'rss MB':>7}  {'+MB':>6}  {'disk MB':>7}  {'fill s':>6}",
    ]
    ours = {
        r["stored_turns"]: r["median_ms"]
        for r in rows
        if r["case"] == "solar" and "skipped" not in r
    }
    notes: list[str] = []
    for r in rows:
        if "skipped" in r:
            out.append(f"{r['peer']:58}  {r['stored_turns']:6}  {'-':>5}  {'-':>9}")
            notes.append(f"{r['peer']} at {r['stored_turns']}: {r['skipped']}")
            continue
        base = ours.get(r["stored_turns"])
        ratio = None if base is None else r["median_ms"] / base
        out.append(
            f"{r['peer']:58}  {r['stored_turns']:6}  {r['timed']:5}  {r['median_ms']:9.2f}  "
            f"{r['p95_ms']:8.2f}  {_num(ratio, '7.1f'):>7}  {r['rss_mb']:7.1f}  "
            f"{r['history_mb']:6.1f}  {_num(r['disk_mb'], '7.1f'):>7}  {r['fill_s']:6.1f}"
        )
    out.append(
        "timed: turns timed (at most the asked number; fewer once a run spent "
        f"{BUDGET_S:g} s on them); x solar: median / SolarConversationMemory's at the same N; "
        "+MB: RSS the stored history added; disk: where it persists; fill s: storing the history"
    )
    out += [f"-: {n}" for n in dict.fromkeys(notes)]
    return "\n".join(out) + "\n"


def _worker(argv: Sequence[str]) -> int:
    peer, stored, timed = argv[0], int(argv[1]), int(argv[2])
    data = argv[3] if len(argv) > 3 else None
    why = missing(peer)
    found = {"skipped": why} if why is not None else measure(peer, stored, timed, data)
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    raise SystemExit(_worker(sys.argv[1:]))
