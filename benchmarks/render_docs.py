"""Paste the tables of the last full run into docs/BENCHMARKS.md, so the page shows exactly them.

Every ``<!-- results:NAME -->`` ... ``<!-- /results -->`` block is replaced by the content of
``docs/results/NAME.txt`` (written by ``benchmarks/reproduce.sh``) in a text code block.

    python benchmarks/render_docs.py
"""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path("docs/BENCHMARKS.md")
BLOCK = re.compile(r"<!-- results:(?P<name>[\w.-]+) -->\n.*?<!-- /results -->", re.S)


def main() -> None:
    def table(match: re.Match[str]) -> str:
        name = match["name"]
        text = (Path("docs/results") / f"{name}.txt").read_text(encoding="utf-8").rstrip()
        return f"<!-- results:{name} -->\n```text\n{text}\n```\n<!-- /results -->"

    DOC.write_text(BLOCK.sub(table, DOC.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
