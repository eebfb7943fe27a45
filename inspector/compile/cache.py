"""On-disk cache of inspection records, safe for several processes at once.

An entry is one JSON file named by the SHA-256 of everything that decides the result (source,
call, options, target, Triton version, the inspector's own compile code). The file holds
`{"format": ENTRY_FORMAT, "key": key, "value": {...}}`, and a read checks both: an entry planted
or renamed under another key, in an older format, or malformed is a miss, never served. Only the
server-side process writes here (compiles run in a jail that cannot see this folder). Writes go to a unique
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

from .. import places
from ..files import atomic_write_text


ENTRY_FORMAT = 2  # bump when the entry's envelope changes


def default_cache_dir() -> Path:
    """The cache folder (`inspector.places.cache_dir`)."""
    return places.cache_dir()


def cache_key(parts: dict[str, Any]) -> str:
    """Stable hash of a JSON-able description of the inputs."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()


class Cache:
    """Key -> JSON object store in a folder (two-level fan-out by key prefix)."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()

    def _path(self, key: str) -> Path:
        if not key or not all(c.isalnum() or c in "-_" for c in key):
            raise ValueError(f"not a cache key: {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The value stored under `key`, or None: missing, unreadable, malformed, of another
        format, or carrying another key (all misses, rewritten by the next put)."""
        try:
            with open(self._path(key), encoding="utf-8") as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return None
        if (not isinstance(entry, dict) or entry.get("format") != ENTRY_FORMAT or entry.get("key") != key
                or not isinstance(entry.get("value"), dict)):
            return None
        return entry["value"]

    def put(self, key: str, value: dict[str, Any]) -> None:
        atomic_write_text(self._path(key), json.dumps({"format": ENTRY_FORMAT, "key": key, "value": value}))

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
