"""Three processes share ``SolarStore`` namespaces, 5,000 random operations each (puts with
TTLs, updates, deletes, gets, searches that refresh TTLs and get rated, listings): no call
raises (before: a put or delete of a key another process had just removed or put raised
``UnknownItemError`` or "already stored, with a different text")."""

from __future__ import annotations

import json

import pytest


@pytest.mark.slow
def test_three_processes_share_namespaces_without_errors(db_url: str) -> None:
    from tests.support.persistence_worker import spawn
    from tests.support.store_race_worker import NAMESPACES, open_store

    store = open_store(db_url)
    for ns in NAMESPACES:
        store.put(ns, "seed", {"text": "the first note"})  # type: ignore[attr-defined]
    store.close()  # type: ignore[attr-defined]
    worker = "tests.support.store_race_worker"
    procs = [spawn(db_url, f"w{i}", "5000", module=worker) for i in range(3)]
    for proc in procs:
        out, err = proc.communicate(timeout=1200)
        assert proc.returncode == 0, err[-3000:]
        assert json.loads(out.strip().splitlines()[-1]) == {}
    reopened = open_store(db_url)
    for ns in NAMESPACES:
        memory = reopened.memory(ns)  # type: ignore[attr-defined]
        assert memory is not None
        memory.check_invariants()
    reopened.close()  # type: ignore[attr-defined]
