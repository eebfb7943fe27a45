"""Long analyses (the fixes of a finding, the pre-flight matrix) run on server threads, never in a
page's script: a page asks for a job by key, draws what it has so far, and polls. A key names the
work (a record's cache key and what is asked), so two tabs asking for the same thing share one job.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

KEEP = 32  # finished jobs kept, newest first out of the door last


class Job:
    """One analysis: what it has made so far (`partial`, set by the work itself) and its future."""

    def __init__(self) -> None:
        self.partial: Any = None
        self.future: Future | None = None

    @property
    def done(self) -> bool:
        return self.future is not None and self.future.done()

    @property
    def failed(self) -> BaseException | None:
        return self.future.exception() if self.done else None  # type: ignore[union-attr]


_JOBS: dict[str, Job] = {}
_LOCK = threading.Lock()
_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="analysis")


def job(key: str, work: Callable[[Job], Any]) -> Job:
    """The job under `key`, started with `work(job)` when there is none (or the last one failed)."""
    with _LOCK:
        j = _JOBS.get(key)
        if j is None or j.failed is not None:
            j = Job()
            j.future = _POOL.submit(work, j)
            _JOBS[key] = j
            while len(_JOBS) > KEEP:
                _JOBS.pop(next(iter(_JOBS)))
    return j


def find(key: str) -> Job | None:
    return _JOBS.get(key)
