"""The worker manager: imports torch and Triton once, then forks a jailed worker per request.

Started by `inspector.isolation.sandbox.Sandbox` as `python -m inspector.isolation.zygote --config JSON` (under
bubblewrap when it is installed). It talks to the server over one AF_UNIX SOCK_SEQPACKET socket
(the descriptor number is in the config), one JSON message per packet:

    in : {"op": "run", "id": "...", "limits": {...}, "expose": [...], "hide": [...],
          "spare_kind": "native" | "gpu-free" | null,  (which spare may serve it; null: either)
          "target": "sm_90" | ... | null}  (a GPU-free spare warms for the last one's target)
         with five descriptors: the request (a memfd holding its JSON), then the write ends of
         the result, progress, log (stderr) and info pipes, which the server reads directly
         {"op": "kill", "id": "..."}
    out: {"event": "ready"}                     torch and Triton imported: requests are served
         {"event": "warm"}                      every warm-up step done (with warm_up in the config)
         {"event": "spare"}                     a spare is ready for the next request
         {"event": "busy"}                      a spare was due but the machine's cores were busy
                                                (spares "when idle"; asked again each second)
         {"event": "retired"}                   a ready spare went unused (it died, or was of
                                                the other kind than the request: `_Spare`)
         {"id": "...", "event": "started", "spare": bool}
         {"id": "...", "event": "exited", "status": 0 | -signal | code}

Each request is three processes (C, G, W), made afresh or ahead as a spare:
`inspector.isolation.request_processes` says what each does. The zygote never runs user code and
never initialises CUDA, so forking stays safe.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
import time
import traceback
from typing import Callable

from inspector.isolation import jail
from inspector.isolation import request_processes as processes

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Before the first request, a warm-up step starts only after this long with none arriving: a caller
# that started the zygote and sends its first request at once gets it forked first. After it, steps
# run whenever no request is in flight (a script's calls come back to back, with gaps shorter
# than this).
WARM_AFTER_QUIET = 0.3
# After a request has ended, the next step waits this long with none in flight: what asked for the
# request is using the CPU then (the page's rerun and its paint took about 2 s of a 2-vCPU VM's
# time, which the warm-up steps slowed; docs/performance.md#cold-start), and a caller's next
# request, if it comes soon, is forked first rather than queued behind a step.
WARM_AFTER_REQUEST = 2.0
MAX_SPARE_FAILURES = 3  # spares that died before their request: after these, none is made any more
# Whether the next spare warms beside a running request by default (TRITON_INSPECTOR_SPARE=beside
# asks for it). Beside, back-to-back calls find a spare each, but a lone request slows: off by
# default (docs/performance.md#spares).
SPARE_BESIDE = False
# How long a request may wait for the spare warming for it rather than be forked afresh: about
# what the fresh fork costs more, far more natively, where the fork initialises CUDA afresh
# (vector add's figures: docs/performance.md#spares).
HOLD_FOR_SPARE = {"gpu-free": 0.035, "native": 0.6}
# With spares "when idle" (the default; `Sandbox`), the next spare is made only if the machine had
# at least this many cores' worth of idle time since the last request started (/proc/stat): a
# spare's warm-up is a compile the next request would otherwise pay, which an idle core does for
# free, but on a machine whose cores are all busy (a test run, a build, other users' compiles) it
# only takes CPU from that work. Measured on the 2-vCPU VM (docs/performance.md#spares).
IDLE_CORES_FOR_SPARE = 0.5


class _IdleCores:
    """The whole machine's idle cores between `mark()` and now, from /proc/stat."""

    def __init__(self) -> None:
        self._mark = self._read()

    @staticmethod
    def _read() -> tuple[int, int] | None:
        """(idle + iowait, total) jiffies summed over every CPU; None where /proc/stat is unreadable."""
        try:
            with open("/proc/stat") as f:
                fields = [int(x) for x in f.readline().split()[1:9]]
            return fields[3] + fields[4], sum(fields)
        except (OSError, ValueError, IndexError):
            return None

    def mark(self) -> None:
        self._mark = self._read()

    def enough(self) -> bool:
        """Whether a spare may warm now: IDLE_CORES_FOR_SPARE idle since the mark (True where unknown)."""
        now = self._read()
        if now is None or self._mark is None or now[1] <= self._mark[1]:
            return True
        idle = (now[0] - self._mark[0]) / (now[1] - self._mark[1]) * (os.cpu_count() or 1)
        return idle >= IDLE_CORES_FOR_SPARE


def _drain(fd: int) -> None:
    """Empty the SIGCHLD wake-up pipe."""
    while True:
        try:
            if not os.read(fd, 4096):
                return
        except BlockingIOError:
            return


def _reap(children: dict[int, str], by_id: dict[str, int], spare: "_Spare", send: Callable[[dict], None]) -> bool:
    """Requests that ended (each reported) and spares that died; True when a request ended."""
    ended = False
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return ended
        if pid == 0:
            return ended
        if pid == spare.pid:  # it died: retire it now, before its pid can be reused
            spare.retire(failed=True, kill=False)
            continue
        ended = True
        rid = children.pop(pid, None)
        if rid is not None:
            by_id.pop(rid, None)
            code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
            send({"id": rid, "event": "exited", "status": code})


def main() -> None:
    cfg = json.loads(sys.argv[sys.argv.index("--config") + 1])
    if not cfg["bwrap"]:  # under bwrap, --die-with-parent does this
        jail.set_parent_death_signal()
        if os.getppid() != cfg["parent"]:
            os._exit(1)
    if cfg.get("uncover"):
        jail.uncover_proc()
    ctl = socket.socket(fileno=cfg["control"])
    # Preload what every child needs, so a fork is all a request costs.
    import torch  # noqa: F401
    import triton  # noqa: F401

    processes.HANDLER = importlib.import_module(cfg["handler"])
    with open("/proc/self/comm") as f:
        processes.NAME = f.read().strip()

    # Warming runs in steps between requests, never before one: the first request is forked as
    # soon as the imports are done (see the handler's warm_up_steps).
    steps = processes.HANDLER.warm_up_steps() if cfg.get("warm_up") else []
    cfg["expose"] = [*jail.SYSTEM_DIRS, *jail.python_paths(), REPO_ROOT]
    zygote = os.getpid()

    def send(obj: dict) -> None:
        ctl.send(json.dumps(obj).encode())

    # A child's exit wakes the loop at once (SIGCHLD through a wake-up pipe).
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    gc.freeze()  # what is imported now is never collected: a request's GC passes skip it (fewer copied pages)
    send({"event": "ready"})
    children: dict[int, str] = {}
    by_id: dict[str, int] = {}
    quiet_since = time.monotonic()
    last_request = 0.0  # when the last request arrived or ended
    served = False  # a request has been forked: warm between requests from now on
    spare = _Spare(send)
    # The next spare warms between requests; with "spare_beside", while a request runs (a script's
    # back-to-back calls find one), at a cost to the request it runs beside (SPARE_BESIDE).
    spare_beside = bool(cfg.get("spare_beside", SPARE_BESIDE))
    held: tuple[dict, list[int], float] | None = None  # a request waiting for the spare that warms for it
    idle_cores = _IdleCores() if cfg.get("spare_when_idle") else None
    told_busy = False  # "busy" is said once per spare left unmade

    def dispatch(msg: dict, fds: list[int]) -> None:
        """Hand the request to the spare, or fork its processes afresh; report it started."""
        pid = spare.take(msg, fds)
        from_spare = pid is not None
        if pid is None:
            pid = os.fork()
            if pid == 0:
                processes.request(msg, fds, cfg, zygote)
        children[pid] = msg["id"]
        by_id[msg["id"]] = pid
        if idle_cores is not None:
            idle_cores.mark()  # the next spare's question: was a core idle while this one ran?
        send({"id": msg["id"], "event": "started", "spare": from_spare})
        for fd in fds:
            os.close(fd)

    while True:
        idle = bool(steps) and not children and (served or not getattr(steps[0], "after_first_request", False))
        # A native spare never warms beside a request: its CUDA start (the larger part of its
        # warm-up) would share the GPU's driver with the request's own native work.
        busy = False  # a spare is due but the machine's cores are busy: ask again in a second
        if cfg.get("spare") and not steps and (not children or spare_beside and not spare.native_next) \
                and spare.pid is None:
            busy = idle_cores is not None and not idle_cores.enough()
            if busy:
                idle_cores.mark()  # the next question is about the second to come
                if not told_busy:
                    send({"event": "busy"})
                told_busy = True
            else:
                spare.make(cfg, zygote)  # warm: the next request's processes now
                told_busy = False
        if not idle:
            wait = 1.0 if children or busy else None
        elif served:
            wait = max(0.0, last_request + WARM_AFTER_REQUEST - time.monotonic())
        else:
            wait = max(0.0, quiet_since + WARM_AFTER_QUIET - time.monotonic())
        if held is not None:  # wake by its deadline at the latest
            left = max(0.0, held[2] - time.monotonic())
            wait = left if wait is None else min(wait, left)
        ready, _, _ = select.select([ctl, wake_r] + ([spare.sock] if spare.sock else []), [], [], wait)
        if spare.sock in ready:
            spare.heard()
            if held is not None and (spare.ready or spare.pid is None):
                dispatch(*held[:2])  # the spare it waited for (or a fresh fork, if that one died)
                held = None
            continue
        if held is not None and time.monotonic() >= held[2]:
            dispatch(*held[:2])  # the spare is late: forked afresh
            held = None
        if idle and not ready:
            _warm_step(steps.pop(0))
            gc.freeze()
            quiet_since = time.monotonic()
            if not steps:
                send({"event": "warm"})
            continue
        if wake_r in ready:
            _drain(wake_r)
        if ctl in ready:
            try:
                data, fds, _, _ = socket.recv_fds(ctl, 1 << 16, 8)
            except OSError:
                data, fds = b"", []
            if not data:
                break  # the server closed the socket, or is gone
            msg = json.loads(data)
            if msg.get("op") == "run" and len(fds) == 5:
                quiet_since = last_request = time.monotonic()
                served = True
                wait_until = spare.worth_waiting(msg) if held is None else None
                if wait_until is not None:
                    held = (msg, fds, wait_until)
                else:
                    dispatch(msg, fds)
                fds = []  # held or dispatched: closed when it is handed on
            elif msg.get("op") == "kill" and held is not None and msg.get("id") == held[0]["id"]:
                for fd in held[1]:
                    os.close(fd)
                send({"id": held[0]["id"], "event": "exited", "status": -signal.SIGKILL})
                held = None
            elif msg.get("op") == "kill" and msg.get("id") in by_id:
                _kill(by_id[msg["id"]])
            for fd in fds:
                os.close(fd)
        if _reap(children, by_id, spare, send):
            quiet_since = last_request = time.monotonic()
    for pid in [*children, *([spare.pid] if spare.pid else [])]:
        _kill(pid)
    os._exit(0)


class _Spare:
    """The zygote's one spare (`inspector.isolation.request_processes`): its C, the socket to it,
    whether it said ready, and the kind of inspection it warmed for. GPU-free or native: a native
    spare's worker holds a CUDA context, which a GPU-free inspection's worker never has, so each
    serves only its kind; other requests (a probe, SASS from a binary) take either. The next
    spare is of the kind of the last inspection, and a GPU-free one warms for its target. The
    server hears "spare" when one is ready and "retired" when a ready one goes unused."""

    def __init__(self, send) -> None:
        self._send = send
        self.pid: int | None = None
        self.sock: socket.socket | None = None
        self.ready = self.native = self.native_next = False
        self.target_next: str | None = None  # the last GPU-free inspection's target
        self.failures = 0
        self.started = 0.0  # when this one was forked
        self.warm_seconds: dict[bool, float] = {}  # by kind (native?): how long the last one took to be ready

    def make(self, cfg: dict, zygote: int) -> None:
        """Fork one, unless there is one or too many died."""
        if self.pid is None and self.failures < MAX_SPARE_FAILURES:
            self.pid, self.sock = processes.fork_spare(
                {**cfg, "native": self.native_next, "warm_target": self.target_next}, zygote)
            self.ready, self.native, self.started = False, self.native_next, time.monotonic()

    def heard(self) -> None:
        """Its socket is readable: it is ready, or it died (or said what it should not)."""
        if self.sock.recv(16) == b"ready" and not self.ready:
            self.ready = True
            self.warm_seconds[self.native] = time.monotonic() - self.started
            self._send({"event": "spare"})
        else:
            self.retire(failed=True)

    def worth_waiting(self, msg: dict) -> float | None:
        """When a request of this spare's kind comes while it still warms: the time until which to
        hold the request for it, if it should be ready sooner than a fresh fork would catch up
        (`HOLD_FOR_SPARE`, from the last spare of its kind); else None (fork afresh)."""
        kind = msg.get("spare_kind")
        if self.pid is None or self.ready or kind is None or (kind == "native") != self.native:
            return None
        took = self.warm_seconds.get(self.native)
        if took is None:
            return None
        now = time.monotonic()
        left = self.started + took - now
        if left > HOLD_FOR_SPARE["native" if self.native else "gpu-free"]:
            return None
        return now + max(left, 0.0) * 1.5 + 0.01  # a little late is still sooner than a fork

    def take(self, msg: dict, fds: list[int]) -> int | None:
        """Hand it the request if it is ready and of the request's kind; its C's pid, else None."""
        if msg.get("spare_kind") is not None:
            self.native_next = msg["spare_kind"] == "native"
            if not self.native_next and msg.get("target"):
                self.target_next = msg["target"]
        if self.pid is not None and self.native != self.native_next:
            self.retire(failed=False)  # warmed for the other kind: the next one is of this kind
        if self.pid is None or not self.ready:
            return None
        try:
            socket.send_fds(self.sock, [json.dumps(msg).encode()], fds)
        except OSError:  # it died since it said ready
            self.retire(failed=True)
            return None
        pid, self.pid = self.pid, None
        self.sock.close()
        self.sock, self.ready = None, False
        return pid

    def retire(self, failed: bool, kill: bool = True) -> None:
        if kill:
            _kill(self.pid)
        if self.ready:
            self._send({"event": "retired"})
        self.sock.close()
        self.pid, self.sock, self.ready = None, None, False
        self.failures += failed
        if failed and self.failures == MAX_SPARE_FAILURES:
            print(f"inspector: {self.failures} spare workers died before their request; "
                  "requests are forked afresh from now on", file=sys.stderr, flush=True)


def _warm_step(step) -> None:
    """One warm-up step; a failure only costs the warmth (the requests pay for it themselves)."""
    try:
        step()
    except BaseException:  # noqa: BLE001 - keep serving
        traceback.print_exc()


def _kill(pid: int) -> None:
    """Kill a request: its C (whose death takes G, and with G the namespace) and its session."""
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when we stop
    main()
