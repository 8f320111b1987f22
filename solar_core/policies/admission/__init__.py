"""Admission policies: whether an offered item is stored at all."""

from solar_core.policies.admission.base import AdmissionPolicy, AlwaysAdmit, Candidate, Verdict
from solar_core.policies.admission.coverage_gate import CoverageGate
from solar_core.policies.admission.evaluator_gate import Evaluator, EvaluatorGate, MetadataThreshold
from solar_core.policies.admission.info_gain import information_gain
from solar_core.policies.admission.never_admit import NeverAdmit
from solar_core.policies.admission.regret_gate import RegretGate

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
