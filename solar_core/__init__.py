"""SOLAR agent memory: a small, self-curating memory for LLM agents. Regret-gated admission
decides *whether* a step's experience is stored, Thompson-sampling eviction *which* item leaves
when the memory is full (Sun et al., "SOLAR"); FIFO, LRU, LFU and ARC for comparison.

>>> from solar_core import SolarMemory, available_policies
>>> "solar" in available_policies()
True
"""

from solar_core.basics.state import StateError, StateReader, register_part
from solar_core.basics.types import Decision, Hit, Hits, MemoryItem, UnknownItemError
from solar_core.embedders.embedder import Embedder
from solar_core.embedders.hash_embedder import HashEmbedder
from solar_core.embedders.minilm import MiniLMEmbedder
from solar_core.engine.memory import SolarMemory
from solar_core.engine.scoped_memories import ScopedMemories
from solar_core.persistence import MemoryStore, PersistenceError, Scope
from solar_core.policies.admission import (
    AdmissionPolicy,
    AlwaysAdmit,
    Candidate,
    CoverageGate,
    RegretGate,
    Verdict,
)
from solar_core.policies.beta_posterior import BetaPosterior
from solar_core.policies.eviction import (
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
from solar_core.policies.presets import (
    CHAT_POLICY,
    DEFAULT_POLICY,
    PRESETS,
    Preset,
    available_policies,
    register_policy,
)
from solar_core.retrieval.item_table import ItemTable

__version__ = "0.1.0"

__all__ = ["PRESETS", "AdmissionPolicy", "AlwaysAdmit", "ArcEviction", "BetaPosterior", "Candidate"]
__all__ += ["Decision", "Embedder", "EvictionPolicy", "FifoEviction", "HashEmbedder", "Hit", "Hits"]
__all__ += ["LfuEviction", "LruEviction", "MemoryItem", "MiniLMEmbedder", "MultiScoreEviction"]
__all__ += ["Preset", "CoverageEviction", "CoverageGate", "RegretGate", "ScopedMemories"]
__all__ += ["MemoryStore", "PersistenceError", "Scope", "SolarMemory", "ThompsonEviction"]
__all__ += ["UnknownItemError", "ItemTable", "Verdict", "Victim", "available_policies"]
__all__ += ["CHAT_POLICY", "DEFAULT_POLICY", "StateError", "StateReader", "register_part"]
__all__ += ["register_policy"]
