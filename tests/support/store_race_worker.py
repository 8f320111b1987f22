"""A ``SolarStore`` client for the multi-process test: ``python -m
tests.support.store_race_worker URL ROLE N``. It runs ``N`` random operations (puts with and
without a TTL, updates, deletes, gets, query searches with their TTL refresh, listings,
ratings) on namespaces other clients share, and prints one JSON line: the exceptions it met,
by type and message (none expected)."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter

from langchain_core.embeddings import DeterministicFakeEmbedding

NAMESPACES = [("shared", "a"), ("shared", "b")]


def open_store(url: str) -> object:
    from langchain_solar import SolarStore

    index = {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}
    ttl = {"default_ttl": 0.02, "refresh_on_read": True}  # 1.2 s: keys expire mid-run
    return SolarStore(url, index=index, capacity=8, policy="fifo", seed=0, ttl=ttl)  # type: ignore[arg-type]


def main(argv: list[str] | None = None) -> int:
    url, role, n = (argv or sys.argv[1:])[:3]
    store = open_store(url)
    rng = random.Random(role)
    errors: Counter[str] = Counter()
    for i in range(int(n)):
        ns = rng.choice(NAMESPACES)
        key = f"k{rng.randint(0, 15)}"
        roll = rng.random()
        try:
            if roll < 0.35:
                ttl = rng.choice([None, 0.01, 0.02])
                store.put(ns, key, {"text": f"note {rng.randint(0, 30)} {i}"}, ttl=ttl)  # type: ignore[attr-defined]
            elif roll < 0.45:
                store.delete(ns, key)  # type: ignore[attr-defined]
            elif roll < 0.6:
                store.get(ns, key)  # type: ignore[attr-defined]
            elif roll < 0.9:
                found = store.search(ns, query=f"note {rng.randint(0, 30)}", limit=3)  # type: ignore[attr-defined]
                if found and rng.random() < 0.3:
                    store.feedback(like=rng.random() < 0.5, retrieval=found)  # type: ignore[attr-defined]
            elif roll < 0.95:
                store.search(("shared",), limit=20)  # type: ignore[attr-defined]
            else:
                store.list_namespaces(prefix=("shared",))  # type: ignore[attr-defined]
        except Exception as err:  # noqa: BLE001 - counted: the test expects none
            errors[f"{type(err).__name__}: {err}"[:200]] += 1
    store.close()  # type: ignore[attr-defined]
    print(json.dumps(dict(errors)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
