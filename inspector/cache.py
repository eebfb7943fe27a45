"""On-disk cache of inspection records, safe for several processes at once.

An entry is one JSON file named by the SHA-256 of everything that decides the result (source,
call, options, target, Triton version, the inspector's own compile code). Writes go to a unique
temporary file in the same folder and are moved into place with `os.replace`, which is atomic on
POSIX: a reader sees the old entry, the new one, or none, never a torn file. Two writers of the
same key write the same content, so the last rename winning is harmless.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from .files import atomic_write_text


def default_cache_dir() -> Path:
    """$TRITON_INSPECTOR_CACHE, else $XDG_CACHE_HOME/triton-inspector, else ~/.cache/triton-inspector."""
    env = os.environ.get("TRITON_INSPECTOR_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "triton-inspector"


def cache_key(parts: dict[str, Any]) -> str:
    """Stable hash of a JSON-able description of the inputs."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


class Cache:
    """Key -> JSON object store in a folder (two-level fan-out by key prefix)."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            with open(path, encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # unreadable entries are treated as misses and rewritten

    def put(self, key: str, value: dict[str, Any]) -> None:
        atomic_write_text(self._path(key), json.dumps(value))

    def clear(self) -> int:
        """Remove every entry; return how many were removed."""
        n = 0
        if not self.root.exists():
            return 0
        for p in self.root.glob("*/*.json"):
            try:
                p.unlink()
                n += 1
            except OSError:
                pass
        return n
