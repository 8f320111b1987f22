"""Eviction policies: which stored item leaves when the memory is full."""

from solar_core.policies.eviction.arc import ArcEviction
from solar_core.policies.eviction.base import EvictionPolicy, Victim
from solar_core.policies.eviction.coverage import CoverageEviction
from solar_core.policies.eviction.fifo import FifoEviction
from solar_core.policies.eviction.lfu import LfuEviction
from solar_core.policies.eviction.lru import LruEviction
from solar_core.policies.eviction.multiscore import MultiScoreEviction
from solar_core.policies.eviction.salience import SalienceEviction
from solar_core.policies.eviction.thompson import ThompsonEviction
from solar_core.policies.eviction.utility import UtilityEviction

__all__ = [
    "ArcEviction",
    "CoverageEviction",
    "EvictionPolicy",
    "FifoEviction",
    "LfuEviction",
    "LruEviction",
    "MultiScoreEviction",
    "SalienceEviction",
    "ThompsonEviction",
    "UtilityEviction",
    "Victim",
]
