"""``SolarStore``'s TTL (LangGraph's ``supports_ttl``), mapped onto the items' lifecycle: an
item's ``valid_until``, renewed by the reads that refresh it and lapsed by a sweep, as logged
steps of its namespace's memory. Time is an injected clock: nothing here sleeps for a TTL."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")

from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langgraph.store.base import GetOp, PutOp, SearchOp  # noqa: E402

from langchain_solar.store import SolarStore  # noqa: E402
from tests.support.clock import Clock  # noqa: E402

NS = ("users", "alice")
MINUTE = 60.0


def index() -> dict[str, Any]:
    return {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}


def make(clock: Clock, path: object = None, **kw: Any) -> SolarStore:
    kw.setdefault("capacity", None)
    return SolarStore(path, index=index(), clock=clock, seed=0, **kw)  # type: ignore[arg-type]


def valid_until(store: SolarStore, key: str, namespace: tuple[str, ...] = NS) -> float | None:
    memory = store.memory(namespace)
    assert memory is not None
    return memory.get(key).valid_until


def test_an_item_is_gone_for_readers_once_its_ttl_ran_out() -> None:
    clock = Clock()
    store = make(clock)
    store.put(NS, "mood", {"text": "sleepy"}, ttl=1)
    store.put(NS, "name", {"text": "Alice"})
    assert valid_until(store, "mood") == clock.now + MINUTE
    assert valid_until(store, "name") is None  # no ttl: never expires
    clock.now += MINUTE - 1
    assert store.get(NS, "mood", refresh_ttl=False) is not None
    clock.now += 1
    assert store.get(NS, "mood") is None
    assert [i.key for i in store.search(NS)] == ["name"]
    assert [i.key for i in store.search(NS, query="sleepy")] == ["name"]
    assert [i.key for i in store.search((), filter={"text": "sleepy"})] == []
    assert store.batch([GetOp(NS, "mood"), GetOp(NS, "name", refresh_ttl=False)])[0] is None
    memory = store.memory(NS)
    assert memory is not None and "mood" in memory  # still held: reads do not delete
    assert store.sweep_ttl() == 1  # the lifecycle's expiry step removes it
    assert "mood" not in memory and memory.stats()["expired"] == 1
    assert store.sweep_ttl() == 0
    store.close()


def test_reads_refresh_the_ttl_unless_told_not_to() -> None:
    clock = Clock()
    store = make(clock)
    for key in ("a", "b", "c"):
        store.put(NS, key, {"text": f"item {key}"}, ttl=10)
    store.put(NS, "forever", {"text": "item forever"})
    t0 = clock.now
    clock.now += 5 * MINUTE
    store.get(NS, "a")  # refresh_ttl defaults to True (LangGraph's refresh_on_read)
    store.get(NS, "b", refresh_ttl=False)
    assert valid_until(store, "a") == clock.now + 10 * MINUTE
    assert valid_until(store, "b") == t0 + 10 * MINUTE
    clock.now += 1 * MINUTE
    before = {k: valid_until(store, k) for k in ("a", "b", "c", "forever")}
    hits = store.search(NS, query="item c", limit=2)  # what a search returns is refreshed
    returned = {h.key for h in hits}
    assert len(returned) == 2
    for key, old in before.items():
        refreshed = key in returned and key != "forever"
        assert valid_until(store, key) == (clock.now + 10 * MINUTE if refreshed else old)
    assert valid_until(store, "forever") is None  # a refresh gives no ttl to an item without
    clock.now += 1 * MINUTE
    before = {k: valid_until(store, k) for k in ("a", "b", "c")}
    store.search(NS, refresh_ttl=False)
    store.batch([SearchOp(NS, query="item a", refresh_ttl=False), GetOp(NS, "c", False)])
    assert {k: valid_until(store, k) for k in ("a", "b", "c")} == before
    store.close()


def test_refresh_on_read_false_makes_reads_leave_the_ttl() -> None:
    clock = Clock()
    store = make(clock, ttl={"refresh_on_read": False})
    store.put(NS, "k", {"text": "x"}, ttl=2)
    clock.now += MINUTE
    store.get(NS, "k")
    store.search(NS)
    assert valid_until(store, "k") == clock.now + MINUTE
    store.get(NS, "k", refresh_ttl=True)  # per call, it still can
    assert valid_until(store, "k") == clock.now + 2 * MINUTE
    store.close()


def test_default_ttl_applies_when_put_does_not_say_and_none_means_never() -> None:
    """As LangGraph's ``_ensure_ttl``: a ``ttl`` not given takes ``default_ttl``; an explicit
    ``ttl=None`` is no expiry, default or not."""
    clock = Clock()
    store = make(clock, ttl={"default_ttl": 5})
    store.put(NS, "default", {"text": "x"})
    store.put(NS, "never", {"text": "y"}, ttl=None)
    store.put(NS, "own", {"text": "z"}, ttl=1)
    store.put(NS, "pinned", {"text": "w"}, pinned=True)
    store.batch([PutOp(NS, "raw", {"text": "v"})])  # a bare PutOp says ttl=None: never
    assert valid_until(store, "default") == clock.now + 5 * MINUTE
    assert valid_until(store, "never") is None
    assert valid_until(store, "own") == clock.now + MINUTE
    assert valid_until(store, "pinned") == clock.now + 5 * MINUTE
    assert valid_until(store, "raw") is None
    clock.now += 5 * MINUTE
    assert sorted(i.key for i in store.search(NS)) == ["never", "raw"]
    store.close()


def test_a_put_resets_the_ttl_and_an_expired_key_is_put_anew() -> None:
    clock = Clock()
    store = make(clock)
    store.put(NS, "k", {"text": "one"}, ttl=1)
    created = store.get(NS, "k").created_at  # type: ignore[union-attr]
    clock.now += 30
    store.put(NS, "k", {"text": "two"}, ttl=1)  # an update: the ttl starts again
    assert valid_until(store, "k") == clock.now + MINUTE
    assert store.get(NS, "k").created_at == created  # type: ignore[union-attr]
    store.put(NS, "k", {"text": "three"})  # and without a ttl, it never expires
    assert valid_until(store, "k") is None
    store.put(NS, "k", {"text": "four"}, ttl=1)
    clock.now += MINUTE
    time.sleep(0.001)  # created_at is wall time (as LangGraph's): make a new one differ
    store.put(NS, "k", {"text": "five"})
    item = store.get(NS, "k")
    assert item is not None and item.value == {"text": "five"} and item.created_at > created
    store.close()


def test_expired_items_take_no_room() -> None:
    """A ``put`` removes its namespace's expired items first: a live item is never evicted to
    make room an expired one holds."""
    clock = Clock()
    store = make(clock, capacity=2, policy="fifo")
    store.put(NS, "old", {"text": "old"}, ttl=1)
    store.put(NS, "keep", {"text": "keep"})
    clock.now += MINUTE
    store.put(NS, "new", {"text": "new"})
    assert store.last_decision is not None and store.last_decision.evicted is None
    assert sorted(i.key for i in store.search(NS)) == ["keep", "new"]
    memory = store.memory(NS)
    assert memory is not None and memory.stats()["expired"] == 1
    store.close()


BAD_TTLS = [-5, 0, -0.5, math.nan, math.inf, 10**400, "5", True, [5]]


@pytest.mark.parametrize("ttl", BAD_TTLS, ids=repr)
def test_a_bad_ttl_is_refused_naming_the_fix_and_changes_nothing(ttl: Any) -> None:
    clock = Clock()
    store = make(clock, capacity=3, policy="fifo")
    store.put(NS, "k", {"text": "x"}, ttl=5)
    memory = store.memory(NS)
    assert memory is not None
    before = memory.export()
    clock.now += MINUTE  # a refresh would move the ttl: none may happen
    for attempt in (
        lambda: store.put(NS, "k", {"text": "y"}, ttl=ttl),
        lambda: store.put(NS, "new", {"text": "y"}, ttl=ttl),
        lambda: store.put(NS, "pin", {"text": "y"}, ttl=ttl, pinned=True),
        lambda: store.put(("other",), "k", {"text": "y"}, ttl=ttl),
        # the reads before it in the batch are not run either (their refresh is a change)
        lambda: store.batch([GetOp(NS, "k"), SearchOp(NS), PutOp(NS, "z", {"t": 1}, ttl=ttl)]),
    ):
        with pytest.raises((TypeError, ValueError), match=r"ttl.*minutes"):
            attempt()
    assert memory.export() == before
    assert store.list_namespaces() == [NS]
    store.close()


@pytest.mark.parametrize(
    "config",
    [
        {"default_ttl": -1},
        {"default_ttl": "60"},
        {"refresh_on_read": "yes"},
        {"sweep_interval_minutes": 0},
        {"default_tll": 5},
        [("default_ttl", 5)],
    ],
    ids=repr,
)
def test_a_bad_ttl_config_is_refused(config: Any) -> None:
    with pytest.raises((TypeError, ValueError), match="ttl"):
        make(Clock(), ttl=config)


def test_the_ttl_state_is_logged_seen_by_another_store_and_kept_on_reopen(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "store.db"
    writer = make(clock, path, capacity=10)
    writer.put(NS, "mood", {"text": "sleepy"}, ttl=10)
    writer.put(NS, "name", {"text": "Alice"})
    reader = make(clock, path, capacity=10)  # open at once: it catches up from the log
    clock.now += 4 * MINUTE
    writer.get(NS, "mood")  # a refresh: a renewal step, logged
    deadline = clock.now + 10 * MINUTE
    assert valid_until(reader, "mood") == deadline
    writer.close()
    reader.close()
    again = make(clock, path, capacity=10)  # a new object on the snapshot written by close
    assert valid_until(again, "mood") == deadline
    clock.now = deadline - 1
    assert again.get(NS, "mood", refresh_ttl=False) is not None
    clock.now = deadline
    assert again.get(NS, "mood") is None
    assert [i.key for i in again.search(NS)] == ["name"]
    assert again.sweep_ttl() == 1
    again.close()
    last = make(clock, path, capacity=10)
    memory = last.memory(NS)
    assert memory is not None and [i.id for i in memory.items()] == ["name"]
    last.close()


def test_a_refresh_in_another_process_moves_the_deadline_here(tmp_path: Path) -> None:
    clock = Clock()
    path = tmp_path / "store.db"
    here = make(clock, path, capacity=10)
    here.put(NS, "mood", {"text": "sleepy"}, ttl=10)
    assert valid_until(here, "mood") == clock.now + 10 * MINUTE
    then = clock.now + 5 * MINUTE  # the other process's time
    script = textwrap.dedent(
        f"""
        from langchain_core.embeddings import DeterministicFakeEmbedding
        from langchain_solar.store import SolarStore
        store = SolarStore(
            {str(path)!r}, index={{"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}},
            capacity=10, seed=0, clock=lambda: {then!r},
        )
        assert store.get({NS!r}, "mood") is not None  # refreshed: valid 10 minutes from then
        store.put({NS!r}, "later", {{"text": "tea"}}, ttl=1)
        store.close()
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).parents[2])
    clock.now = then + 10 * MINUTE - 1  # past the first deadline, before the renewed one
    assert here.get(NS, "mood", refresh_ttl=False) is not None
    assert valid_until(here, "mood") == then + 10 * MINUTE
    assert here.get(NS, "later") is None  # its minute ran out long ago
    clock.now += 1
    assert here.get(NS, "mood") is None
    here.close()


def test_the_sweeper_removes_expired_items_in_the_background() -> None:
    clock = Clock()
    idle = make(clock)  # without a ttl config there is nothing to sweep: done at once
    assert idle.start_ttl_sweeper().done() and idle.stop_ttl_sweeper()
    store = make(clock, ttl={"sweep_interval_minutes": 0.0005})  # 30 ms
    store.put(NS, "k", {"text": "x"}, ttl=1)
    memory = store.memory(NS)
    assert memory is not None
    future = store.start_ttl_sweeper()
    clock.now += MINUTE
    give_up = time.monotonic() + 10
    while "k" in memory and time.monotonic() < give_up:
        time.sleep(0.01)
    assert "k" not in memory
    assert store.stop_ttl_sweeper(timeout=5)
    assert future.result(timeout=5) is None
    store.close()


def test_a_refresh_never_changes_an_item_another_writer_put_again_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reads ``k`` (ttl 1 minute); before A's refresh runs, B puts ``k`` again to live for
    ever. A's refresh must leave B's item alone, else B's item would expire a minute later."""
    clock = Clock()
    path = tmp_path / "shared.db"
    a, b = make(clock, path), make(clock, path)
    a.put(NS, "k", {"text": "short-lived"}, ttl=1)
    refresh = SolarStore._refresh

    def b_writes_first(self: SolarStore, memory: Any, items: Any) -> None:
        if self is a:
            b.put(NS, "k", {"text": "kept for ever"}, ttl=None)
        refresh(self, memory, items)

    monkeypatch.setattr(SolarStore, "_refresh", b_writes_first)
    got = a.get(NS, "k")
    assert got is not None and got.value == {"text": "short-lived"}  # A's read, before B's put
    monkeypatch.undo()
    assert valid_until(a, "k") is None and valid_until(b, "k") is None
    clock.now += 10 * MINUTE
    assert b.get(NS, "k") is not None and b.sweep_ttl() == 0
    a.close()
    b.close()


def test_a_batch_with_a_bad_op_changes_nothing_not_even_a_refresh() -> None:
    clock = Clock()
    store = make(clock)
    store.put(NS, "k", {"text": "tea"}, ttl=5)
    store.put(NS, "old", {"text": "coffee"}, ttl=1)
    clock.now += 2 * MINUTE  # "old" expired, not swept yet
    memory = store.memory(NS)
    assert memory is not None
    before = memory.export()
    bad_ops: list[Any] = [
        PutOp(NS, "z", [1, 2]),  # type: ignore[arg-type]
        PutOp(NS, "z\x00", {"text": "nul"}),
        PutOp(NS, 7, {"text": "int key"}),  # type: ignore[arg-type]
        PutOp(NS, " ", {"text": "blank key"}),
        PutOp(NS, "z", {"when": object()}),
        SearchOp(NS, filter={"n": {"$foo": 1}}),
    ]
    for bad in bad_ops:
        with pytest.raises((TypeError, ValueError)):
            store.batch([GetOp(NS, "k"), bad])
        assert memory.export() == before, bad
    with pytest.raises(ValueError, match="NUL"):
        store.put(NS, "z\x00", {"text": "nul"}, pinned=True)
    assert memory.export() == before
    store.close()


def test_ttl_takes_any_real_number_of_minutes() -> None:
    np = pytest.importorskip("numpy")
    from decimal import Decimal

    clock = Clock()
    store = make(clock)
    for n, ttl in enumerate([np.int64(5), np.float32(5), Decimal(5), 5, 5.0]):
        store.put(NS, f"k{n}", {"text": f"t{n}"}, ttl=ttl)
        assert valid_until(store, f"k{n}") == clock.now + 5 * MINUTE
    store.close()


def test_the_sweeper_stops_cleanly_when_its_future_is_cancelled_and_not_after_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    failures: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: failures.append(args.exc_value))
    store = make(Clock(), ttl={"default_ttl": 1, "sweep_interval_minutes": 0.0001})
    future = store.start_ttl_sweeper()
    assert future.cancel()
    sweeper = store._sweeper
    assert sweeper is not None
    sweeper.join(10)
    assert not sweeper.is_alive() and failures == []
    store.close()
    with pytest.raises(RuntimeError, match="closed"):
        store.start_ttl_sweeper()
