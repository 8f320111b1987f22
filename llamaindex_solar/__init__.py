"""LlamaIndex adapters for the SOLAR agent memory (``pip install 'solar-memory[llamaindex]'``).

- :class:`SolarChatMemory` -- a ``BaseMemory`` chat buffer (``ChatMemoryBuffer``'s window plus
  relevant older turns) for ``agent.run(..., memory=...)``.
- :class:`SolarMemoryBlock` -- a memory block for ``Memory.from_defaults(memory_blocks=[...])``.
- :class:`SolarRetriever` -- a ``BaseRetriever`` over a SOLAR memory.
- :class:`LlamaIndexEmbedder` -- any LlamaIndex ``BaseEmbedding`` as the memory's embedder (every
  adapter also takes one directly as ``embedder=``).

Each exposes ``feedback(like=...)`` / ``feedback(score=...)``: the memory learns which experiences
help. The adapters only translate; every decision is ``solar_core``'s.

Every adapter needs ``llama-index-core`` (the ``llamaindex`` extra). It is imported when an
adapter is first used: ``import llamaindex_solar`` works without it, and using an adapter then
fails with an ``ImportError`` (a ``ModuleNotFoundError``) that names the package and the extra.

Persistence: ``SolarChatMemory`` and ``SolarMemoryBlock`` take ``store=`` (a
:class:`~solar_core.persistence.MemoryStore`, a SQLite path or a ``postgresql://`` URL): each
session's memory is ``store.scope(session=...)``, reopened exactly by a later process. Every adapter
that takes ``memory=`` also accepts a persistent memory, e.g. ``store.scope(user="alice")``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from solar_core.basics.lazy_import import lazy_attributes

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports on demand
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

EXTRA = "llamaindex"
"""The ``solar-memory`` extra that installs the framework package these adapters use."""

#: the module defining each public name, imported on first access: ``import llamaindex_solar``
#: works without LlamaIndex, and using an adapter without it says what to install
_MODULES = {
    "LLMJudge": "judge",
    "LlamaIndexEmbedder": "embeddings",
    "SolarChatMemory": "chat_memory",
    "SolarMemoryBlock": "memory_block",
    "SolarRetriever": "retriever",
}

#: the distribution that provides each top-level module the adapters import
_DISTRIBUTIONS = {"llama_index": "llama-index-core"}


_load = lazy_attributes(__name__, _MODULES, _DISTRIBUTIONS, EXTRA)


if not TYPE_CHECKING:  # type checkers see the real imports above, so a misspelt name stays an error
    __getattr__ = _load


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
