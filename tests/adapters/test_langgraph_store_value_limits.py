"""``SolarStore.put`` refuses a value holding more than
:data:`~solar_core.basics.records.METADATA_VALUES` values, counted as JSON writes them out (a list
held in several places counts in each), before anything is stored or encoded; a value at the
bound is stored and read back equal."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

pytest.importorskip("langgraph.store.base")

from langchain_solar.store import SolarStore  # noqa: E402
from solar_core.basics.records import METADATA_VALUES  # noqa: E402
from tests.support.values import doubled  # noqa: E402

NS = ("users", "alice")
TOO_MANY = f"an item's value holds more than {METADATA_VALUES} values"


def test_a_value_holding_a_list_many_times_over_is_refused(tmp_path: Path) -> None:
    path = str(tmp_path / "store.db")
    store = SolarStore(path, capacity=None)
    store.put(NS, "kept", {"text": "kept"})
    with pytest.raises(ValueError, match=TOO_MANY):
        store.put(NS, "new", {"text": "t", "m": doubled(40)})
    with pytest.raises(ValueError, match=TOO_MANY):
        store.put(NS, "kept", {"text": "t", "m": doubled(40)})
    assert store.get(NS, "new") is None
    kept = store.get(NS, "kept")
    assert kept is not None and kept.value == {"text": "kept"}
    store.close()
    again = SolarStore(path, capacity=None)
    assert [i.key for i in again.search(NS)] == ["kept"]
    again.close()


def test_a_value_at_the_bound_is_stored_and_read_back(tmp_path: Path) -> None:
    # the item's dict and its six fields (its TTL counted whether or not it has one), the
    # value's three, the list's two, and the shared list's values twice
    shared = list(range((METADATA_VALUES - 12) // 2))
    value = {"text": "t", "n": 0, "m": [shared, shared]}
    path = str(tmp_path / "store.db")
    store = SolarStore(path, capacity=None)
    store.put(NS, "k", value)
    store.close()
    again = SolarStore(path, capacity=None)
    got = again.get(NS, "k")
    assert got is not None and got.value == value
    value["n"] = [0]  # one value more
    with pytest.raises(ValueError, match=TOO_MANY):
        again.put(NS, "k", value)
    again.close()


@pytest.mark.parametrize("in_a_file", [False, True])
def test_a_value_that_is_no_json_data_is_refused_alike_in_memory_and_in_a_file(
    tmp_path: Path, in_a_file: bool
) -> None:
    store = SolarStore(str(tmp_path / "store.db") if in_a_file else None, capacity=None)
    store.put(NS, "kept", {"text": "kept"})
    with pytest.raises(TypeError) as refused:
        store.put(NS, "kept", {"text": "t", "day": datetime.date(2024, 6, 1)})
    message = str(refused.value)
    assert message.startswith("an item's value must be JSON data"), message
    assert "persisted" not in message and "date.isoformat()" in message
    kept = store.get(NS, "kept")
    assert kept is not None and kept.value == {"text": "kept"}
    store.put(NS, "kept", {"text": "t", "day": datetime.date(2024, 6, 1).isoformat()})  # the fix
    store.close()
