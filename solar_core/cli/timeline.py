"""``solar-memory plot``: a memory's size, decisions and item values over time, as a PNG."""

from __future__ import annotations

import math
import os
from itertools import accumulate
from typing import Any

from solar_core.cli.tables import posterior
from solar_core.engine.memory import SolarMemory


def timeline(memory: SolarMemory) -> dict[str, list[float]]:
    """The plotted series: ``steps``, ``size``, ``admitted``, ``refused``, ``evicted``
    (running counts), ``item_steps``/``item_values`` of the items held now (those with a
    finite value), and ``held_now``, the size today.

    >>> from solar_core import SolarMemory
    >>> memory = SolarMemory("fifo", 2, embedder="hash", seed=0)
    >>> for text in ["a", "b", "c"]:
    ...     _ = memory.add(text)
    >>> series = timeline(memory)
    >>> series["steps"], series["size"], series["evicted"]
    ([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], [0.0, 0.0, 1.0])
    """
    decisions = memory.trace()
    changes = [int(d.admitted) - int(d.evicted is not None) - len(d.deleted) for d in decisions]
    # The size before the first traced decision: 0, else worked back from today's (a removal
    # by hand or an expiry is no decision, so it can come out too low: never below 0).
    complete = not decisions or decisions[0].step == 1
    start = 0.0 if complete else max(0.0, float(len(memory)) - sum(changes))
    series = {
        "steps": [float(d.step) for d in decisions],
        "size": list(accumulate(changes, initial=start))[1:],
        "admitted": list(accumulate(float(d.admitted) for d in decisions)),
        # (a resize's evictions are decisions too, refusing nothing)
        "refused": list(accumulate(float(not d.admitted and not d.evicted) for d in decisions)),
        "evicted": list(accumulate(float(d.evicted is not None) for d in decisions)),
    }
    held = [(float(item.created_step), posterior(item)) for item in memory.items()]
    held = [(step, value) for step, value in held if math.isfinite(value)]  # ARC keeps none
    series["item_steps"] = [step for step, _ in held]
    series["item_values"] = [value for _, value in held]
    series["held_now"] = [float(len(memory))]
    return series


def plot(memory: SolarMemory, path: str | os.PathLike[str], title: str) -> None:
    """Write the timeline of ``memory`` to the PNG file ``path``."""
    try:
        import matplotlib
    except ImportError as err:
        raise ImportError(
            "solar-memory plot draws with matplotlib: pip install 'solar-memory[plot]'"
        ) from err
    matplotlib.use("Agg")  # a file, never a window: the command may run on a server
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    series = timeline(memory)
    figure, (top, middle, bottom) = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    axes: Any = (top, middle, bottom)
    top.step(series["steps"], series["size"], where="post", label="items held (decisions)")
    if series["steps"]:
        top.plot(series["steps"][-1:], series["held_now"], "o", label="held now")
    if memory.capacity is not None:
        top.axhline(memory.capacity, color="grey", linestyle="--", label="capacity")
    top.set_ylabel("size")
    for name in ("admitted", "refused", "evicted"):
        middle.plot(series["steps"], series[name], label=name)
    middle.set_ylabel("decisions so far")
    values = series["item_values"]
    bottom.scatter(series["item_steps"], values, s=12)
    stats = sorted({name for item in memory.items() for name in item.policy})
    named = "posterior mean" if "mean" in stats else stats[0] if len(stats) == 1 else "value"
    bottom.set_ylabel(f"{named} now" if values else "no per-item value")
    bottom.set_xlabel("step")
    for axis in axes:  # steps, sizes and counts are whole numbers
        (axis.xaxis if axis is bottom else axis.yaxis).set_major_locator(MaxNLocator(integer=True))
        axis.grid(alpha=0.3)
    top.legend(loc="upper left")
    middle.legend(loc="upper left")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(os.fspath(path), format="png", dpi=100)
    plt.close(figure)
