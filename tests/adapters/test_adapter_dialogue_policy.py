"""``policy="solar-dialogue"`` on the conversation adapters: the prior follows the embedder,
and a real chain's history keeps the facts of the conversation, not its small talk."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_classic")

from langchain_classic.chains import ConversationChain  # noqa: E402
from langchain_core.embeddings import FakeEmbeddings  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402

from langchain_solar import SolarConversationMemory  # noqa: E402
from llamaindex_solar import SolarChatMemory  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

CHAT = [
    ("Hi!", "Hey, how are you?"),
    ("I adopted a beagle named Max in March 2022.", "Wow, cool!"),
    ("Haha, thanks.", "Nice!"),
    ("My sister Jo moved to Lisbon last week for a job at Siemens.", "Great news!"),
    ("Lol yes.", "Haha."),
    ("Bye!", "See you!"),
]


def prior_of(memory: object) -> str:
    return memory.memory.core.eviction.prior.name  # type: ignore[attr-defined]


def test_the_default_embedder_gets_the_static_prior() -> None:
    chat = SolarConversationMemory(policy="solar-dialogue", capacity=10)
    assert prior_of(chat) == "dialogue-static"
    llama = SolarChatMemory.from_defaults(policy="solar-dialogue", capacity=10)
    assert prior_of(llama) == "dialogue-static"


def test_the_minilm_embedder_gets_the_static_prior_too_without_loading_it() -> None:
    chat = SolarConversationMemory(policy="solar-dialogue", capacity=10, embedder="minilm")
    assert prior_of(chat) == "dialogue-static"
    assert chat.memory._embedder._model is None  # type: ignore[union-attr]
    llama = SolarChatMemory.from_defaults(policy="solar-dialogue", capacity=10, embedder="minilm")
    assert prior_of(llama) == "dialogue-static"


def test_any_other_embedder_gets_the_static_prior() -> None:
    chat = SolarConversationMemory(
        policy="solar-dialogue", capacity=10, embedder=FakeEmbeddings(size=32)
    )
    assert prior_of(chat) == "dialogue-static"
    assert prior_of(SolarConversationMemory(policy="solar-dialogue", embedder="hash")) == (
        "dialogue-static"
    )


def test_a_chain_keeps_the_facts_when_the_memory_is_full() -> None:
    memory = SolarConversationMemory(
        policy="solar-dialogue", capacity=2, k=1, top_k=2, embedder="hash", seed=0
    )
    chain = ConversationChain(
        llm=FakeListChatModel(responses=[answer for _, answer in CHAT]), memory=memory
    )
    for said, _ in CHAT:
        chain.invoke({"input": said})
    kept = sorted(item.text.split("\n")[0] for item in memory.memory.items())
    assert kept == [
        "Human: I adopted a beagle named Max in March 2022.",
        "Human: My sister Jo moved to Lisbon last week for a job at Siemens.",
    ]
