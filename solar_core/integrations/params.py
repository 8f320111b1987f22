"""How framework adapters get their :class:`SolarMemory`: a ready one, or the parameters to build
one."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from solar_core.engine.extraction import Extraction, check_extract_mode
from solar_core.engine.memory import SolarMemory
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore
from solar_core.policies.presets import DEFAULT_POLICY
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL


def user_stacklevel(*packages: str) -> int:
    """The ``stacklevel`` of a warning that names the first caller outside ``packages`` (top
    names, e.g. ``"llamaindex_solar"``), ``solar_core`` and pydantic: the user's line, however
    deep the adapter's calls (a validator runs inside pydantic's constructor)."""
    skipped = {"solar_core", "pydantic", "pydantic_core", *packages}
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and frame.f_globals.get("__name__", "").split(".")[0] in skipped:
        frame, level = frame.f_back, level + 1
    return level


BUILD_DEFAULTS: dict[str, Any] = {
    "policy": None,
    "capacity": DEFAULT_CAPACITY,
    "embedder": None,
    "seed": None,
    "retrieval": DEFAULT_RETRIEVAL,
    "min_score": "auto",
}


#: the chat adapters' parameters for an extractor (:mod:`solar_core.engine.extraction`), which
#: they pass on to the memory or store they build, beside :data:`BUILD_DEFAULTS`
EXTRACT_DEFAULTS: dict[str, Any] = {"extractor": None, "extract": "beside"}


def build_params(
    policy: str | None,
    capacity: int | None,
    embedder: object,
    seed: int | None,
    retrieval: str,
    min_score: float | str | None,
) -> dict[str, Any]:
    """An adapter's parameters for building its memory, by name (:data:`BUILD_DEFAULTS`)."""
    values = (policy, capacity, embedder, seed, retrieval, min_score)
    return dict(zip(BUILD_DEFAULTS, values, strict=True))


def extract_params(extractor: object, extract: str) -> dict[str, Any]:
    """A chat adapter's ``extractor=`` and ``extract=``, by name (:data:`EXTRACT_DEFAULTS`), to
    join its :func:`build_params`. ``extract`` is checked now, and refused without an
    ``extractor`` (it says what to do with an extractor's facts: alone it would do nothing).

    >>> extract_params(None, "beside")
    {'extractor': None, 'extract': 'beside'}
    >>> extract_params(None, "instead")
    Traceback (most recent call last):
    ...
    ValueError: extract='instead' says what to do with an extractor's facts: pass extractor= too
    """
    check_extract_mode(extract)
    if extractor is None and extract != EXTRACT_DEFAULTS["extract"]:
        raise ValueError(
            f"extract={extract!r} says what to do with an extractor's facts: pass extractor= too"
        )
    return {"extractor": extractor, "extract": extract}


def extraction_of(build: Mapping[str, Any]) -> Extraction | None:
    """The checked :class:`~solar_core.engine.extraction.Extraction` of an adapter's
    parameters (``None``: no extractor), for memories it builds without ``SolarMemory(...)``."""
    return Extraction.of(build.get("extractor"), build.get("extract", EXTRACT_DEFAULTS["extract"]))


_DEFAULTS = {**BUILD_DEFAULTS, **EXTRACT_DEFAULTS}
_EXTRACTING = "extractor=/extract="


def _given(build: Mapping[str, Any]) -> list[str]:
    """The names of the building parameters not left at their defaults, sorted."""
    given = []
    for name, value in build.items():
        default = _DEFAULTS[name]
        if value is not default if default is None else value != default:
            given.append(name)
    return sorted(given)


def check_not_both(memory: object, build: dict[str, Any]) -> None:
    """A ready memory plus parameters that would build another is a contradiction: refuse it.
    An extractor beside it would change a memory the caller owns: refused too, naming where
    the extractor goes."""
    if memory is None or not (given := _given(build)):
        return
    if EXTRACT_DEFAULTS.keys() & set(given):
        raise ValueError(
            f"memory= is a ready SolarMemory: {_EXTRACTING} would change it. Give the memory "
            "its extractor where it is built -- SolarMemory(..., extractor=..., extract=...), "
            "or MemoryStore(..., extractor=...) for a store's scope -- and pass memory= alone"
        )
    raise ValueError(f"pass memory= or the parameters to build one ({', '.join(given)}), not both")


def memory_or_store(memory: object, store: object, scope: str) -> None:
    """A chat memory's ``memory=`` beside ``store=`` (with ``scope``, how it names its scope of
    the store) says twice which memory it uses: refused, naming either fix."""
    if memory is not None and store is not None:
        raise ValueError(
            "pass memory= or store=, not both: memory= a ready SolarMemory (e.g. "
            f"store.scope(...)), or store= with {scope} (the adapter opens that scope itself)"
        )


class MemoryParams:
    """How a pydantic adapter's ``memory`` field gets built (a mixin before ``BaseModel``):
    from ``memory=`` *or* the parameters to build one (:data:`BUILD_DEFAULTS`), which are not
    fields, so a framework that rebuilds a component from its fields keeps the same memory."""

    #: the policy of a memory built with ``policy=None`` (chat adapters: ``CHAT_POLICY``)
    default_policy: ClassVar[str] = DEFAULT_POLICY
    #: whether ``extractor=``/``extract=`` are building parameters too (the chat adapters)
    extracts: ClassVar[bool] = False

    if TYPE_CHECKING:  # the adapter's pydantic field, always set after __init__
        memory: SolarMemory

    def __init__(self, **data: Any) -> None:
        names = {**BUILD_DEFAULTS, **EXTRACT_DEFAULTS} if self.extracts else BUILD_DEFAULTS
        build = {name: data.pop(name) for name in list(data) if name in names}
        check_not_both(data.get("memory"), build)
        if data.get("memory") is None:
            data["memory"] = self.build_memory(**build)
        super().__init__(**data)  # pydantic's BaseModel, after this mixin

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        """Turn a framework's embedding model into a ``solar_core`` embedder (adapters override)."""
        return embedder

    @classmethod
    def _settings(cls, build: Mapping[str, Any]) -> dict[str, Any]:
        """``build`` completed with the defaults, its embedder converted."""
        settings = {**BUILD_DEFAULTS, **build}
        settings["embedder"] = cls.convert_embedder(settings["embedder"])
        return settings

    @classmethod
    def build_memory(cls, **build: Any) -> SolarMemory:
        """A memory built from the parameters ``build`` (names of :data:`BUILD_DEFAULTS`, and
        of :data:`EXTRACT_DEFAULTS`: the memory gets the extractor)."""
        settings = cls._settings(build)
        policy = settings.pop("policy")
        return SolarMemory(cls.default_policy if policy is None else policy, **settings)

    @property
    def policy(self) -> str:
        """The memory's policy (a preset name, or ``admission+eviction``)."""
        return self.memory.policy

    @property
    def capacity(self) -> int | None:
        return self.memory.capacity

    @classmethod
    def open_store(cls, store: object, build: dict[str, Any]) -> tuple[MemoryStore, bool]:
        """An adapter's ``store=``: ``(the MemoryStore, whether the adapter owns it)``: a
        ``MemoryStore`` as given (building parameters beside it refused, an extractor too: the
        store's scopes have the store's, ``MemoryStore(..., extractor=...)``); a path or
        database URL opened with the ``build`` parameters, extractor included (the adapter
        closes it)."""
        if isinstance(store, MemoryStore):
            given = _given(build)
            if EXTRACT_DEFAULTS.keys() & set(given):
                raise ValueError(
                    f"store= is a MemoryStore with its own settings: {_EXTRACTING} would change "
                    "the scopes it holds. Give the store the extractor, MemoryStore(..., "
                    "extractor=..., extract=...), which every scope uses; or pass store= a path "
                    "or URL, which the adapter opens with its extractor"
                )
            if given:
                raise ValueError(
                    "store= is a MemoryStore with its own settings: pass it or the parameters to "
                    f"open one ({', '.join(given)}), not both"
                )
            return store, False
        if isinstance(store, str | os.PathLike):
            # default_policy asks nothing of existing scopes
            return MemoryStore(
                store, **cls._settings(build), default_policy=cls.default_policy
            ), True
        raise TypeError(
            "store must be a MemoryStore, a file path or a database URL, "
            f"got {type(store).__name__}"
        )
