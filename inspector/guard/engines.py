"""Where the guard's compiles run: threads on this machine, or tasks on a Ray cluster.

Both run the same thing, `inspector.compile.api.inspect_kernel` (the sandboxed compile, one
jailed worker per request), and hand back futures of `(Inspection, KernelMetrics)`.

- `LocalEngine`: a thread pool. `inspect_kernel` may be called from several threads at once
  (`Sandbox.run` is thread-safe); each compile runs in its own jailed process forked from the one
  warm worker manager, so N threads keep N cores busy.
- `RayEngine`: one Ray task per compile (`num_cpus=1`), scheduled, placed and retried by Ray
  (`max_retries` when a worker process dies). The cache is looked up here, in the caller, before
  anything is sent, and every record that comes back is stored here under the caller's key: the
  caller's cache is the shared one, so a kernel that has not changed is never sent again, whichever
  node compiled it. The tasks read the kernel files at the same paths as the caller (the same
  machine, or a checkout at the same path on every node).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from ..compile.api import inspect_kernel
from ..compile.cache import Cache, default_cache_dir
from ..record import ErrorInfo, Inspection
from ..isolation.sandbox import SandboxError
from .metrics import KernelMetrics, metrics_of

Result = tuple[Inspection, KernelMetrics]
# Failures the same inputs always reproduce (the file's text, the call, Triton, the target): the
# compile cache keeps none but resource overflows, so the guard keeps these itself, beside it, or a
# repository's kernels that nothing launches would compile again on every run. Not kept: import
# errors (a dependency installed later fixes them), timeouts, memory, crashes.
REPRODUCIBLE_FAILURES = {"syntax", "compilation", "missing_constexpr", "bad_argument", "no_kernel"}
FAILURE_PREFIX = "guard-failure-"


class _CacheOnly:
    """A stand-in sandbox that never compiles: `inspect_kernel` with it answers from the cache or
    returns a record whose error kind is "cancelled" and whose `cache_key` is the caller's key.
    `python` is the interpreter of the Triton release it stands for (`inspect_kernel(triton=...)`
    keeps a sandbox whose interpreter is that release's)."""

    def __init__(self, python: str = sys.executable):
        self.python = python

    def run(self, request: dict[str, Any], limits: Any = None, cancel: Any = None) -> dict[str, Any]:
        raise SandboxError("cancelled", "not in the cache")


_probes: dict[str | None, _CacheOnly] = {None: _CacheOnly()}


def _probe_for(release: str | None) -> _CacheOnly:
    if release not in _probes:
        from ..versions import environments

        try:
            _probes[release] = _CacheOnly(environments.python_for(release))
        except Exception:  # noqa: BLE001 - inspect_kernel itself reports a missing release
            _probes[release] = _CacheOnly()
    return _probes[release]


def cached(request: dict[str, Any], cache: Cache) -> tuple[Inspection | None, str]:
    """(the record the cache holds for `request`, or a reproducible failure kept beside it, or
    None; the request's cache key). Reads the file and the cache; compiles nothing."""
    probe = inspect_kernel(**request, cache=cache, sandbox=_probe_for(request.get("triton")))  # type: ignore[arg-type]
    if probe.error is None or probe.error.kind != "cancelled":
        return probe, probe.cache_key
    failed = cache.get(FAILURE_PREFIX + probe.cache_key) if probe.cache_key else None
    if failed is not None:
        try:
            rec = Inspection.from_dict(failed)
        except (TypeError, ValueError, KeyError, AttributeError):
            return None, probe.cache_key
        if rec.cache_key == probe.cache_key and rec.source == probe.source:
            rec.cached = True
            return rec, probe.cache_key
    return None, probe.cache_key


def keep_failure(rec: Inspection, cache: Cache, key: str) -> None:
    """Keep a reproducible failure under the request's key (see REPRODUCIBLE_FAILURES)."""
    if key and rec.error is not None and rec.error.kind in REPRODUCIBLE_FAILURES:
        rec.cache_key = key
        cache.put(FAILURE_PREFIX + key, rec.to_dict())


def compile_and_measure(request: dict[str, Any], cache_dir: str | None = None) -> Result:
    """Compile one kernel for one target (`request`: inspect_kernel's keyword arguments; from the
    cache when it holds the record or a reproducible failure) and read the guard's figures."""
    cache = Cache(cache_dir) if cache_dir else Cache()
    key = ""
    if request.get("use_cache", True):
        hit, key = cached(request, cache)
        if hit is not None:
            return hit, metrics_of(hit)
    rec = inspect_kernel(**request, cache=cache, older_release=False)  # a release's refusal is the guard's news
    if request.get("use_cache", True):
        keep_failure(rec, cache, key)
    return rec, metrics_of(rec)


class LocalEngine:
    """Compiles on this machine's cores: `jobs` at a time."""

    def __init__(self, jobs: int):
        self.jobs = max(1, jobs)
        if self.jobs > 1:
            # One OpenMP thread per compile (as Ray gives its tasks): torch's thread pool in each
            # worker otherwise spins on every core, and compiles running side by side slow each
            # other down (benchmarks/guard_scale.py; docs/performance.md#what-the-guard-costs).
            # Read when the sandbox's worker manager starts.
            os.environ.setdefault("OMP_NUM_THREADS", "1")
        self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="guard")

    def describe(self) -> str:
        return f"{self.jobs} local worker{'s' if self.jobs != 1 else ''}"

    def submit(self, request: dict[str, Any]) -> "Future[Result]":
        return self._pool.submit(compile_and_measure, request)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _ray_compile(request: dict[str, Any], cache_dir: str | None) -> tuple[dict[str, Any], KernelMetrics, dict[str, Any]]:
    """The Ray task: the same sandboxed compile, its record as a plain dict, and what it took
    inside the task (seconds, and the Ray worker's pid: its first task starts a worker manager)."""
    t0, start = time.monotonic(), time.time()
    rec, metrics = compile_and_measure(request, cache_dir)
    return rec.to_dict(), metrics, {"seconds": time.monotonic() - t0, "pid": os.getpid(), "start": start,
                                    "end": time.time()}


class RayEngine:
    """Compiles as Ray tasks on the cluster `ray.init` connects to. Ray is started (or joined) at
    the first record the cache does not hold: a run served from the cache starts nothing."""

    def __init__(self, address: str | None, jobs: int, max_retries: int = 2):
        import ray  # only here: Ray is needed for --ray alone

        self._ray = ray
        self._address = address
        self._jobs = max(1, jobs)
        self._max_retries = max_retries
        self._started_here = False
        self._task: Any = None
        self.cache = Cache()
        self._cache_dir = str(default_cache_dir())
        self._lock = threading.Lock()
        self.start_seconds = 0.0  # what starting or joining Ray cost in this run
        # Per task: wall-clock times of submission, start and end in the task, arrival here; seconds
        # inside the task; the worker's pid (its first task starts that worker's manager).
        self.task_timings: list[dict[str, Any]] = []

    def _start(self) -> Any:
        with self._lock:
            if self._task is None:
                ray, t0 = self._ray, time.monotonic()
                if not ray.is_initialized():
                    if self._address in (None, "", "local"):
                        ray.init(num_cpus=self._jobs, include_dashboard=False, log_to_driver=False)
                    else:
                        ray.init(address=self._address, log_to_driver=False)
                    self._started_here = True
                self._task = ray.remote(num_cpus=1, max_retries=self._max_retries)(_ray_compile)
                self.start_seconds = time.monotonic() - t0
            return self._task

    def describe(self) -> str:
        if self._task is None:
            return "Ray (not started: every record came from the cache)"
        cpus = int(self._ray.cluster_resources().get("CPU", 0))
        nodes = len([n for n in self._ray.nodes() if n.get("Alive")])
        return f"Ray, {nodes} node{'s' if nodes != 1 else ''}, {cpus} CPUs"

    def submit(self, request: dict[str, Any]) -> "Future[Result]":
        out: Future[Result] = Future()
        key = ""
        if request.get("use_cache", True):
            hit, key = cached(request, self.cache)
            if hit is not None:
                out.set_result((hit, metrics_of(hit)))
                return out
        ref = self._start().remote(request, self._cache_dir)
        sent = time.time()
        ref.future().add_done_callback(lambda done: self._finish(done, out, request, key, sent))
        return out

    def _finish(self, done: Future, out: "Future[Result]", request: dict[str, Any], key: str, sent: float) -> None:
        try:
            data, metrics, timing = done.result()
            with self._lock:
                self.task_timings.append({**timing, "sent": sent, "received": time.time()})
            rec = Inspection.from_dict(data)
        except Exception as e:  # noqa: BLE001 - a task Ray gave up on becomes a failed record
            file = os.path.abspath(os.fspath(request["file"]))
            rec = Inspection.failure(ErrorInfo("crashed", f"the Ray task failed: {type(e).__name__}: {e}", file),
                                     file=file, target=request.get("target", ""), kernel=request.get("kernel") or "")
            out.set_result((rec, metrics_of(rec)))
            return
        if key and (rec.error is None or rec.error.kind == "out_of_resources"):
            rec.cache_key = key  # under the caller's key: the next run finds it here
            self.cache.put(key, rec.to_dict())
        elif key:
            keep_failure(rec, self.cache, key)
        out.set_result((rec, metrics))

    def close(self) -> None:
        if self._started_here:
            self._ray.shutdown()


def make_engine(ray: str | None, jobs: int) -> LocalEngine | RayEngine:
    """A Ray engine when `ray` names a cluster ("auto", an address, "local" to start one here),
    else the local thread pool."""
    if ray:
        return RayEngine(ray, jobs)
    return LocalEngine(jobs)


ProgressCallback = Callable[[int, int, int, bool], None]  # (done, known total, cache hits, discovery over)
