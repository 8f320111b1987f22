"""LangChain adapters for the SOLAR agent memory (``pip install 'solar-memory[langchain]'``).

- :class:`SolarConversationMemory` -- a drop-in for ``ConversationBufferWindowMemory`` in classic
  chains (``ConversationChain``, ``LLMChain``): the recent window plus relevant older turns.
- :class:`SolarRetriever` -- a ``BaseRetriever`` over a SOLAR memory, for any LCEL chain or agent.
- :class:`SolarMemoryMiddleware` -- memory for LangChain v1 ``create_agent`` agents, per user or
  thread if asked.
- :class:`SolarSemanticCache` -- ``set_llm_cache`` over the scoped semantic response cache.
- :class:`LLMJudge` -- a chat model as the yes/no evaluator of evaluator-gated addition
  (``SolarMemory(..., evaluator=LLMJudge(llm))``).
- :class:`LangChainEmbedder` -- any LangChain ``Embeddings`` as the memory's embedder (every
  adapter also takes an ``Embeddings`` directly as ``embedder=``).

Each exposes ``feedback(like=...)`` / ``feedback(score=...)``: the memory learns which experiences
help. The adapters only translate; every decision is ``solar_core``'s.

Persistence: ``SolarMemoryMiddleware(store="agent.db", scope="user_id")`` keeps each user's memory
in a :class:`~solar_core.persistence.MemoryStore` (SQLite, or a ``postgresql://`` URL) that a later
process reopens exactly; the adapters that take ``memory=`` accept a persistent memory such as
``MemoryStore("agent.db").scope(user="alice")``.
"""

from .conversation_memory import SolarConversationMemory
from .embeddings import LangChainEmbedder
from .judge import LLMJudge
from .middleware import SolarMemoryMiddleware, SolarMemoryState
from .retriever import SolarRetriever
from .semantic_cache import SolarSemanticCache

__all__ = [
    "LLMJudge",
    "LangChainEmbedder",
    "SolarConversationMemory",
    "SolarMemoryMiddleware",
    "SolarMemoryState",
    "SolarRetriever",
    "SolarSemanticCache",
]
