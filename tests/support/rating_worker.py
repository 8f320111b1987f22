"""One "process" of the rating-isolation property (tests/persistence/
test_rating_isolation_property.py): a :class:`Client` holds one ``MemoryStore`` on a shared
database and one memory object per scope of :data:`SCOPES`, and runs commands on them.

The in-process test drives several clients directly (several stores on one file play the
processes); the multi-process test runs each client in its own interpreter,
``python -m tests.support.rating_worker URL POLICY CAPACITY``, one JSON command per stdin line
and one JSON reply per stdout line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from solar_core import SolarMemory
from solar_core.basics.types import Hits, RetrievalId
from solar_core.persistence import MemoryStore

#: the scopes of the programs: a user, the same user's session, another user, the same user
#: in an org (four distinct memories, three of them sharing user="alice")
SCOPES: list[dict[str, str]] = [
    {"user": "alice"},
    {"user": "alice", "session": "s1"},
    {"user": "bob"},
    {"org": "acme", "user": "alice"},
]
#: a tiny vocabulary: every query matches several items of every scope
WORDS = ["tea", "green", "door", "hinge", "plan", "team"]
TEXTS = [f"{a} {b}" for a in WORDS[:3] for b in WORDS[3:]]

#: what one scope looks like from one client: each item's policy statistics, the feedback count
View = dict[str, Any]


def open_store(url: str, policy: str, capacity: int) -> MemoryStore:
    return MemoryStore(
        url, policy=policy, capacity=capacity, embedder="hash", seed=0, min_score=None
    )


class Client:
    """A store on ``url`` with a held memory object per scope, and the retrievals it made."""

    def __init__(self, url: str, policy: str, capacity: int) -> None:
        self.store = open_store(url, policy, capacity)
        # held: the store hands the same objects out again (each remembers its own latest)
        self.handles: list[SolarMemory] = [self.store.scope(**parts) for parts in SCOPES]
        self.made: list[Hits] = []  # the recorded retrievals this client made, by token

    def memory(self, scope: int) -> SolarMemory:
        memory = self.store.scope(**SCOPES[scope])
        assert memory is self.handles[scope], "the store handed out another memory object"
        return memory

    def add(self, scope: int, text: str) -> None:
        self.memory(scope).add(text)

    def retrieve(
        self, scope: int, query: str, k: int, record: bool
    ) -> tuple[int | None, list[str]]:
        hits = self.memory(scope).retrieve(query, k=k, record=record)
        if not record:
            assert hits.retrieval_id is None
            return None, [h.id for h in hits]
        self.made.append(hits)
        return len(self.made) - 1, [h.id for h in hits]

    def handle(self, token: int) -> tuple[int, str | None]:
        """The id and origin of a retrieval made here."""
        hits = self.made[token]
        assert hits.retrieval_id is not None
        return hits.retrieval_id, hits.origin

    def rate(
        self, scope: int, like: bool | None, score: float | None, target: object
    ) -> str | None:
        """Rate through ``scope``'s memory object (``target=None``: unnamed); the error's
        message, or ``None`` if the rating was made."""
        try:
            if target is None:
                self.memory(scope).feedback(like=like, score=score)
            else:
                self.memory(scope).feedback(like=like, score=score, retrieval=target)  # type: ignore[arg-type]
        except ValueError as err:
            return str(err)
        return None

    def clear(self, scope: int) -> None:
        self.memory(scope).clear()

    def sync(self) -> None:
        for scope in range(len(SCOPES)):
            len(self.memory(scope))  # a read catches up

    def view(self) -> list[View]:
        return [
            {
                "items": {item.id: dict(item.policy) for item in self.memory(s).items()},
                "feedbacks": self.memory(s).stats()["feedbacks"],
            }
            for s in range(len(SCOPES))
        ]

    def close(self) -> None:
        self.store.close()

    # -- the wire protocol (one JSON object per line) -----------------------------------------
    def run(self, command: dict[str, Any]) -> Any:
        op = command["op"]
        if op == "add":
            self.add(command["scope"], command["text"])
            return None
        if op == "retrieve":
            return self.retrieve(
                command["scope"], command["query"], command["k"], command["record"]
            )
        if op == "handle":
            return self.handle(command["token"])
        if op == "rate":
            target = command["target"]
            named: object = None
            if target is not None:
                kind, value = target
                if kind == "hits":
                    named = self.made[value]
                elif kind == "handle":
                    named = RetrievalId(value[0], value[1])
                else:
                    named = int(value)
            return self.rate(command["scope"], command["like"], command["score"], named)
        if op == "clear":
            self.clear(command["scope"])
            return None
        if op == "sync":
            self.sync()
            return None
        if op == "view":
            return self.view()
        raise ValueError(f"unknown command {op!r}")


def spawn(url: str, policy: str, capacity: int) -> subprocess.Popen[str]:
    """A client in its own interpreter (as ``persistence_worker.spawn``, with a stdin pipe)."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.Popen(
        [sys.executable, "-m", "tests.support.rating_worker", url, policy, str(capacity)],
        cwd=root,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root), "HF_HUB_OFFLINE": "1"},
    )


def main(argv: list[str] | None = None) -> int:
    url, policy, capacity = argv if argv is not None else sys.argv[1:]
    client = Client(url, policy, int(capacity))
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command = json.loads(line)
        if command["op"] == "close":
            client.close()
            print(json.dumps({"ok": None}), flush=True)
            return 0
        try:
            reply = {"ok": client.run(command)}
        except Exception as err:  # reported to the parent, which fails the test with it
            reply = {"raised": f"{type(err).__name__}: {err}"}
        print(json.dumps(reply), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
