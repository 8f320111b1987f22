"""The cycling workload's ceiling, attained: a memory that keeps its first K items and never
changes, against ``(cycles - 1) / cycles * min(1, K / m)`` (the cycling protocol runs ten laps
over the m topics).

Why it is a ceiling: every step is scored and a topic's query comes before its first item, so the
first cycle cannot hit; an item enters right after its own topic's query, so a slot can serve at
most one query per cycle after that. Nothing does better than the frozen memory.

    python benchmarks/cycling_ceiling.py [--policies solar-adaptive,lfu]
"""

from __future__ import annotations

import argparse
from typing import Any

from solar_bench import runner
from solar_bench.generators import cycling
from solar_core import SolarMemory
from solar_core.policies.admission import NeverAdmit
from solar_core.policies.eviction import FifoEviction

K, CYCLES, SEEDS, MS = 10, 10, (42, 1337, 2024), (10, 15, 20, 30, 50)
_preset_memory = runner.memory_for


def _memory_for(spec: str, **kw: Any) -> SolarMemory:
    if spec == "frozen":  # the first K offers, then nothing: NeverAdmit(initial=K)
        return SolarMemory(
            admission=NeverAdmit(initial=kw["capacity"]), eviction=FifoEviction(), **kw
        )
    return _preset_memory(spec, **kw)


runner.memory_for = _memory_for  # the runner builds each memory through this name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--policies", default="solar-adaptive")
    args = parser.parse_args()
    policies = ["frozen", *args.policies.split(",")]
    print(f"hit rate, K = {K}, mean of seeds {', '.join(map(str, SEEDS))}")
    print(f"{'m/K':>5s} {'ceiling':>8s} " + " ".join(f"{p:>15s}" for p in policies))
    for m in MS:
        ceiling = (CYCLES - 1) / CYCLES * min(1.0, K / m)
        cells = []
        for p in policies:
            hits = [
                runner.run(cycling(m, seed=s), p, K, seed=s).metrics()["hit_rate"] for s in SEEDS
            ]
            cells.append(f"{sum(hits) / len(hits):15.3f}")
        print(f"{m / K:5.1f} {ceiling:8.3f} " + " ".join(cells))


if __name__ == "__main__":
    main()
