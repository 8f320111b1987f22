"""Crash safety: a writer killed with SIGKILL at random points, many times, loses no
acknowledged step, never leaves half a step, and the reopened memory is exactly the memory of
the steps the log holds (SQLite and PostgreSQL; for PostgreSQL the killed process is the
client, whose open transaction the server rolls back)."""

from __future__ import annotations

import signal
import subprocess

import numpy as np
import pytest

from solar_core import SolarMemory
from tests.support.persistence import same, scope_seed
from tests.support.persistence_worker import CLOCK, DIM, crash_ops, open_store, run_op, spawn


def writer(url: str, interactions: int) -> subprocess.Popen[str]:
    return spawn(url, "--interactions", str(interactions))


@pytest.mark.slow
def test_sigkill_at_random_points_loses_no_acknowledged_step(db_url: str) -> None:
    kill_at_random_points(db_url, interactions=400, most_acks=80, least_kills=8)


@pytest.mark.slow
def test_at_least_20_sigkills_lose_no_acknowledged_step(db_url: str) -> None:
    kill_at_random_points(db_url, interactions=600, most_acks=80, least_kills=20)


def kill_at_random_points(db_url: str, interactions: int, most_acks: int, least_kills: int) -> None:
    """Kills a writer of ``interactions`` steps after 1..``most_acks`` acknowledgements, again
    and again until it finishes; checks the reopened memory after every kill."""
    ops = crash_ops(interactions)
    ref = SolarMemory(
        "solar",
        20,
        dim=DIM,
        seed=scope_seed(3, "user=alice"),
        clock=lambda: CLOCK,
        trace_size=100,
    )
    applied = 0  # steps the reference has run
    rng = np.random.default_rng(7)
    kills = 0
    while True:
        proc = writer(db_url, interactions)
        assert proc.stdout is not None
        wait_for = int(rng.integers(1, most_acks))  # acknowledgements to see before the kill
        last_ack, seen, done = None, 0, False
        for line in proc.stdout:
            if line.startswith("ack "):
                last_ack, seen = int(line.split()[1]), seen + 1
                if seen >= wait_for:
                    proc.send_signal(signal.SIGKILL)  # mid-stream: maybe mid-transaction
                    break
            elif line.strip() == "done":
                done = True
        proc.wait(timeout=60)
        for line in proc.stdout:  # acknowledged before the kill, not yet read by us
            if line.startswith("ack "):
                last_ack = int(line.split()[1])
            elif line.strip() == "done":
                done = True
        stderr = proc.stderr.read() if proc.stderr else ""
        assert done or proc.returncode == -signal.SIGKILL, stderr
        kills += not done

        store = open_store(db_url)
        memory = store.scope(user="alice")
        journal = memory.runner
        assert journal is not None
        logged = journal.seq
        if last_ack is not None:  # every acknowledged step is there; at most one more
            assert last_ack <= logged <= last_ack + 1
        # the log holds the ops from the first add on (those before it are no steps)
        first = next(i for i, (kind, _) in enumerate(ops) if kind == "add")
        while logged and applied < logged + first:
            run_op(ref, ops[applied])
            applied += 1
        same(memory, ref)  # nothing half applied: exactly the first `logged` steps
        memory.check_invariants()
        with store.backend.transaction(write=False):
            rows = store.backend.item_rows(journal.scope_id)
        assert sorted(r[0] for r in rows) == sorted(i.id for i in memory.items())
        if kills % 2:
            store.close()  # a snapshot now; other rounds reopen from the log alone
        else:
            store.backend.close()
        if done:
            break
    assert kills >= least_kills, f"the stream ended after only {kills} kills"
    assert applied == len(ops)
