"""langchain-tests' standard suite for retrievers, run against SolarRetriever."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_tests")

from langchain_tests.integration_tests import RetrieversIntegrationTests  # noqa: E402

from langchain_solar import SolarRetriever  # noqa: E402
from solar_core import SolarMemory  # noqa: E402

EXPERIENCES = [
    "Q: the payments API answers HTTP 429\nA: retry with exponential backoff and jitter",
    "Q: flaky test in CI\nA: pin the numpy random seed",
    "Q: the embedding job is slow\nA: encode in batches of 64",
    "Q: where do logs go?\nA: to the ELK stack, index app-*",
    "Q: how do we deploy?\nA: merge to main; the pipeline ships to staging, then prod",
]


def _memory() -> SolarMemory:
    memory = SolarMemory("solar", capacity=20, embedder="hash", seed=0)
    for text in EXPERIENCES:
        memory.add(text)
    return memory


class TestSolarRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[SolarRetriever]:
        return SolarRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": _memory()}

    @property
    def retriever_query_example(self) -> str:
        return "we are rate limited by the payments API"
