"""``solar-memory plot``: how a memory evolved, from its decision trace, as a PNG.

Three panels over the memory's steps: its size (with its capacity), the running counts of
admissions, refusals and evictions, and the posterior mean (or the policy's own value) of every
item held now at the step it was stored. The trace keeps the last ``trace_size`` decisions
(1,000 by default): the plot covers those steps. Sizes are rebuilt from the decisions and end
at the size the memory has now; an item removed by hand or expired between two decisions is
counted at the next one.
"""

from __future__ import annotations

import os
from typing import Any

from ..memory import SolarMemory
from .tables import posterior


def timeline(memory: SolarMemory) -> dict[str, list[float]]:
    """The plotted series: ``steps``, ``size``, ``admitted``, ``refused``, ``evicted``
    (running counts), and ``item_steps``/``item_values`` of the items held now.

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
    size = float(len(memory)) - sum(changes)  # the size before the first traced decision
    series: dict[str, list[float]] = {
        name: [] for name in ("steps", "size", "admitted", "refused", "evicted")
    }
    admitted = refused = evicted = 0
    for decision, change in zip(decisions, changes, strict=True):
        size += change
        admitted += int(decision.admitted)
        refused += int(not decision.admitted)
        evicted += int(decision.evicted is not None)
        series["steps"].append(float(decision.step))
        series["size"].append(size)
        series["admitted"].append(float(admitted))
        series["refused"].append(float(refused))
        series["evicted"].append(float(evicted))
    items = memory.items()
    series["item_steps"] = [float(item.created_step) for item in items]
    series["item_values"] = [posterior(item) for item in items]
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

    series = timeline(memory)
    figure, (top, middle, bottom) = plt.subplots(3, 1, figsize=(9, 8), sharex=True)
    axes: Any = (top, middle, bottom)
    top.step(series["steps"], series["size"], where="post", label="items held")
    if memory.capacity is not None:
        top.axhline(memory.capacity, color="grey", linestyle="--", label="capacity")
    top.set_ylabel("size")
    for name in ("admitted", "refused", "evicted"):
        middle.plot(series["steps"], series[name], label=name)
    middle.set_ylabel("decisions so far")
    values = series["item_values"]
    bottom.scatter(series["item_steps"], values, s=12)
    stats = {name for item in memory.items() for name in item.policy}
    bottom.set_ylabel("posterior mean now" if "mean" in stats else "policy value now")
    bottom.set_xlabel("step")
    for axis in axes:
        axis.grid(alpha=0.3)
    top.legend(loc="upper left")
    middle.legend(loc="upper left")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(os.fspath(path), format="png", dpi=100)
    plt.close(figure)
