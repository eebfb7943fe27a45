"""On-disk cache of inspection records, safe for several processes at once.

An entry is one JSON file named by the SHA-256 of everything that decides the result (source,
call, options, target, Triton version, the inspector's own compile code). The file holds
`{"format": ENTRY_FORMAT, "key": key, "value": {...}}`, and a read checks both: an entry planted
or renamed under another key, in an older format, or malformed is a miss, never served. Only the
server-side process writes here (compiles run in a jail that cannot see this folder). Writes go to a unique
temporary file in the same folder and are moved into place with `os.replace`, which is atomic on
POSIX: a reader sees the old entry, the new one, or none, never a torn file. Two writers of the
same key write the same content, so the last rename winning is harmless.

A fresh record is stored off the caller's path (`put(..., wait=False)`): its text is made at
once, and one writer thread per process puts the file in place, so the write is not part of the
inspection's time (its share: docs/performance.md#small-steps-of-an-inspection). A `get` of a key
with a write pending in this process waits for it; the writer's thread is joined when the
interpreter exits, so a CLI call's entry is on disk before its process ends.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import places
from ..files import atomic_write_text, sha256

if TYPE_CHECKING:  # imported where the first write starts: a cache hit reads only
    from concurrent.futures import Future, ThreadPoolExecutor


ENTRY_FORMAT = 2  # bump when the entry's envelope changes

_writer: ThreadPoolExecutor | None = None
_pending: dict[Path, Future] = {}  # path -> its latest write not yet done
_pending_lock = threading.Lock()


def default_cache_dir() -> Path:
    """The cache folder (`inspector.places.cache_dir`)."""
    return places.cache_dir()


def cache_key(parts: dict[str, Any]) -> str:
    """Stable hash of a JSON-able description of the inputs."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return sha256(blob).hexdigest()


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
        path = self._path(key)
        _wait_for(path)
        try:
            with open(path, encoding="utf-8") as f:
                entry = json.load(f)
        except (OSError, ValueError):
            return None
        if (not isinstance(entry, dict) or entry.get("format") != ENTRY_FORMAT or entry.get("key") != key
                or not isinstance(entry.get("value"), dict)):
            return None
        return entry["value"]

    def put(self, key: str, value: dict[str, Any], wait: bool = True) -> None:
        """Store `value` under `key`. With `wait=False` the file is written by this process's
        writer thread (see the module docstring); `value` is serialised before this returns, so
        the caller may change it afterwards. A failed background write is logged, and the entry
        stays missing (a miss: the next call compiles again)."""
        path = self._path(key)
        text = json.dumps({"format": ENTRY_FORMAT, "key": key, "value": value})
        if wait:
            _wait_for(path)  # a pending write of the same entry lands first, not after this one
            atomic_write_text(path, text)
            return
        global _writer
        with _pending_lock:
            if _writer is None:
                from concurrent.futures import ThreadPoolExecutor  # a writer's import: a hit reads only

                _writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inspector-cache-writer")
            future = _writer.submit(_write, path, text)
            _pending[path] = future
        future.add_done_callback(lambda done: _forget(path, done))

    def clear(self) -> int:
        """Remove every entry; return how many were removed."""
        flush()
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


def flush() -> None:
    """Wait until every write this process queued (`Cache.put(wait=False)`) is done."""
    with _pending_lock:
        futures = list(_pending.values())
    for future in futures:
        future.exception()  # waits; a failure was logged by `_write`


def _write(path: Path, text: str) -> None:
    try:
        atomic_write_text(path, text)
    except OSError as e:
        import logging

        logging.getLogger(__name__).warning("could not store the cache entry %s: %s", path, e)


def _wait_for(path: Path) -> None:
    with _pending_lock:
        future = _pending.get(path)
    if future is not None:
        future.exception()


def _forget(path: Path, done: Future) -> None:
    with _pending_lock:
        if _pending.get(path) is done:
            del _pending[path]
