"""What a new user gets with no policy argument: ``solar-adaptive`` in the core,
``solar-dialogue`` in the chat adapters, and a chat that keeps the facts it was told, driven
through a real ``ConversationChain``."""

from __future__ import annotations

import pytest

from solar_core import CHAT_POLICY, DEFAULT_POLICY, MemoryStore, SolarMemory

SMALL_TALK = [
    ("Hi there! How are you today?", "I'm doing well, thanks for asking!"),
    ("What's the weather usually like in spring?", "Mild, with some rain showers."),
    ("Tell me a fun fact.", "Octopuses have three hearts."),
    ("What's the tallest mountain in the world?", "Mount Everest, at 8,849 metres."),
    ("Can you recommend a good movie?", "Try 'Spirited Away'."),
    ("How many continents are there?", "Seven."),
    ("What is the capital of Australia?", "Canberra."),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci."),
    ("What's a good name for a goldfish?", "How about Bubbles?"),
    ("How far is the moon?", "About 384,000 kilometres."),
    ("What's the boiling point of water?", "100 degrees Celsius at sea level."),
    ("Any tips for sleeping better?", "Keep a regular schedule and avoid screens late."),
    ("What's the largest ocean?", "The Pacific."),
    ("How do you say thank you in Japanese?", "Arigatou."),
    ("Who wrote Hamlet?", "William Shakespeare."),
    ("What's the speed of light?", "About 300,000 km per second."),
    ("Tell me a joke.", "Why did the scarecrow win an award? He was outstanding in his field."),
    ("What's photosynthesis?", "How plants turn light into chemical energy."),
    ("How many legs does a spider have?", "Eight."),
    ("What's the longest river?", "The Nile, by most measures."),
    ("Is coffee bad for you?", "In moderation it's generally fine."),
    ("What's the smallest planet?", "Mercury."),
    ("Who invented the telephone?", "Alexander Graham Bell is usually credited."),
    ("What year did the Berlin Wall fall?", "1989."),
    ("What's a haiku?", "A short poem of 5, 7 and 5 syllables."),
    ("How hot is the sun?", "About 5,500 degrees Celsius at the surface."),
    ("What's the chemical symbol for gold?", "Au."),
    ("Recommend a board game.", "Ticket to Ride is a good start."),
    ("What do pandas eat?", "Mostly bamboo."),
]
FACTS = [
    ("I'm severely allergic to peanuts.", "Noted, I'll keep that in mind."),
    ("My dog is a beagle called Biscuit.", "Biscuit sounds adorable!"),
    ("I work as a nurse at St. Mary's hospital.", "That's important work."),
    ("My daughter's birthday is on March 14th.", "I'll remember that date."),
    ("I drive a red Volvo XC40.", "Nice car!"),
]
MORE_TALK = [
    ("What's the population of Tokyo?", "About 14 million in the city proper."),
    ("How do airplanes fly?", "Their wings create lift as air flows over them."),
    ("What's the capital of Canada?", "Ottawa."),
    ("Who discovered penicillin?", "Alexander Fleming."),
    ("What's the hardest natural substance?", "Diamond."),
    ("How many bones are in the human body?", "206 in adults."),
    ("What is the Great Barrier Reef?", "The world's largest coral reef system."),
    ("Recommend a podcast.", "Radiolab is a classic."),
    ("What's the freezing point of water?", "0 degrees Celsius."),
    ("How long is a marathon?", "42.195 kilometres."),
    ("What's the national animal of Scotland?", "The unicorn."),
]
QUESTIONS = [
    ("Can I eat this satay sauce?", "I'm severely allergic to peanuts."),
    ("What breed is my dog and what's its name?", "My dog is a beagle called Biscuit."),
    ("Where do I work?", "I work as a nurse at St. Mary's hospital."),
    ("When is my daughter's birthday?", "My daughter's birthday is on March 14th."),
    ("What car do I drive?", "I drive a red Volvo XC40."),
]


def test_default_policy_everywhere_in_the_core() -> None:
    assert DEFAULT_POLICY == "solar-adaptive"
    assert SolarMemory(embedder="hash").policy == "solar-adaptive"
    with MemoryStore(":memory:", embedder="hash") as store:
        assert store.policy == "solar-adaptive"
        assert store.scope(user="alice").policy == "solar-adaptive"


@pytest.mark.parametrize(
    "embedder", [None, pytest.param("minilm", marks=pytest.mark.minilm)], ids=["default", "minilm"]
)
def test_fifty_turn_chat_with_all_defaults_recalls_every_fact(embedder: str | None) -> None:
    pytest.importorskip("langchain_classic")
    import warnings

    from langchain_classic.chains import ConversationChain
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from langchain_solar import SolarConversationMemory
    from tests.support.langchain_fakes import PromptRecorder

    # every default: policy, capacity 50, embedder (or MiniLM), k, top_k
    memory = SolarConversationMemory(embedder=embedder)
    assert memory.policy == CHAT_POLICY == "solar-dialogue" and memory.capacity == 50
    assert memory.memory.retrieval == "hybrid" and memory.memory.min_score == "auto"
    chat = SMALL_TALK + FACTS + MORE_TALK
    assert len(chat) + len(QUESTIONS) == 50 and chat.index(FACTS[0]) == 29  # facts: turns 30-34
    answers = [answer for _, answer in chat] + ["Let me check."] * len(QUESTIONS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # the classic chain is deprecated
        chain = ConversationChain(llm=FakeListChatModel(responses=answers), memory=memory)
    for question, _ in chat:
        chain.invoke({"input": question})
    refused = [d for d in memory.memory.trace() if not d.admitted]
    assert refused == [], [d.reason for d in refused]  # half the slots were free
    # "satay" -> peanuts is knowledge, not words: MiniLM has it, the static embedder (which
    # reads "sat" + "##ay") does not (docs/benchmarks/default-embedder.md)
    asked = QUESTIONS if embedder == "minilm" else QUESTIONS[1:]
    for question, fact in asked:
        recorder = PromptRecorder()
        chain.invoke({"input": question}, config={"callbacks": [recorder]})
        assert f"Human: {fact}" in recorder.text(), (question, recorder.text())
