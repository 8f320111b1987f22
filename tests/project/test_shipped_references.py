"""The repository (its packages, tests, scripts and docs) points to nothing a clone lacks.

Docstrings, comments, CLI help and epilogs once named design briefs and data folders that live only
on the machine the code was written on (a sibling ``shared/`` folder, absolute paths). A reader of
the installed package has neither: such text must say what it means in its own words.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("solar_core", "langchain_solar", "llamaindex_solar", "benchmarks/solar_bench")
DANGLING = re.compile(
    r"PROTOCOLS\.md|ARCHITECTURE\.md|INTEGRATIONS\.md|STYLE\.md"  # briefs outside the repo
    r"|(?<![\w-])shared/"  # the sibling data and design folder (also as ../shared/)
    r"|(?<![\w.])/(?:work|home|Users)/"  # absolute paths of somebody's machine
)


#: what else a clone holds that may name a path: tests, scripts, docs, the build and CI files
#: (not the recorded results, and not CI's entry point, which locates this machine's data)
ELSEWHERE = ("tests", "benchmarks", "scripts", "examples", "docs", "README.md", "Makefile",
             "pyproject.toml", "constraints.txt", "constraints.lock")  # fmt: skip
SKIPPED = {"docs/results", "docs/figures", "tests/project/test_shipped_references.py"}


BINARY = {".png", ".pyc", ".db", ".sqlite", ".jsonl", ".npz"}


def repository_paths() -> Iterator[tuple[str, Path]]:
    """Every file and folder of the packages and of :data:`ELSEWHERE`, but :data:`SKIPPED`."""
    for package in PACKAGES + ELSEWHERE:
        top = ROOT / package
        for path in sorted(top.rglob("*")) if top.is_dir() else [top]:
            relative = path.relative_to(ROOT).as_posix()
            if "__pycache__" not in path.parts and not any(
                relative == s or relative.startswith(s + "/") for s in SKIPPED
            ):
                yield relative, path


def text_lines() -> Iterator[tuple[str, int, str]]:
    """(file, line number, line) of every text file :func:`repository_paths` gives."""
    for relative, path in repository_paths():
        if path.is_file() and path.suffix not in BINARY:
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                yield relative, number, line


def dangling_references() -> list[str]:
    return [f"{f}:{n}: {line.strip()}" for f, n, line in text_lines() if DANGLING.search(line)]


def test_the_pattern_catches_what_it_should() -> None:
    for bad in ("see PROTOCOLS.md §2", "``shared/seeds/003_*``", "../shared/data/x.json",
                "/work/shared/data", "STYLE.md", "/home/me/data.json"):  # fmt: skip
        assert DANGLING.search(bad), bad
    for fine in ("docs/BENCHMARKS.md", "postgresql://u@/db?host=/tmp/x", "shared_memory",
                 "multiprocessing.shared_memory", "network/working/set"):  # fmt: skip
        assert not DANGLING.search(fine), fine


def test_no_shipped_text_points_outside_the_repository() -> None:
    hits = dangling_references()
    assert not hits, "references to files that are not in the repository:\n" + "\n".join(hits)


TICKET = re.compile(r"(?i)\bissues?[\s_#-]*\d+|\bticket[\s_#-]*\d+")


def test_nothing_is_named_after_a_ticket() -> None:
    """Files, headings and comments say what they are about, not which ticket asked for them."""
    word = "is" + "sue"  # (spelt apart, so this file holds no ticket number itself)
    assert TICKET.search(f"see {word} 6") and TICKET.search(f"{word}6_bars.py")
    assert not TICKET.search(f"{word}s: the tracker") and not TICKET.search(f"t{word} 3")
    hits = [relative for relative, path in repository_paths() if TICKET.search(path.name)]
    hits += [f"{f}:{n}: {line.strip()}" for f, n, line in text_lines() if TICKET.search(line)]
    assert not hits, "named after a ticket:\n" + "\n".join(hits)
