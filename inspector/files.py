"""Writing files so that a reader, or a crash, never sees half of one; hashing them cheaply."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def sha256(data: bytes = b"") -> Any:
    """A SHA-256 hash object. CPython's own implementation (`_sha2`, `_sha256` before 3.12) where
    it has one: `hashlib` loads OpenSSL's bindings first, 2-3 ms of a cache hit's 40 above a bare
    Python start (docs/performance.md#a-cache-hit-against-a-bare-python-start). Same digests."""
    global _sha256_type
    if _sha256_type is None:
        import importlib.util

        name = next((n for n in ("_sha2", "_sha256") if importlib.util.find_spec(n) is not None), None)
        _sha256_type = __import__(name).sha256 if name else __import__("hashlib").sha256
    return _sha256_type(data)


_sha256_type: Any = None


def atomic_write_text(path: str | os.PathLike, text: str, durable: bool = False) -> None:
    """Write `text` to a temporary file beside `path` and move it into place (`os.replace` is
    atomic on POSIX): readers see the old file or the new one. `durable` also fsyncs before the
    move, for text a user typed and must not lose to a power cut."""
    import tempfile  # a writer's import: a cache hit reads only

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
