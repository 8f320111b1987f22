"""Paste the tables of the last full run into the docs, so the pages show exactly them.

Every ``<!-- results:NAME -->`` ... ``<!-- /results -->`` block of ``docs/*.md`` and
``docs/benchmarks/*.md`` (the benchmark summary and its pages) is replaced by the content of
``docs/results/NAME.txt`` (written by ``benchmarks/reproduce.sh``) in a text code block.

    python benchmarks/render_docs.py
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path("docs")
BLOCK = re.compile(r"<!-- results:(?P<name>[\w.-]+) -->\n.*?<!-- /results -->", re.S)


def pages() -> list[Path]:
    """The markdown pages that may hold result blocks."""
    return sorted(DOCS.glob("*.md")) + sorted((DOCS / "benchmarks").glob("*.md"))


def main() -> None:
    def table(match: re.Match[str]) -> str:
        name = match["name"]
        text = (DOCS / "results" / f"{name}.txt").read_text(encoding="utf-8").rstrip()
        return f"<!-- results:{name} -->\n```text\n{text}\n```\n<!-- /results -->"

    for page in pages():
        old = page.read_text(encoding="utf-8")
        new = BLOCK.sub(table, old)
        if new != old:
            page.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    main()
