"""Read the reference implementation's pre-generated workloads (its ``solar_synthetic`` folder).

Layout, per ``<experiment>/<tag>/seed<s>/``: ``items.jsonl`` ``{id, topic_id, created_at}``,
``queries.jsonl`` ``{id, topic_id, timestep, relevant_item_ids}``, ``stream.jsonl``
``{t, streamed_item_id}`` (``null``: nothing streamed), ``prefill.jsonl`` ``{id}`` (static noise),
``embeddings.npz`` (``item_ids``, ``item_embs``, ``query_ids``, ``query_embs``) and ``meta.json``.
Static-noise variants other than K = 500 hold only ``meta.json`` and ``prefill.jsonl``: their items
and queries are those of the K = 500 variant of the same seed (same generator, same draws), which
:func:`load_replay` finds by itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from .workload import NO_ITEM, Workload

#: our workload name -> the reference's experiment folder and the tag of each setting
EXPERIMENTS = {
    "cycling": "cycling",
    "working-set": "working_set",
    "drift": "topic_drift",
    "noise-static": "retrieval_noise_static",
}
_NAMES = {folder: name for name, folder in EXPERIMENTS.items()}


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _pool_folder(folder: Path) -> Path:
    """Where this variant's items and queries live (itself, or a sibling sharing its pool)."""
    if (folder / "items.jsonl").exists():
        return folder
    seed = folder.name
    for sibling in sorted(folder.parent.parent.glob(f"*/{seed}")):
        if (sibling / "items.jsonl").exists() and (sibling / "embeddings.npz").exists():
            return sibling
    raise FileNotFoundError(f"{folder} has no items.jsonl and no sibling variant has one")


def load_replay(folder: str | Path) -> Workload:
    """The workload stored in one ``<experiment>/<tag>/seed<s>`` folder.

    Raises ``FileNotFoundError`` naming the missing file, ``ValueError`` on inconsistent files.
    """
    folder = Path(folder)
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    pool = _pool_folder(folder)
    items = _jsonl(pool / "items.jsonl")
    queries = _jsonl(pool / "queries.jsonl")
    with np.load(pool / "embeddings.npz") as npz:
        item_ids = [str(x) for x in npz["item_ids"]]
        item_embs = np.asarray(npz["item_embs"], dtype=np.float32)
        query_ids = [str(x) for x in npz["query_ids"]]
        query_embs = np.asarray(npz["query_embs"], dtype=np.float32)
    index = {item_id: i for i, item_id in enumerate(item_ids)}
    topic = {row["id"]: int(row["topic_id"]) for row in items}
    if set(topic) != set(index):
        raise ValueError(f"{pool}: items.jsonl and embeddings.npz list different items")
    qrow = {q: i for i, q in enumerate(query_ids)}
    order = [qrow[q["id"]] for q in queries]
    stream = np.full(len(queries), NO_ITEM, dtype=np.int64)
    for row in _jsonl(pool / "stream.jsonl") if folder == pool else []:
        if row["streamed_item_id"] is not None:
            stream[int(row["t"])] = index[row["streamed_item_id"]]
    prefill_path = folder / "prefill.jsonl"
    prefill = [index[r["id"]] for r in _jsonl(prefill_path)] if prefill_path.exists() else []
    experiment = folder.parent.parent.name
    return Workload(
        _NAMES.get(experiment, experiment),
        item_ids,
        np.asarray([topic[i] for i in item_ids], dtype=np.int64),
        item_embs,
        query_embs[order],
        np.asarray([int(q["topic_id"]) for q in queries], dtype=np.int64),
        [tuple(q["relevant_item_ids"]) for q in queries],
        stream,
        prefill=prefill,
        warmup=int(meta.get("n_warmup_steps") or 0),
        params={"source": str(folder), "tag": folder.parent.name, **meta.get("params", {})},
    )


def replay_variants(root: str | Path, workload: str) -> list[Path]:
    """Every stored folder of ``workload`` under ``root`` (the ``solar_synthetic`` folder)."""
    if workload not in EXPERIMENTS:
        known = ", ".join(EXPERIMENTS)
        raise ValueError(f"no replay files for workload {workload!r}; replayable: {known}")
    base = Path(root) / EXPERIMENTS[workload]
    if not base.is_dir():
        raise FileNotFoundError(f"{base} not found: --data must be the solar_synthetic folder")
    return sorted(p for p in base.glob("*/seed*") if (p / "meta.json").exists())
