"""A ``SolarStore`` writer for the crash test: ``python -m tests.support.store_worker URL N``.

It puts versions ``N, N+1, ...`` of :data:`KEYS` keys in turn (version ``v`` goes to key
``v % KEYS``; most puts update a stored key), and prints ``ack v`` after each put returns, so
the parent knows which versions were acknowledged before it kills this process.
"""

from __future__ import annotations

import sys

KEYS = 8
STOP = 10_000  # far more puts than any test waits for
NAMESPACE = ("crash", "alice")


def value(version: int) -> dict[str, object]:
    return {"text": f"note {version} about key {version % KEYS}", "v": version}


def open_store(url: str) -> object:
    from langchain_solar import SolarStore

    return SolarStore(url, capacity=4 * KEYS, embedder="hash", seed=0)


def main(argv: list[str] | None = None) -> int:
    url, start = (argv or sys.argv[1:])[:2]
    store = open_store(url)
    out = sys.stdout
    for version in range(int(start), STOP):
        store.put(NAMESPACE, f"k{version % KEYS}", value(version))  # type: ignore[attr-defined]
        out.write(f"ack {version}\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
