"""Deletion policies (from the experience-following study, arXiv:2505.16067): sweeps after
each step that remove stored items by rule."""

from solar_core.policies.deletion.base import DeletionPolicy
from solar_core.policies.deletion.combined import CombinedDeletion
from solar_core.policies.deletion.history import HistoryDeletion
from solar_core.policies.deletion.periodic import PeriodicDeletion

__all__ = ["CombinedDeletion", "DeletionPolicy", "HistoryDeletion", "PeriodicDeletion"]
