"""Running benchmarks from the caller's process: a worker subprocess per request, with its own timeout.

The caller (CLI, app) never imports the kernel file, torch or Triton here. The worker
(`python -m inspector.bench.worker`) runs in its own process group and reports progress and each
kernel's result as JSON lines; on timeout the whole group is killed and the results that had
already arrived are returned, the unfinished ones with error kind "timeout".
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Sequence

from .protocol import REPO_ROOT, ProtocolError, resolve
from .records import BenchError, BenchResult
from .runner import Progress
from .settings import BenchSettings

# A sweep of every bundled kernel with torch.compile can take many minutes on a cold cache.
DEFAULT_TIMEOUT = 1800.0


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_benchmarks(targets: Sequence[str], settings: BenchSettings | None = None, *, timeout: float = DEFAULT_TIMEOUT,
                   progress: Progress | None = None, on_result: Callable[[BenchResult], None] | None = None,
                   cancel: threading.Event | None = None, env: dict[str, str] | None = None,
                   **fields: Any) -> list[BenchResult]:
    """Benchmark each target (bundled kernel name or file path) in one worker process, as
    `settings` (or `BenchSettings(**fields)`) says.

    Returns one BenchResult per target, in order; failures are results with `error` set
    (kinds: no_gpu, load, protocol, crashed, timeout, cancelled, internal), never exceptions.
    `progress(done, total, message)` is called from this thread as the worker reports.
    `on_result(result)` is called as each kernel finishes (the CLI writes files as they come).
    Setting `cancel` stops the worker (results not finished carry error kind "cancelled").
    """
    settings = settings or BenchSettings(**fields)
    results: dict[int, BenchResult] = {}
    names: list[str] = []
    for i, t in enumerate(targets):
        try:
            names.append(resolve(t)[0])
        except ProtocolError as exc:
            names.append(os.path.splitext(os.path.basename(t))[0])
            results[i] = BenchResult(kernel=names[-1], error=BenchError("protocol", str(exc)))
    todo = [i for i in range(len(targets)) if i not in results]
    if todo:
        got = _run_worker([str(targets[i]) for i in todo], settings.to_dict(), timeout, progress, on_result, cancel,
                          env)
        for i, r in zip(todo, got):
            results[i] = r
    return [results[i] for i in range(len(targets))]


def run_benchmark(target: str, **kwargs: Any) -> BenchResult:
    """`run_benchmarks([target], ...)[0]`."""
    return run_benchmarks([target], **kwargs)[0]


def jailed_command(command: list[str], targets: list[str], env: dict[str, str],
                   writable: list[str] | None = None, tools: list[str] | None = None) -> list[str]:
    """The benchmark worker's command, jailed like a compile where bubblewrap is there: the user's
    file runs with no network, no view of the home folder, the cache or the workspaces, its own
    /tmp, its kernel's project folder read-only; the environment is reduced to what it needs
    (`env` is updated in place). Without bubblewrap (or with the sandbox off) it runs as before, in
    a process group of its own, and `sandbox_status()` already says so loudly. `tools`: folders of
    programs the command runs (a profiler's installation), shown read-only."""
    from ..isolation import jail
    from ..isolation.exposure import REPO_ROOT as INSPECTOR_ROOT, clean_environment, hidden_paths, isolation, \
        request_paths

    if isolation()["mode"] != "bwrap":
        return command
    clean = clean_environment(env)
    clean.update({"HOME": "/tmp", "XDG_CACHE_HOME": "/tmp/cache", "TRITON_CACHE_DIR": "/tmp/triton",
                  "TORCHINDUCTOR_CACHE_DIR": "/tmp/inductor"})
    env.clear()
    env.update(clean)
    expose = [*jail.python_paths(), INSPECTOR_ROOT, *(tools or [])]
    for target in targets:
        if os.path.exists(target):
            expose += request_paths({"file": target})
    return jail.boxed_command(command, clean, expose, hidden_paths(), writable or ())


def _run_worker(
    targets: list[str],
    request: dict[str, Any],
    timeout: float,
    progress: Progress | None,
    on_result: Callable[[BenchResult], None] | None,
    cancel: threading.Event | None,
    env: dict[str, str] | None,
) -> list[BenchResult]:
    environ = dict(os.environ if env is None else env)
    environ["PYTHONPATH"] = str(REPO_ROOT) + (
        os.pathsep + environ["PYTHONPATH"] if environ.get("PYTHONPATH") else ""
    )
    environ.setdefault("PYTHONUNBUFFERED", "1")
    environ.pop("TRITON_INTERPRET", None)  # the worker decides, before Triton is imported
    request = dict(request, targets=[os.path.abspath(t) if os.path.exists(t) else t for t in targets])
    command = jailed_command([sys.executable, "-m", "inspector.bench.worker"], request["targets"], environ)
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=str(REPO_ROOT),
            env=environ,
            start_new_session=True,
        )
        lines: queue.Queue[bytes | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                lines.put(raw)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(request).encode())
        proc.stdin.close()

        got: list[BenchResult] = []
        failure: BenchError | None = None
        deadline = time.monotonic() + timeout
        finished = False
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    _kill_group(proc.pid)
                    failure = BenchError(
                        "timeout", f"the benchmark took longer than {timeout:g} s and was stopped"
                    )
                    break
                if cancel is not None and cancel.is_set():
                    _kill_group(proc.pid)
                    failure = BenchError("cancelled", "the benchmark was cancelled")
                    break
                try:
                    raw = lines.get(timeout=min(left, 0.5))
                except queue.Empty:
                    continue
                if raw is None:
                    break
                try:
                    msg = json.loads(raw)
                except ValueError:
                    continue
                event = msg.get("event")
                if event == "progress" and progress is not None:
                    progress(int(msg.get("done", 0)), int(msg.get("total", 0)), str(msg.get("message", "")))
                elif event == "result":
                    got.append(BenchResult.from_dict(msg["result"]))
                    if on_result is not None:
                        on_result(got[-1])
                elif event == "error":
                    failure = BenchError(
                        msg.get("kind", "internal"), msg.get("message", "") + "\n" + msg.get("traceback", "")
                    )
                elif event == "done":
                    finished = True
        except BaseException:
            _kill_group(proc.pid)  # Ctrl-C, or a callback's exception: the worker must not outlive us
            raise
        try:
            status = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            status = proc.wait()
        if failure is None and not finished:
            err.seek(0)
            tail = err.read().decode(errors="replace")[-3000:]
            how = f"killed by signal {-status}" if status < 0 else f"exited with status {status}"
            failure = BenchError(
                "crashed", f"the benchmark worker {how} before finishing" + (f":\n{tail}" if tail else "")
            )
    out = list(got)
    for target in targets[len(got) :]:
        out.append(
            BenchResult(
                kernel=os.path.splitext(os.path.basename(target))[0],
                error=failure or BenchError("internal", "no result"),
            )
        )
    return out
