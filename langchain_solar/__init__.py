"""LangChain adapters for the SOLAR agent memory (``pip install 'solar-memory[langchain]'``).

- :class:`SolarConversationMemory` -- a drop-in for ``ConversationBufferWindowMemory`` in classic
  chains (``ConversationChain``, ``LLMChain``): the recent window plus relevant older turns.
- :class:`SolarRetriever` -- a ``BaseRetriever`` over a SOLAR memory, for any LCEL chain or agent.
- :class:`SolarMemoryMiddleware` -- memory for LangChain v1 ``create_agent`` agents, one per user
  or thread (``scope="user_id"``), or one for all only if asked (``shared=True``).
- :class:`SolarSemanticCache` -- ``set_llm_cache`` over the scoped semantic response cache.
- :class:`SolarStore` -- LangGraph's ``BaseStore`` (``create_agent(..., store=...)``,
  ``runtime.store``) whose every namespace is a bounded, SOLAR-curated memory.
- :class:`LLMJudge` -- a chat model as the yes/no evaluator of evaluator-gated addition
  (``SolarMemory(..., evaluator=LLMJudge(llm))``).
- :class:`LangChainEmbedder` -- any LangChain ``Embeddings`` as the memory's embedder (every
  adapter also takes an ``Embeddings`` directly as ``embedder=``).

Each exposes ``feedback(like=...)`` / ``feedback(score=...)``: the memory learns which experiences
help. The adapters only translate; every decision is ``solar_core``'s.

What each needs: ``langchain-core`` for all of them; ``SolarMemoryMiddleware`` also ``langchain``
(v1, with ``langgraph``); ``SolarStore`` also ``langgraph``; ``SolarConversationMemory`` also
``langchain-classic`` (the classic chains' memory base). The ``langchain`` extra installs all of
them. Each adapter imports its framework when it is first used, so
``from langchain_solar import SolarMemoryMiddleware`` works without ``langchain-classic``, and a
missing package fails with an ``ImportError`` (a ``ModuleNotFoundError``) that names it and the
extra.

Persistence: ``SolarMemoryMiddleware(store="agent.db", scope="user_id")`` keeps each user's memory
in a :class:`~solar_core.persistence.MemoryStore` (SQLite, or a ``postgresql://`` URL) that a later
process reopens exactly; the adapters that take ``memory=`` accept a persistent memory such as
``MemoryStore("agent.db").scope(user="alice")``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from solar_core.basics.lazy_import import lazy_attributes

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports on demand
    from .conversation_memory import SolarConversationMemory
    from .embeddings import LangChainEmbedder
    from .judge import LLMJudge
    from .middleware import SolarMemoryMiddleware, SolarMemoryState
    from .retriever import SolarRetriever
    from .semantic_cache import SolarSemanticCache
    from .store import SearchResults, SolarStore

__all__ = [
    "LLMJudge",
    "LangChainEmbedder",
    "SolarConversationMemory",
    "SolarMemoryMiddleware",
    "SolarMemoryState",
    "SolarRetriever",
    "SearchResults",
    "SolarSemanticCache",
    "SolarStore",
]

EXTRA = "langchain"
"""The ``solar-memory`` extra that installs every framework package these adapters use."""

#: the module defining each public name (imported on first access, so that one adapter's
#: framework is never a requirement of another: the retriever needs no ``langchain-classic``)
_MODULES = {
    "LLMJudge": "judge",
    "LangChainEmbedder": "embeddings",
    "SolarConversationMemory": "conversation_memory",
    "SolarMemoryMiddleware": "middleware",
    "SolarMemoryState": "middleware",
    "SolarRetriever": "retriever",
    "SolarSemanticCache": "semantic_cache",
    "SolarStore": "store",
    "SearchResults": "store",
}

#: the distribution that provides each top-level module the adapters import
_DISTRIBUTIONS = {
    "langchain_core": "langchain-core",
    "langchain": "langchain",
    "langchain_classic": "langchain-classic",
    "langgraph": "langgraph",
}


_load = lazy_attributes(__name__, _MODULES, _DISTRIBUTIONS, EXTRA)


if not TYPE_CHECKING:  # type checkers see the real imports above, so a misspelt name stays an error
    __getattr__ = _load


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
