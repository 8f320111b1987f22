"""Every relative link of the README and the docs points to a file that exists, and to a heading
of it when it names one (the benchmark pages in ``docs/benchmarks/`` included)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def pages() -> list[Path]:
    docs = ROOT / "docs"
    return [ROOT / "README.md", *sorted(docs.glob("*.md")), *sorted(docs.glob("benchmarks/*.md"))]


def prose(path: Path) -> list[str]:
    """The lines of a markdown file outside its fenced code blocks."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in prose(path):
        match = re.match(r"#{1,6} (.*)", line)
        if match:
            base = slug(match[1])
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links() -> list[str]:
    broken = []
    for page in pages():
        for line in prose(page):
            for target in LINK.findall(line):
                if re.match(r"[a-z][\w+.-]*:", target):  # https:, mailto:, ...
                    continue
                file, _, anchor = target.partition("#")
                where = (page.parent / file).resolve() if file else page
                if not where.exists():
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
                elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    return broken


def test_the_benchmark_pages_are_checked() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in pages()}
    assert {"docs/BENCHMARKS.md", "docs/benchmarks/persistence.md"} <= names


def test_every_relative_link_resolves() -> None:
    broken = broken_links()
    assert not broken, "links to nothing:\n" + "\n".join(broken)
