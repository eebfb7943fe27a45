"""Running requests in jailed worker processes, with time, memory, process and output limits.

The caller (app server, CLI) never imports the user's file. A `Sandbox` keeps one warm worker
manager (`inspector.isolation.zygote`, torch and Triton imported once) and forks a jailed worker per
request, so a request costs a few forks instead of a Python start-up.

Design (decided for issue 12; `inspector.isolation.jail` has the namespace details):

- **The worker manager** runs under bubblewrap when `bwrap` is installed (own user, PID,
  network, IPC, UTS namespaces; `/` read-only; a clean environment: PATH, LANG, PYTHONPATH and the
  TRITON_/CUDA_ variables, none of the server's secrets; `--die-with-parent`). Without bwrap it
  runs with the same clean environment and dies with the server through PR_SET_PDEATHSIG.
- **Each request** gets namespaces of its own, entered by the manager's fork before any user code:
  its worker sees only the system directories, the Python installation, the inspector and the
  request's project root (read-only), an empty private /tmp, and a /proc with its own processes;
  no network; no view of $HOME, the cache, the workspaces, the server or other requests. Its init
  is PID 1 of its PID namespace: when the request ends, is stopped, or its parent dies, every
  process it started dies with it (setsid and double forks included).
- **Results only through the trusted side**: the request's JSON goes in by a memfd, the record
  comes back length-prefixed on a pipe that only that request's worker holds, read here; only
  this (server-side) process writes the cache (`inspector.compile.api`).
- **Limits**, watched from here every 0.1 s: the timeout; the resident memory summed over every
  process of the request's namespace (pages shared with the warm manager counted once, so a fork
  bomb's copies are not mistaken for memory); the number of those processes (a fork bomb is stopped and
  named as one; RLIMIT_NPROC and the namespace's pid_max also bound it where the kernel allows);
  the size of the result. Per process: RLIMIT_AS and RLIMIT_FSIZE. On a stop the worker is first
  asked for a stack dump (faulthandler on SIGUSR1), so a timeout says where it struck
  ("in the user's example() at line 12"), with the phase the worker last announced
  (`inspector.isolation.progress`).
- **Cancel**: `run(..., cancel=event)` kills the request's whole namespace when the event is set.

Where the OS cannot build the jail (no user namespaces, e.g. a default Docker seccomp profile),
the sandbox falls back to a process group with the same limits and says so loudly: on stderr once
per process, and in `Sandbox.isolation()` (`inspector.compile.api.sandbox_status()`), which the app shows.
`TRITON_INSPECTOR_SANDBOX=off` forces that fallback (for debugging only); `=unshare` skips
bubblewrap (what a machine without it gets). Several threads may call `run` at once.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from . import jail, progress
from . import request_watch as watch
from .exposure import REPO_ROOT, _warn_once, clean_environment, hidden_paths, isolation, request_paths


DEFAULT_TIMEOUT = 60.0
# The module a worker serves requests with (named, not imported: isolation sits below compile).
DEFAULT_HANDLER = "inspector.worker.handler"
DEFAULT_MEMORY = 4 * 1024**3  # bytes a worker may add to what it maps when its request starts / its resident set
DEFAULT_OUTPUT = 256 * 1024**2  # largest file a child may write, and the largest result
DEFAULT_PROCESSES = 64  # processes in a request's namespace (ptxas and friends need a handful)
DEFAULT_TMP = 1024**3  # the size of a request's private /tmp (and /dev/shm)
ZYGOTE_START_TIMEOUT = 120.0
POLL = 0.1  # seconds between two looks at a request's processes


class SandboxError(Exception):
    """A request that did not produce a result: kind is timeout | memory | processes |
    output_limit | cancelled | crashed."""

    def __init__(self, kind: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.details = details or {}



def _remove_scratch(path: Any) -> None:
    """Remove a killed request's scratch folder (without the jail: `request_processes._new_scratch`,
    named on its info line), which its C, killed with it, could not. Only a folder of that name
    in this machine's temporary folder, never a link."""
    if not isinstance(path, str) or not os.path.basename(path).startswith(jail.SCRATCH_PREFIX):
        return
    if os.path.islink(path) or os.path.dirname(os.path.realpath(path)) != os.path.realpath(tempfile.gettempdir()):
        return
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class Limits:
    timeout: float = DEFAULT_TIMEOUT
    memory: int | None = DEFAULT_MEMORY
    output: int | None = DEFAULT_OUTPUT
    processes: int | None = DEFAULT_PROCESSES


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)')


class _Pending:
    def __init__(self) -> None:
        self.exited = threading.Event()
        self.status: int | None = None
        self.gone = False  # the worker manager died


class _Request:
    """One run's pipes and what came back on them."""

    def __init__(self, rid: str, request: dict[str, Any]) -> None:
        self.rid = rid
        self.file = os.path.abspath(request["file"]) if request.get("file") else None
        self.t0 = time.monotonic()
        self.result = bytearray()
        self.expected: int | None = None
        self.info: dict[str, Any] = {}
        self.marker: dict[str, Any] | None = None
        self.log = bytearray()
        self.buffers = {"progress": b"", "info": b""}
        self.fds: dict[int, str] = {}

    def complete(self) -> bool:
        return self.expected is not None and len(self.result) >= 8 + self.expected

    def feed(self, name: str, data: bytes) -> None:
        if name == "result":
            self.result += data
            if self.expected is None and len(self.result) >= 8:
                self.expected = struct.unpack(">Q", bytes(self.result[:8]))[0]
        elif name == "log":
            self.log += data
            del self.log[:-65536]
        else:
            buf = self.buffers[name] + data
            *lines, self.buffers[name] = buf.split(b"\n")
            for line in lines:
                try:
                    obj = json.loads(line)
                except ValueError:
                    continue
                if name == "info" and not self.info and isinstance(obj, dict):
                    self.info = obj
                elif name == "progress" and isinstance(obj, dict) and "phase" in obj:
                    self.marker = obj
            self.buffers[name] = self.buffers[name][-4096:]

    def log_tail(self, n: int = 3000) -> str:
        return bytes(self.log[-n:]).decode(errors="replace")


class Sandbox:
    """One warm worker manager plus the bookkeeping to run requests in jailed children."""

    def __init__(self, env: dict[str, str] | None = None, warm_up_worker: bool | None = None,
                 mode: str | None = None, python: str | None = None, handler: str = DEFAULT_HANDLER,
                 spare: bool | str | None = None):
        """`warm_up_worker`: let the zygote do a compile per vendor before forking (a few seconds
        once, then every request is faster). Worth it for a server; a one-shot CLI call skips it.
        Default: the environment variable TRITON_INSPECTOR_PREWARM ("0" or "1", default "1").
        `mode`: "auto" (bubblewrap when installed), "unshare" or "off"; default
        $TRITON_INSPECTOR_SANDBOX, else "auto". `env`: the environment to pass on (cleaned).
        `python`: the interpreter the worker manager runs (a side environment's, for another
        Triton release: `inspector.versions`); default this one. `handler`: the module whose
        `serve(request)` a worker runs and whose `warm_up_steps()` the zygote runs between
        requests; the compile worker by default. `spare`: once warm, keep the next request's
        processes made and warmed ahead (`inspector.isolation.zygote`), so a request costs no fork;
        only with `warm_up_worker`. The next one warms between requests; "beside": while a request
        runs, for scripts that call back to back (`inspector.isolation.zygote.SPARE_BESIDE` says
        what it costs); "idle": as True, but each spare only when the machine had a core to spare
        while the last request ran (`zygote.IDLE_CORES_FOR_SPARE`). Default: $TRITON_INSPECTOR_SPARE
        ("0", "1", "beside" or "idle"; default "idle")."""
        self._env = env
        self.handler = handler
        self.python = python or sys.executable
        self._mode = mode
        if warm_up_worker is None:
            warm_up_worker = os.environ.get("TRITON_INSPECTOR_PREWARM", "1") != "0"
        self._warm_up_worker = warm_up_worker
        if spare is None:
            choice = os.environ.get("TRITON_INSPECTOR_SPARE", "idle")
            spare = False if choice == "0" else "beside" if choice == "beside" else True if choice == "1" else "idle"
        self._spare = spare if warm_up_worker else False
        self._spares = threading.Condition()
        self._spare_ready = False  # the zygote holds a ready spare (as far as its messages have told)
        self.served_by_spare = 0  # requests a spare served
        self.spares_left_unmade = 0  # spares due when the machine's cores were busy (spare "idle")
        self._sent = self._started = 0  # requests sent to the zygote, and those it started
        self._lock = threading.Lock()  # the zygote and the table of pending requests
        self._send_lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._ctl: socket.socket | None = None
        self._pending: dict[str, _Pending] = {}
        self._active: dict[str, _Request] = {}
        # The worker manager's stderr: an unnamed file (deleted on creation), so a process that is
        # killed, with no chance to clean up, leaves nothing behind in /tmp.
        self._log = tempfile.TemporaryFile(prefix="inspector-sandbox-")
        self._ready = threading.Event()
        self._warm = threading.Event()  # the zygote finished its warm-up steps
        atexit.register(self.close)

    def isolation(self) -> dict[str, Any]:
        """{"isolated": bool, "how": str, "missing": str, "mode": str}: see `isolation()`."""
        return isolation(self._mode)

    # -- zygote lifecycle ----------------------------------------------------------------------
    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._ctl is not None

    def _ensure_started(self) -> None:
        with self._lock:
            if self._alive():
                ready = self._ready
            else:
                ready = self._start()
        if not ready.wait(ZYGOTE_START_TIMEOUT) or not self._alive():
            raise SandboxError("crashed", "the worker process did not start: " + self._zygote_log())

    def _start(self) -> threading.Event:
        status = self.isolation()
        _warn_once(status)
        env = clean_environment(self._env)
        if self._log.closed:  # started again after close()
            self._log = tempfile.TemporaryFile(prefix="inspector-sandbox-")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        bwrap = status["mode"] == "bwrap"
        cfg = {"control": theirs.fileno(), "jail": status["isolated"], "bwrap": bwrap, "parent": os.getpid(),
               "warm_up": self._warm_up_worker, "handler": self.handler, "uncover": bwrap and os.geteuid() == 0,
               "spare": bool(self._spare), **({"spare_beside": True} if self._spare == "beside" else {}),
               **({"spare_when_idle": True} if self._spare == "idle" else {})}
        command = [self.python, "-m", "inspector.isolation.zygote", "--config", json.dumps(cfg)]
        if bwrap:
            env["TMPDIR"] = "/dev/shm"  # the manager's own scratch space (its warm-up compile)
            command = jail.outer_command(command, env)
        self._ready = ready = threading.Event()
        self._warm = threading.Event()
        with self._spares:  # a new zygote: none of its spares yet, none of the old one's requests
            self._spare_ready, self._sent, self._started = False, 0, 0
        self._ctl = ours
        launched = threading.Event()

        def launch() -> None:
            # The zygote (or bwrap) dies with the thread that started it (PR_SET_PDEATHSIG): this
            # thread lives exactly as long as the zygote does.
            try:
                proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
                                        cwd=REPO_ROOT, env=env, pass_fds=[theirs.fileno()],
                                        start_new_session=True)
            except OSError as e:
                self._log.seek(0, os.SEEK_END)
                self._log.write(f"cannot start the worker process: {e}\n".encode())
                self._log.flush()
                self._proc = None
                launched.set()
                ready.set()
                return
            self._proc = proc
            launched.set()
            proc.wait()

        threading.Thread(target=launch, name="inspector-zygote", daemon=True).start()
        launched.wait()
        theirs.close()
        threading.Thread(target=self._read, args=(ours, ready), daemon=True).start()
        return ready

    def _zygote_log(self) -> str:
        try:
            fd = self._log.fileno()
            size = os.fstat(fd).st_size
            return os.pread(fd, 2000, max(0, size - 2000)).decode(errors="replace")
        except (OSError, ValueError):  # ValueError: closed
            return ""

    def _read(self, ctl: socket.socket, ready: threading.Event) -> None:
        while True:
            try:
                data = ctl.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            try:
                msg = json.loads(data)
            except ValueError:
                continue
            if msg.get("event") == "ready":
                ready.set()
                continue
            if msg.get("event") == "warm":
                self._warm.set()
                continue
            if msg.get("event") == "busy":
                with self._spares:
                    self.spares_left_unmade += 1
                    self._spares.notify_all()
                continue
            if msg.get("event") in ("spare", "retired", "started"):
                with self._spares:
                    if msg["event"] == "started":
                        self._started += 1
                        self.served_by_spare += bool(msg.get("spare"))
                    if msg["event"] == "spare":
                        self._spare_ready = True
                    elif msg["event"] == "retired" or msg.get("spare"):  # gone, or taken
                        self._spare_ready = False
                    self._spares.notify_all()
            with self._lock:
                pending = self._pending.get(msg.get("id", ""))
            if pending is None:
                continue
            if msg.get("event") == "exited":
                pending.status = msg["status"]
                pending.exited.set()
        # The zygote is gone: wake every waiter.
        with self._lock:
            if self._ctl is ctl:
                self._ctl = None
            for p in self._pending.values():
                p.gone = True
                p.exited.set()
        ready.set()

    def close(self) -> None:
        """Stop the zygote; it kills every request still running."""
        with self._lock:
            proc, self._proc = self._proc, None
            ctl, self._ctl = self._ctl, None
        if ctl is not None:
            try:
                ctl.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            ctl.close()
        if proc is not None and proc.poll() is None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        self._log.close()

    def warm_up(self, complete: bool = False, timeout: float = 120.0) -> bool:
        """Start the zygote now (a first request would otherwise pay for torch's import). It is
        ready once torch and Triton are imported and warms the rest between requests; with
        `complete`, also wait (up to `timeout` s) for that warming to finish (benchmarks do, to
        time warm compiles). Returns whether the zygote is warm."""
        self._ensure_started()
        if complete and self._warm_up_worker:
            if not self._warm.is_set():
                # Some steps wait for a first request to have been served: serve a no-op one.
                self.run({"kind": "stages", "backend": "cuda", "binary": "", "stages": []}, Limits(timeout=timeout))
            return self._warm.wait(timeout)
        return self._warm.is_set()

    def wait_for_spare(self, timeout: float = 120.0) -> bool:
        """Wait until the zygote holds a warm spare that no request took (benchmarks and tests of
        the spare path; a request waits only for one that is nearly warm: `zygote.HOLD_FOR_SPARE`).
        False if none came within `timeout` s or spares are off. Call it once the previous
        request's `run` returned."""
        if not self._spare:
            return False
        self._ensure_started()
        with self._spares:
            return self._spares.wait_for(lambda: self._started == self._sent and self._spare_ready, timeout)

    def active(self) -> list[dict[str, Any]]:
        """The requests running now: {"id", "seconds", "phase", "line"} each (phase from
        `inspector.isolation.progress.phase` in the worker, None before the first one)."""
        with self._lock:
            runs = list(self._active.values())
        now = time.monotonic()
        return [{"id": r.rid, "seconds": round(now - r.t0, 3), "phase": (r.marker or {}).get("phase"),
                 "line": (r.marker or {}).get("line")} for r in runs]

    # -- requests ------------------------------------------------------------------------------
    def run(self, request: dict[str, Any], limits: Limits | None = None,
            cancel: threading.Event | None = None) -> dict[str, Any]:
        """Run `inspector.worker.handler.handle(request)` in a jailed worker; return its result.

        When `cancel` is set, the request's processes are all killed and SandboxError("cancelled")
        is raised. Raises SandboxError when the worker is stopped or dies without a result.
        """
        limits = limits or Limits()
        self._ensure_started()
        rid = uuid.uuid4().hex
        native = request.get("target") == "native" or request.get("kind") == "native"
        # Which spare may serve it: a native one, a GPU-free one, or either (a probe, SASS from a binary).
        kind = "native" if native else ("gpu-free" if request.get("kind", "inspect") == "inspect" else None)
        msg = {"op": "run", "id": rid, "spare_kind": kind, "target": request.get("target"),
               "expose": request_paths(request),
               "hide": hidden_paths(),
               # CUDA reserves far more address space than it uses: natively only the RSS watch applies.
               "limits": {"memory": None if native else limits.memory, "file_size": limits.output,
                          "processes": limits.processes, "tmp": DEFAULT_TMP}}
        run = _Request(rid, request)
        pending = _Pending()
        theirs: list[int] = []
        try:
            memfd = os.memfd_create("inspector-request", os.MFD_CLOEXEC)
            theirs.append(memfd)
            blob = memoryview(json.dumps(request).encode())
            while blob:
                blob = blob[os.write(memfd, blob):]
            for name in ("result", "progress", "log", "info"):
                r, w = os.pipe()
                run.fds[r] = name
                theirs.append(w)
            with self._lock:
                self._pending[rid] = pending
                self._active[rid] = run
                ctl = self._ctl
            if ctl is None:
                raise SandboxError("crashed", "the worker process stopped: " + self._zygote_log())
            with self._send_lock:
                socket.send_fds(ctl, [json.dumps(msg).encode()], theirs)
                with self._spares:
                    self._sent += 1
            for fd in theirs:
                os.close(fd)
            theirs = []
            return self._wait(run, pending, limits, cancel, request)
        except OSError as e:
            raise SandboxError("crashed", f"the worker process could not be reached: {e}") from e
        finally:
            for fd in theirs + list(run.fds):
                os.close(fd)
            with self._lock:
                self._pending.pop(rid, None)
                self._active.pop(rid, None)

    def _wait(self, run: _Request, pending: _Pending, limits: Limits, cancel: threading.Event | None,
              request: dict[str, Any]) -> dict[str, Any]:
        deadline = run.t0 + limits.timeout
        next_look = 0.0
        while not run.complete():
            if run.fds:
                ready, _, _ = select.select(list(run.fds), [], [], POLL / 2)
                for fd in ready:
                    data = os.read(fd, 1 << 20)
                    if data:
                        run.feed(run.fds[fd], data)
                    else:
                        os.close(fd)
                        del run.fds[fd]
                if run.expected is not None and limits.output and run.expected > limits.output:
                    self._stop(run, pending)
                    raise SandboxError("output_limit", f"the worker's result is larger than the {limits.output} byte "
                                       "output limit")
                if run.complete():
                    break
            elif pending.exited.wait(POLL / 2):
                break  # every pipe closed, the worker gone: no result
            if "result" not in run.fds.values() and pending.exited.is_set():
                break
            if pending.gone:
                raise SandboxError("crashed", "the worker manager stopped while this compile ran; try again")
            now = time.monotonic()
            if cancel is not None and cancel.is_set():
                self._stop(run, pending)
                raise SandboxError("cancelled", "the compile was cancelled", {"seconds": round(now - run.t0, 3)})
            if now > deadline:
                where, line = self._where(run)
                self._stop(run, pending)
                raise SandboxError("timeout", f"the compile took longer than {limits.timeout:g} s and was stopped"
                                   + (f" {where}" if where else "") + " (with every process it started)",
                                   {"timeout": limits.timeout, "where": where, "line": line, "phase": run.marker})
            if now >= next_look and run.info:
                next_look = now + POLL
                members = watch.members(run.info)
                if limits.processes and len(members) >= limits.processes:
                    self._stop(run, pending)
                    raise SandboxError("processes", f"the kernel file started {len(members)} processes, the limit is "
                                       f"{limits.processes} (a fork bomb?); it was stopped with all of them",
                                       {"processes": len(members), "limit": limits.processes})
                if limits.memory:
                    rss = sum(watch.rss(p) for p in members)
                    if rss > limits.memory:
                        # Forks of the warm worker manager each show its pages as their own: count
                        # shared pages once (proportional set size; slower, so only when needed).
                        rss = sum(watch.pss(p) for p in members)
                    if rss > limits.memory:
                        self._stop(run, pending)
                        raise SandboxError("memory", f"the worker used {rss / 2**20:.0f} MiB, more than the "
                                           f"{limits.memory / 2**20:.0f} MiB limit, and was stopped", {"rss": rss})
        if run.complete():
            try:
                return json.loads(bytes(run.result[8:8 + run.expected]))
            except ValueError as e:
                raise SandboxError("crashed", f"the worker's result is not valid JSON ({e})") from e
        pending.exited.wait(10)
        return self._failure(run, pending, limits)

    def _stop(self, run: _Request, pending: _Pending) -> None:
        """Kill the request's processes: its init (and with it the namespace) from here, its C
        through the zygote; then wait until none is left."""
        if run.info.get("ns") is not None:
            for pid in watch.members(run.info):
                if watch.ns_pid(pid) == 1:
                    watch.kill(pid)
        elif run.info.get("pgid") is not None:  # no jail: the zygote's pids are this machine's
            watch.kill(-run.info["pgid"])
        with self._lock:
            ctl = self._ctl
        if ctl is not None:
            try:
                with self._send_lock:
                    ctl.send(json.dumps({"op": "kill", "id": run.rid}).encode())
            except OSError:
                pass
        pending.exited.wait(10)
        end = time.monotonic() + 5
        while run.info and watch.members(run.info) and time.monotonic() < end:
            time.sleep(0.02)
        _remove_scratch(run.info.get("scratch"))

    def _where(self, run: _Request) -> tuple[str, int | None]:
        """Ask the worker for a stack dump (SIGUSR1, faulthandler) and say where it was: words,
        and the line of the user's file it was at."""
        target = None
        if run.info.get("ns") is not None:
            target = next((p for p in watch.members(run.info) if watch.ns_pid(p) == 2), None)
        elif run.info.get("worker"):
            target = run.info["worker"]
        dump = ""
        log_fd = next((fd for fd, name in run.fds.items() if name == "log"), None)
        if target is not None and log_fd is not None:
            try:
                os.kill(target, signal.SIGUSR1)
            except OSError:
                log_fd = None
            end = time.monotonic() + 1.0
            while log_fd is not None and time.monotonic() < end:
                if select.select([log_fd], [], [], 0.1)[0]:
                    data = os.read(log_fd, 1 << 20)
                    if not data:
                        break
                    run.feed("log", data)
                elif b"most recent call first" in run.log:
                    break  # the dump is out and nothing more came for 0.1 s
            text = bytes(run.log).decode(errors="replace")
            start = text.rfind("Current thread")
            dump = text[start:] if start >= 0 else ""
        frames = [m.groupdict() for m in _FRAME.finditer(dump.split("\n\n")[0])] if dump else []
        user = next((f for f in frames if run.file and os.path.abspath(f["file"]) == run.file), None)
        in_compiler = bool(frames) and "/triton/" in frames[0]["file"]
        line = int(user["line"]) if user else (run.marker or {}).get("line")
        return progress.describe(run.marker, line, user["func"] if user else None, in_compiler), line

    def _failure(self, run: _Request, pending: _Pending, limits: Limits) -> dict[str, Any]:
        status = pending.status
        tail = run.log_tail()
        if pending.gone:
            raise SandboxError("crashed", "the worker manager stopped while this compile ran; try again")
        if status == 87 or status == -signal.SIGXFSZ or status == 128 + signal.SIGXFSZ:
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
