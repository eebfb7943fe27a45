"""Running requests in isolated worker processes, with time, memory and output limits.

The caller (app server, CLI) never imports the user's file. A `Sandbox` keeps one warm zygote
(`inspector.zygote`) that has torch and Triton imported and forks a fresh child per request, so a
request costs a fork instead of a Python start-up. Each child runs in its own process group;
on timeout, or when the group's resident memory passes the limit, the whole group is killed
(ptxas and any process the user's code started included). Several threads may call `run` at once.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULT_TIMEOUT = 60.0
DEFAULT_MEMORY = 4 * 1024**3  # bytes a child may add to what the zygote maps / its resident set
DEFAULT_OUTPUT = 256 * 1024**2  # largest file a child may write (the result included)
ZYGOTE_START_TIMEOUT = 120.0


class SandboxError(Exception):
    """A request that did not produce a result: kind is timeout | memory | output_limit | crashed."""

    def __init__(self, kind: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details or {}


@dataclass
class Limits:
    timeout: float = DEFAULT_TIMEOUT
    memory: int | None = DEFAULT_MEMORY
    output: int | None = DEFAULT_OUTPUT


def _group_rss(pgid: int) -> int:
    """Resident bytes of every process in a process group (Linux /proc)."""
    total = 0
    page = os.sysconf("SC_PAGE_SIZE")
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pgid:  # field 5 (pgrp) overall, index 2 after the name
                total += int(fields[21]) * page  # field 24 (rss, pages)
        except (OSError, ValueError, IndexError):
            continue
    return total


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
            return
        except (ProcessLookupError, PermissionError):
            continue


class _Pending:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.exited = threading.Event()
        self.pid: int | None = None
        self.status: int | None = None


class Sandbox:
    """One warm zygote plus the bookkeeping to run requests in forked children."""

    def __init__(self, env: dict[str, str] | None = None, warm_up_worker: bool | None = None):
        """`warm_up_worker`: let the zygote do a compile per vendor before forking (a few seconds
        once, then every request is faster). Worth it for a server; a one-shot CLI call skips it.
        Default: the environment variable TRITON_INSPECTOR_PREWARM ("0" or "1", default "1")."""
        self._env = env
        if warm_up_worker is None:
            warm_up_worker = os.environ.get("TRITON_INSPECTOR_PREWARM", "1") != "0"
        self._warm_up_worker = warm_up_worker
        self._lock = threading.Lock()  # the zygote process and the table of pending requests
        self._write_lock = threading.Lock()  # the zygote's stdin; apart, so a blocked write never
        # keeps the reader thread from draining the zygote's replies
        self._proc: subprocess.Popen | None = None
        self._pending: dict[str, _Pending] = {}
        self._dir = tempfile.mkdtemp(prefix="inspector-sandbox-")
        self._ready = threading.Event()
        atexit.register(self.close)

    # -- zygote lifecycle ----------------------------------------------------------------------
    def _ensure_started(self) -> None:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            self._ready.clear()
            env = dict(os.environ if self._env is None else self._env)
            env["PYTHONPATH"] = REPO_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            env.setdefault("PYTHONUNBUFFERED", "1")
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "inspector.zygote", *([] if self._warm_up_worker else ["--no-warm-up"])],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=open(os.path.join(self._dir, "zygote.err"), "ab"),
                cwd=REPO_ROOT,
                env=env,
                start_new_session=True,
            )
            threading.Thread(target=self._read, args=(self._proc,), daemon=True).start()
        if not self._ready.wait(ZYGOTE_START_TIMEOUT):
            raise SandboxError("crashed", "the worker process did not start: " + self._zygote_log())

    def _zygote_log(self) -> str:
        try:
            with open(os.path.join(self._dir, "zygote.err"), errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def _read(self, proc: subprocess.Popen) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if msg.get("event") == "ready":
                self._ready.set()
                continue
            with self._lock:
                pending = self._pending.get(msg.get("id", ""))
            if pending is None:
                continue
            if msg["event"] == "started":
                pending.pid = msg["pid"]
                pending.started.set()
            elif msg["event"] == "exited":
                pending.status = msg["status"]
                pending.exited.set()
        # The zygote is gone: wake every waiter.
        self._ready.set()
        with self._lock:
            for p in self._pending.values():
                p.started.set()
                p.exited.set()

    def close(self) -> None:
        """Stop the zygote (children already running are killed by their callers' timeouts)."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                proc.stdin.close()  # type: ignore[union-attr]
                proc.wait(timeout=5)
            except Exception:  # noqa: BLE001
                _kill_group(proc.pid)
        shutil.rmtree(self._dir, ignore_errors=True)

    def warm_up(self) -> None:
        """Start the zygote now (a first request would otherwise pay for torch's import)."""
        self._ensure_started()

    # -- requests ------------------------------------------------------------------------------
    def run(self, request: dict[str, Any], limits: Limits | None = None) -> dict[str, Any]:
        """Run `inspector.worker.handle(request)` in a fresh child; return its result.

        Raises SandboxError when the child is killed or dies without a result.
        """
        limits = limits or Limits()
        self._ensure_started()
        os.makedirs(self._dir, exist_ok=True)
        rid = uuid.uuid4().hex
        result_path = os.path.join(self._dir, f"{rid}.json")
        stderr_path = os.path.join(self._dir, f"{rid}.err")
        native = request.get("target") == "native"
        msg = {
            "id": rid,
            "request": request,
            "result": result_path,
            "stderr": stderr_path,
            # CUDA reserves far more address space than it uses: natively only the RSS watchdog applies.
            "limits": {"memory": None if native else limits.memory, "file_size": limits.output},
        }
        pending = _Pending()
        with self._lock:
            self._pending[rid] = pending
            proc = self._proc
        try:
            assert proc is not None and proc.stdin is not None
            with self._write_lock:
                proc.stdin.write((json.dumps(msg) + "\n").encode())
                proc.stdin.flush()
            if not pending.started.wait(30) or pending.pid is None:
                raise SandboxError("crashed", "the worker process stopped: " + self._zygote_log())
            self._watch(pending, limits)
            return self._collect(pending, result_path, stderr_path, limits)
        finally:
            with self._lock:
                self._pending.pop(rid, None)
            for p in (result_path, stderr_path, result_path + ".tmp"):
                try:
                    os.unlink(p)
                except OSError:
                    pass

    def _watch(self, pending: _Pending, limits: Limits) -> None:
        """Wait for the child, killing its process group on timeout or memory overrun."""
        assert pending.pid is not None
        deadline = time.monotonic() + limits.timeout
        rss_cap = limits.memory
        peak = 0
        while not pending.exited.wait(0.05):
            if time.monotonic() > deadline:
                _kill_group(pending.pid)
                pending.exited.wait(10)
                raise SandboxError("timeout", f"the compile took longer than {limits.timeout:g} s and was stopped "
                                   "(the worker's whole process group was killed)", {"timeout": limits.timeout})
            if rss_cap:
                rss = _group_rss(pending.pid)
                peak = max(peak, rss)
                if rss > rss_cap:
                    _kill_group(pending.pid)
                    pending.exited.wait(10)
                    raise SandboxError("memory", f"the worker used {rss / 2**20:.0f} MiB, more than the "
                                       f"{rss_cap / 2**20:.0f} MiB limit, and was stopped", {"rss": rss})

    def _collect(self, pending: _Pending, result_path: str, stderr_path: str, limits: Limits) -> dict[str, Any]:
        status = pending.status
        if os.path.exists(result_path):
            with open(result_path) as f:
                return json.load(f)
        tail = ""
        try:
            with open(stderr_path, errors="replace") as f:
                tail = f.read()[-3000:]
        except OSError:
            pass
        if status == -signal.SIGXFSZ or status == 87:
            raise SandboxError("output_limit", f"the worker wrote more than the {limits.output} byte output limit")
        if status == 86 or "MemoryError" in tail:
            raise SandboxError("memory", "the worker ran out of memory (its memory limit) and was stopped",
                               {"stderr": tail})
        if status is not None and status < 0:
            name = signal.Signals(-status).name if -status in signal.Signals._value2member_map_ else str(-status)
            raise SandboxError("crashed", f"the worker was killed by {name}" + (f":\n{tail}" if tail else ""),
                               {"status": status})
        raise SandboxError("crashed", f"the worker exited with status {status} without a result"
                           + (f":\n{tail}" if tail else ""), {"status": status})


_default: Sandbox | None = None
_default_lock = threading.Lock()


def default_sandbox() -> Sandbox:
    """The process-wide sandbox (one zygote per process that inspects)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Sandbox()
        return _default
