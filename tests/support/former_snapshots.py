"""Snapshots written by the version before ARC and the coverage policy became one object each,
and what that version did next: ``former_snapshots.json``, read by the snapshot-format tests.

The file was written by running this module from a checkout of that version (snapshot format 3):

    PYTHONPATH=. python tests/support/former_snapshots.py tests/support/former_snapshots.json

For each configuration a memory takes :data:`BEFORE` steps, is snapshotted, then takes
:data:`AFTER` more; the file holds the snapshot and the outcome of every later step. A memory
read back from the snapshot by today's code must take those steps exactly so, and hold the same
items at the end (``items``). Exactly so up to float32 rounding (:func:`difference`): a dot
product's last bits depend on which SIMD kernels the machine's BLAS picks.
"""

from __future__ import annotations

import base64
import json
import math
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from solar_core import SolarMemory
from solar_core.admission import CoverageGate, RegretGate
from solar_core.eviction import ArcEviction, CoverageEviction, FifoEviction

FILE = Path(__file__).with_name("former_snapshots.json")
DIM = 8
BEFORE, AFTER = 60, 40


def judge(query: str | None, execution: str, metadata: Any) -> bool:
    """An evaluator: refuses every third text (by length), so both of its branches run."""
    return len(execution) % 3 != 0


#: configuration name -> the memory (fresh policy objects each call)
CONFIGS: dict[str, Callable[[], SolarMemory]] = {
    **{
        name: (lambda name=name: SolarMemory(name, capacity=6, dim=DIM, seed=3))
        for name in ("fifo", "lru", "lfu", "arc", "solar", "solar-a", "solar-e", "solar-adaptive")
    },
    "arc+evaluator": lambda: SolarMemory("arc", capacity=6, dim=DIM, seed=3, evaluator=judge),
    "solar-adaptive+evaluator": lambda: SolarMemory(
        "solar-adaptive", capacity=6, dim=DIM, seed=3, evaluator=judge
    ),
    "regret+arc": lambda: SolarMemory(
        admission=RegretGate(bootstrap=2), eviction=ArcEviction(), capacity=6, dim=DIM, seed=3
    ),
    "coverage-by-hand": lambda: SolarMemory(
        admission=CoverageGate(0.25), eviction=CoverageEviction(), capacity=6, dim=DIM, seed=3
    ),
    "regret+coverage": lambda: SolarMemory(
        admission=RegretGate(bootstrap=2), eviction=CoverageEviction(), capacity=6, dim=DIM, seed=3
    ),
    "fifo-identity": lambda: SolarMemory(eviction=FifoEviction(), capacity=6, dim=DIM, seed=3),
}


def drive(memory: SolarMemory, start: int, steps: int) -> list[Any]:
    """``steps`` steps from step number ``start`` (the same inputs in every version): offers
    over 17 texts (re-offers and ghost hits for ARC), retrievals, a rating every third one.
    Returns what each did, as plain values."""
    out: list[Any] = []
    for i in range(start, start + steps):
        rng = np.random.default_rng(i)
        topic = int(rng.integers(17))
        vector = np.random.default_rng(1000 + topic).normal(size=DIM) + 0.1 * rng.normal(size=DIM)
        category = "identity" if i in (5, 70) else "context"
        item_id = f"k{topic}" if i % 4 == 0 else None  # a stored id again: a re-offer
        text = f"text {topic}" + "!" * (topic % 4)
        d = memory.add(text, embedding=vector, category=category, item_id=item_id)
        out.append(
            [d.step, d.admitted, d.item_id, d.evicted, d.reason, d.cost, d.regret, d.tau]
            + [d.victim_score, d.contenders]
        )
        hits = memory.retrieve(embedding=rng.normal(size=DIM), k=2)
        out.append([h.id for h in hits])
        if i % 3 == 0:
            memory.feedback(score=float(rng.random()))
    return out


def difference(got: Any, want: Any, path: str = "steps") -> str | None:
    """Where ``got`` differs from ``want``, or ``None``: every decision, id and reason must be
    equal, a float only within float32 rounding (relative 1e-5): the recorded costs, regrets and
    scores are float32 sums whose last bits vary with the CPU the file was written on."""
    if isinstance(want, float) and isinstance(got, float):
        return (
            None
            if math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-7)
            else f"{path}: {got!r} != {want!r}"
        )
    if isinstance(want, list) and isinstance(got, list):
        if len(got) != len(want):
            return f"{path}: {len(got)} entries != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            found = difference(g, w, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return None if type(got) is type(want) and got == want else f"{path}: {got!r} != {want!r}"


def snapshot(case: dict[str, Any]) -> bytes:
    """The snapshot a case of the file holds."""
    return zlib.decompress(base64.b64decode(case["snapshot"]))


def write(path: Path) -> None:
    from solar_core.persistence import codec
    from solar_core.persistence.journal import snapshot_state

    cases = {}
    for name, make in CONFIGS.items():
        memory = make()
        drive(memory, 0, BEFORE)
        blob = codec.dumps(snapshot_state(memory))
        cases[name] = {
            "snapshot": base64.b64encode(zlib.compress(blob, 9)).decode("ascii"),
            "after": drive(memory, BEFORE, AFTER),
            "items": [item.id for item in memory.items()],
        }
    path.write_text(json.dumps(cases, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else FILE)
