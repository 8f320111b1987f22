"""``Lifecycle.renew`` and ``Lifecycle.lapse``: an item's own lifetime (a TTL refreshed on use),
as steps of the memory, plain and persisted (logged, replayed by another store)."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from solar_core import MemoryStore, SolarMemory
from solar_core.persistence import PersistenceError
from solar_core.persistence.backend import row_checksum
from tests.support.clock import Clock

DAY = 86_400.0


def v(i: int) -> np.ndarray:
    out = np.zeros(4, np.float32)
    out[i % 4] = 1.0
    return out


def test_renew_moves_valid_until_from_now_and_nothing_else() -> None:
    clock = Clock()
    m = SolarMemory("solar", capacity=5, dim=4, clock=clock, seed=0)
    short = m.add("short", embedding=v(0), valid_until=clock.now + 60).item_id
    never = m.add("never", embedding=v(1), category="identity").item_id
    before = m.export()
    clock.now += 30
    assert m.lifecycle.renew({short: 600, never: 60, "ghost": 5}) == [short]
    assert m.get(short).valid_until == clock.now + 600
    assert m.get(never).valid_until is None  # it never expires: a renewal gives it no deadline
    after = m.export()
    for state in (before, after):  # only the deadlines moved
        for item in state["items"]:
            item["valid_until"] = None
    assert before == after
    assert m.lifecycle.renew({}) == []


@pytest.mark.parametrize(
    ("lifetimes", "error"),
    [
        ({"m1": -1}, ValueError),
        ({"m1": 0}, ValueError),
        ({"m1": math.nan}, ValueError),
        ({"m1": math.inf}, ValueError),
        ({"m1": 10**400}, ValueError),
        ({"m1": "60"}, TypeError),
        ({"m1": True}, TypeError),
        ({1: 60}, TypeError),
        ([("m1", 60)], TypeError),
        ({"m1": 60, "m2": -1}, ValueError),  # one bad lifetime: none renewed
    ],
)
def test_bad_lifetimes_are_refused_and_change_nothing(lifetimes: Any, error: type) -> None:
    clock = Clock()
    m = SolarMemory("fifo", capacity=5, dim=4, clock=clock, seed=0)
    for i in range(2):
        m.add(f"t{i}", embedding=v(i), valid_until=clock.now + 60)
    before = m.export()
    with pytest.raises(error, match="lifetimes|item id"):
        m.lifecycle.renew(lifetimes)
    assert m.export() == before


def test_lapse_removes_only_items_past_their_valid_until() -> None:
    clock = Clock()
    m = SolarMemory("fifo", capacity=5, dim=4, clock=clock, seed=0)
    old = m.add("an old context item", embedding=v(0)).item_id
    due = m.add("due", embedding=v(1), valid_until=clock.now + 30 * DAY).item_id
    clock.now += 30 * DAY  # ``old`` is past the 7-day context TTL, ``due`` at its deadline
    assert m.lifecycle.lapse() == [due]
    assert [i.id for i in m.items()] == [old]  # expire() would take it; lapse() does not
    assert m.stats()["expired"] == 1


def _store(path: Path, clock: Clock) -> MemoryStore:
    return MemoryStore(path, policy="fifo", capacity=5, embedder="hash", seed=0, clock=clock)


def test_a_renewal_is_logged_and_replayed_by_another_store(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "m.db"
    writer, reader = _store(path, clock), _store(path, clock)
    mine, theirs = writer.scope(user="u"), reader.scope(user="u")
    item = mine.add("tea at five", valid_until=clock.now + 60).item_id
    assert theirs.get(item).valid_until == clock.now + 60
    clock.now += 50
    mine.lifecycle.renew({item: 3600})
    clock.now += 1000  # the replay reads the logged time, not this one
    assert theirs.get(item).valid_until == clock.now - 1000 + 3600
    with sqlite3.connect(path) as con:
        kinds = [k for (k,) in con.execute("SELECT kind FROM solar_ops ORDER BY seq")]
    assert kinds == ["add", "renew"]
    clock.now += 3600
    assert theirs.lifecycle.lapse() == [item]
    assert item not in mine and len(mine) == 0
    writer.close()
    reader.close()
    again = _store(path, clock)
    assert len(again.scope(user="u")) == 0
    again.close()


def test_a_renewal_skips_what_changed_since_the_caller_read_it() -> None:
    """Another writer may re-put an item between a read and the renewal it causes: the renewal
    checks in its own step that the item still has the deadline the caller saw, and has not
    passed it."""
    clock = Clock()
    m = SolarMemory("fifo", capacity=5, dim=4, clock=clock, seed=0)
    item = m.add("tea", embedding=v(0), valid_until=clock.now + 60).item_id
    seen = {item: m.get(item).valid_until}
    m.remove(item)  # re-put meanwhile, never to expire
    m.add("tea", embedding=v(0), item_id=item)
    assert m.lifecycle.renew({item: 60.0}, seen=seen) == []
    assert m.get(item).valid_until is None
    m.remove(item)  # re-put with another lifetime
    m.add("tea", embedding=v(0), item_id=item, valid_until=clock.now + 6000)
    assert m.lifecycle.renew({item: 60.0}, seen=seen) == []
    assert m.get(item).valid_until == clock.now + 6000
    clock.now += 6000  # past its deadline, not swept yet: a renewal does not revive it
    assert m.lifecycle.renew({item: 60.0}) == []


@pytest.mark.parametrize(
    "args",
    [
        '{"l": [["m1", -5.0, null]]}',
        '{"l": [["m1", 60, null]]}',
        '{"l": [["m1", 60.0]]}',
        '{"l": [["m1", 60.0, NaN]]}',
        '{"l": []}',
        '{"l": [["m1", 60.0, null], ["m1", 90.0, null]]}',
        '{"x": []}',
    ],
)
def test_a_renewal_the_library_could_not_have_logged_is_refused(tmp_path: Path, args: str) -> None:
    clock = Clock()
    path = tmp_path / "m.db"
    store = _store(path, clock)
    memory = store.scope(user="u")
    item = memory.add("tea", valid_until=clock.now + 60).item_id
    memory.lifecycle.renew({item: 60.0})
    _edit_last(path, "renew", args=args)  # an edit by hand, checksum and all
    other = _store(path, clock)
    with pytest.raises(PersistenceError, match="renew"):
        other.scope(user="u")
    other.backend.close()
    store.backend.close()


def _edit_last(path: Path, kind: str, **columns: Any) -> None:
    """Rewrite the last logged ``kind`` step's columns by hand, checksum recomputed."""
    with sqlite3.connect(path) as con:
        scope_id, seq, args, clocks, digest, vector = con.execute(
            "SELECT scope_id, seq, args, clocks, digest, vector FROM solar_ops WHERE kind = ? "
            "ORDER BY seq DESC",
            (kind,),
        ).fetchone()
        args, clocks = columns.get("args", args), columns.get("clocks", clocks)
        vector = columns.get("vector", vector)
        con.execute(
            "UPDATE solar_ops SET args = ?, clocks = ?, vector = ?, checksum = ? WHERE seq = ?",
            (
                args,
                clocks,
                vector,
                row_checksum(scope_id, [seq, kind, args, clocks, digest], vector),
                seq,
            ),
        )


@pytest.mark.parametrize(
    ("kind", "columns"),
    [
        ("renew", {"clocks": "[NaN]"}),  # a NaN deadline would never pass
        ("renew", {"clocks": "[Infinity]"}),
        ("renew", {"clocks": "[true]"}),
        ("renew", {"vector": b"\x00" * 16}),  # only retrievals and adds log a vector
        ("lapse", {"args": '{"x": 1}'}),  # a sweep has no inputs
    ],
)
def test_logged_steps_no_call_could_make_are_refused(
    tmp_path: Path, kind: str, columns: dict[str, Any]
) -> None:
    clock = Clock()
    path = tmp_path / "m.db"
    store = _store(path, clock)
    memory = store.scope(user="u")
    item = memory.add("tea", valid_until=clock.now + 60).item_id
    memory.lifecycle.renew({item: 60.0})
    memory.add("coffee", valid_until=clock.now + 10)
    clock.now += 20
    memory.lifecycle.lapse()
    store.backend.close()  # (not store.close(): its snapshot would fold the log away)
    _edit_last(path, kind, **columns)
    other = _store(path, clock)
    with pytest.raises(PersistenceError, match=kind):
        other.scope(user="u")
    other.backend.close()
