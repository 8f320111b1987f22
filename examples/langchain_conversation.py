"""A classic ``ConversationChain`` whose ``ConversationBufferWindowMemory`` is swapped for
``SolarConversationMemory``: the same chain, the same prompt, plus the older turns that matter.

Runs offline: the chat model is LangChain's ``FakeListChatModel`` replaying scripted answers, and
the memory embeds with the built-in static embedder (numpy only).

    python examples/langchain_conversation.py
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

from langchain_classic.chains import ConversationChain
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_solar import SolarConversationMemory

# (what the user says, what the scripted model answers)
SCRIPT = [
    ("Hi! I'm planning a trip to Lisbon in May.", "Lovely! Lisbon in May is warm and sunny."),
    ("I'm vegetarian, by the way.", "Noted, there are plenty of vegetarian tascas."),
    ("What's a good day trip from Lisbon?", "Sintra: palaces and forest, 40 minutes by train."),
    ("How do I get from the airport to the centre?", "The red metro line, about 25 minutes."),
    ("Is tipping expected?", "Not really; rounding up or 5-10% is appreciated."),
    ("What should I pack for the weather?", "Light clothes and sunscreen: May is warm."),
    ("What food should I try?", "As a vegetarian: pastéis de nata and caldo verde sem chouriço."),
]


def main() -> None:
    # Before: memory = ConversationBufferWindowMemory(k=3). The drop-in keeps the 2 latest turns
    # verbatim and recalls the 2 most relevant older ones, out of at most 20 that SOLAR curates.
    memory = SolarConversationMemory(k=2, top_k=2, capacity=20, seed=0)

    # A real model plugs in here, e.g. `llm = init_chat_model("openai:gpt-4o-mini")`
    # (from langchain.chat_models import init_chat_model); nothing else changes.
    llm = FakeListChatModel(responses=[answer for _, answer in SCRIPT])
    with warnings.catch_warnings():  # ConversationChain is deprecated upstream, still widely used
        warnings.simplefilter("ignore", DeprecationWarning)
        chain = ConversationChain(llm=llm, memory=memory)

    for turn, (question, _) in enumerate(SCRIPT, start=1):
        result = chain.invoke({"input": question})
        decision = memory.last_decision
        assert decision is not None
        recalled = ", ".join(
            f"{h.metadata['human'][:32]!r} ({h.score:.2f})" for h in memory.recalled
        )
        print(f"turn {turn}: {question}")
        print(f"  recalled: {recalled or '-'}")
        print(f"  stored: {decision.admitted} ({decision.reason})")
    print("\nWhat the model saw as history on the last turn (a window memory with k=4 would")
    print("have shown turns 3-6 only, without the diet):\n")
    print(result["history"])

    memory.feedback(like=True)  # the user liked the answer: the recalled turns gain credit
    print("\nposteriors of the recalled turns after a like:")
    for hit in memory.recalled:
        print(f"  {hit.metadata['human'][:40]!r}: {_rounded(memory.memory.get(hit.id).policy)}")


def _rounded(stats: Mapping[str, float]) -> dict[str, float]:
    return {name: round(value, 3) for name, value in stats.items()}


if __name__ == "__main__":
    main()
