"""What ``solar-memory`` prints: items and decisions as rows, and rows as a table. Stored texts'
control characters (an ANSI escape can rewrite the screen) are shown escaped, never sent."""

from __future__ import annotations

import datetime as dt
import json
import math
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from solar_core.basics.types import Decision, MemoryItem
from solar_core.engine.memory import SolarMemory
from solar_core.persistence.errors import PersistenceError
from solar_core.persistence.journal import Journal


def safe(text: str) -> str:
    """``text`` with every control, format, unassigned or line/paragraph separator escaped."""
    return "".join(
        c.encode("unicode_escape").decode("ascii")
        if unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp")
        else c
        for c in text
    )


class Stream(Protocol):
    """Where the command prints."""

    def write(self, text: str, /) -> object: ...


def say(stream: Stream, text: str) -> None:
    """Write ``text``, :func:`safe` line by line: every line the command prints goes here."""
    stream.write("\n".join(safe(line) for line in text.split("\n")))


def json_line(value: object) -> str:
    """``value`` as one line of JSON without control characters (ASCII JSON leaves DEL)."""
    return json_text(value).replace("\x7f", "\\u007f")


def json_text(value: object, ascii: bool = True) -> str:
    """``value`` as valid JSON: a NaN or infinite number (metadata may hold them; JSON has
    none) is written ``null``, as JavaScript's ``JSON.stringify`` writes it.

    >>> json_text({"x": [float("nan"), float("-inf"), 1.5]})
    '{"x": [null, null, 1.5]}'
    """
    try:
        return json.dumps(value, ensure_ascii=ascii, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), ensure_ascii=ascii)


def _finite(value: object) -> object:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return [_finite(v) for v in value] if isinstance(value, list | tuple) else value


def excerpt(text: str, width: int = 48) -> str:
    """One line of at most ``width`` characters of ``text``, never cut inside an escape."""
    flat = safe(" ".join(text.split()))
    if len(flat) <= width:
        return flat
    shown = ""
    for char in " ".join(text.split()):
        if len(shown) + len(safe(char)) > width - 1:
            break
        shown += safe(char)
    return shown + "…"


def age(seconds: float) -> str:
    """A short age: ``42s``, ``5m``, ``3h``, ``12d``."""
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def when(at: float) -> str:
    """A UTC time, to the second."""
    return dt.datetime.fromtimestamp(at, tz=dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


#: the times a date can show (years 1 to 9999), in seconds since 1970
_TIMES = (-62135596800.0, 253402300799.0)


def checked_time(value: object, what: str) -> float | None:
    """``value``, a stored time or ``None``, if a clock could have given it, else a
    ``ValueError`` naming it (a row changed outside solar-memory)."""
    if value is None:
        return None
    number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if number is None or not _TIMES[0] <= number <= _TIMES[1]:  # (NaN is in no range)
        raise ValueError(f"{what} is {value!r}, which no clock gives")
    return float(number)


def number(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3g}"
    return "" if value is None else str(value)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Left-aligned columns, two spaces apart, under a header and a rule."""
    cells = [[str(c) for c in header], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def posterior(item: MemoryItem) -> float:
    """An item's worth to the eviction policy: a posterior mean, its one statistic, or -inf."""
    stats = item.policy
    if "mean" in stats:
        return float(stats["mean"])
    if len(stats) == 1:
        return float(next(iter(stats.values())))
    return float(stats.get("value", -math.inf))


#: the sorts besides ``stored`` (the memory's own order): key, highest first
_SORTS: dict[str, tuple[Callable[[MemoryItem], float], bool]] = {
    "posterior": (posterior, True),
    "importance": (lambda item: item.importance, True),
    "age": (lambda item: item.created_at, False),
}
SORTS = ("stored", *_SORTS)


def item_records(memory: SolarMemory, now: float, sort: str = "stored") -> list[dict[str, Any]]:
    """One plain record per stored item: what ``items`` and ``export`` show."""
    counts = Counter(i for retrieval in memory.retrieval_trace() for i in retrieval["ids"])
    items = memory.items(include_superseded=True)  # past values of keys too
    for item in items:
        checked_time(item.created_at, f"the creation time of item {item.id!r}")
        checked_time(item.valid_until, f"the valid_until of item {item.id!r}")
    if sort in _SORTS:
        key, highest = _SORTS[sort]
        items = sorted(items, key=key, reverse=highest)
    return [
        {
            "id": item.id,
            "text": item.text,
            "metadata": dict(item.metadata),
            "category": item.category,
            "importance": item.importance,
            "policy": dict(item.policy),
            "retrieved": counts[item.id],
            "created_step": item.created_step,
            "created_at": item.created_at,
            "age_seconds": now - item.created_at,
            "valid_until": item.valid_until,
            "seen": item.seen,
            "last_seen": item.last_seen,
            "key": item.key,
            "superseded_at": item.superseded_at,
            "superseded_by": item.superseded_by,
        }
        for item in items
    ]


def items_table(records: list[dict[str, Any]], now: float, width: int = 48) -> str:
    """The ``items`` table: each of the policy's statistics gets a column."""
    stats = list(dict.fromkeys(name for r in records for name in r["policy"]))
    expiring = any(r["valid_until"] is not None for r in records)
    keyed = any(r["key"] is not None for r in records)  # facts: the key and what replaced it
    repeated = any(r["seen"] > 1 for r in records)  # how often an item was said
    header = ["id", "category", "importance", *map(safe, stats), "retrieved"]
    header += ["seen", "age"] if repeated else ["age"]
    header += ["expires in"] if expiring else []
    header += ["key", "superseded"] if keyed else []
    rows = []
    for r in records:
        row = [safe(r["id"]), safe(r["category"]), number(r["importance"])]
        row += [*(number(r["policy"].get(name)) for name in stats), r["retrieved"]]
        row += [r["seen"]] if repeated else []
        row.append(age(r["age_seconds"]))
        if expiring:
            until = r["valid_until"]
            row.append("" if until is None else "expired" if until <= now else age(until - now))
        if keyed:
            by, at = r["superseded_by"], r["superseded_at"]
            gone = "" if by is None else f"by {safe(by)}, {age(now - at)} ago"
            row += ["" if r["key"] is None else safe(r["key"]), gone]
        rows.append([*row, excerpt(r["text"], width)])
    return table([*header, "text"], rows)


def offered_texts(memory: SolarMemory) -> dict[int, str]:
    """The texts offered at the decisions still logged, by step: rows are matched to decisions
    from the last step back, each checked; any doubt and none is given, never another's text."""
    journal = memory.runner
    if not isinstance(journal, Journal) or journal.scope_id is None:
        return {}
    try:
        with journal.backend.transaction(write=False):
            ops = list(journal.backend.ops_after(journal.scope_id, 0, journal.seq))
        # the rows up to the memory's step, none missing (else a snapshot took some since)
        if not ops or ops[-1].seq != journal.seq or ops[-1].seq - ops[0].seq != len(ops) - 1:
            return {}
        decisions = {d.step: d for d in memory.trace() if d.admitted or d.evicted is None}
        step = int(memory.stats()["steps"])  # offers so far: the last one's decision step
        texts = {}
        for op in reversed([op for op in ops if op.kind == "add"]):
            d = decisions.get(step)
            # what the log records of an offer's decision
            deleted = "" if d is None else ",".join(i for i, _ in d.deleted)
            if d is None or op.digest != f"{int(d.admitted)}|{d.item_id}|{d.evicted}|{deleted}":
                break
            texts[step] = str(json.loads(op.args)["text"])
            step -= 1
        return texts
    except (PersistenceError, ValueError, TypeError, KeyError):
        return {}


def decision_records(memory: SolarMemory, last: int | None = None) -> list[dict[str, Any]]:
    """The traced decisions, oldest first, with the texts still stored or logged."""
    texts = {item.id: item.text for item in memory.items(include_superseded=True)}
    timed = memory.export()["decisions"][-last if last else 0 :]  # (None: all)
    offered = offered_texts(memory) if any(not e["admitted"] for e in timed) else {}
    out = []
    for entry in timed:
        record = {name: entry[name] for name in Decision.__slots__}
        record["at"] = checked_time(entry["at"], f"the time of decision {record['step']}")
        record["contenders"] = [list(c) for c in record["contenders"]]
        record["deleted"] = [list(d) for d in record["deleted"]]
        if record["admitted"] or record["reason"] == "repeat":  # (a repeat: the item it refreshed)
            record["text"] = texts.get(str(record["item_id"]))
        else:
            record["text"] = offered.get(int(record["step"]))
        out.append(record)
    return out


def decisions_table(
    records: list[dict[str, Any]], width: int = 40, scores: tuple[str, str] = ("regret", "tau")
) -> str:
    """The ``trace`` table; ``scores``: the names of the admission gate's two scores."""
    header = ["step", "time (UTC)", "outcome", "reason", *scores, "evicted", "text"]
    rows = []
    for r in records:
        outcome = f"stored {safe(str(r['item_id']))}" if r["admitted"] else "refused"
        outcome = "resized" if r["evicted"] and not r["admitted"] else outcome
        evicted = [safe(r["evicted"])] if r["evicted"] else []
        evicted += [f"{safe(i)} ({safe(why)})" for i, why in r["deleted"]]
        if r["superseded"]:  # a fact with a key: the one it replaced stays, no longer current
            evicted.append(f"superseded {safe(r['superseded'])}")
        outcome = f"repeats {safe(str(r['item_id']))}" if r["reason"] == "repeat" else outcome
        text = "(no longer stored)" if r["admitted"] else "(offer no longer logged)"
        text = "" if outcome == "resized" else text
        text = text if r["text"] is None else excerpt(r["text"], width)
        row = [r["step"], when(r["at"]), outcome, safe(r["reason"])]
        rows.append([*row, number(r["regret"]), number(r["tau"]), ", ".join(evicted), text])
    return table(header, rows)
