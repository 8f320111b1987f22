"""``solar-memory`` on stores holding what no terminal should receive raw (escape sequences, C1
controls, bidi overrides, line separators) and on rows changed outside the library: every
command prints such characters escaped, and refuses a damaged row with one line on standard
error that says how to recover -- never a traceback, never garbage with exit status 0."""

from __future__ import annotations

import io
import json
import math
import shlex
import shutil
import sqlite3
import traceback
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest

from solar_core.cli import main
from solar_core.persistence import MemoryStore
from solar_core.persistence.backend import OpRow, _item_checksum, _op_checksum
from solar_core.persistence.scope import namespace_scope

#: an OSC title, a CSI, the C1 CSI byte, a bidi override, both Unicode separators, NEL, DEL, SOH
BAD = "\x1b]0;owned\x07 \x1b[2J \x9b31m \u202e \u2028 \u2029 \x85 \x7f \x01"


def raw_controls(text: str) -> list[str]:
    """The characters of ``text`` a terminal acts on or reorders, but the layout's newlines."""
    return sorted(
        {
            char
            for char in text
            if char != "\n"
            and (unicodedata.category(char)[0] == "C" or unicodedata.category(char) in ("Zl", "Zp"))
        }
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str, answers: str = "") -> tuple[int, str, str]:
    """The command in this process: its status, standard output and standard error."""
    try:
        status = main(list(argv), answers=io.StringIO(answers))
    except SystemExit as usage:  # argparse's own errors
        status = int(usage.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def copy_while_open(source: str, target: str) -> None:
    """The database as a writer that has not closed left it: its log rows not yet snapshotted
    (a store snapshots, and drops its log, when it closes)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)


def write_escape_store(path: str) -> None:
    """Alice's texts and metadata, two namespaces whose labels, and a dialogue memory whose
    refused offers, hold every character of BAD."""
    live = path + ".live"
    store = MemoryStore(live, policy="fifo", capacity=3, embedder="hash", seed=0)
    alice = store.scope(user="alice")
    alice.add("likes tea" + BAD, metadata={"note" + BAD: "value" + BAD}, valid_until=4e9)
    alice.add("line one\nline two\ttab" + BAD)
    store.get(namespace_scope(["mem" + BAD, "alice" + BAD])).add("a namespace" + BAD)
    store.get(namespace_scope(["notes", "bob" + BAD])).add("a note" + BAD)
    # the text prior: its decisions on these turns are the refusals the tests read
    dialogue = MemoryStore(
        live,
        policy="solar-dialogue",
        capacity=2,
        embedder="hash",
        seed=0,
        prior="dialogue-text",
        feedback_weight=20,
        repeats=False,  # each offer judged: the texts come back on purpose
    )
    carol = dialogue.scope(user="carol")
    for i in range(6):
        carol.add(["likes green tea", "lives in Lyon", "ok thanks" + BAD][i % 3])
        # liked recalls of tea and Lyon, and a disliked one that found nothing: the likes are
        # better than the usual rating, so they protect tea and Lyon
        carol.feedback(like=True, retrieval=carol.retrieve("green tea Lyon", k=2))
        carol.feedback(like=False, retrieval=carol.retrieve("ok thanks", k=1, min_score=99))
    copy_while_open(live, path)
    dialogue.close()
    store.close()


def test_no_stored_or_given_control_character_reaches_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "escapes.db")
    write_escape_store(path)
    namespace = "mem" + BAD + ".alice" + BAD
    selections: list[list[str]] = [
        [],  # five scopes: the error lists them
        ["--user", "alice"],
        ["--user", "carol"],
        ["--namespace", namespace],
        ["--scope", "namespace=" + namespace],
        ["--namespace", "notes.carol" + BAD],  # not stored: names the namespaces like it
        ["--namespace", "mem" + BAD],
        ["--user", "x" + BAD],  # no identifier: the error quotes it
    ]
    commands: list[list[str]] = [
        ["items"],
        ["items", "--json"],
        ["items", "--width", "12"],
        ["items", "--width", "200"],
        ["trace", "--last", "0"],
        ["trace", "--json"],
        ["export"],
        ["export", "--format", "csv"],
        ["forget"],
    ]
    runs: list[tuple[list[str], str]] = []
    for command in commands:
        for selection in selections:
            runs.append(([command[0], path, *command[1:], *selection], "n\n"))
    png = str(tmp_path / ("plot" + BAD + ".png"))
    runs += [
        (["scopes", path], ""),
        (["scopes", path, "--json"], ""),
        (["scopes", path, "--user", BAD], ""),
        (["plot", path, "--user", "alice", "-o", png], ""),
        (["plot", path, "--namespace", namespace, "-o", path], ""),  # the database itself
        (["export", path, "-o", str(tmp_path / ("out" + BAD + ".csv"))], ""),
        (["erase", path, "--user", "alice"], "n\n"),
        (["erase", path, "--namespace", namespace], ""),
        (["erase", path, "--user", BAD], ""),
        (["items", str(tmp_path / ("missing" + BAD + ".db"))], ""),
        (["items", path, "--sort", BAD], ""),  # argparse quotes the choice
        (["items", path, "--bogus" + BAD], ""),  # argparse echoes it
    ]
    shown: dict[str, str] = {}
    for argv, answers in runs:
        status, out, err = run(capsys, *argv, answers=answers)
        assert raw_controls(out) == [] and raw_controls(err) == [], (argv, out, err)
        assert status in (0, 1, 2), (argv, status)
        shown[" ".join(argv[:1] + argv[2:])] = out + err
    # ... and what was escaped is still there to read, not dropped
    alice_items = shown["items --width 200 --user alice"]
    assert "likes tea\\x1b]0;owned\\x07 \\x1b[2J \\x9b31m \\u202e" in alice_items
    assert "\\x7f \\x01" in alice_items  # (a table folds the separators, as all whitespace)
    assert "\\u2028 \\u2029 \\u0085" in shown["items --json --user alice"]
    assert "namespace=mem\\x1b]0;owned\\x07" in shown["scopes"]
    refused = [
        line for line in shown["trace --last 0 --user carol"].splitlines() if "refused" in line
    ]
    assert any("ok thanks\\x1b]0;owned" in line for line in refused)
    assert Path(png).read_bytes()[:4] == b"\x89PNG"


def test_trace_shows_the_text_offered_in_a_refused_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As an admitted one shows its item's text: a refused one shows its offer's, escaped,
    while the log holds it; once a snapshot dropped the log, it says so."""
    path = str(tmp_path / "dialogue.db")
    write_escape_store(path)
    status, out, _ = run(capsys, "trace", path, "--user", "carol", "--last", "0")
    assert status == 0
    rows = out.splitlines()[3:-1]
    assert out.splitlines()[-1].startswith("ratings: 12, usual rating 0.50;")  # liked, disliked
    assert [row.split()[3] for row in rows] == ["stored"] * 2 + ["refused"] * 4
    assert rows[2].endswith("ok thanks\\x1b]0;owned\\x07 \\x1b[2J \\x9b3…")
    assert rows[3].endswith("likes green tea") and rows[4].endswith("lives in Lyon")
    status, out, _ = run(capsys, "trace", path, "--user", "carol", "--json")
    decisions = [json.loads(line) for line in out.splitlines()]
    assert [d["text"] for d in decisions if not d["admitted"]] == [
        "ok thanks" + BAD,
        "likes green tea",
        "lives in Lyon",
        "ok thanks" + BAD,
    ]
    with MemoryStore(path, embedder="hash") as store:  # closing snapshots: the log goes
        store.scope(user="carol")
    status, out, _ = run(capsys, "trace", path, "--user", "carol")
    assert status == 0
    assert out.splitlines()[-2].endswith("(offer no longer logged)")


def test_a_libpq_connection_string_is_postgresql_and_no_password_is_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from solar_core.cli.main import database

    assert database("host=db port=5433 dbname=agents user=app password=s3cret") == (
        "postgresql://?host=db&port=5433&dbname=agents&user=app&password=s3cret"
    )
    assert database("agent.db") == "agent.db"
    assert database("backup=1.db") == "backup=1.db"  # no libpq keyword: a file name
    for dsn in (
        "host=127.0.0.1 port=1 dbname=agents user=app password=s3cret",
        "host=127.0.0.1 port=1 dbname=agents user=app password='s3cr et'",
        "host = 127.0.0.1 port = 1 password = s3cr\\ et connect_timeout=2",
    ):
        status, out, err = run(capsys, "items", dsn)
        assert status == 1 and out == ""
        assert "cannot connect to PostgreSQL" in err, err  # not "no database file"
        assert "s3cr" not in err
        assert len(err.splitlines()) == 1
    for url in (
        "postgresql://app:s3cret@127.0.0.1:1/agents?connect_timeout=2",
        "postgresql://127.0.0.1:1/agents?password=s3cret&connect_timeout=2",
    ):
        status, _, err = run(capsys, "scopes", url)
        assert status == 1 and "s3cr" not in err and len(err.splitlines()) == 1


def test_a_checksum_mismatch_names_the_command_that_drops_the_scope_and_it_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "agent.db")
    store = MemoryStore(path + ".live", policy="fifo", capacity=3, embedder="hash", seed=0)
    store.scope(user="bob", session="s1").add("likes chess")
    store.scope(user="alice").add("likes tea")
    copy_while_open(path + ".live", path)
    store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE solar_ops SET args = replace(args, 'chess', 'poker')")
    status, out, err = run(capsys, "items", path, "--user", "bob", "--session", "s1")
    assert (status, out) == (1, "")
    assert len(err.splitlines()) == 1
    assert "checksum mismatch" in err and "scope 'user=bob&session=s1'" in err
    assert "restore the database from a backup" in err
    command = err.split("all its rows with: ")[1].strip()
    assert command == f"solar-memory forget {path} --scope 'user=bob&session=s1' --yes"
    status, out, _ = run(capsys, *shlex.split(command)[1:])
    assert (status, out) == (0, "deleted 1 scope(s): user=bob&session=s1\n")
    status, out, _ = run(capsys, "items", path)
    assert status == 0 and "likes tea" in out  # the other scope is untouched


def test_erase_given_a_namespace_or_a_scope_names_the_command_that_deletes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "lg.db")
    with MemoryStore(path, policy="fifo", capacity=3, embedder="hash", seed=0) as store:
        store.get(namespace_scope(["memories", "alice"])).add("likes tea")
    status, out, err = run(capsys, "erase", path, "--namespace", "memories.alice", "--yes")
    assert (status, out) == (2, "")
    assert "solar-memory forget DB --namespace LABELS" in err
    assert "solar-memory erase DB --project langgraph-store" in err
    status, _, err = run(capsys, "erase", path, "--scope", "user=alice", "--yes")
    assert status == 2 and "solar-memory forget DB --scope KEY" in err
    status, out, _ = run(capsys, "forget", path, "--namespace", "memories.alice", "--yes")
    assert (status, out) == (0, "deleted 1 scope(s): namespace=memories.alice\n")


# -- rows changed outside the library -----------------------------------------------------------

#: the step of Alice's log the reader replays (after her snapshot): her last offer
LAST_ADD = 13


def _item(conn: sqlite3.Connection, checksum: bool, **columns: object) -> None:
    """Change Alice's last item row; ``checksum``: give it the checksum of its new values."""
    sets = ", ".join(f"{name} = ?" for name in columns)
    where = "WHERE scope_id = 1 AND item_id = 'm5'"
    conn.execute(f"UPDATE solar_items SET {sets} {where}", tuple(columns.values()))
    if checksum:
        row = conn.execute(
            "SELECT item_id, text, metadata, vector, category, created_at, valid_until, step "
            f"FROM solar_items {where}"
        ).fetchone()
        try:
            value = _item_checksum(1, row)
        except (TypeError, ValueError):  # (a text time: no checksum can be computed)
            return
        conn.execute(f"UPDATE solar_items SET checksum = ? {where}", (value,))


def _op(conn: sqlite3.Connection, checksum: bool, **columns: object) -> None:
    """Change the last step of Alice's log; ``checksum``: give it the checksum of its new
    values."""
    seq = LAST_ADD
    sets = ", ".join(f"{name} = ?" for name in columns)
    conn.execute(
        f"UPDATE solar_ops SET {sets} WHERE scope_id = 1 AND seq = ?", (*columns.values(), seq)
    )
    seq = int(str(columns.get("seq", seq)))
    if checksum:
        row = conn.execute(
            "SELECT seq, kind, args, vector, clocks, digest FROM solar_ops "
            "WHERE scope_id = 1 AND seq = ?",
            (seq,),
        ).fetchone()
        vector = None if row[3] is None else bytes(row[3])
        op = OpRow(int(row[0]), row[1], row[2], vector, row[4], row[5])
        conn.execute(
            "UPDATE solar_ops SET checksum = ? WHERE scope_id = 1 AND seq = ?",
            (_op_checksum(1, op), seq),
        )


def _args(conn: sqlite3.Connection, **change: object) -> str:
    args = conn.execute(
        "SELECT args FROM solar_ops WHERE scope_id = 1 AND seq = ?", (LAST_ADD,)
    ).fetchone()[0]
    return json.dumps({**json.loads(args), **change})


def _clocks(conn: sqlite3.Connection, value: float) -> str:
    clocks = conn.execute(
        "SELECT clocks FROM solar_ops WHERE scope_id = 1 AND seq = ?", (LAST_ADD,)
    ).fetchone()[0]
    return json.dumps([value] * len(json.loads(clocks)))


def _config(conn: sqlite3.Connection, **change: object) -> None:
    config = json.loads(conn.execute("SELECT config FROM solar_scopes WHERE id = 1").fetchone()[0])
    conn.execute("UPDATE solar_scopes SET config = ? WHERE id = 1", (json.dumps(config | change),))


def _sql(statement: str, *params: object) -> Corruption:
    return lambda conn, _: conn.execute(statement, params)


Corruption = Callable[[sqlite3.Connection, bool], object]

#: a field of a row changed as no solar-memory writes it; ``True``: it has a checksum, and is
#: tried with a wrong one (refused as such) and with one made valid (reaching the deeper checks)
CORRUPTIONS: dict[str, tuple[Corruption, bool]] = {
    "item valid_until text": (lambda c, k: _item(c, k, valid_until="soon"), True),
    "item valid_until 1e300": (lambda c, k: _item(c, k, valid_until=1e300), True),
    "item created_at inf": (lambda c, k: _item(c, k, created_at=math.inf), True),
    "item metadata not JSON": (lambda c, k: _item(c, k, metadata="{oops" + BAD), True),
    "item metadata a list": (lambda c, k: _item(c, k, metadata="[1, 2]"), True),
    "item vector of the wrong length": (lambda c, k: _item(c, k, vector=b"\0\0\0"), True),
    "item step negative": (lambda c, k: _item(c, k, step=-5), True),
    "item checksum wrong": (_sql("UPDATE solar_items SET checksum = 'x' || checksum"), False),
    "log kind unknown": (lambda c, k: _op(c, k, kind="explode" + BAD), True),
    "log args not JSON": (lambda c, k: _op(c, k, args="{oops" + BAD), True),
    "log args a list": (lambda c, k: _op(c, k, args="[]"), True),
    "log text a number": (lambda c, k: _op(c, k, args=_args(c, t=5)), True),
    "log valid_until text": (lambda c, k: _op(c, k, args=_args(c, vu="soon" + BAD)), True),
    "log valid_until 1e300": (lambda c, k: _op(c, k, args=_args(c, vu=1e300)), True),
    "log valid_until NaN": (lambda c, k: _op(c, k, args=_args(c, vu=math.nan)), True),
    "log metadata a list": (lambda c, k: _op(c, k, args=_args(c, m=[1])), True),
    "log clocks not JSON": (lambda c, k: _op(c, k, clocks="oops" + BAD), True),
    "log clocks 1e300": (lambda c, k: _op(c, k, clocks=_clocks(c, 1e300)), True),
    "log clocks -1e300": (lambda c, k: _op(c, k, clocks=_clocks(c, -1e300)), True),
    "log clocks NaN": (lambda c, k: _op(c, k, clocks="[NaN, NaN, NaN]"), True),
    "log vector of the wrong length": (lambda c, k: _op(c, k, vector=b"\0\0\0"), True),
    "log seq negative": (lambda c, k: _op(c, k, seq=-1), True),
    "log digest wrong": (lambda c, k: _op(c, k, digest="1|m9|None|" + BAD), True),
    "log step missing": (_sql("DELETE FROM solar_ops WHERE scope_id = 1 AND seq = 12"), False),
    "config not JSON": (_sql("UPDATE solar_scopes SET config = ? WHERE id = 1", "{" + BAD), False),
    "config missing keys": (_sql("UPDATE solar_scopes SET config = '{}' WHERE id = 1"), False),
    "config policy unknown": (lambda c, _: _config(c, policy="nope" + BAD), False),
    "config capacity text": (lambda c, _: _config(c, capacity="3" + BAD), False),
    "config dim text": (lambda c, _: _config(c, dim="x" + BAD), False),
    "config params a list": (lambda c, _: _config(c, params=[1]), False),
    "scope seq negative": (_sql("UPDATE solar_scopes SET seq = -1 WHERE id = 1"), False),
    "scope seq text": (_sql("UPDATE solar_scopes SET seq = 'x' WHERE id = 1"), False),
    "scope created_at text": (_sql("UPDATE solar_scopes SET created_at = 'x' WHERE id = 1"), False),
    "scope created_at 1e300": (
        _sql("UPDATE solar_scopes SET created_at = 1e300 WHERE id = 1"),
        False,
    ),
    "scope snapshot_seq past seq": (
        _sql("UPDATE solar_scopes SET snapshot_seq = 999 WHERE id = 1"),
        False,
    ),
    "snapshot truncated": (
        _sql("UPDATE solar_snapshots SET state = substr(state, 1, 100) WHERE scope_id = 1"),
        False,
    ),
    "snapshot not one": (
        _sql("UPDATE solar_snapshots SET state = ? WHERE scope_id = 1", BAD.encode()),
        False,
    ),
    "snapshot seq negative": (
        _sql("UPDATE solar_snapshots SET seq = -5 WHERE scope_id = 1"),
        False,
    ),
    "snapshot missing": (_sql("DELETE FROM solar_snapshots WHERE scope_id = 1"), False),
}

VARIANTS = [
    pytest.param(name, checksum, id=f"{name}{' (valid checksum)' if checksum else ''}")
    for name, (_, has_checksum) in CORRUPTIONS.items()
    for checksum in ((False, True) if has_checksum else (False,))
]


@pytest.fixture(scope="module")
def intact(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Alice's scope (id 1): a snapshot at step 10 and steps 11 to 13 in its log (a retrieval,
    a rating, an offer); Bob's, untouched by every corruption."""
    folder = tmp_path_factory.mktemp("intact")
    live, path = str(folder / "live.db"), str(folder / "intact.db")
    store = MemoryStore(live, policy="solar", capacity=2, embedder="hash", seed=0, snapshot_every=5)
    alice = store.scope(user="alice")
    for text in ["likes tea" + BAD, "has a dog", "lives in Lyon", "works at a bakery"]:
        alice.add(text, metadata={"note" + BAD: BAD})
        alice.feedback(like=True, retrieval=alice.retrieve("tea", k=1))
    alice.add("last" + BAD, metadata={"note": BAD}, valid_until=4e9)
    store.scope(user="bob").add("plays chess")
    copy_while_open(live, path)
    store.close()
    with sqlite3.connect(path) as conn:  # what the cases rely on
        assert conn.execute("SELECT id, snapshot_seq, seq FROM solar_scopes").fetchall()[0] == (
            1,
            10,
            LAST_ADD,
        )
    return path


def _without_ages(text: str) -> list[object]:
    rows = [json.loads(line) for line in text.splitlines()]
    for row in rows:
        for many in row if isinstance(row, list) else [row]:
            many.pop("age_seconds", None)
    return rows


@pytest.mark.parametrize(("name", "checksum"), VARIANTS)
def test_every_command_refuses_a_corrupted_field_with_one_line_that_says_how_to_recover(
    intact: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    checksum: bool,
) -> None:
    path = str(tmp_path / "corrupted.db")
    shutil.copy(intact, path)
    corrupt, _ = CORRUPTIONS[name]
    with sqlite3.connect(path) as conn:
        corrupt(conn, checksum)
    png = str(tmp_path / "alice.png")
    # JSON outputs: with exit status 0 they must be what the intact store shows
    compared = [
        ["scopes", "--json"],
        ["items", "--user", "alice", "--json"],
        ["trace", "--user", "alice", "--json", "--last", "0"],
        ["export"],
    ]
    shown = [
        ["scopes"],
        ["items", "--user", "alice"],
        ["trace", "--user", "alice", "--last", "0"],
        ["export", "--format", "csv"],
        ["items", "--user", "bob"],
        *([["plot", "--user", "alice", "-o", png]] if checksum else []),
    ]
    for command in [*compared, *shown]:
        argv = [command[0], path, *command[1:]]
        try:
            status, out, err = run(capsys, *argv)
        except Exception:
            pytest.fail(f"{argv}: a traceback\n{traceback.format_exc()}")
        assert raw_controls(out) == [] and raw_controls(err) == [], (argv, out, err)
        if status == 0:
            assert err == "", (argv, err)
            if command in compared and (name, command[0]) != ("config policy unknown", "scopes"):
                # (but a listing shows a policy name no solar-memory knows -- a newer one's,
                # say -- as its row stores it, escaped: it builds no memory)
                _, expected, _ = run(capsys, command[0], intact, *command[1:])
                assert _without_ages(out) == _without_ages(expected), (argv, "garbage")
        else:
            assert status == 1, (argv, status, err)
            assert len(err.splitlines()) == 1 and err.startswith("solar-memory: error: "), err
            assert "Traceback" not in err
            if command[0] != "export":  # (an export goes on with the other scopes)
                assert out == "", (argv, out)
            # the way forward: a backup, or the command that drops the damaged scope
            assert "restore the database from a backup" in err, err
    # ... and that command does drop it, whatever its rows hold
    status, out, err = run(capsys, "forget", path, "--scope", "user=alice", "--yes")
    assert (status, out, err) == (0, "deleted 1 scope(s): user=alice\n", "")
    status, out, err = run(capsys, "items", path)
    assert status == 0 and "plays chess" in out, err
