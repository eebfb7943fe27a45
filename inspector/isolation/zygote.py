"""The worker manager: imports torch and Triton once, then forks a jailed worker per request.

Started by `inspector.isolation.sandbox.Sandbox` as `python -m inspector.isolation.zygote --config JSON` (under
bubblewrap when it is installed). It talks to the server over one AF_UNIX SOCK_SEQPACKET socket
(the descriptor number is in the config), one JSON message per packet:

    in : {"op": "run", "id": "...", "limits": {...}, "expose": [...], "hide": [...]}
         with five descriptors: the request (a memfd holding its JSON), then the write ends of
         the result, progress, log (stderr) and info pipes, which the server reads directly
         {"op": "kill", "id": "..."}
    out: {"event": "ready", "vm_bytes": N}      torch and Triton imported: requests are served
         {"event": "warm", "vm_bytes": N}       every warm-up step done (with warm_up in the config)
         {"id": "...", "event": "started"}    {"id": "...", "event": "exited", "status": 0 | -signal | code}

A request is three processes, so that each has one job:

    C  the zygote's fork: a session of its own; in jail mode enters new user, PID, mount,
       network, IPC and UTS namespaces (`inspector.isolation.jail`); writes the request's identity on the
       info pipe; waits for its child and exits with its status. Killing C kills the request.
    G  PID 1 of the new PID namespace (jail mode only): builds the request's root, drops its
       capabilities, forks W and reaps everything until W is done. When G exits or dies, the
       kernel kills every process left in the namespace (setsid and double forks included).
    W  the worker: limits, then the handler's `serve(request)` (`inspector.compile.worker`), the user's code. Its result
       goes back, length-prefixed, on the request's own result pipe, which no other request holds.

Each of them dies with its parent (PR_SET_PDEATHSIG), so killing the server or the zygote kills
every request in flight. The zygote never runs user code and never initialises CUDA, so forking
stays safe. When the jail is unavailable (fallback mode), C forks W directly and today's process
group and resource limits are all there is (the sandbox says so).
"""

from __future__ import annotations

import errno
import faulthandler
import importlib
import fcntl
import gc
import json
import os
import resource
import select
import signal
import socket
import struct
import sys
import tempfile
import time
import traceback
from typing import Any

from inspector.isolation import jail

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Where the request's descriptors sit in C, G and W.
FD_REQUEST, FD_RESULT, FD_PROGRESS, FD_LOG, FD_INFO, FD_ALIVE = 3, 4, 5, 6, 7, 8
EXIT_MEMORY, EXIT_OUTPUT, EXIT_CRASH = 86, 87, 3
# Before the first request, a warm-up step starts only after this long with none arriving: a caller
# that started the zygote and sends its first request at once gets it forked first. After it, steps
# run whenever no request is in flight (a script's calls come back to back, with gaps shorter
# than this).
WARM_AFTER_QUIET = 0.3


def _place_descriptors(fds: list[int]) -> None:
    """Put the request's descriptors at 3, 4, ... and close every other one: the zygote's socket
    and the pipes of other requests must not reach this request's processes."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 100 + len(fds)) for fd in fds]
    for i, fd in enumerate(high):
        os.dup2(fd, 3 + i, inheritable=True)
    os.closerange(3 + len(fds), resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def _pipe_to_alive() -> int:
    """A pipe whose read end is FD_ALIVE (for the next child); returns the write end."""
    r, w = os.pipe()
    if w == FD_ALIVE:
        w, old = fcntl.fcntl(w, fcntl.F_DUPFD, FD_ALIVE + 1), w
        os.close(old)
    if r != FD_ALIVE:
        os.dup2(r, FD_ALIVE)
        os.close(r)
    return w


def _exit_like(status: int) -> None:
    """Leave with the same outcome as a child whose wait status is `status`."""
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else EXIT_CRASH)


def _request(msg: dict, fds: list[int], cfg: dict, zygote: int) -> None:
    """C: runs in the zygote's fork; never returns."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setsid()
        jail.set_parent_death_signal()
        if os.getppid() != zygote:
            os._exit(1)
        _place_descriptors(fds)
        alive_w = _pipe_to_alive()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(FD_LOG, 2)
        os.close(null)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if cfg["jail"]:
            jail.enter_request_namespaces()
        child = os.fork()
        if child == 0:
            os.close(alive_w)
            os.close(FD_INFO)
            (_init if cfg["jail"] else _worker)(msg, cfg)
        info = {"pgid": os.getpid(), "ns": jail.pid_namespace(child) if cfg["jail"] else None,
                "worker": None if cfg["jail"] else child}
        os.write(FD_INFO, (json.dumps(info) + "\n").encode())
        for fd in (FD_REQUEST, FD_RESULT, FD_PROGRESS, FD_LOG, FD_INFO):
            os.close(fd)
        os.write(alive_w, b"g")  # the child may go on: the info line is out first
        _, status = os.waitpid(child, 0)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
        if code > 128 and code - 128 in signal.valid_signals():
            # die of the same signal, so the sandbox reports it; SIGKILL and SIGSTOP take no handler
            if code - 128 not in (signal.SIGKILL, signal.SIGSTOP):
                signal.signal(code - 128, signal.SIG_DFL)
            os.kill(os.getpid(), code - 128)
        os._exit(code)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)


def _wait_for_parent() -> None:
    """After PR_SET_PDEATHSIG: carry on only if the parent is alive and has sent its go-ahead."""
    jail.set_parent_death_signal()
    if os.read(FD_ALIVE, 1) != b"g":
        os._exit(1)
    os.close(FD_ALIVE)


def _init(msg: dict, cfg: dict) -> None:
    """G: PID 1 of the request's namespace; never returns."""
    try:
        _wait_for_parent()
        limits = msg["limits"]
        jail.build_root(cfg["expose"] + msg.get("expose", []), msg.get("hide", []), limits["tmp"])
        jail.cap_processes(limits.get("processes") or 0)
        jail.drop_privileges()
        alive_w = _pipe_to_alive()
        worker = os.fork()
        if worker == 0:
            os.close(alive_w)
            _worker(msg, cfg)
        for fd in (FD_REQUEST, FD_RESULT, FD_PROGRESS, FD_ALIVE):
            os.close(fd)
        os.write(alive_w, b"g")
        while True:  # PID 1 reaps every orphan of the namespace until the worker is done
            pid, status = os.wait()
            if pid == worker:
                _exit_like(status)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)


def _set_limits(limits: dict, in_jail: bool) -> None:
    if limits.get("address_space"):
        # Bound new allocations: what the zygote already maps plus the allowance.
        resource.setrlimit(resource.RLIMIT_AS, (limits["address_space"], limits["address_space"]))
    if limits.get("file_size"):
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"], limits["file_size"]))
    if in_jail and limits.get("processes"):
        # Counted per user namespace, so only in the jail (outside it would count every process
        # of the server's user). Not enforced for root; the sandbox counts too.
        resource.setrlimit(resource.RLIMIT_NPROC, (limits["processes"], limits["processes"]))


def _worker(msg: dict, cfg: dict) -> None:
    """W: runs the request; never returns."""
    code = 0
    try:
        _wait_for_parent()
        me = os.getpid()
        limits = msg["limits"]
        if cfg["jail"]:  # the private /tmp is the only writable place: every scratch and cache path there
            os.environ.update(HOME="/tmp", TMPDIR="/tmp", TRITON_HOME="/tmp",
                              TRITON_CACHE_DIR="/tmp/.triton/cache")
            tempfile.tempdir = None
            os.chdir("/tmp")
            if hasattr(_HANDLER, "in_jail"):  # the handler's own settings for the jail's paths
                _HANDLER.in_jail()
        from inspector.isolation import progress

        progress._fd = FD_PROGRESS
        faulthandler.register(signal.SIGUSR1, file=2, all_threads=True)  # where a timeout struck
        size = os.fstat(FD_REQUEST).st_size
        request = json.loads(os.pread(FD_REQUEST, size, 0))
        os.close(FD_REQUEST)
        _set_limits(limits, cfg["jail"])
        result = _HANDLER.serve(request)
        if os.getpid() != me:  # a fork made by the user's code came back here: not the result
            os._exit(0)
        payload = json.dumps(result).encode()
        if limits.get("file_size") and len(payload) > limits["file_size"]:
            os._exit(EXIT_OUTPUT)
        view = memoryview(struct.pack(">Q", len(payload)) + payload)
        while view:
            view = view[os.write(FD_RESULT, view):]
    except MemoryError:
        code = EXIT_MEMORY
    except OSError as e:
        code = EXIT_OUTPUT if e.errno == errno.EFBIG else EXIT_CRASH
        if code == EXIT_CRASH:
            traceback.print_exc()
    except BaseException:  # noqa: BLE001 - report anything
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        code = EXIT_CRASH
    os._exit(code)


_HANDLER: Any = None  # the module named by the config's "handler" (`Sandbox(handler=)`)


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


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

    global _HANDLER
    _HANDLER = importlib.import_module(cfg["handler"])

    # Warming runs in steps between requests, never before one: the first request is forked as
    # soon as the imports are done (see the handler's warm_up_steps).
    steps = _HANDLER.warm_up_steps() if cfg.get("warm_up") else []
    cfg["expose"] = [*jail.SYSTEM_DIRS, *jail.python_paths(), REPO_ROOT]
    vm = _vm_size()
    zygote = os.getpid()

    def send(obj: dict) -> None:
        ctl.send(json.dumps(obj).encode())

    # A child's exit wakes the loop at once (SIGCHLD through a wake-up pipe).
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    gc.freeze()  # what is imported now is never collected: a request's GC passes skip it (fewer copied pages)
    send({"event": "ready", "vm_bytes": vm})
    children: dict[int, str] = {}
    by_id: dict[str, int] = {}
    quiet_since = time.monotonic()
    served = False  # a request has been forked: warm at once between requests from now on
    while True:
        idle = bool(steps) and not children and (served or not getattr(steps[0], "after_first_request", False))
        if not idle:
            wait = 1.0 if children else None
        elif served:
            wait = 0.0
        else:
            wait = max(0.0, quiet_since + WARM_AFTER_QUIET - time.monotonic())
        ready, _, _ = select.select([ctl, wake_r], [], [], wait)
        if idle and not ready:
            _warm_step(steps.pop(0))
            gc.freeze()
            quiet_since = time.monotonic()
            vm = _vm_size()  # a request's memory allowance counts from what the zygote maps now
            if not steps:
                send({"event": "warm", "vm_bytes": vm})
            continue
        if wake_r in ready:
            while True:
                try:
                    if not os.read(wake_r, 4096):
                        break
                except BlockingIOError:
                    break
        if ctl in ready:
            try:
                data, fds, _, _ = socket.recv_fds(ctl, 1 << 16, 8)
            except OSError:
                data, fds = b"", []
            if not data:
                break  # the server closed the socket, or is gone
            msg = json.loads(data)
            if msg.get("op") == "run" and len(fds) == 5:
                limits = msg.setdefault("limits", {})
                if limits.get("memory"):
                    limits["address_space"] = vm + int(limits["memory"])
                pid = os.fork()
                if pid == 0:
                    _request(msg, fds, cfg, zygote)
                quiet_since, served = time.monotonic(), True
                children[pid] = msg["id"]
                by_id[msg["id"]] = pid
                send({"id": msg["id"], "event": "started"})
            elif msg.get("op") == "kill" and msg.get("id") in by_id:
                _kill(by_id[msg["id"]])
            for fd in fds:
                os.close(fd)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            quiet_since = time.monotonic()
            rid = children.pop(pid, None)
            if rid is not None:
                by_id.pop(rid, None)
                code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                send({"id": rid, "event": "exited", "status": code})
    for pid in children:
        _kill(pid)
    os._exit(0)


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
