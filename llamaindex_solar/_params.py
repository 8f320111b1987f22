"""The LlamaIndex adapters' memory parameters: ``solar_core``'s, plus LlamaIndex embeddings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from solar_core import CHAT_POLICY, Hit, SolarMemory
from solar_core.integrations.params import MemoryParams
from solar_core.integrations.turns import cut, fitting

from .embeddings import to_embedder


class SolarParams(MemoryParams, BaseModel):
    """``memory=`` or ``policy``/``capacity``/``embedder``/``seed``/``retrieval``/``min_score``;
    ``embedder`` may also be any LlamaIndex ``BaseEmbedding``."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    memory: SolarMemory = Field(default=None, exclude=True)  # type: ignore[assignment]
    """The SOLAR memory."""

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        return to_embedder(embedder)


class SolarChatParams(SolarParams):
    """:class:`SolarParams` of a chat memory: ``policy=None`` is
    :data:`~solar_core.policies.presets.CHAT_POLICY`; ``extractor=`` and ``extract=`` are
    building parameters too (:data:`~solar_core.integrations.params.EXTRACT_DEFAULTS`)."""

    default_policy: ClassVar[str] = CHAT_POLICY
    extracts: ClassVar[bool] = True  # extractor= and extract= build the memory too


#: the ``max_recall_chars`` setting: a positive ``int`` (not a bool or a float), or ``None`` for no
#: limit
MaxRecallChars = Annotated[int, Field(strict=True, ge=1)] | None


def within_chars(hits: Sequence[Hit], limit: int | None) -> list[Hit]:
    """The recalled turns that fit ``limit`` characters of text, by the LangChain adapters'
    rule (:func:`~solar_core.integrations.turns.fitting`): best first while they fit, one too
    long left out (a shorter later one may fit), the best always kept, cut to ``limit`` if it
    alone is longer. Lengths are of the texts as stored (``"Human: ...\\nAI: ..."``).

    >>> from solar_core import Hit
    >>> hits = [Hit("a", "x" * 30, 0.9, {}), Hit("b", "y" * 60, 0.8, {}), Hit("c", "z", 0.7, {})]
    >>> [hit.id for hit in within_chars(hits, 100)], [hit.id for hit in within_chars(hits, 50)]
    (['a', 'b', 'c'], ['a', 'c'])
    >>> [hit.id for hit in within_chars(hits, None)], [hit.text for hit in within_chars(hits, 10)]
    (['a', 'b', 'c'], ['xxxxxxxxx…'])
    """
    if limit is None:
        return list(hits)
    kept = [hits[i] for i in fitting([len(hit.text) for hit in hits], limit)]
    if kept and len(kept[0].text) > limit:
        kept[0] = replace(kept[0], text=cut(kept[0].text, limit))
    return kept
