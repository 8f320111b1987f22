"""Eviction policies: which stored item leaves when the memory is full."""

from .arc import ArcEviction
from .base import EvictionPolicy, Victim
from .coverage import CoverageEviction
from .fifo import FifoEviction
from .lfu import LfuEviction
from .lru import LruEviction
from .multiscore import MultiScoreEviction
from .salience import SalienceEviction
from .thompson import ThompsonEviction
from .utility import UtilityEviction

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
