"""Admission policies: whether an offered item is stored at all."""

from .base import AdmissionPolicy, AlwaysAdmit, Candidate, Verdict
from .coverage_gate import CoverageGate
from .evaluator_gate import Evaluator, EvaluatorGate, MetadataThreshold
from .info_gain import information_gain
from .never_admit import NeverAdmit
from .regret_gate import RegretGate

__all__ = [
    "AdmissionPolicy",
    "AlwaysAdmit",
    "Candidate",
    "CoverageGate",
    "Evaluator",
    "EvaluatorGate",
    "MetadataThreshold",
    "NeverAdmit",
    "RegretGate",
    "Verdict",
    "information_gain",
]
