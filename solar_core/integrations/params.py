"""How framework adapters get their :class:`SolarMemory`: a ready one, or the parameters to build
one. Shared by the LangChain and LlamaIndex adapters, which differ only in the embedders they
accept (:meth:`MemoryParams.convert_embedder`). Plain Python: each adapter's pydantic model
takes :class:`MemoryParams` as a mixin and declares the ``memory`` field itself, so
``solar_core`` never imports pydantic."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, ClassVar

from solar_core.engine.memory import SolarMemory
from solar_core.persistence import DEFAULT_CAPACITY, MemoryStore
from solar_core.policies.presets import DEFAULT_POLICY
from solar_core.retrieval.ranking import DEFAULT_RETRIEVAL

BUILD_DEFAULTS: dict[str, Any] = {
    "policy": None,
    "capacity": DEFAULT_CAPACITY,
    "embedder": None,
    "seed": None,
    "retrieval": DEFAULT_RETRIEVAL,
    "min_score": "auto",
}


def build_params(
    policy: str | None,
    capacity: int | None,
    embedder: object,
    seed: int | None,
    retrieval: str,
    min_score: float | str | None,
) -> dict[str, Any]:
    """An adapter's parameters for building its memory, by name (the keys of
    :data:`BUILD_DEFAULTS`).

    >>> sorted(build_params("fifo", 5, "hash", 0, "hybrid", "auto")) == sorted(BUILD_DEFAULTS)
    True
    """
    return {
        "policy": policy,
        "capacity": capacity,
        "embedder": embedder,
        "seed": seed,
        "retrieval": retrieval,
        "min_score": min_score,
    }


def check_not_both(memory: object, build: dict[str, Any]) -> None:
    """A ready memory plus parameters that would build another is a contradiction: refuse it.

    >>> check_not_both(None, {"policy": "lru"})
    >>> check_not_both(SolarMemory(embedder="hash"), {"policy": "lru", "seed": None})
    Traceback (most recent call last):
    ...
    ValueError: pass memory= or the parameters to build one (policy), not both
    """
    given = sorted(name for name, value in build.items() if value != BUILD_DEFAULTS[name])
    if memory is not None and given:
        raise ValueError(
            f"pass memory= or the parameters to build one ({', '.join(given)}), not both"
        )


class MemoryParams:
    """The ``memory`` field of a pydantic adapter, and how it gets built: a mixin before
    pydantic's ``BaseModel`` in an adapter's bases, which declares the field
    (``memory: SolarMemory = Field(default=None, exclude=True)``).

    Pass ``memory=`` (a :class:`SolarMemory`, e.g. one shared with other components) *or* the
    parameters to build one: ``policy`` (a preset; ``None`` is the adapter's
    :attr:`default_policy`), ``capacity`` (default 50; ``None`` = unbounded), ``embedder``,
    ``seed``, ``retrieval`` and ``min_score`` (how it ranks, and its relevance floor). They are
    constructor arguments, not fields: the memory is the state, so a framework that rebuilds a
    component from its fields (LangChain's ``configurable_fields``, copies) keeps the same memory.
    """

    #: the policy of a memory built with ``policy=None`` (chat adapters: ``CHAT_POLICY``)
    default_policy: ClassVar[str] = DEFAULT_POLICY

    if TYPE_CHECKING:  # the adapter's pydantic field, always set after __init__
        memory: SolarMemory

    def __init__(self, **data: Any) -> None:
        build = {name: data.pop(name) for name in list(data) if name in BUILD_DEFAULTS}
        memory = data.get("memory")
        check_not_both(memory, build)
        if memory is None:
            data["memory"] = self.build_memory(**build)
        super().__init__(**data)  # pydantic's BaseModel, after this mixin

    @classmethod
    def convert_embedder(cls, embedder: object) -> object:
        """Turn a framework's embedding model into a ``solar_core`` embedder (adapters override)."""
        return embedder

    @classmethod
    def build_memory(
        cls,
        policy: str | None = None,
        capacity: int | None = DEFAULT_CAPACITY,
        embedder: object = None,
        seed: int | None = None,
        retrieval: str = DEFAULT_RETRIEVAL,
        min_score: float | str | None = "auto",
    ) -> SolarMemory:
        return SolarMemory(
            cls.default_policy if policy is None else policy,
            capacity,
            embedder=cls.convert_embedder(embedder),
            seed=seed,
            retrieval=retrieval,
            min_score=min_score,
        )

    @property
    def policy(self) -> str:
        """The memory's policy (a preset name, or ``admission+eviction``)."""
        return self.memory.policy

    @property
    def capacity(self) -> int | None:
        return self.memory.capacity

    @classmethod
    def open_store(cls, store: object, build: dict[str, Any]) -> tuple[MemoryStore, bool]:
        """An adapter's ``store=``: ``(the MemoryStore, whether the adapter owns it)``.

        A :class:`~solar_core.persistence.MemoryStore` is used as given (its settings are its
        own: building parameters beside it are refused; its owner closes it). A path or
        database URL is opened with the adapter's ``build`` parameters (the embedder converted
        by :meth:`convert_embedder`), and the adapter owns (closes) it.

        >>> build = {"policy": "fifo", "embedder": "hash"}
        >>> store, owned = MemoryParams.open_store(":memory:", build)
        >>> store.policy, owned
        ('fifo', True)
        >>> MemoryParams.open_store(store, {"policy": "lru"})
        Traceback (most recent call last):
        ...
        ValueError: store= is a MemoryStore with its own settings: ... (policy), not both
        >>> store.close()
        """
        if isinstance(store, MemoryStore):
            given = sorted(name for name, value in build.items() if value != BUILD_DEFAULTS[name])
            if given:
                raise ValueError(
                    "store= is a MemoryStore with its own settings: pass it or the parameters to "
                    f"open one ({', '.join(given)}), not both"
                )
            return store, False
        if isinstance(store, str | os.PathLike):
            params = {**BUILD_DEFAULTS, **build}
            opened = MemoryStore(
                store,
                policy=params["policy"],
                capacity=params["capacity"],
                embedder=cls.convert_embedder(params["embedder"]),
                seed=params["seed"],
                retrieval=params["retrieval"],
                min_score=params["min_score"],
                default_policy=cls.default_policy,  # asks nothing of existing scopes
            )
            return opened, True
        raise TypeError(
            "store must be a MemoryStore, a file path or a database URL, "
            f"got {type(store).__name__}"
        )
