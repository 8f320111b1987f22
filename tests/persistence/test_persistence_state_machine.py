"""A Hypothesis state machine: a persistent memory against a plain one fed the same steps.

Between any two steps the persistent memory may be closed and reopened, abandoned (a crash:
reopened from the log without a final snapshot), or caught up by a second store on the same
file. After every rule the two memories must be identical -- items, posteriors, gate state,
counters, traces and the random generator -- and every decision they made must agree.

Until the scope's first write (an add, a removal, a renewal, a sweep, a clear) it is stored
nowhere: its memory records no retrieval and takes no rating (accepted, changing nothing). The
plain memory standing for it is run the same way: unrecorded retrievals, no ratings.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from solar_core import MemoryStore, SolarMemory
from solar_core.persistence import deferred_retrievals
from tests.support.persistence import same, scope_seed
from tests.support.profiles import examples

DIM = 8
TOPICS = np.random.default_rng(11).normal(size=(4, DIM))


def vector(topic: int, noise: int) -> np.ndarray:
    return (TOPICS[topic] + np.random.default_rng(noise).normal(scale=0.3, size=DIM)).astype(
        np.float32
    )


vectors = st.builds(vector, st.integers(0, 3), st.integers(0, 20))


class PersistentMemoryMachine(RuleBasedStateMachine):
    policy = "solar"

    def __init__(self) -> None:
        super().__init__()
        self._dir = TemporaryDirectory()
        self.url = str(Path(self._dir.name) / "m.db")
        self.now = 1000.0
        self.stores: list[MemoryStore] = []
        self.memory = self._open()
        self.ref = SolarMemory(
            self.policy,
            5,
            dim=DIM,
            seed=scope_seed(2, "user=u"),
            clock=lambda: self.now,
            trace_size=20,
        )
        self.n = 0
        self.written = False  # whether a write has stored the scope yet

    def _open(self) -> SolarMemory:
        store = MemoryStore(
            self.url,
            policy=self.policy,
            capacity=5,
            dim=DIM,
            seed=2,
            clock=lambda: self.now,
            snapshot_every=4,
            trace_size=20,
        )
        self.stores.append(store)
        self.asked = False  # whether this memory object made a recorded retrieval yet
        # whether its latest retrieval was made before the scope's first write (its rating
        # then rates nothing, whoever stored the scope since)
        self.unrecorded_latest = False
        return store.scope(user="u")

    def unwritten(self, memory: SolarMemory) -> bool:
        """Whether ``memory`` is the plain one and stands for a scope stored nowhere yet."""
        return memory is self.ref and not self.written

    def both(self, call: Any, write: bool = True) -> None:
        """``call`` on both memories, with the same outcome; ``write``: a made call is a write
        (it stores the scope)."""
        outcomes = []
        for memory in (self.memory, self.ref):
            try:
                outcomes.append(("ok", call(memory)))
            except (ValueError, TypeError, KeyError) as err:
                outcomes.append(("error", type(err).__name__))
        assert outcomes[0] == outcomes[1]
        if write and outcomes[0][0] == "ok":
            self.written = True

    @rule(
        v=vectors,
        k=st.integers(1, 4),
        rating=st.sampled_from([None, True, False, 0.3]),
        category=st.sampled_from(["context", "context", "knowledge", "identity"]),
        lifetime=st.sampled_from([None, None, 3600.0, 2 * 86_400.0]),
        deferred=st.booleans(),
    )
    def interaction(
        self,
        v: np.ndarray,
        k: int,
        rating: bool | float | None,
        category: str,
        lifetime: float | None,
        deferred: bool,
    ) -> None:
        """One agent step: retrieve (maybe logged with the add, as a chat turn's recall is),
        maybe rate it, offer the experience."""
        self.n += 1
        text = f"experience {self.n}"
        valid_until = None if lifetime is None else self.now + lifetime

        def step(m: SolarMemory) -> object:
            fresh = self.unwritten(m)  # the plain memory, before the scope's first write
            with deferred_retrievals() if deferred else nullcontext():
                hits = [h.id for h in m.retrieve(embedding=v, k=k, record=not fresh)]
            if fresh:
                pass  # the stored scope's memory takes the rating and changes nothing
            elif isinstance(rating, bool):
                m.feedback(like=rating)
            elif rating is not None:
                m.feedback(score=rating)
            d = m.add(
                text,
                embedding=v,
                category=category,
                metadata={"n": self.n},
                valid_until=valid_until,
            )
            return (hits, d.admitted, d.item_id, d.evicted, d.reason, d.deleted)

        unrecorded = not self.written
        self.both(step)
        self.asked = True
        self.unrecorded_latest = unrecorded

    @rule(v=vectors, k=st.integers(1, 4))
    def look(self, v: np.ndarray, k: int) -> None:
        self.both(lambda m: [h.id for h in m.retrieve(embedding=v, k=k, record=False)], False)

    @rule(like=st.booleans(), older=st.integers(1, 3))
    def rate_an_older_retrieval(self, like: bool, older: int) -> None:
        def rate(m: SolarMemory) -> None:
            if self.unwritten(m):
                # as the stored scope's memory: accepted, and nothing changes -- if there is
                # a retrieval to rate (unnamed, it rates the latest made through the object)
                if not self.asked:
                    raise ValueError("no retrieval made through this memory object")
                return
            recent = list(m.core._recent)
            if not recent and self.unrecorded_latest:
                return  # the latest made through the object, before the first write: nothing
            # the oldest there is when fewer: named, as a reopened store has made none itself
            m.feedback(
                like=like, retrieval=recent[-1 - min(older, len(recent) - 1)] if recent else None
            )

        self.both(rate, write=False)

    @rule(pick=st.integers(0, 4))
    def remove(self, pick: int) -> None:
        ids = [i.id for i in self.ref.items()]
        target = ids[pick % len(ids)] if ids else "nothing"
        self.both(lambda m: m.remove(target))

    @rule(pick=st.integers(0, 4), seconds=st.sampled_from([1.0, 3600.0, 3 * 86_400.0]))
    def renew(self, pick: int, seconds: float) -> None:
        """A TTL refreshed on use (e.g. SolarStore's reads): a renewal step."""
        ids = [i.id for i in self.ref.items()]
        lifetimes = {ids[pick % len(ids)]: seconds, "ghost": seconds} if ids else {"x": seconds}
        self.both(lambda m: m.lifecycle.renew(lifetimes))

    @rule(hours=st.integers(0, 30))
    def lapse(self, hours: int) -> None:
        self.now += hours * 3600.0
        self.both(lambda m: m.lifecycle.lapse())

    @rule(days=st.integers(0, 9))
    def lifecycle(self, days: int) -> None:
        self.now += days * 86_400.0
        self.both(lambda m: (m.lifecycle.decay(), m.lifecycle.expire()))

    @precondition(lambda self: self.n % 13 == 12)  # rare: it resets everything
    @rule()
    def clear(self) -> None:
        self.both(lambda m: m.clear())

    @rule()
    def reopen(self) -> None:
        self.stores[-1].close()
        self.memory = self._open()

    @rule()
    def crash(self) -> None:
        self.stores[-1].backend.close()  # no snapshot, no goodbye
        self.memory = self._open()

    @rule()
    def second_writer(self) -> None:
        """Another store on the same file takes over; the old one must catch up later."""
        self.memory = self._open()

    @invariant()
    def identical(self) -> None:
        same(self.memory, self.ref)
        self.memory.check_invariants()

    def teardown(self) -> None:
        for store in self.stores:
            try:
                store.close()
            except Exception:
                pass
        self._dir.cleanup()


class AdaptiveMachine(PersistentMemoryMachine):
    policy = "solar-adaptive"


RUN = settings(
    max_examples=examples(40),
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_persistent_solar_memory_matches_a_plain_one() -> None:
    run_state_machine_as_test(PersistentMemoryMachine, settings=RUN)


def test_persistent_adaptive_memory_matches_a_plain_one() -> None:
    run_state_machine_as_test(AdaptiveMachine, settings=RUN)
