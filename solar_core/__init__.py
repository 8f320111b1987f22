"""SOLAR agent memory: a small, self-curating memory for LLM agents.

Regret-gated admission decides *whether* a step's experience is stored; Thompson-sampling
eviction over Beta beliefs decides *which* item leaves when the memory is full (Sun et al.,
"SOLAR"). Classic cache policies (FIFO, LRU, LFU, ARC) are available under the same API for
comparison.

>>> from solar_core import SolarMemory, available_policies
>>> "solar" in available_policies()
True
"""

from .admission import (
    AdmissionPolicy,
    AlwaysAdmit,
    Candidate,
    CoverageGate,
    RegretGate,
    Verdict,
)
from .beta_posterior import BetaPosterior
from .embedder import Embedder
from .eviction import (
    ArcEviction,
    CoverageEviction,
    EvictionPolicy,
    FifoEviction,
    LfuEviction,
    LruEviction,
    MultiScoreEviction,
    ThompsonEviction,
    Victim,
)
from .hash_embedder import HashEmbedder
from .memory import SolarMemory
from .minilm import MiniLMEmbedder
from .persistence import MemoryStore, PersistenceError, Scope
from .presets import CHAT_POLICY, DEFAULT_POLICY, PRESETS, Preset, available_policies
from .scoped_memories import ScopedMemories
from .store import VectorStore
from .types import Decision, Hit, Hits, MemoryItem, UnknownItemError

__version__ = "0.1.0"

__all__ = [
    "PRESETS",
    "AdmissionPolicy",
    "AlwaysAdmit",
    "ArcEviction",
    "BetaPosterior",
    "Candidate",
    "Decision",
    "Embedder",
    "EvictionPolicy",
    "FifoEviction",
    "HashEmbedder",
    "Hit",
    "Hits",
    "LfuEviction",
    "LruEviction",
    "MemoryItem",
    "MiniLMEmbedder",
    "MultiScoreEviction",
    "Preset",
    "CoverageEviction",
    "CoverageGate",
    "RegretGate",
    "ScopedMemories",
    "MemoryStore",
    "PersistenceError",
    "Scope",
    "SolarMemory",
    "ThompsonEviction",
    "UnknownItemError",
    "VectorStore",
    "Verdict",
    "Victim",
    "available_policies",
    "CHAT_POLICY",
    "DEFAULT_POLICY",
]
