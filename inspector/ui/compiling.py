"""Running compiles for the app: off the script thread, with a live status, shared between sessions.

The server never imports the user's file: every compile is `inspector.api.inspect_kernel`, which
runs it in the sandbox's worker processes and caches the record on disk (a repeat is instant).
Compiles run on a thread pool shared by all sessions; the script thread only polls, so the
status shows the elapsed time, and a rerun that interrupts the page does not lose the compile:
an identical request still in flight is joined instead of started again.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

import streamlit as st

from inspector.api import inspect_kernel
from inspector.record import Inspection

POLL_SECONDS = 0.1
# Threads waiting on workers (each compile is a separate process): enough for the 8 concurrent
# sessions the app promises, plus an autotune grid.
MAX_COMPILES = max(8, 2 * (os.cpu_count() or 2))


class _Compiler:
    """The process-wide pool plus the requests in flight (request key -> future)."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=MAX_COMPILES, thread_name_prefix="inspect")
        self.lock = threading.Lock()
        self.inflight: dict[str, Future] = {}

    def submit(self, path: Path, request: dict[str, Any]) -> Future:
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            digest = "unreadable"
        key = json.dumps([str(path), digest, request], sort_keys=True, default=str)
        with self.lock:
            fut = self.inflight.get(key)
            if fut is not None:
                return fut
            fut = self.pool.submit(inspect_kernel, path, **request)
            self.inflight[key] = fut
        # Outside the lock: a future that is already done (a cache hit) runs the callback at once,
        # here, and the callback takes the lock.
        fut.add_done_callback(lambda _f, k=key: self._forget(k))
        return fut

    def _forget(self, key: str) -> None:
        with self.lock:
            self.inflight.pop(key, None)


@st.cache_resource
def compiler() -> _Compiler:
    return _Compiler()


def compile_with_status(path: Path, request: dict[str, Any], label: str) -> Inspection:
    """Compile, showing a status box whose label counts the seconds; return the record."""
    fut = compiler().submit(path, request)
    start = time.monotonic()
    with st.status(f"Compiling {label}…", expanded=False) as status:
        while not fut.done():
            status.update(label=f"Compiling {label}… {time.monotonic() - start:.1f} s")
            time.sleep(POLL_SECONDS)
        rec = fut.result()
        status.update(label=summary(rec, label), state="complete" if rec.ok else "error")
    return rec


def summary(rec: Inspection, label: str) -> str:
    """One line: what was compiled, how long it took, whether it came from the cache."""
    if rec.ok:
        took = "from the cache" if rec.cached else f"in {rec.compile_seconds:.1f} s"
        return f"Compiled {label} {took}"
    from inspector.ui.error_view import KIND_TITLES

    kind = rec.error.kind if rec.error else "internal"
    return f"{label}: {KIND_TITLES.get(kind, kind)}"


def compile_many(path: Path, requests: list[dict[str, Any]],
                 progress: Callable[[int, int], None] | None = None) -> list[Inspection]:
    """Compile several requests in parallel (the autotune grid); records in request order."""
    futures = [compiler().submit(path, r) for r in requests]
    done = 0
    while done < len(futures):
        time.sleep(POLL_SECONDS)
        now = sum(f.done() for f in futures)
        if now != done and progress:
            progress(now, len(futures))
        done = now
    return [f.result() for f in futures]
