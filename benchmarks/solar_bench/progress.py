"""A dependency-free progress bar on stderr for runs longer than a few seconds."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """Counts finished units of work and redraws one status line at most 10 times a second.

    On a terminal the line is redrawn in place; elsewhere (CI logs, pipes) only the final line is
    written, so logs stay short. ``log_every`` (a share such as 0.25) also writes a line each time
    that share of the total is passed off a terminal: for one long step with no other output, a
    log that stays silent for a minute looks hung. ``enabled=False`` silences it.

    >>> import io
    >>> p = Progress("cycling", 2, stream=io.StringIO(), enabled=True)
    >>> p.advance(); p.advance(); p.close()
    >>> p.stream.getvalue().strip().startswith("cycling: 2/2 runs")
    True
    >>> p = Progress("embedding", 8, unit="texts", stream=io.StringIO(), log_every=0.5)
    >>> p.draw(); p.advance(4); p.advance(4); p.close()
    >>> [line.split(" [")[0] for line in p.stream.getvalue().splitlines()]
    ['embedding: 0/8 texts', 'embedding: 4/8 texts', 'embedding: 8/8 texts']
    """

    def __init__(
        self,
        label: str,
        total: int,
        *,
        unit: str = "runs",
        stream: TextIO | None = None,
        enabled: bool = True,
        log_every: float | None = None,
    ) -> None:
        self.label, self.total, self.done, self.unit = label, total, 0, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.live = enabled and self.stream.isatty()
        self.start = self._drawn = time.perf_counter()
        self.log_every = log_every
        self._logged = -1  # the last share step (done // (total * log_every)) written off a tty

    def draw(self) -> None:
        """Show the line now: ``0/N`` before a slow start (a model load) says work has begun."""
        if self.live:
            self._drawn = time.perf_counter()
            self.stream.write("\r" + self._line(self._drawn))
            self.stream.flush()
        elif self.enabled and self.log_every:
            self._log()

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.perf_counter()
        if self.live and now - self._drawn > 0.1:
            self._drawn = now
            self.stream.write("\r" + self._line(now))
            self.stream.flush()
        elif not self.live and self.enabled and self.log_every and self.done < self.total:
            self._log()  # the final count is close()'s line: not written twice

    def _log(self) -> None:
        assert self.log_every is not None
        step = int(self.done // max(self.total * self.log_every, 1))
        if step > self._logged:
            self._logged = step
            self.stream.write(self._line(time.perf_counter()) + "\n")
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
