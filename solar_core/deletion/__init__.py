"""Deletion policies: sweeps after each step that remove stored items by rule.

From the experience-following study (arXiv:2505.16067): periodic deletion forgets what
recent steps never used, history-based deletion forgets what led later steps astray, and the
combination forgets either.
"""

from .base import DeletionPolicy
from .combined import CombinedDeletion
from .history import HistoryDeletion
from .periodic import PeriodicDeletion

__all__ = ["CombinedDeletion", "DeletionPolicy", "HistoryDeletion", "PeriodicDeletion"]
