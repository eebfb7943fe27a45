"""A one-line progress bar on a terminal (nothing when the output is a file or a CI log)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """`bar(done, total, hits, discovered)` redraws `[#####.....] 12/40 compiles, 3 cached, 0:12`.

    The total grows while files are still being discovered (each file's other kernels are queued
    once its first record is back), so it shows `12/40+` until discovery is over."""

    def __init__(self, stream: TextIO | None = None, width: int = 30):
        self.stream = stream or sys.stderr
        self.width = width
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.monotonic()
        self._drawn = False

    def __call__(self, done: int, total: int, hits: int, discovered: bool) -> None:
        if not self.enabled:
            return
        filled = int(self.width * done / total) if total else self.width
        secs = int(time.monotonic() - self.t0)
        line = (f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total}{'' if discovered else '+'} "
                f"compiles, {hits} cached, {secs // 60}:{secs % 60:02d} ")
        self.stream.write(line)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """End the bar's line, so what follows starts on its own."""
        if self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
