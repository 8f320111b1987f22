"""The shipped packages point to nothing a user of the wheel or of a clone cannot open.

Docstrings, comments, CLI help and epilogs once named design briefs and data folders that live only
on the machine the code was written on (a sibling ``shared/`` folder, absolute paths). A reader of
the installed package has neither: such text must say what it means in its own words.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("solar_core", "langchain_solar", "llamaindex_solar")
DANGLING = re.compile(
    r"PROTOCOLS\.md|ARCHITECTURE\.md|INTEGRATIONS\.md|STYLE\.md"  # briefs outside the repo
    r"|(?<![\w-])shared/"  # the sibling data and design folder (also as ../shared/)
    r"|(?<![\w.])/(?:work|home|Users)/"  # absolute paths of somebody's machine
)


def dangling_references() -> list[str]:
    hits = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            text = path.read_text(encoding="utf-8")
            for number, line in enumerate(text.splitlines(), start=1):
                if DANGLING.search(line):
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return hits


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
