"""Writing files so that a reader, or a crash, never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write_text(path: str | os.PathLike, text: str, durable: bool = False) -> None:
    """Write `text` to a temporary file beside `path` and move it into place (`os.replace` is
    atomic on POSIX): readers see the old file or the new one. `durable` also fsyncs before the
    move, for text a user typed and must not lose to a power cut."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
