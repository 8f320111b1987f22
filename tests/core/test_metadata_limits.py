"""Metadata holding one list many times over is refused by ``add`` past
:data:`~solar_core.basics.records.METADATA_VALUES` values, counted as a stored memory writes them
out (a list held in several places counts in each), before anything is stored: a plain memory and a
stored one accept the same metadata, and the check reads each list once, however often it is
held (a 41-list value spelling out 2**40 values is refused at once)."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path
from typing import Any

import pytest

from solar_core import SolarMemory
from solar_core.basics.records import METADATA_DEPTH, METADATA_VALUES, copy_metadata
from solar_core.persistence import MemoryStore
from tests.support.memories import full_state, onehot
from tests.support.values import doubled

TOO_MANY = f"holds more than {METADATA_VALUES} values"


def at_the_bound() -> dict[str, Any]:
    """Metadata of exactly METADATA_VALUES values, one list held twice (counted twice)."""
    # the dict, its two keys' values (the shared list, twice) and the list's ints, twice each
    shared = list(range((METADATA_VALUES - 3) // 2))
    meta: dict[str, Any] = {"a": shared, "b": shared}
    room = METADATA_VALUES - (3 + 2 * len(shared))
    meta["c"] = list(range(room - 1))  # (the list itself and its ints)
    return meta


def stored(tmp_path: Path) -> tuple[MemoryStore, SolarMemory]:
    store = MemoryStore(str(tmp_path / "m.db"), embedder="hash", seed=0)
    return store, store.scope(user="a")


def test_a_list_held_many_times_over_is_refused_by_a_plain_memory() -> None:
    memory = SolarMemory("fifo", capacity=4, dim=8, seed=0)
    memory.add("kept", embedding=onehot(0), item_id="k")
    before = full_state(memory)
    with pytest.raises(ValueError, match=TOO_MANY):
        memory.add("t", embedding=onehot(1), metadata={"m": doubled(40)})
    with pytest.raises(ValueError, match=TOO_MANY):  # an update too: the old item stays
        memory.add("t", embedding=onehot(1), metadata={"m": doubled(40)}, item_id="k", update=True)
    assert full_state(memory) == before and len(memory) == 1


def test_a_list_held_many_times_over_is_refused_by_a_stored_memory(tmp_path: Path) -> None:
    store, memory = stored(tmp_path)
    memory.add("kept", item_id="k")
    with pytest.raises(ValueError, match=TOO_MANY):
        memory.add("t", metadata={"m": doubled(40)})
    with pytest.raises(ValueError, match=TOO_MANY):
        memory.add("t", metadata={"m": doubled(40)}, item_id="k", update=True)
    assert len(memory) == 1 and memory.get("k").text == "kept"
    store.close()
    again = MemoryStore(str(tmp_path / "m.db"), embedder="hash", seed=0)
    reopened = again.scope(user="a")
    assert [i.id for i in reopened.items()] == ["k"] and reopened.get("k").metadata == {}
    again.close()


def test_metadata_at_the_bound_is_stored_and_reopened_equal(tmp_path: Path) -> None:
    meta = at_the_bound()
    plain = SolarMemory("fifo", capacity=4, dim=8, seed=0)
    plain.add("t", embedding=onehot(0), metadata=meta, item_id="t")
    assert plain.get("t").metadata == meta
    store, memory = stored(tmp_path)
    memory.add("t", metadata=meta, item_id="t")
    store.close()
    again = MemoryStore(str(tmp_path / "m.db"), embedder="hash", seed=0)
    assert again.scope(user="a").get("t").metadata == meta
    again.close()
    meta["c"].append(0)  # one value more: refused by both
    with pytest.raises(ValueError, match=TOO_MANY):
        plain.add("u", embedding=onehot(1), metadata=meta)
    with pytest.raises(ValueError, match=TOO_MANY):
        copy_metadata(meta)


def test_a_long_flat_metadata_counts_too() -> None:
    flat = {str(i): i for i in range(METADATA_VALUES - 1)}  # with the dict: the bound
    assert copy_metadata(flat) == flat
    flat["one more"] = 0
    with pytest.raises(ValueError, match=TOO_MANY):
        copy_metadata(flat)


def test_a_dict_subclass_is_counted_as_its_contents() -> None:
    with pytest.raises(ValueError, match=TOO_MANY):
        copy_metadata({"m": OrderedDict(x=doubled(40))})
    with pytest.raises(ValueError, match=TOO_MANY):
        copy_metadata({"m": (doubled(40),)})


def test_depth_through_a_shared_list_is_refused_whichever_place_comes_first() -> None:
    inner: Any = 0
    for _ in range(METADATA_DEPTH - 5):
        inner = [inner]
    outer: Any = inner
    for _ in range(10):  # the same list, 10 levels deeper
        outer = [outer]
    for meta in ({"a": inner, "b": outer}, {"b": outer, "a": inner}):
        with pytest.raises(ValueError, match=f"deeper than {METADATA_DEPTH} levels"):
            copy_metadata(meta)
