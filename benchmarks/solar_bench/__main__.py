"""``python -m solar_bench``: the same as the ``solar-bench`` command."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
