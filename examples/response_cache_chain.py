"""A semantic response cache in front of a LangChain chain, with a SOLAR memory behind it.

Tier 1 answers a repeated question, tier 2 a near-paraphrase, tier 3 retrieves from the memory
and calls the chain. A new fact in the memory evicts the cached answers it makes stale, and
another user never sees alice's answers.

Runs offline: the chat model is LangChain's ``FakeListChatModel``, and the memory and the cache
embed with the built-in static embedder (numpy only).

    python examples/response_cache_chain.py
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

from solar_core import SolarMemory
from solar_core.engine.response_cache import ResponseCache

prompt = ChatPromptTemplate.from_template("Facts:\n{facts}\n\nQuestion: {query}")
llm = FakeListChatModel(
    responses=["You are on the Enterprise plan.", "You are on the Team plan now.", "Free plan."]
)


def with_facts(inputs: dict[str, Any]) -> dict[str, str]:
    return {"query": inputs["query"], "facts": "\n".join(h.text for h in inputs["hits"])}


chain = RunnableLambda(with_facts) | prompt | llm | StrOutputParser()


def main() -> None:
    alice_memory = SolarMemory("solar-adaptive", capacity=50)  # the built-in static embedder
    # 0.9 rather than the default 0.95: "Which plan am I on?" is 0.906 from "What plan am I on?"
    # here (0.947 with MiniLM; solar-bench response-cache measures the trade-off on LoCoMo)
    cache = ResponseCache(alice_memory.embedder, threshold=0.9)
    alice = {"user": "alice"}
    cache.watch(alice_memory, scope=alice)  # new facts invalidate alice's cached answers
    alice_memory.add("alice subscribed to the Enterprise plan in March.")

    def ask(question: str, scope: dict[str, str], memory: SolarMemory) -> None:
        r = cache.resolve(question, chain, scope=scope, memory=memory)
        similarity = f"{r.similarity:.3f}" if r.similarity is not None else "-"
        who = scope["user"]
        print(f"[{who}] tier {r.tier} (similarity {similarity}): {question!r} -> {r.response!r}")

    ask("What plan am I on?", alice, alice_memory)  # tier 3
    ask("What plan am I on?", alice, alice_memory)  # tier 1
    ask("Which plan am I on?", alice, alice_memory)  # tier 2: a paraphrase
    alice_memory.add("My plan is now the Team plan.")  # cosine 0.60 to the cached query
    ask("What plan am I on?", alice, alice_memory)  # the fact evicted the stale answer: tier 3
    bob_memory = SolarMemory("solar-adaptive", capacity=50, embedder=alice_memory.embedder)
    ask("What plan am I on?", {"user": "bob"}, bob_memory)  # never alice's answer: tier 3
    print(f"cached entries: alice {cache.size(alice)}, bob {cache.size({'user': 'bob'})}")


if __name__ == "__main__":
    main()
