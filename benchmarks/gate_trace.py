"""Why the paper's SOLAR loses on topic drift and at large K: read its decision traces.

Runs ``solar`` (and ``fifo`` for contrast) on a synthetic workload step by step through the public
API, keeps every ``Decision``, and prints per segment (a drift phase, or a tenth of the stream):
items offered, admitted, the gate's mean step cost (information gain), threshold ``tau``, the
memory's fill, and the share of stored items whose topic the segment queries.

    python benchmarks/gate_trace.py drift --k 20
    python benchmarks/gate_trace.py working-set --k 100
"""

from __future__ import annotations

import argparse
import statistics

from solar_bench.generators import drift, working_set
from solar_bench.workload import NO_ITEM, Workload
from solar_core import SolarMemory


def trace(workload: Workload, policy: str, capacity: int, seed: int, segment: int) -> None:
    memory = SolarMemory(policy, capacity=capacity, dim=workload.dim, seed=seed, trace_size=10**6)
    topic_of = dict(zip(workload.item_ids, workload.item_topics.tolist(), strict=True))
    print(f"\n{policy}, K={capacity}, {workload.name}, seed {seed}")
    print("steps        hit   offered  admitted  mean cost  mean tau  fill  on-topic share")
    hits: list[float] = []
    on_topic: list[float] = []
    fills: list[int] = []
    for t, query in enumerate(workload.queries):
        got = [h.id for h in memory.retrieve(embedding=query)]
        hits.append(float(not set(workload.relevant[t]).isdisjoint(got)))
        live = {workload.query_topics[u] for u in range(t - t % segment, t - t % segment + segment)}
        stored = [topic_of[i.id] for i in memory.items()]
        on_topic.append(sum(s in live for s in stored) / len(stored) if stored else 0.0)
        fills.append(len(memory))
        item = int(workload.stream[t])
        if item != NO_ITEM:
            memory.add(
                workload.item_ids[item],
                embedding=workload.items[item],
                item_id=workload.item_ids[item],
            )
        if (t + 1) % segment == 0:
            decisions = memory.trace()[-segment:]
            costs = [d.cost for d in decisions if d.cost is not None]
            taus = [d.tau for d in decisions if d.tau is not None]
            print(
                f"{t + 1 - segment:>4}-{t:<5}  {statistics.mean(hits):.2f}  {len(decisions):>7}"
                f"  {sum(d.admitted for d in decisions):>8}"
                f"  {statistics.mean(costs) if costs else float('nan'):>9.3f}"
                f"  {statistics.mean(taus) if taus else float('nan'):>8.2f}"
                f"  {statistics.mean(fills):>4.1f}  {statistics.mean(on_topic):>14.2f}"
            )
            hits, on_topic, fills = [], [], []


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=("drift", "working-set"))
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--policies", default="solar,fifo")
    args = parser.parse_args(argv)
    if args.workload == "drift":
        workload, segment = drift(100, seed=args.seed), 100
    else:
        workload, segment = working_set(seed=args.seed), 50
    for policy in args.policies.split(","):
        trace(workload, policy, args.k, args.seed, segment)


if __name__ == "__main__":
    main()
