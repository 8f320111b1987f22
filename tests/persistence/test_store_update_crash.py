"""A ``SolarStore`` update is one logged step: a writer killed at any point leaves every key
with its old value or its new one, never neither (SQLite and PostgreSQL)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from tests.support.persistence_worker import spawn
from tests.support.store_worker import KEYS, NAMESPACE, open_store, value


def test_an_update_is_one_logged_step_and_writes_no_snapshot(tmp_path: Path) -> None:
    """(Before: a remove, which also wrote a full snapshot, then an add: two steps, and a kill
    between them lost both values.)"""
    store = open_store(str(tmp_path / "s.db"))
    store.put(NAMESPACE, "k0", value(0))  # type: ignore[attr-defined]
    memory = store.memory(NAMESPACE)  # type: ignore[attr-defined]
    journal = memory.runner
    seq, snapshot = journal.seq, journal.snapshot_seq
    store.put(NAMESPACE, "k0", value(KEYS))  # type: ignore[attr-defined]
    assert journal.seq == seq + 1 and journal.snapshot_seq == snapshot
    assert store.get(NAMESPACE, "k0").value == value(KEYS)  # type: ignore[attr-defined]
    assert store.last_decision.reason == "updated"  # type: ignore[attr-defined]
    memory.check_invariants()
    store.close()  # type: ignore[attr-defined]


def writer(url: str, start: int) -> subprocess.Popen[str]:
    return spawn(url, str(start), module="tests.support.store_worker")


def check(url: str, last: int) -> None:
    """Every key holds its latest acknowledged version, or (the key of the put in flight) the
    version after it."""
    store = open_store(url)
    try:
        for key in range(KEYS):
            acked = max((v for v in range(last + 1) if v % KEYS == key), default=None)
            got = store.get(NAMESPACE, f"k{key}")  # type: ignore[attr-defined]
            if acked is None:
                assert got is None or got.value == value(last + 1), f"k{key}: {got}"
                continue
            assert got is not None, f"k{key} lost both its old and its new value"
            allowed = [value(acked)] + ([value(last + 1)] if (last + 1) % KEYS == key else [])
            assert got.value in allowed, f"k{key}: {got.value}, acked {acked}"
        store.memory(NAMESPACE).check_invariants()  # type: ignore[attr-defined]
    finally:
        store.close()  # type: ignore[attr-defined]


@pytest.mark.slow
def test_50_sigkills_during_updates_lose_no_key(db_url: str) -> None:
    rng = np.random.default_rng(11)
    last = -1  # the latest acknowledged version
    for _ in range(50):
        proc = writer(db_url, last + 1)
        assert proc.stdout is not None
        wait_for, seen = int(rng.integers(1, 40)), 0
        for line in proc.stdout:
            if line.startswith("ack "):
                last, seen = int(line.split()[1]), seen + 1
                if seen >= wait_for:
                    break
        time.sleep(float(rng.uniform(0.0, 0.02)))  # at a random point of a later put
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if seen < wait_for:  # it died on its own: say why
            raise AssertionError(proc.stderr.read() if proc.stderr else "writer died")
        for line in proc.stdout:  # puts acknowledged before the kill landed
            if line.startswith("ack "):
                last = int(line.split()[1])
        check(db_url, last)
    assert last >= 50
