"""``solar-memory``, the command that looks inside a store: on SQLite files and PostgreSQL
schemas written by another process, its outputs, and that reading never changes a database."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from solar_core.cli import main
from solar_core.persistence import MemoryStore, PersistenceError
from solar_core.persistence.reader import MemoryReader

#: what another process writes: Alice's scope (capacity 3: evictions, rated retrievals) and
#: one session of Bob's; texts with a comma, a newline, a quote and an escape sequence
WRITER = """
import sys
from solar_core.persistence import MemoryStore
with MemoryStore(sys.argv[1], policy="solar", capacity=3, embedder="hash", seed=7) as store:
    alice = store.scope(user="alice")
    for text in ["likes green tea", "lives in Lyon, France", "has a dog\\nnamed Rex",
                 'said "hi"', "\\x1b[31mred\\x1b[0m", "works at a bakery"]:
        alice.add(text)
        alice.feedback(like=True, retrieval=alice.retrieve("green tea", k=1))
    store.scope(user="bob", session="s1").add("bob plays chess")
"""


def write_in_another_process(url: str) -> None:
    subprocess.run([sys.executable, "-c", WRITER, url], check=True, timeout=120)


def run(*argv: str, answers: str = "") -> tuple[int, str]:
    out = io.StringIO()
    status = main(list(argv), out=out, answers=io.StringIO(answers))
    return status, out.getvalue()


def fingerprint_of(url: str) -> str:
    """A SQLite file's bytes, or every row of every table of a PostgreSQL schema."""
    if not url.startswith("postgresql://"):
        return hashlib.sha256(Path(url).read_bytes()).hexdigest()
    import psycopg

    digest = hashlib.sha256()
    with psycopg.connect(url) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = current_schema() ORDER BY table_name"
            )
        ]
        for table in tables:  # names from the catalogue
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2"):
                digest.update(repr(row).encode())
    return digest.hexdigest()


@pytest.fixture
def written(db_url: str) -> str:
    write_in_another_process(db_url)
    return db_url


def expected(url: str, **parts: str) -> Any:
    """The scope as a MemoryStore (the writer's own view) shows it, closed again at once."""
    with MemoryStore(url, embedder="hash") as store:
        memory = store.scope(**parts)
        return memory.items(), memory.trace()


def test_every_read_command_shows_the_stored_memory_and_leaves_the_database_as_it_was(
    written: str, tmp_path: Path
) -> None:
    before = fingerprint_of(written)
    status, out = run("scopes", written, "--json")
    assert status == 0
    listed = {s["key"]: s for s in json.loads(out)}
    assert set(listed) == {"user=alice", "user=bob&session=s1"}
    assert listed["user=alice"]["policy"] == "solar"
    assert (listed["user=alice"]["items"], listed["user=alice"]["capacity"]) == (3, 3)
    assert listed["user=alice"]["logged_steps"] == 18  # 6 adds, 6 retrievals, 6 ratings

    status, out = run("items", written, "--user", "alice", "--json")
    assert status == 0
    shown = [json.loads(line) for line in out.splitlines()]
    status, trace_out = run("trace", written, "--user", "alice", "--last", "0", "--json")
    assert status == 0
    decisions = [json.loads(line) for line in trace_out.splitlines()]
    status, jsonl = run("export", written, "--format", "jsonl")
    assert status == 0
    csv_path = tmp_path / "memories.csv"
    assert run("export", written, "--format", "csv", "-o", str(csv_path))[0] == 0
    png = tmp_path / "alice.png"
    assert run("plot", written, "--user", "alice", "-o", str(png)) == (0, f"wrote {png}\n")
    assert run("items", written, "--user", "alice", "--sort", "posterior")[0] == 0
    assert fingerprint_of(written) == before  # nothing read wrote anything

    items, trace = expected(written, user="alice")
    assert [(r["id"], r["text"], r["policy"]) for r in shown] == [
        (i.id, i.text, dict(i.policy)) for i in items
    ]
    assert all({"alpha", "beta", "mean"} <= set(r["policy"]) for r in shown)
    assert [(d["step"], d["admitted"], d["evicted"], d["reason"]) for d in decisions] == [
        (d.step, d.admitted, d.evicted, d.reason) for d in trace
    ]
    assert any(d["evicted"] for d in decisions)
    exported = [json.loads(line) for line in jsonl.splitlines()]
    assert {(r["scope"], r["text"]) for r in exported} == {
        *(("user=alice", i.text) for i in items),
        ("user=bob&session=s1", "bob plays chess"),
    }
    with csv_path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(r["text"] for r in rows) == sorted(r["text"] for r in exported)
    assert "\x1b[31mred\x1b[0m" in {r["text"] for r in rows}  # a file gets the stored text

    import matplotlib.image

    pixels = matplotlib.image.imread(str(png))  # a real PNG: it decodes
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pixels.shape[0] > 300 and pixels.shape[1] > 300


def test_the_items_table_sorts_and_never_sends_a_stored_escape_sequence_to_the_terminal(
    written: str,
) -> None:
    status, out = run("items", written, "--user", "alice", "--sort", "posterior")
    assert status == 0 and "\x1b" not in out
    lines = out.splitlines()
    assert lines[1].split()[:9] == [
        "id",
        "category",
        "importance",
        "alpha",
        "beta",
        "mean",
        "retrieved",
        "age",
        "text",
    ]
    means = [float(line.split()[5]) for line in lines[3:]]
    assert means == sorted(means, reverse=True) and len(means) == 3
    assert "\\x1b[31mred\\x1b[0m" in out  # the stored escape sequence, shown escaped
    status, trace = run("trace", written, "--user", "alice", "--last", "2")
    assert status == 0 and "\x1b" not in trace
    lines = trace.splitlines()  # a title, a header, a rule, then the last two decisions
    assert len(lines) == 5 and [line.split()[0] for line in lines[3:]] == ["5", "6"]


def test_reading_creates_nothing_and_names_the_fix(tmp_path: Path, db_url: str) -> None:
    missing = tmp_path / "nowhere.db"
    status, _ = run("scopes", str(missing))
    assert status == 1 and not missing.exists()
    if db_url.startswith("postgresql://"):  # an empty schema: no store there, none made
        before = fingerprint_of(db_url)
        assert run("scopes", db_url)[0] == 1
        assert fingerprint_of(db_url) == before
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a database")
    assert run("items", str(foreign), "--user", "alice")[0] == 1
    assert foreign.read_text() == "not a database"


def test_unknown_scopes_and_bad_options_are_errors_that_change_nothing(
    written: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = fingerprint_of(written)
    assert run("items", written, "--user", "carol")[0] == 1
    assert "no scope 'user=carol' is stored" in capsys.readouterr().err
    assert run("items", written)[0] == 2  # two scopes: which one?
    assert "user=alice, user=bob&session=s1" in capsys.readouterr().err
    assert run("items", written, "--user", "bob")[0] == 1
    assert "user=bob&session=s1" in capsys.readouterr().err  # the stored scope it meant
    assert run("trace", written, "--user", "alice", "--last", "-1")[0] == 2
    assert run("items", written, "--scope", "user=alice", "--user", "alice")[0] == 2
    assert run("items", written, "--user", "alice", "--width", "0")[0] == 2
    assert run("items", written, "--user", "alice", "--limit", "-2")[0] == 2
    assert run("scopes", "mysql://db/agents")[0] == 1
    assert "use a file path or postgresql://" in capsys.readouterr().err
    assert fingerprint_of(written) == before


def test_forget_and_erase_ask_first_and_delete_only_what_they_listed(
    written: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = fingerprint_of(written)
    assert run("forget", written, "--user", "alice", answers="n\n")[0] == 1
    assert run("erase", written, "--user", "bob", answers="")[0] == 1  # no answer: no
    assert "nothing was deleted" in capsys.readouterr().err
    assert fingerprint_of(written) == before
    assert run("erase", written)[0] == 2  # erase needs a part
    assert run("forget", written, "--user", "bob", answers="y\n")[0] == 1  # not a stored scope
    status, out = run("erase", written, "--user", "bob", answers="y\n")
    assert (status, out) == (0, "deleted 1 scope(s): user=bob&session=s1\n")
    assert run("forget", written, "--scope", "user=alice", "--yes")[0] == 0
    assert json.loads(run("scopes", written, "--json")[1]) == []


def test_a_reader_follows_a_store_another_process_keeps_writing(written: str) -> None:
    with MemoryReader(written) as reader:
        memory = reader.memory({"user": "bob", "session": "s1"})
        assert [i.text for i in memory.items()] == ["bob plays chess"]
        with MemoryStore(written, embedder="hash") as store:
            store.scope(user="bob", session="s1").add("bob moved to Oslo")
        assert [i.text for i in memory.items()] == ["bob plays chess", "bob moved to Oslo"]
        with pytest.raises(PersistenceError):  # the database refuses the reader's writes
            memory.add("written by a reader")
    items, _ = expected(written, user="bob", session="s1")
    assert [i.text for i in items] == ["bob plays chess", "bob moved to Oslo"]


@pytest.mark.minilm
def test_a_live_scope_of_a_minilm_dialogue_memory_replays_from_its_log(
    tmp_path: Path, minilm: object
) -> None:
    """The writer is still open (its steps are only in the log): the reader replays them with
    the salience prior the writer used (chosen by the embedder the scope recorded), without
    loading the model itself."""
    path = str(tmp_path / "chat.db")
    store = MemoryStore(path, policy="solar-dialogue", capacity=3, embedder=minilm, seed=0)
    try:
        memory = store.scope(user="alice")
        for turn in ["Hi!", "I adopted a cat named Miso.", "ok", "We moved to Porto in May."]:
            memory.add(turn)
        with MemoryReader(path) as reader:
            replayed = reader.memory({"user": "alice"})
            assert [(i.id, i.text, dict(i.policy)) for i in replayed.items()] == [
                (i.id, i.text, dict(i.policy)) for i in memory.items()
            ]
            assert replayed.embedder is not None
            assert getattr(replayed.embedder, "_model", "loaded") is None  # never loaded
    finally:
        store.close()


def test_the_installed_command_runs(written: str) -> None:
    """The console script and ``python -m solar_core.cli`` are the same command."""
    script = Path(sys.executable).with_name("solar-memory")
    commands = [[sys.executable, "-m", "solar_core.cli"]]
    if script.exists():  # installed with the package (always, after `make test`)
        commands.append([str(script)])
    for command in commands:
        done = subprocess.run(
            [*command, "scopes", written], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[2].startswith("user=alice ")
        usage = subprocess.run([*command, "--help"], capture_output=True, text=True)
        assert "solar-memory items agent.db --user alice" in usage.stdout


def test_no_stored_character_that_moves_the_cursor_or_the_text_reaches_a_terminal(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "evil.db")
    evil = "csi\x9b2J rtl\u202eevil sep\u2028line esc\x1b[2J"
    with MemoryStore(path, policy="fifo", capacity=3, embedder="hash", seed=0) as store:
        store.scope(user="mallory").add(evil, item_id="id\u2028x")
    for argv in (["items", path], ["trace", path], ["export", path]):
        for export_format in (["--format", "csv"], ["--format", "jsonl"]):
            terminal = io.StringIO()  # standard output: a pipe may lead to a terminal
            extra = export_format if argv[0] == "export" else []
            assert main([*argv, *extra], out=terminal) == 0
            shown = terminal.getvalue()
            assert not set(shown) & {"\x9b", "\u202e", "\u2028", "\x1b"}, (argv, shown)
    exported = tmp_path / "all.jsonl"
    assert main(["export", path, "-o", str(exported)]) == 0  # a file gets the text as stored
    assert json.loads(exported.read_text(encoding="utf-8"))["text"] == evil


def test_an_output_file_is_never_the_database_being_read(tmp_path: Path) -> None:
    written = str(tmp_path / "agent.db")  # (a PostgreSQL store is no file to overwrite)
    write_in_another_process(written)
    before = fingerprint_of(written)
    assert run("export", written, "-o", written)[0] == 2
    assert run("export", written, "-o", written + "-wal")[0] == 2
    link = str(tmp_path / "hard-link.db")
    os.link(written, link)
    assert run("export", written, "-o", link)[0] == 2
    assert run("plot", written, "--user", "alice", "-o", written)[0] == 2
    assert fingerprint_of(written) == before


def test_a_scope_that_cannot_be_replayed_is_named_and_the_others_are_still_exported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "mixed.db")
    with MemoryStore(path, policy="solar", capacity=3, embedder="hash", seed=1) as store:
        store.scope(user="plain").add("plain text")

    def judge(query: str | None, text: str, metadata: object) -> bool:
        return True

    settings = {"policy": "solar", "capacity": 3, "embedder": "hash", "seed": 1}
    with MemoryStore(path, evaluator=judge, **settings) as store:  # type: ignore[arg-type]
        store.scope(user="judged").add("judged text")
    assert run("items", path, "--user", "judged")[0] == 1
    assert "evaluator" in capsys.readouterr().err
    status, out = run("export", path)
    assert status == 1
    assert [json.loads(line)["text"] for line in out.splitlines()] == ["plain text"]
    assert "not exported: user=judged" in capsys.readouterr().err


def test_a_scope_with_combined_deletion_policies_is_read_as_any_other(tmp_path: Path) -> None:
    """Its settings record every policy it combines, so a reader rebuilds it to replay."""
    from solar_core.policies.deletion import CombinedDeletion, HistoryDeletion, PeriodicDeletion

    path = str(tmp_path / "swept.db")

    def combined() -> CombinedDeletion:
        return CombinedDeletion(HistoryDeletion(n=1), PeriodicDeletion(window=2))

    settings = {"policy": "solar", "capacity": 3, "embedder": "hash", "seed": 1}
    with MemoryStore(path, deletion=combined, **settings) as store:  # type: ignore[arg-type]
        store.scope(user="swept").add("swept text")
    status, out = run("items", path, "--user", "swept")
    assert status == 0 and "swept text" in out


def test_the_plotted_size_never_drops_below_zero_for_items_removed_by_hand() -> None:
    from solar_core import SolarMemory
    from solar_core.cli.timeline import timeline

    memory = SolarMemory("solar", 4, embedder="hash", seed=1)
    memory.add("a")
    memory.add("b")
    memory.remove("m1")
    series = timeline(memory)
    assert series["size"] == [1.0, 2.0]  # the decisions: removals are none
    assert series["held_now"] == [1.0]


def test_one_command_shows_one_moment_while_a_writer_keeps_going(written: str) -> None:
    """Every view of a point-in-time memory agrees (the command's), a live one follows."""
    with MemoryReader(written) as reader:
        moment = reader.memory({"user": "bob", "session": "s1"}, live=False)
        live = reader.memory({"user": "bob", "session": "s1"})
        with MemoryStore(written, embedder="hash") as store:
            store.scope(user="bob", session="s1").add("bob moved to Oslo")
        assert [i.text for i in moment.items()] == ["bob plays chess"]
        assert len(moment.trace()) == 1 and len(moment) == 1
        assert [i.text for i in live.items()] == ["bob plays chess", "bob moved to Oslo"]


def test_a_folder_this_user_cannot_write_is_read_only_when_that_is_safe(tmp_path: Path) -> None:
    """Reading a WAL database while others may write it needs its -shm file, which a reader
    that may not write the folder cannot create: with the file there (a writer has the store
    open) the store is read; without it the command says why and what to do, and changes
    nothing (opening it as immutable would read torn pages if its owner is writing it)."""
    import os
    import shutil
    import stat

    folder = tmp_path / "shared"
    folder.mkdir()
    path = folder / "agent.db"
    with MemoryStore(str(path), policy="fifo", capacity=3, embedder="hash", seed=0) as store:
        store.scope(user="alice").add("likes tea")
    before = fingerprint_of(str(path))
    command = [sys.executable, "-m", "solar_core.cli", "scopes", str(path)]
    if os.geteuid() == 0:  # root writes anywhere: drop the capabilities that let it
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv: cannot make a folder read-only")
        caps = "-dac_override,-dac_read_search,-fowner"
        command = [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}", *command]
    read_only = stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH
    read_only |= stat.S_IXOTH

    def run_restricted() -> subprocess.CompletedProcess[str]:
        folder.chmod(read_only)
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=120)
        finally:
            folder.chmod(stat.S_IRWXU)

    refused = run_restricted()
    assert refused.returncode == 1
    assert "must create" in refused.stderr and "copy the database file" in refused.stderr
    assert fingerprint_of(str(path)) == before
    assert sorted(p.name for p in folder.iterdir()) == ["agent.db"]
    writer = MemoryStore(str(path), embedder="hash")  # open: its -wal and -shm are there
    try:
        writer.scope(user="bob").add("likes chess")
        done = run_restricted()
    finally:
        writer.close()
    assert done.returncode == 0, done.stderr
    assert [line.split()[0] for line in done.stdout.splitlines()[2:]] == ["user=alice", "user=bob"]


def test_a_langgraph_store_namespace_is_named_and_read_by_its_labels(tmp_path: Path) -> None:
    pytest.importorskip("langgraph.store.base")
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langchain_solar import SolarStore

    path = str(tmp_path / "lg.db")
    index = {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}
    store = SolarStore(path, index=index, capacity=2, policy="fifo", seed=0)  # type: ignore[arg-type]
    for key in ("diet", "city", "pet"):
        store.put(("memories", "alice"), key, {"text": f"alice's {key}"}, ttl=30)
    store.put(("memories", "bob"), "diet", {"text": "bob eats fish"})
    store.close()
    status, out = run("scopes", path)
    assert status == 0
    assert [line.split()[0] for line in out.splitlines()[2:]] == [
        "namespace=memories.alice",
        "namespace=memories.bob",
    ]
    status, out = run("items", path, "--namespace", "memories.alice", "--json")
    assert status == 0
    shown = [json.loads(line) for line in out.splitlines()]
    assert [r["id"] for r in shown] == ["city", "pet"]  # fifo, capacity 2: diet evicted
    assert all(r["valid_until"] is not None for r in shown)
    status, table_out = run("items", path, "--scope", "namespace=memories.alice")
    assert status == 0 and "expires in" in table_out.splitlines()[1]
    status, out = run("trace", path, "--namespace", "memories.alice", "--json")
    assert [json.loads(line)["evicted"] for line in out.splitlines()] == [None, None, "diet"]
    assert run("items", path, "--namespace", "memories.carol")[0] == 1
    assert run("items", path, "--namespace", "memories.alice", "--user", "x")[0] == 2


def test_a_database_password_is_never_printed(capsys: pytest.CaptureFixture[str]) -> None:
    for url in (
        "postgresql://app:s3cr%zzet@127.0.0.1:1/agents",  # the driver quotes the bad token
        "postgresql://app:s3cret@127.0.0.1:1/agents",
        "postgresql://127.0.0.1:1/agents?password=s3cret",
    ):
        assert run("scopes", url)[0] == 1
        assert "s3cr" not in capsys.readouterr().err


def test_a_clock_a_replay_would_refuse_is_refused_when_the_step_is_taken(tmp_path: Path) -> None:
    import math

    path = str(tmp_path / "clock.db")
    with MemoryStore(path, policy="fifo", capacity=3, embedder="hash", seed=0) as store:
        store.scope(user="alice").add("likes tea")
    for bad in (math.inf, math.nan, True):
        store = MemoryStore(path, embedder="hash", clock=lambda bad=bad: bad)
        with pytest.raises(PersistenceError, match="finite seconds"):
            store.scope(user="alice").add("likes coffee")
        store.close()
    with MemoryReader(path) as reader:
        assert [i.text for i in reader.memory({"user": "alice"}).items()] == ["likes tea"]


def test_a_missing_namespace_is_named_with_the_namespaces_like_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("langgraph.store.base")
    from langchain_core.embeddings import DeterministicFakeEmbedding

    from langchain_solar import SolarStore

    path = str(tmp_path / "lg.db")
    index = {"dims": 16, "embed": DeterministicFakeEmbedding(size=16)}
    store = SolarStore(path, index=index, capacity=2)  # type: ignore[arg-type]
    store.put(("memories", "alice"), "diet", {"text": "pizza"})
    store.put(("notes", "bob"), "diet", {"text": "fish"})
    store.close()
    assert run("items", path, "--namespace", "memories.carol")[0] == 1
    error = capsys.readouterr().err
    assert "no scope 'namespace=memories.carol'" in error
    assert "like it: namespace=memories.alice" in error and "notes.bob" not in error
    assert run("forget", path, "--namespace", "notes.carol", "--yes")[0] == 1
    assert "no scope 'namespace=notes.carol'" in capsys.readouterr().err
    status, out = run("forget", path, "--namespace", "notes.bob", "--yes")
    assert (status, out) == (0, "deleted 1 scope(s): namespace=notes.bob\n")


def test_trace_names_each_gates_scores(tmp_path: Path) -> None:
    """solar-adaptive's gain and bar, solar-dialogue's salience and lowest value, the regret
    gate's regret and tau (before: every policy's scores were headed "regret" and "tau")."""
    path = str(tmp_path / "m.db")
    with MemoryStore(path, embedder="hash") as store:  # the default: solar-adaptive
        store.scope(user="ann").add("a first fact")
    with MemoryStore(path, embedder="hash", policy="solar") as store:
        store.scope(user="bo").add("a first fact")
    headers = {}
    for user in ("ann", "bo"):
        status, out = run("trace", path, "--user", user)
        assert status == 0
        headers[user] = out.splitlines()[1].split()  # step, time (UTC), outcome, reason, ...
    assert headers["ann"][5:7] == ["gain", "bar"]
    assert headers["bo"][5:7] == ["regret", "tau"]


def test_trace_says_how_much_ratings_moved_what_is_kept(tmp_path: Path) -> None:
    """A decision ratings changed says what they changed, and the trace ends with the ratings,
    their usual value and how many of the shown decisions they changed."""
    path = str(tmp_path / "m.db")
    turns = [
        *("Ann: Hi Bo!", "Bo: Hey Ann!", "Ann: I adopted a beagle named Max in March 2022."),
        *("Bo: Wow, cool!", "Ann: My sister moved to Lisbon last week.", "Bo: Haha, nice."),
        *("Ann: I work as a nurse in Porto since 2019.", "Bo: ok", "Ann: Max is 3 now."),
    ]
    with MemoryStore(path, policy="solar-dialogue", capacity=3, seed=0) as store:
        scope = store.scope(user="ann")
        for i, turn in enumerate(turns):
            hits = scope.retrieve(turn)
            scope.add(turn)
            if hits:
                scope.feedback(like=i % 3 == 0, retrieval=hits)
        effect = scope.stats()["ratings"]
    assert effect["decisions_changed"] > 0
    status, out = run("trace", path, "--user", "ann", "--last", "0")
    assert status == 0
    changed = [line for line in out.splitlines() if "; ratings " in line]
    assert len(changed) == effect["decisions_changed"]
    assert out.splitlines()[-1] == (
        f"ratings: {effect['ratings']}, usual rating {effect['baseline']:.2f}; they changed "
        f"{len(changed)} of these decisions ({len(changed)} in all)"
    )
    status, out = run("trace", path, "--user", "ann", "--last", "1")
    assert out.splitlines()[-1].endswith(f"({len(changed)} in all)")


def test_export_names_a_namespace_as_scopes_lists_it_and_scope_takes_it_back(
    tmp_path: Path,
) -> None:
    """A LangGraph store namespace is ``namespace=memories.alice`` in ``scopes``, in ``export``
    and for ``--scope``; its scope key (an encoded JSON list) appears nowhere."""
    from solar_core.persistence.scope import namespace_scope

    path = str(tmp_path / "store.db")
    store = MemoryStore(path, policy="fifo", capacity=5, embedder="hash")
    store.get(namespace_scope(("memories", "alice"))).add("alice likes tea")
    store.close()
    status, listed = run("scopes", path)
    assert status == 0 and "namespace=memories.alice" in listed
    status, jsonl = run("export", path)
    assert status == 0
    exported = [json.loads(line) for line in jsonl.splitlines()]
    assert [(r["scope"], r["text"]) for r in exported] == [
        ("namespace=memories.alice", "alice likes tea")
    ]
    status, again = run("export", path, "--scope", exported[0]["scope"])
    assert status == 0
    assert [json.loads(line)["id"] for line in again.splitlines()] == [exported[0]["id"]]
    assert "langgraph-store" not in listed + jsonl


def strict_json(text: str) -> Any:
    """``text`` read as JSON is: NaN and Infinity are no JSON (Python's reader takes them)."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def test_export_writes_valid_json_for_metadata_holding_nan_or_infinity(tmp_path: Path) -> None:
    path = str(tmp_path / "store.db")
    metadata = {"x": float("nan"), "deep": [{"y": float("inf")}, -float("inf")], "z": 1.5}
    with MemoryStore(path, policy="fifo", capacity=5, embedder="hash") as store:
        store.scope(user="ann").add("ann likes tea", metadata=metadata)
    before = fingerprint_of(path)
    wanted = {"x": None, "deep": [{"y": None}, None], "z": 1.5}
    status, jsonl = run("export", path)
    assert status == 0 and strict_json(jsonl)["metadata"] == wanted
    assert run("export", path, "-o", str(tmp_path / "out.jsonl"))[0] == 0
    assert strict_json((tmp_path / "out.jsonl").read_text())["metadata"] == wanted
    assert run("export", path, "--format", "csv", "-o", str(tmp_path / "out.csv"))[0] == 0
    with open(tmp_path / "out.csv", newline="", encoding="utf-8") as handle:
        assert strict_json(next(csv.DictReader(handle))["metadata"]) == wanted
    status, items = run("items", path, "--json")
    assert status == 0 and strict_json(items)["metadata"] == wanted
    assert fingerprint_of(path) == before
