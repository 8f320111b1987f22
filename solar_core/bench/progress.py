"""A dependency-free progress bar on stderr for runs longer than a few seconds."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts finished units of work and redraws one status line at most 10 times a second.

    On a terminal the line is redrawn in place; elsewhere (CI logs, pipes) only the final line is
    written, so logs stay short. ``enabled=False`` silences it.

    >>> import io
    >>> p = Progress("cycling", 2, stream=io.StringIO(), enabled=True)
    >>> p.advance(); p.advance(); p.close()
    >>> p.stream.getvalue().strip().startswith("cycling: 2/2 runs")
    True
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        unit: str = "runs",
        stream: TextIO | None = None,
        enabled: bool = True,
    ) -> None:
        self.label, self.total, self.done, self.unit = label, total, 0, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.live = enabled and self.stream.isatty()
        self.start = self._drawn = time.perf_counter()

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if self.live and now - self._drawn > 0.1:
            self._drawn = now
            self.stream.write("\r" + self._line(now))
            self.stream.flush()

    def _line(self, now: float) -> str:
        width = 30
        filled = width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (width - filled)
        return (
            f"{self.label}: {self.done}/{self.total} {self.unit} [{bar}] {now - self.start:.1f} s"
        )

    def close(self) -> None:
        if self.enabled:
            self.stream.write(("\r" if self.live else "") + self._line(time.perf_counter()) + "\n")
            self.stream.flush()
