"""Running compiles for the app: off the script thread, with a live status, shared between sessions.

The server never imports the user's file: every compile is `inspector.compile.api.inspect_kernel`, which
runs it in the sandbox's worker processes and caches the record on disk (a repeat is instant).
Compiles run on a thread pool shared by all sessions; the script thread only polls, so the
status shows the elapsed time, and a rerun that interrupts the page does not lose the compile:
an identical request still in flight is joined instead of started again.

While a compile runs, a Cancel button sets the request's cancel event (`inspect_kernel(...,
cancel=)`), which kills its worker. A request joined by several sessions is cancelled only when
every one of them has cancelled it: one user's Cancel never fails another user's compile.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import streamlit as st

from inspector.compile.api import inspect
from inspector.record import ErrorInfo, InspectRequest, Inspection

POLL_SECONDS = 0.1
# Threads waiting on workers (each compile is a separate process): enough for the 8 concurrent
# sessions the app promises, plus an autotune grid.
MAX_COMPILES = max(8, 2 * (os.cpu_count() or 2))
RUNNING = "compile_running"  # session state: the futures this session is waiting on, and their label
SESSION_TOKEN = "compile_session"  # session state: who waits, for the cancel bookkeeping


@dataclass
class _Job:
    future: Future
    cancel: threading.Event
    waiters: set[str] = field(default_factory=set)


class _Compiler:
    """The process-wide pool plus the requests in flight (request key -> job)."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=MAX_COMPILES, thread_name_prefix="inspect")
        self.lock = threading.Lock()
        self.inflight: dict[str, _Job] = {}

    def submit(self, request: InspectRequest, waiter: str = "") -> Future:
        """The future of this request's record; an identical request in flight is joined."""
        try:
            digest = hashlib.sha256(Path(request.file).read_bytes()).hexdigest()
        except OSError:
            digest = "unreadable"
        key = json.dumps([digest, request.to_dict()], sort_keys=True, default=str)
        with self.lock:
            job = self.inflight.get(key)
            if job is None or job.cancel.is_set():
                cancel = threading.Event()
                job = _Job(self.pool.submit(inspect, request, cancel=cancel), cancel)
                self.inflight[key] = job
                fresh = True
            else:
                fresh = False
            job.waiters.add(waiter)
        if fresh:
            # Outside the lock: a future that is already done (a cache hit) runs the callback at
            # once, here, and the callback takes the lock.
            job.future.add_done_callback(lambda _f, k=key, j=job: self._forget(k, j))
        return job.future

    def cancel(self, futures: list[Future], waiter: str = "") -> int:
        """`waiter` gives up these requests; each one nobody else waits for is cancelled (its
        worker killed). Returns how many were cancelled."""
        wanted = {id(f) for f in futures}
        cancelled = 0
        with self.lock:
            for job in self.inflight.values():
                if id(job.future) not in wanted or job.future.done():
                    continue
                job.waiters.discard(waiter)
                if not job.waiters:
                    job.cancel.set()
                    cancelled += 1
        return cancelled

    def _forget(self, key: str, job: _Job) -> None:
        with self.lock:
            if self.inflight.get(key) is job:
                del self.inflight[key]


@st.cache_resource
def compiler() -> _Compiler:
    return _Compiler()


def _waiter() -> str:
    return st.session_state.setdefault(SESSION_TOKEN, secrets.token_hex(8))


def cancelled_record(label: str) -> Inspection:
    return Inspection.failure(ErrorInfo("cancelled", f"The compile of {label} was cancelled from the page."))


def _result(fut: Future, label: str) -> Inspection:
    """The future's record; a cancel that surfaced as an exception becomes a "cancelled" record."""
    try:
        return fut.result()
    except Exception as e:  # noqa: BLE001 - the worker's side reports everything else as records
        if fut.cancelled() or type(e).__name__.lower().startswith("cancel"):
            return cancelled_record(label)
        raise


def _on_cancel() -> None:
    """on_click of Cancel (runs before the rerun the click starts, which ends the polling run)."""
    ss = st.session_state
    running = ss.pop(RUNNING, None)
    if not running:
        return
    futures, label = running["futures"], running["label"]
    compiler().cancel(futures, _waiter())
    if len(futures) == 1 and futures[0].done():  # finished just before the click: keep its result
        rec = _result(futures[0], label)
    else:
        rec = cancelled_record(label)
    ss[CANCELLED] = {"kind": running["kind"], "record": rec}


CANCELLED = "compile_cancelled"  # session state: {"kind", "record"} a Cancel left, for the page to show


def take_cancelled(kind: str = "compile") -> Inspection | None:
    """The record a Cancel click of this kind of compile ("compile", "grid") left, once; or None."""
    ss = st.session_state
    left = ss.get(CANCELLED)
    if not left or left["kind"] != kind:
        return None
    del ss[CANCELLED]
    return left["record"]


def _cancel_button(slot, futures: list[Future], label: str, kind: str) -> None:
    st.session_state[RUNNING] = {"futures": futures, "label": label, "kind": kind}
    slot.button("Cancel", key="w.cancel", icon=":material/stop_circle:", on_click=_on_cancel,
                help="Stop this compile (its worker is killed).")


def start(request: InspectRequest) -> None:
    """Start this request now, without waiting: a later `compile_with_status` of the same request
    (the end of the page's run) joins it."""
    compiler().submit(request, _waiter())


def compile_with_status(request: InspectRequest, label: str) -> Inspection:
    """Compile, showing a status box whose label counts the seconds and a Cancel button; return
    the record."""
    fut = compiler().submit(request, _waiter())
    start = time.monotonic()
    slot = st.empty()
    if not fut.done():
        _cancel_button(slot, [fut], label, "compile")
    with st.status(f"Compiling {label}…", expanded=False) as status:
        while not fut.done():
            status.update(label=f"Compiling {label}… {time.monotonic() - start:.1f} s")
            time.sleep(POLL_SECONDS)
        rec = _result(fut, label)
        status.update(label=summary(rec, label), state="complete" if rec.ok else "error")
    st.session_state.pop(RUNNING, None)
    slot.empty()
    return rec


def summary(rec: Inspection, label: str) -> str:
    """One line: what was compiled, how long it took, whether it came from the cache."""
    if rec.ok:
        took = "from the cache" if rec.cached else f"in {rec.compile_seconds:.1f} s"
        return f"Compiled {label} {took}"
    from inspector.ui.error_view import KIND_TITLES

    kind = rec.error.kind if rec.error else "internal"
    return f"{label}: {KIND_TITLES.get(kind, kind)}"


def compile_quietly(requests: list[InspectRequest], label: str) -> list[Inspection]:
    """Compile a few small requests in parallel behind a spinner, with no Cancel button of their
    own (a teaching pair's halves: cache hits after the first visit); records in request order."""
    futures = [compiler().submit(r, _waiter()) for r in requests]
    if not all(f.done() for f in futures):
        with st.spinner(f"Compiling {label}…"):
            wait(futures)
    return [_result(f, label) for f in futures]


def compile_many(requests: list[InspectRequest],
                 progress: Callable[[int, int], None] | None = None) -> list[Inspection]:
    """Compile several requests in parallel (the autotune grid), with a Cancel button; records in
    request order."""
    futures = [compiler().submit(r, _waiter()) for r in requests]
    slot = st.empty()
    _cancel_button(slot, futures, f"{len(futures)} configs", "grid")
    done = 0
    while done < len(futures):
        time.sleep(POLL_SECONDS)
        now = sum(f.done() for f in futures)
        if now != done and progress:
            progress(now, len(futures))
        done = now
    st.session_state.pop(RUNNING, None)
    slot.empty()
    return [_result(f, "a config") for f in futures]
