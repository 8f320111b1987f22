"""The eviction-policy interface: hooks in, one victim out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeVar, cast

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from ..store import VectorStore

Slots = npt.NDArray[np.int64]
ArrayT = TypeVar("ArrayT", bound=npt.NDArray[Any])


class Victim(NamedTuple):
    """The slot to evict, the score that chose it (lowest wins) and the lowest contenders."""

    slot: int
    score: float | None = None
    contenders: tuple[tuple[int, float], ...] = ()


class EvictionPolicy(ABC):
    """Decides which stored item leaves when the store is full.

    The memory owns the store and does the accounting (``while store.full: remove(victim())``);
    a policy sees slots (ints) and keeps cheap per-slot statistics. Hooks, in step order:

    - :meth:`on_retrieve` — a retrieval returned these slots (best first);
    - :meth:`on_feedback` — the caller rated the last retrieval (``reward`` in [0, 1]);
    - :meth:`prepare_insert` — an item with this content key is about to be inserted;
    - :meth:`victim` — name the slot to evict (the store is full and non-empty);
    - :meth:`on_remove` — a slot was emptied (``evicted=False`` for an explicit ``remove``);
    - :meth:`on_insert` — a slot was filled.

    Public methods validate and delegate to the ``_``-prefixed hooks subclasses implement.
    """

    name: ClassVar[str] = "base"
    #: nearest-neighbour similarities the store must maintain for this policy (0 = none)
    neighbours: int = 0
    #: whether the hooks read ``content_key``; a policy that does not gets ``""`` and the memory
    #: skips hashing the text of every insert
    uses_content_key: ClassVar[bool] = True
    #: whether the class overrides :meth:`on_feedback` (set for every subclass): the memory
    #: skips working out which rated slots are still live for a policy that ignores ratings
    listens_to_feedback: ClassVar[bool] = False
    #: whether :meth:`on_query` must be called (it needs the query vector and the scores)
    needs_queries: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.listens_to_feedback = cls.on_feedback is not EvictionPolicy.on_feedback

    def __init__(self) -> None:
        self._store: VectorStore | None = None
        self._rng = np.random.default_rng()

    # -- wiring -------------------------------------------------------------------------------
    def bind(self, store: VectorStore, rng: np.random.Generator) -> None:
        """Attach to ``store`` and draw randomness from ``rng`` (owned by the memory)."""
        if self._store is not None and self._store is not store:
            raise ValueError(
                f"this {type(self).__name__} already serves another memory: create one per memory"
            )
        self._store = store
        self._rng = rng
        self.reserve(store.slots)

    @property
    def store(self) -> VectorStore:
        if self._store is None:
            raise RuntimeError(f"{type(self).__name__} is not bound to a store")
        return self._store

    def reserve(self, slots: int) -> None:
        """Make per-slot state hold at least ``slots`` slots (the store grew)."""

    # -- hooks ----------------------------------------------------------------------------------
    def on_retrieve(self, slots: Slots, step: int) -> None:
        """A retrieval returned ``slots``, best first (possibly none)."""

    def on_query(
        self, query: npt.NDArray[np.float32], slots: Slots, scores: list[float], step: int
    ) -> None:
        """Before :meth:`on_retrieve`, for a policy with :attr:`needs_queries`: the query's unit
        vector and the similarity of each returned slot."""

    def on_feedback(self, slots: Slots, reward: float) -> None:
        """The caller rated the retrieval that returned ``slots``; ``reward`` in [0, 1]."""

    def on_reoffer(self, slot: int, step: int) -> None:
        """The item in ``slot`` was offered again (same id and text); nothing is inserted."""

    def prepare_insert(self, content_key: str) -> None:
        """An item with ``content_key`` was admitted and will be inserted after any eviction.

        ``content_key`` identifies the text (equal texts, equal keys); ``""`` for a policy whose
        :attr:`uses_content_key` is false, here and in :meth:`on_insert`.
        """

    def victim(self, step: int) -> Victim:
        """Return the slot to evict. The store must be non-empty."""
        if len(self.store) == 0:
            raise RuntimeError("victim() called on an empty store")
        return self._victim(step)

    @abstractmethod
    def _victim(self, step: int) -> Victim: ...

    @abstractmethod
    def on_insert(self, slot: int, content_key: str, step: int) -> None:
        """``slot`` now holds a new item."""

    @abstractmethod
    def on_remove(self, slot: int, evicted: bool) -> None:
        """``slot`` was emptied, by eviction or by an explicit ``remove``."""

    @abstractmethod
    def clear(self) -> None:
        """Forget every item."""

    # -- inspection -----------------------------------------------------------------------------
    def describe(self, slot: int) -> Mapping[str, float]:
        """What the policy knows of the item in ``slot`` (for inspection and tests)."""
        return {}

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` if internal state disagrees with the store."""


def lowest(scores: npt.NDArray[np.float64], slots: Slots | slice, n: int = 3) -> Victim:
    """The slot with the lowest score (the first one on ties) and the ``n`` lowest as contenders.

    ``slots`` are the slots ``scores`` belong to, or the ``slice(0, len(scores))`` that
    :meth:`~solar_core.store.VectorStore.active_selection` returns for slots 0, 1, 2, ...
    """
    best = int(scores.argmin())
    m = min(n, len(scores))
    cut = scores.argpartition(m - 1)[:m] if m < len(scores) else np.arange(len(scores))
    ranked = sorted(
        [(s, i) for s, i in zip(scores[cut].tolist(), cut.tolist(), strict=True) if i != best]
    )
    picked = [(float(scores[best]), best)] + ranked[: m - 1]
    if isinstance(slots, slice):
        contenders = tuple([(i, s) for s, i in picked])
    else:
        contenders = tuple([(int(slots[i]), s) for s, i in picked])
    return Victim(contenders[0][0], contenders[0][1], contenders)


def grow_array(array: ArrayT, slots: int, fill: float) -> ArrayT:
    """``array`` extended to ``slots`` entries with ``fill`` (unchanged if long enough)."""
    if len(array) >= slots:
        return array
    extra = np.full(slots - len(array), fill, dtype=array.dtype)
    return cast(ArrayT, np.concatenate([array, extra]))
