"""A string passed for a scope is a session id, whatever it spells: ``store.get("user=alice")`` is
the session named ``user=alice``, never Alice's memory. An application that passes a client's
session id to the store hands that client its own session only; names of stored scopes (what
``names()`` lists) go through ``Scope.from_key``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solar_core import MemoryStore
from solar_core.persistence import Scope
from solar_core.persistence.scope import check_identifier
from tests.support.session_id_worker import (
    KEPT,
    OPERATIONS,
    call,
    open_store,
    secret,
    seed,
    spellings,
)


def _alice(tmp_path: Path) -> MemoryStore:
    store = open_store(str(tmp_path / "m.db"))
    store.scope(user="alice").add("alice's locker code is 1234", metadata={"owner": "alice"})
    return store


def _alice_kept(store: MemoryStore) -> bool:
    return [i.text for i in store.get(Scope(user="alice")).items()] == [
        "alice's locker code is 1234"
    ]


def test_a_string_spelling_a_stored_name_reads_its_own_session(tmp_path: Path) -> None:
    """(Before: ``get("user=alice")`` returned Alice's memory, to read and write.)"""
    store = _alice(tmp_path)
    memory = store.get("user=alice")
    assert memory.items() == [] and memory.retrieve("locker code") == []
    memory.add("written by a client whose session id is user=alice")
    assert _alice_kept(store)  # nothing written into Alice's memory
    assert sorted(store.names()) == ["session=user%3Dalice", "user=alice"]
    store.close()


def test_a_string_spelling_a_stored_name_forgets_only_its_session(tmp_path: Path) -> None:
    """(Before: ``forget("user=alice")`` deleted Alice's memory.)"""
    store = _alice(tmp_path)
    assert store.forget("user=alice") is False  # no such session: nothing deleted
    assert _alice_kept(store) and store.names() == ["user=alice"]
    store.close()


def test_in_existing_cache_and_reembed_read_a_string_as_a_session(tmp_path: Path) -> None:
    """(Before: each of these named Alice's scope.)"""
    store = _alice(tmp_path)
    assert "user=alice" not in store
    assert store.existing("user=alice") is None
    assert store.response_cache("user=alice") is not store.response_cache({"user": "alice"})
    with pytest.raises(ValueError, match="is not stored"):
        store.reembed("user=alice")
    assert _alice_kept(store) and store.names() == ["user=alice"]
    store.close()


def test_a_stored_scopes_name_goes_through_scope_from_key(tmp_path: Path) -> None:
    store = _alice(tmp_path)
    (name,) = store.names()
    scope = Scope.from_key(name)
    assert scope == Scope(user="alice") and store.scopes() == [scope]
    assert store.get(scope) is store.scope(user="alice") and _alice_kept(store)
    assert scope in store and store.existing(scope) is not None
    assert store.forget(scope) and store.names() == []
    store.close()


def test_an_int_and_its_digits_are_one_part_value(tmp_path: Path) -> None:
    """As the guide says: a part's value is a str or an int, compared as its text."""
    store = open_store(str(tmp_path / "m.db"))
    store.scope(user=7).add("seven")  # type: ignore[arg-type]
    assert [i.text for i in store.scope(user="7").items()] == ["seven"]
    assert store.get(7) is store.get("7")  # type: ignore[arg-type]  # a session id too
    with pytest.raises(TypeError, match="scope user must be a str, got float"):
        store.scope(user=7.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="scope user must be a str, got bool"):
        store.scope(user=True)  # type: ignore[arg-type]
    store.close()


#: session ids: the names of stored scopes, strings close to them, and any text at all
session_ids = st.one_of(
    st.sampled_from(spellings()),
    st.builds(
        "&".join,
        st.lists(st.builds("{}={}".format, st.sampled_from(["user", "org", "session"]), st.text())),
    ),
    st.text(min_size=1, max_size=40),
)


@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(calls=st.lists(st.tuples(st.sampled_from(OPERATIONS), session_ids), max_size=25))
def test_any_string_opens_only_its_own_sessions_scope(
    tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[str, str]]
) -> None:
    path = tmp_path_factory.mktemp("ids") / "m.db"
    store = open_store(str(path))
    seed(store)
    for step, (operation, text) in enumerate(calls):
        try:
            check_identifier("session", text)
        except ValueError:
            with pytest.raises(ValueError):
                store.get(text)
            continue
        assert store.get(text) is store.get(Scope(session=text))
        assert call(store, operation, text, step) == 0
    for scope in KEPT:  # no string deleted or wrote into a scope it does not name
        assert [i.text for i in store.get(scope).items()] == [secret(scope)]
    store.close()


@pytest.mark.slow
def test_two_processes_ten_thousand_calls_read_nothing_foreign(tmp_path: Path) -> None:
    from tests.support.persistence_worker import spawn

    path = str(tmp_path / "m.db")
    store = open_store(path)
    seed(store)
    store.close()
    module = "tests.support.session_id_worker"
    procs = [spawn(path, str(seed_), "5000", module=module) for seed_ in (1, 2)]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=1800)
        assert proc.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    assert sum(r["calls"] for r in reports) == 10_000
    assert sum(r["foreign"] for r in reports) == 0
    reopened = open_store(path)
    for scope in KEPT:  # (the named sessions' own ids may have forgotten them)
        assert [i.text for i in reopened.get(scope).items()] == [secret(scope)]
    reopened.close()
