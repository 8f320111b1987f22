"""LlamaIndex adapters for the SOLAR agent memory (``pip install 'solar-memory[llamaindex]'``).

- :class:`SolarChatMemory` -- a ``BaseMemory`` chat buffer (``ChatMemoryBuffer``'s window plus
  relevant older turns) for ``agent.run(..., memory=...)``.
- :class:`SolarMemoryBlock` -- a memory block for ``Memory.from_defaults(memory_blocks=[...])``.
- :class:`SolarRetriever` -- a ``BaseRetriever`` over a SOLAR memory.
- :class:`LlamaIndexEmbedder` -- any LlamaIndex ``BaseEmbedding`` as the memory's embedder (every
  adapter also takes one directly as ``embedder=``).

Each exposes ``feedback(like=...)`` / ``feedback(score=...)``: the memory learns which experiences
help. The adapters only translate; every decision is ``solar_core``'s.

Persistence: ``SolarChatMemory`` and ``SolarMemoryBlock`` take ``store=`` (a
:class:`~solar_core.persistence.MemoryStore`, a SQLite path or a ``postgresql://`` URL): each
session's memory is ``store.scope(session=...)``, reopened exactly by a later process. Every adapter
that takes ``memory=`` also accepts a persistent memory, e.g. ``store.scope(user="alice")``.
"""

from .chat_memory import SolarChatMemory
from .embeddings import LlamaIndexEmbedder
from .judge import LLMJudge
from .memory_block import SolarMemoryBlock
from .retriever import SolarRetriever

__all__ = [
    "LLMJudge",
    "LlamaIndexEmbedder",
    "SolarChatMemory",
    "SolarMemoryBlock",
    "SolarRetriever",
]
