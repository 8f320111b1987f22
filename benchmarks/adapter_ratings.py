"""Ratings through the chat adapters: what answer buttons do to what the memory recalls.

The dialogue-turn protocol of ``benchmarks/dialogue_adapters.py`` (each LoCoMo conversation's
turns paired into exchanges, a recall for every input, the exchange saved), through
LangChain's ``SolarConversationMemory`` (``load_memory_variables``/``save_context``) and
LlamaIndex's ``SolarChatMemory`` (``put``/``get``), with their default ``solar-dialogue``
memory at capacity K (its salience prior trained without the conversation scored), and the
answer buttons wired to the adapter's ``feedback``:

- ``end``: the questions are asked after the last exchange; each exchange's recall is rated
  ``none`` (not at all), ``disliked`` (``feedback(like=False)``: a user who dislikes every
  answer) or ``random`` (``feedback(score=u)``, ``u`` uniform: ratings about anything but
  the memory);
- ``interleaved``: each question is asked once, after its last evidence turn (the schedule
  of ``solar-bench dialogue``; to ``SolarChatMemory`` as the user's next message, answered
  with an empty one, since its rating rates a turn's first prompt), and its recall is rated
  ``evidence`` (the share of the evidence the window did not show that the memory recalled;
  no rating when the window showed it all: the memory had nothing to find), ``prompt`` (the
  share of the evidence the whole prompt showed, window included: a rating partly about the
  window)
  (``feedback(score=recall)``: ratings that know what the memory should have shown), or
  ``none``.

The score is evidence recall: the share of a question's evidence turns among the turns its
prompt shows (window and recalled turns), averaged over the questions.

    python benchmarks/adapter_ratings.py --data locomo-dev.json [--k 50 100 200]
        [--seeds 42 1337 2024] [--only langchain|llamaindex] [--embedder static]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dialogue_adapters import (
    LiLookup,
    exchanges,
    li_budget,
    li_shown,
    li_table,
    line_ids,
    shown,
    texts,
)

from solar_bench.dialogue import Dialogue, load_dialogues, schedule
from solar_bench.embed_cache import EmbeddingCache
from solar_bench.embedders import embedder_for
from solar_bench.salience_training import default_kind, priors_for
from solar_core import SolarMemory
from solar_core.integrations.turns import turn_text
from solar_core.policies.salience import SaliencePrior

SETTINGS = (
    *("end", "end+disliked", "end+random"),
    *("interleaved+none", "interleaved+evidence", "interleaved+prompt"),
)


class LangChainChat:
    """``SolarConversationMemory`` as the protocol drives it."""

    def __init__(self, memory: SolarMemory, dialogue: Dialogue) -> None:
        from langchain_solar import SolarConversationMemory

        self.chat = SolarConversationMemory(memory=memory)
        self.names = line_ids(dialogue)

    def turn(self, said: str, answer: str) -> None:
        self.chat.load_memory_variables({"input": said})
        self.chat.save_context({"input": said}, {"output": answer})

    def ask(self, question: str, during: bool = False) -> tuple[frozenset[str], frozenset[str]]:
        """The turns the prompt shows, and those of them the memory recalled."""
        history = self.chat.load_memory_variables({"input": question})["history"]
        recalled = "\n".join(hit.text for hit in self.chat.recalled)
        return shown(history, self.names), shown(recalled, self.names)

    def answered(self) -> None:
        """The answer to a question asked during the conversation (a chain that is not saved)."""

    def feedback(self, **rating: Any) -> None:
        self.chat.feedback(**rating)


class LlamaIndexChat:
    """``SolarChatMemory`` as the protocol drives it, at the token budget of the LlamaIndex
    table of ``benchmarks/dialogue_adapters.py``."""

    def __init__(self, memory: SolarMemory, dialogue: Dialogue, tokens: int, table: Any) -> None:
        from adapter_bench import TailTokenCounter
        from llama_index.core.storage.chat_store import SimpleChatStore

        from llamaindex_solar import SolarChatMemory

        store = SimpleChatStore()
        self.chat = SolarChatMemory.from_defaults(
            token_limit=tokens,
            chat_store=store,
            tokenizer_fn=TailTokenCounter(store, table),
            memory=memory,
        )
        self.dialogue = dialogue

    def turn(self, said: str, answer: str) -> None:
        from llama_index.core.base.llms.types import ChatMessage, MessageRole

        self.chat.put(ChatMessage(role=MessageRole.USER, content=said))
        self.chat.get()
        self.chat.put(ChatMessage(role=MessageRole.ASSISTANT, content=answer))

    def ask(self, question: str, during: bool = False) -> tuple[frozenset[str], frozenset[str]]:
        """The turns the prompt shows, and those of them the memory recalled (its system
        message). During the conversation a question is the user's next message (the recall
        that a rating rates is a turn's first prompt); after it, a look with
        ``get(input=...)``."""
        from llama_index.core.base.llms.types import ChatMessage, MessageRole

        if during:
            self.chat.put(ChatMessage(role=MessageRole.USER, content=question))
            messages = self.chat.get()
        else:
            messages = self.chat.get(input=question)
        recall = [m for m in messages if m.role == MessageRole.SYSTEM]
        return li_shown(messages, self.dialogue), li_shown(recall, self.dialogue)

    def answered(self) -> None:
        """An empty answer finishes the question's turn (so the next exchange is a new turn)."""
        from llama_index.core.base.llms.types import ChatMessage, MessageRole

        self.chat.put(ChatMessage(role=MessageRole.ASSISTANT, content=""))

    def feedback(self, **rating: Any) -> None:
        self.chat.feedback(**rating)


def with_questions(table: Any, dialogues: Sequence[Dialogue]) -> Any:
    """``table`` (token counts of the turns) with the questions', which the interleaved
    protocol puts into ``SolarChatMemory``'s history as user messages."""
    from adapter_bench import TokenTable
    from llama_index.core.utils import get_tokenizer

    tokenize = get_tokenizer()
    asked = {q.text for d in dialogues for q in d.questions} - table.first.keys()
    first = {**table.first, **{q: len(tokenize(q)) for q in asked}}
    rest = {**table.rest, **{q: len(tokenize(" " + q)) for q in asked}}
    return TokenTable(first, rest)


def run(chat: Any, dialogue: Dialogue, setting: str, seed: int) -> float:
    """Mean evidence recall of the questions of ``dialogue`` under ``setting``."""
    mode, _, ratings = setting.partition("+")
    rng = random.Random(f"ratings/{seed}")
    asked = schedule(dialogue, seed) if mode == "interleaved" else {}
    scores: list[float] = []
    for n, (a, b) in enumerate(exchanges(dialogue)):
        chat.turn(a.text, "" if b is None else b.text)
        if ratings == "disliked":
            chat.feedback(like=False)
        elif ratings == "random":
            chat.feedback(score=rng.random())
        for i in (2 * n, 2 * n + 1):  # the exchange's turns
            for q in asked.get(i, ()):
                seen, recalled = chat.ask(q.text, during=True)
                score = len(q.evidence & seen) / len(q.evidence)
                # the evidence the window did not show: what the memory had to recall
                wanted = q.evidence - (seen - recalled)
                if ratings == "evidence" and wanted:
                    chat.feedback(score=len(wanted & recalled) / len(wanted))
                elif ratings == "prompt":
                    chat.feedback(score=score)
                chat.answered()
                scores.append(score)
    if mode == "end":
        scores = [
            len(q.evidence & chat.ask(q.text)[0]) / len(q.evidence) for q in dialogue.questions
        ]
    return statistics.fmean(scores)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True, help="LoCoMo-format JSON file")
    p.add_argument("--k", type=int, nargs="+", default=[50, 100, 200], help="capacities")
    p.add_argument("--seeds", type=int, nargs="+", default=[42, 1337, 2024])
    p.add_argument("--only", choices=("langchain", "llamaindex"), help="one framework only")
    p.add_argument("--embedder", default="static", help="the text embedder (default static)")
    p.add_argument("--settings", default=",".join(SETTINGS), help="comma-separated settings")
    p.add_argument("--cache-dir", type=Path, default=None, help="embedding cache folder")
    args = p.parse_args(argv)
    dialogues = [d for d in load_dialogues(args.data) if d.questions]
    every_text = [t for d in dialogues for t in texts(d)]
    # a question asked during the conversation, answered with nothing, is an exchange too
    every_text += [turn_text(q.text.strip(), "") for d in dialogues for q in d.questions]
    lookup = LiLookup(
        EmbeddingCache(*embedder_for(args.embedder), args.cache_dir).vectors(every_text)
    )
    priors: dict[str, SaliencePrior] = priors_for(
        dialogues, lookup.vectors.__getitem__, default_kind(args.embedder)
    )
    table = with_questions(li_table(dialogues), dialogues)
    tokens = li_budget(dialogues, table)
    frameworks = ("langchain", "llamaindex") if args.only is None else (args.only,)
    print("adapter              setting                 K  recall   ±se  vs unrated")
    for framework in frameworks:
        for k in args.k:
            base: dict[str, float] = {}
            for setting in args.settings.split(","):
                units = []
                for d in dialogues:
                    for seed in args.seeds:
                        memory = SolarMemory(
                            "solar-dialogue",
                            k,
                            embedder=lookup,
                            seed=seed,
                            prior=priors[d.sample_id],
                        )
                        chat = (
                            LangChainChat(memory, d)
                            if framework == "langchain"
                            else LlamaIndexChat(memory, d, tokens, table)
                        )
                        units.append(run(chat, d, setting, seed))
                mean = statistics.fmean(units)
                se = statistics.stdev(units) / len(units) ** 0.5 if len(units) > 1 else 0.0
                unrated = base.setdefault(setting.partition("+")[0], mean)
                name = "SolarConversationMemory" if framework == "langchain" else "SolarChatMemory"
                print(
                    f"{name:23s} {setting:20s} {k:4d}  {mean:.3f}  {se:.3f}  {mean / unrated:.2f}x",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
