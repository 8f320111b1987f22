"""ARC eviction (Megiddo & Modha, FAST 2003): cases I-IV, ghosts, the adaptive target ``p``.

A retrieval hit is case I; re-offering an evicted item's identical text is a ghost hit (II, III);
any other admitted item is a miss (IV). The lists are read from the policy object
(``t1``/``t2`` hold slots, ``b1``/``b2`` content keys) and mapped back to ids and texts.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np
import pytest

from solar_core import ArcEviction, SolarMemory

LETTERS = "abcdefghijklmnopqrstuvwxyz"
DIM = len(LETTERS)


def content_key(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


TEXT_OF_KEY = {content_key(ch): ch for ch in LETTERS}


def onehot(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


class Arc:
    """A memory with an ARC policy; texts are single letters, each on its own axis."""

    def __init__(self, capacity: int) -> None:
        self.policy = ArcEviction(capacity)
        # repeats=False: the reference ARC keys requests by content, a repeat is a request
        self.memory = SolarMemory(
            eviction=self.policy, capacity=capacity, dim=DIM, seed=0, repeats=False
        )
        self.offers: dict[str, int] = {}

    def add(self, text: str) -> str | None:
        """Offer ``text``; ids are the upper-cased text plus the offer number from the 2nd on."""
        n = self.offers[text] = self.offers.get(text, 0) + 1
        item_id = text.upper() + (str(n) if n > 1 else "")
        decision = self.memory.add(text, embedding=onehot(LETTERS.index(text)), item_id=item_id)
        assert decision.admitted and decision.item_id == item_id
        self.memory.check_invariants()
        return decision.evicted

    def hit(self, text: str) -> None:
        hits = self.memory.retrieve(embedding=onehot(LETTERS.index(text)), k=1)
        assert [h.text for h in hits] == [text]
        self.memory.check_invariants()

    def lists(self) -> tuple[list[str], list[str], list[str], list[str]]:
        """T1, T2 (ids) and B1, B2 (texts), each LRU first."""
        store = self.memory.core.store  # test-only introspection: slots -> ids
        return (
            [store.id_at(s) for s in self.policy.t1],
            [store.id_at(s) for s in self.policy.t2],
            [TEXT_OF_KEY[k] for k in self.policy.b1],
            [TEXT_OF_KEY[k] for k in self.policy.b2],
        )

    @property
    def p(self) -> float:
        return self.policy.p


def test_case_i_a_hit_moves_t1_to_t2_and_protects_the_item() -> None:
    arc = Arc(3)
    assert [arc.add(ch) for ch in "abc"] == [None, None, None]
    assert arc.lists() == (["A", "B", "C"], [], [], [])
    assert arc.memory.get("A").policy["list"] == 1.0
    arc.hit("a")
    assert arc.lists() == (["B", "C"], ["A"], [], [])
    assert arc.memory.get("A").policy["list"] == 2.0
    # Miss, |T1| = 2 > p = 0: REPLACE takes T1's LRU (B), not the oldest insert (A).
    assert arc.add("d") == "B"
    assert arc.lists() == (["C", "D"], ["A"], ["b"], [])
    assert arc.p == 0.0


def test_case_i_repeated_hits_keep_t2_in_recency_order() -> None:
    arc = Arc(3)
    for ch in "abc":
        arc.add(ch)
    arc.hit("a")
    arc.hit("b")
    arc.hit("a")  # already in T2: moves to its MRU end
    assert arc.lists() == (["C"], ["B", "A"], [], [])
    arc.hit("c")
    assert arc.lists() == ([], ["B", "A", "C"], [], [])
    assert arc.add("d") == "B"  # T1 empty: T2's LRU goes to B2
    assert arc.lists() == (["D"], ["A", "C"], [], ["b"])


def test_case_iv_a_with_empty_b1_drops_t1_lru_without_a_ghost() -> None:
    arc = Arc(3)
    evicted = [arc.add(ch) for ch in "abcd"]
    assert evicted == [None, None, None, "A"]
    # |L1| = |T1| = c: the LRU page of T1 is deleted outright, no ghost is kept.
    assert arc.lists() == (["B", "C", "D"], [], [], [])
    # So re-offering "a" is a plain miss: no change of p, lands in T1, and again no ghost.
    assert arc.add("a") == "B"
    assert arc.lists() == (["C", "D", "A2"], [], [], [])
    assert arc.p == 0.0
    assert arc.memory.get("A2").policy["list"] == 1.0


def test_case_iv_a_with_ghosts_in_b1_drops_b1_lru_then_replaces() -> None:
    arc = Arc(3)
    for ch in "abc":
        arc.add(ch)
    arc.hit("a")
    assert arc.add("d") == "B"
    assert arc.lists() == (["C", "D"], ["A"], ["b"], [])
    # |L1| = 2 + 1 = c, |T1| < c: B1's LRU ghost (b) is deleted, then REPLACE evicts T1's LRU.
    assert arc.add("e") == "C"
    assert arc.lists() == (["D", "E"], ["A"], ["c"], [])
    assert arc.p == 0.0


def test_case_ii_ghost_hit_in_b1_raises_p_and_lands_in_t2() -> None:
    arc = Arc(3)
    for ch in "abc":
        arc.add(ch)
    arc.hit("a")
    arc.add("d")  # evicts B -> B1 = [b]
    arc.add("e")  # drops ghost b, evicts C -> B1 = [c]
    assert arc.lists() == (["D", "E"], ["A"], ["c"], [])
    # Ghost hit on c: p <- min(c, p + max(|B2| / |B1|, 1)) = 1; REPLACE: |T1| = 2 > 1 -> D.
    assert arc.add("c") == "D"
    assert arc.p == 1.0
    assert arc.lists() == (["E"], ["A", "C2"], ["d"], [])
    assert arc.memory.get("C2").policy["list"] == 2.0


def test_case_iii_ghost_hit_in_b2_lowers_p_and_lands_in_t2() -> None:
    arc = Arc(3)
    for ch in "abc":
        arc.add(ch)
    arc.hit("a")
    arc.add("d")
    arc.add("e")
    arc.add("c")  # case II: p = 1
    assert arc.lists() == (["E"], ["A", "C2"], ["d"], [])
    # Miss, |T1| = 1 is not > p = 1: REPLACE takes T2's LRU (A) into B2.
    assert arc.add("f") == "A"
    assert arc.lists() == (["E", "F"], ["C2"], ["d"], ["a"])
    # Ghost hit on a: p <- max(0, p - max(|B1| / |B2|, 1)) = 0; REPLACE: |T1| = 2 > 0 -> E.
    assert arc.add("a") == "E"
    assert arc.p == 0.0
    assert arc.lists() == (["F"], ["C2", "A2"], ["d", "e"], [])


def test_case_ii_step_is_the_ghost_ratio_and_case_iv_b_trims_b2() -> None:
    arc = Arc(4)
    for ch in "abcd":
        arc.add(ch)
    for ch in "abc":
        arc.hit(ch)
    assert arc.add("e") == "D"
    arc.hit("e")
    assert arc.add("f") == "A"
    arc.hit("f")
    assert arc.add("g") == "B"
    assert arc.lists() == (["G"], ["C", "E", "F"], ["d"], ["a", "b"])
    # Ghost hit on d with |B2| / |B1| = 2: p jumps by 2; |T1| = 1 <= p, so T2's LRU leaves.
    assert arc.add("d") == "C"
    assert arc.p == 2.0
    assert arc.lists() == (["G"], ["E", "F", "D2"], [], ["a", "b", "c"])
    assert arc.add("h") == "E"
    assert arc.lists() == (["G", "H"], ["F", "D2"], [], ["a", "b", "c", "e"])
    # Directory full (|L1| + |L2| = 2c) on a miss with |L1| < c: B2's LRU ghost (a) goes first.
    assert arc.add("i") == "F"
    assert arc.lists() == (["G", "H", "I"], ["D2"], [], ["b", "c", "e", "f"])
    assert arc.add("j") == "G"  # |T1| = 3 > p = 2
    assert arc.lists() == (["H", "I", "J"], ["D2"], ["g"], ["c", "e", "f"])
    # Ghost hit on e (case III) with |B1| / |B2| = 1/3: p drops by 1.
    assert arc.add("e") == "H"
    assert arc.p == 1.0
    assert arc.lists() == (["I", "J"], ["D2", "E2"], ["g", "h"], ["c", "f"])


def test_explicit_remove_leaves_no_ghost() -> None:
    arc = Arc(3)
    for ch in "abc":
        arc.add(ch)
    arc.hit("b")
    arc.memory.remove("B")  # from T2
    arc.memory.remove("A")  # from T1
    arc.memory.check_invariants()
    assert arc.lists() == (["C"], [], [], [])
    assert arc.add("b") is None  # a miss, not a ghost hit: T1, p unchanged
    assert arc.add("a") is None
    assert arc.lists() == (["C", "B2", "A2"], [], [], [])
    assert arc.p == 0.0


def test_below_capacity_after_remove_a_ghost_hit_evicts_nothing() -> None:
    arc = Arc(3)
    for ch in "abc":
        arc.add(ch)
    arc.hit("a")
    assert arc.add("d") == "B"  # B1 = [b]
    arc.memory.remove("C")
    assert arc.add("b") is None  # ghost hit, but there is room: no REPLACE
    assert arc.p == 1.0
    assert arc.lists() == (["D"], ["A", "B2"], [], [])


def test_ghost_hit_on_b2_with_fractional_p_compares_t1_with_the_real_p() -> None:
    # REPLACE(x, p) takes T1's LRU iff |T1| > p or (x in B2 and |T1| = p). p is real-valued
    # (case II adds |B2| / |B1| = 1.5 here), so with p = 1.5 and |T1| = 1 neither holds and
    # T2's LRU must leave.
    arc = Arc(5)
    for ch in "abcde":
        arc.add(ch)
    arc.hit("a")
    arc.hit("b")
    assert [arc.add(ch) for ch in "fgc"] == ["C", "D", "E"]
    arc.hit("f")
    assert arc.add("h") == "A"
    arc.hit("h")
    assert arc.add("i") == "B"
    arc.hit("i")
    assert arc.add("j") == "C2"
    arc.hit("j")
    assert arc.lists() == (["G"], ["F", "H", "I", "J"], ["d", "e"], ["a", "b", "c"])
    assert arc.p == 1.0
    assert arc.add("d") == "F"  # case II: p = 1 + 3/2
    assert arc.p == 2.5
    assert arc.lists() == (["G"], ["H", "I", "J", "D2"], ["e"], ["a", "b", "c", "f"])
    evicted = arc.add("a")  # case III: p = 2.5 - max(1/4, 1) = 1.5
    assert arc.p == 1.5
    assert evicted == "H"  # |T1| = 1 is neither > 1.5 nor == 1.5
    assert arc.lists() == (["G"], ["I", "J", "D2", "A2"], ["e"], ["b", "c", "f", "h"])


def test_two_stored_copies_of_one_text_keep_b1_and_b2_disjoint() -> None:
    # Two items with the same text share a content key. Evicting one from T1 and the other
    # from T2 must not put the key in both ghost lists (check_invariants: "B1 and B2 must be
    # disjoint"), whatever the policy does about duplicates.
    arc = Arc(2)
    arc.memory.add("x", embedding=onehot(0), item_id="X1")
    arc.memory.add("x", embedding=onehot(1), item_id="X2")
    arc.memory.retrieve(embedding=onehot(0), k=1)  # X1 -> T2
    assert arc.memory.add("y", embedding=onehot(2), item_id="Y").evicted == "X2"  # x -> B1
    arc.memory.retrieve(embedding=onehot(2), k=1)  # Y -> T2
    assert arc.memory.add("z", embedding=onehot(3), item_id="Z").evicted == "X1"  # x -> B2?
    arc.memory.check_invariants()


@pytest.mark.parametrize("capacity", [0, -1, True, 2.5])
def test_arc_needs_a_finite_capacity(capacity: object) -> None:
    with pytest.raises(ValueError):
        ArcEviction(capacity)  # type: ignore[arg-type]


def test_composed_arc_takes_the_memory_capacity_and_rejects_a_mismatch() -> None:
    memory = SolarMemory(eviction=ArcEviction(), capacity=3, dim=DIM)
    assert memory.core.eviction.c == 3  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="finite capacity"):
        SolarMemory(eviction=ArcEviction(), capacity=None, dim=DIM)
    with pytest.raises(ValueError, match="bound to a memory of 3"):
        SolarMemory(eviction=ArcEviction(10), capacity=3, dim=DIM)


def test_arc_preset_rejects_unbounded_capacity() -> None:
    with pytest.raises(ValueError, match="finite capacity"):
        SolarMemory("arc", capacity=None, dim=4)


# -- the paper's pseudocode, driven by the same events ------------------------------------------


class ReferenceArc:
    """ARC as in Megiddo & Modha's Fig. 4, with a real-valued ``p``; REPLACE only when full."""

    def __init__(self, c: int) -> None:
        self.c = c
        self.p = 0.0
        self.t1: OrderedDict[str, str] = OrderedDict()  # id -> content key, LRU first
        self.t2: OrderedDict[str, str] = OrderedDict()
        self.b1: OrderedDict[str, None] = OrderedDict()
        self.b2: OrderedDict[str, None] = OrderedDict()

    def hit(self, item_id: str) -> None:
        key = self.t1.pop(item_id) if item_id in self.t1 else self.t2.pop(item_id)
        self.t2[item_id] = key

    def remove(self, item_id: str) -> None:
        self.t1.pop(item_id, None)
        self.t2.pop(item_id, None)

    def _replace(self, in_b2: bool) -> str:
        t1 = len(self.t1)
        if t1 and (t1 > self.p or (in_b2 and t1 == self.p)):
            item_id, key = self.t1.popitem(last=False)
            self.b1[key] = None
        else:
            item_id, key = self.t2.popitem(last=False)
            self.b2[key] = None
        return item_id

    def add(self, item_id: str, key: str) -> str | None:
        full = len(self.t1) + len(self.t2) >= self.c
        evicted = None
        if key in self.b1:
            self.p = min(float(self.c), self.p + max(len(self.b2) / len(self.b1), 1.0))
            del self.b1[key]
            if full:
                evicted = self._replace(False)
            self.t2[item_id] = key
            return evicted
        if key in self.b2:
            self.p = max(0.0, self.p - max(len(self.b1) / len(self.b2), 1.0))
            del self.b2[key]
            if full:
                evicted = self._replace(True)
            self.t2[item_id] = key
            return evicted
        l1 = len(self.t1) + len(self.b1)
        if l1 >= self.c:
            if len(self.t1) < self.c:
                self.b1.popitem(last=False)
                if full:
                    evicted = self._replace(False)
            else:
                evicted, _ = self.t1.popitem(last=False)
        else:
            if l1 + len(self.t2) + len(self.b2) >= 2 * self.c:
                self.b2.popitem(last=False)
            if full:
                evicted = self._replace(False)
        self.t1[item_id] = key
        return evicted


@pytest.mark.parametrize("capacity", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("seed", range(6))
def test_matches_the_paper_pseudocode_on_random_traces(capacity: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_texts = 3 * capacity  # few enough that evicted texts come back as ghost hits
    arc = Arc(capacity)
    ref = ReferenceArc(capacity)
    for step in range(250):
        stored = {item.text: item.id for item in arc.memory.items()}
        if stored and rng.random() < 0.6:
            texts = sorted(stored)
            k = int(rng.integers(1, min(3, len(texts)) + 1))
            picked = rng.choice(len(texts), size=k, replace=False)
            query = np.zeros(DIM, dtype=np.float32)
            for rank, j in enumerate(picked):
                query[LETTERS.index(texts[j])] = 1.0 - 0.1 * rank
            hits = arc.memory.retrieve(embedding=query, k=k)
            assert [h.text for h in hits] == [texts[j] for j in picked]
            for h in hits:
                ref.hit(h.id)
        if stored and rng.random() < 0.05:
            victim = stored[sorted(stored)[int(rng.integers(len(stored)))]]
            arc.memory.remove(victim)
            ref.remove(victim)
            stored = {item.text: item.id for item in arc.memory.items()}
        # One stored copy per text: offer a text that is not stored right now.
        free = [ch for ch in LETTERS[:n_texts] if ch not in stored]
        text = free[int(rng.integers(len(free)))]
        decision = arc.memory.add(text, embedding=onehot(LETTERS.index(text)))
        arc.memory.check_invariants()
        want = ref.add(str(decision.item_id), content_key(text))
        assert decision.evicted == want, f"step {step}: evicted {decision.evicted}, paper {want}"
        assert arc.p == ref.p, f"step {step}"
        assert arc.lists() == (
            list(ref.t1),
            list(ref.t2),
            [TEXT_OF_KEY[k] for k in ref.b1],
            [TEXT_OF_KEY[k] for k in ref.b2],
        ), f"step {step}"


def test_an_update_of_a_t2_item_keeps_l1_within_capacity() -> None:
    # Found by a fuzz of the public API: an update removes the old item (no ghost) and stores
    # the new text without an offer, so it skipped case IV's trim of B1 and |T1| + |B1| grew
    # past c. The memory then failed its invariants, and a store refused to reopen the scope.
    arc = Arc(3)
    for ch in "abc":
        arc.add(ch)
    arc.hit("b")
    arc.hit("c")
    assert arc.add("d") == "A"
    assert arc.add("e") == "D"
    assert arc.lists() == (["E"], ["B", "C"], ["a", "d"], [])
    update = arc.memory.add("f", embedding=onehot(LETTERS.index("f")), item_id="B", update=True)
    assert update.admitted and update.evicted is None
    arc.memory.check_invariants()
    # The update is a miss without REPLACE: its text goes to T1, B1's LRU ghost leaves.
    assert arc.lists() == (["E", "B"], ["C"], ["d"], [])
    assert arc.p == 0.0
    assert arc.memory.get("B").text == "f"


def test_updates_match_the_pseudocode_as_a_remove_then_a_miss() -> None:
    rng = np.random.default_rng(5)
    arc, ref = Arc(4), ReferenceArc(4)
    store = arc.memory.core.store  # test-only introspection: slots -> ids
    axis: dict[str, int] = {}  # id -> the one axis of its item's embedding
    for count in range(400):
        stored = [store.id_at(s) for s in [*arc.policy.t1, *arc.policy.t2]]
        used = {axis[i] for i in stored}
        move = rng.random()
        if move < 0.3 and stored:
            item_id = stored[int(rng.integers(len(stored)))]
            hits = arc.memory.retrieve(embedding=onehot(axis[item_id]), k=1)
            assert [h.id for h in hits] == [item_id]
            ref.hit(item_id)
        elif move < 0.55 and stored:
            item_id = stored[int(rng.integers(len(stored)))]
            text = f"update {count}"  # a text never offered: its key is never a ghost
            axis[item_id] = min(set(range(8, DIM)) - used)
            arc.memory.add(text, embedding=onehot(axis[item_id]), item_id=item_id, update=True)
            ref.remove(item_id)
            assert ref.add(item_id, content_key(text)) is None
        else:
            ch = str(rng.choice([c for c in LETTERS[:8] if LETTERS.index(c) not in used]))
            decision = arc.memory.add(ch, embedding=onehot(LETTERS.index(ch)))
            axis[str(decision.item_id)] = LETTERS.index(ch)
            assert decision.evicted == ref.add(str(decision.item_id), content_key(ch))
        arc.memory.check_invariants()
        assert [store.id_at(s) for s in arc.policy.t1] == list(ref.t1)
        assert [store.id_at(s) for s in arc.policy.t2] == list(ref.t2)
        assert (list(arc.policy.b1), list(arc.policy.b2)) == (list(ref.b1), list(ref.b2))
        assert arc.p == ref.p
