"""Admission policies: whether an offered item is stored at all."""

from .base import AdmissionPolicy, AlwaysAdmit, Candidate, Verdict
from .coverage_gate import CoverageGate
from .info_gain import information_gain
from .regret_gate import RegretGate

__all__ = [
    "AdmissionPolicy",
    "AlwaysAdmit",
    "Candidate",
    "CoverageGate",
    "RegretGate",
    "Verdict",
    "information_gain",
]
