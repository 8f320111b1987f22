"""Databases written by every earlier snapshot format (``tests/support/former_stores``) open
with today's code and go on exactly as the version that wrote them did."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support import former_stores as fs

FORMATS = sorted(p.stem for p in fs.FOLDER.glob("*.sqlite"))
#: the versions that ranked by vector alone, with no relevance floor (reading settings of a
#: store, not stored with a scope)
BY_VECTOR = {"format-2", "format-3", "format-4-first"}
#: policies whose rule for ratings changed after these databases were written (a rating now
#: counts by how it differs from the memory's usual rating): they open with the state written
#: and go on under today's rule, so they match the recording until their first rating
RATING_RULE_CHANGED = {"solar-dialogue"}


def same_outcomes(got: list[Any], want: list[Any]) -> bool:
    """The same hits in the same order and the same items; scores up to float32 rounding."""
    if len(got) != len(want) or got[-1] != want[-1]:
        return False
    for hits, expected in zip(got[:-1], want[:-1], strict=True):
        if [h[0] for h in hits] != [h[0] for h in expected]:
            return False
        if any(abs(h[1] - e[1]) > 1e-5 for h, e in zip(hits, expected, strict=True)):
            return False
    return True


def test_every_earlier_format_has_a_fixture() -> None:
    assert FORMATS == ["format-2", "format-3", "format-4", "format-4-first", "format-4-rows"]


@pytest.mark.parametrize("name", FORMATS)
def test_a_database_of_an_earlier_format_opens_and_goes_on_as_it_would_have(
    name: str, tmp_path: Path
) -> None:
    db = tmp_path / "former.sqlite"
    shutil.copyfile(fs.FOLDER / f"{name}.sqlite", db)
    expected = json.loads((fs.FOLDER / f"{name}.json").read_text())
    clock = fs.Clock()
    reading = {"retrieval": "vector", "min_score": None} if name in BY_VECTOR else {}
    kept: dict[str, list[str]] = {}  # what each run ended with
    for policy, want in expected.items():
        store = fs.store_for(db, policy, clock, **reading)
        try:
            start = fs.BEFORE + fs.TAIL
            got = fs.run(store.scope(user=policy), clock, start, fs.AFTER)
            kept[policy] = want_items(got)
            if policy in RATING_RULE_CHANGED:  # the outcomes until the first rating, inclusive
                rated = next(i for i in range(fs.AFTER) if (start + i) % 3 == 0) + 1
                got, want = got[:rated] + [None], want[:rated] + [None]
            assert same_outcomes(got, want), policy
            store.scope(user=policy).check_invariants()
        finally:
            store.close()
    for policy in expected:  # and once more, from the snapshot each close just wrote
        store = fs.store_for(db, policy, clock)
        try:
            assert sorted(i.id for i in store.scope(user=policy).items()) == kept[policy]
        finally:
            store.close()


def want_items(outcomes: list[Any]) -> list[str]:
    items: list[str] = outcomes[-1]
    return items
