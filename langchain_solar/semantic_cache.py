"""A LangChain LLM cache over the scoped semantic response cache."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache

from solar_core.engine.response_cache import ResponseCache


class SolarSemanticCache(BaseCache):
    """``set_llm_cache(SolarSemanticCache(...))``: LLM calls answered from earlier ones.

    A prompt is answered again when it is the same prompt after normalisation (tier 1), or when
    an earlier prompt has cosine similarity above ``threshold`` (tier 2, 0.95 by default). The
    match must also come from the same model configuration (LangChain's ``llm_string``) and the
    same ``scope`` (e.g. ``{"user": "alice"}``). A cached answer is never returned to another
    user or model. Connect a memory with :meth:`watch`: new facts then evict the answers they
    make stale, for every model.

    >>> from langchain_core.globals import set_llm_cache
    >>> from langchain_core.language_models import FakeListLLM
    >>> set_llm_cache(SolarSemanticCache(embedder="hash"))
    >>> llm = FakeListLLM(responses=["Paris", "Lyon"])
    >>> llm.invoke("What is the capital of France?"), llm.invoke("what is the capital of france")
    ('Paris', 'Paris')
    >>> set_llm_cache(None)
    """

    def __init__(
        self,
        responses: ResponseCache | None = None,
        *,
        scope: Mapping[str, str] | None = None,
        embedder: object = None,
        threshold: float = 0.95,
    ) -> None:
        if responses is not None and not isinstance(responses, ResponseCache):
            raise TypeError(f"responses must be a ResponseCache, got {type(responses).__name__}")
        self.responses = (
            responses if responses is not None else ResponseCache(embedder, threshold=threshold)
        )
        self.scope = dict(scope or {})
        if "llm" in self.scope:
            raise ValueError("the scope key 'llm' is reserved for the model's llm_string")

    def watch(self, memory: Any) -> None:
        """Evict cached answers of this cache's scope (every model) when ``memory`` stores a
        related fact, and drop them all when it deletes an item (see
        :meth:`ResponseCache.watch <solar_core.ResponseCache.watch>`)."""
        self.responses.watch(memory, scope=self.scope)

    def _scope(self, llm_string: str) -> dict[str, str]:
        return {**self.scope, "llm": llm_string}

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        hit = self.responses.lookup(prompt, scope=self._scope(llm_string))
        return None if hit is None else list(hit.response)

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        generations: Sequence[Any] = list(return_val)
        text = " ".join(getattr(g, "text", "") for g in generations)
        self.responses.store(prompt, generations, scope=self._scope(llm_string), response_text=text)

    def clear(self, **kwargs: Any) -> None:
        self.responses.clear()
