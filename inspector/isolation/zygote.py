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
         {"event": "spare"}                     a spare (below) is ready for the next request
         {"id": "...", "event": "started", "spare": bool}
         {"id": "...", "event": "exited", "status": 0 | -signal | code}

A request is three processes, so that each has one job:

    C  the zygote's fork: a session of its own; in jail mode enters new user, PID, mount,
       network, IPC and UTS namespaces (`inspector.isolation.jail`); writes the request's identity on the
       info pipe; waits for its child and exits with its status. Killing C kills the request.
    G  PID 1 of the new PID namespace (jail mode only): builds the request's root, drops its
       capabilities, forks W and reaps everything until W is done. When G exits or dies, the
       kernel kills every process left in the namespace (setsid and double forks included).
    W  the worker: limits, then the handler's `serve(request)` (`inspector.compile.worker`), the user's code. Its result
       goes back, length-prefixed, on the request's own result pipe, which no other request holds.

**The spare.** Once warm (with `spare` in the config), and whenever no request is in flight, the
zygote makes the next request's processes ahead: a spare C enters the namespaces, its G builds
the root as far as it can without the request (`jail.enter_root`: the old root is kept at /.old)
and forks W, which drops its privileges and warms up in a scratch folder (the handler's
`warm_spare`, the inspector's own code: a fresh fork pays ~20 ms of copy-on-write faults on the
pages a request touches, which W then owns). Each says "ready" up the chain. A request then goes
to the spare over its socket, with its descriptors: C writes the info line, G binds the request's
paths, covers what is hidden, drops the scratch folder, detaches the old root (`jail.seal_root`),
drops its privileges and hands W the descriptors; W serves. What the user's code sees is what a
fork would have shown it (tests/isolation/test_spare.py compares the two). Spare processes are
named `inspector-spare` until their request comes. A spare serves one request; one that dies
first is replaced, and after MAX_SPARE_FAILURES the zygote forks afresh only. A request that
comes while the spare still warms is forked afresh.

Each of them dies with its parent (PR_SET_PDEATHSIG), so killing the server or the zygote kills
every request in flight, and the spare. The zygote never runs user code and never initialises CUDA, so forking
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
SPARE_NAME = "inspector-spare"  # a spare's processes, as ps shows them until their request comes
SPARE_TMP = 1024**3  # a spare's /tmp before its request sizes it
MAX_SPARE_FAILURES = 3  # spares that died before their request: after these, none is made any more


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
        _leave_session(zygote)
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
        _write_info(child, cfg)
        for fd in (FD_REQUEST, FD_RESULT, FD_PROGRESS, FD_LOG, FD_INFO):
            os.close(fd)
        os.write(alive_w, b"g")  # the child may go on: the info line is out first
        _end_like(child)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)


def _leave_session(zygote: int) -> None:
    """C's first steps: out of the zygote's signal handling, a session of its own, dying with it."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.setsid()
    jail.set_parent_death_signal()
    if os.getppid() != zygote:
        os._exit(1)


def _write_info(child: int, cfg: dict, ns: int | None = None) -> None:
    """The request's identity on FD_INFO, for the sandbox to watch and kill it by (`ns`: the
    request's PID namespace, where the child's /proc entry is out of sight)."""
    if cfg["jail"] and ns is None:
        ns = jail.pid_namespace(child)
    info = {"pgid": os.getpid(), "ns": ns, "worker": None if cfg["jail"] else child}
    os.write(FD_INFO, (json.dumps(info) + "\n").encode())


def _end_like(child: int) -> None:
    """C's last step: wait for its child and exit with its status."""
    _, status = os.waitpid(child, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
    if code > 128 and code - 128 in signal.valid_signals():
        # die of the same signal, so the sandbox reports it; SIGKILL and SIGSTOP take no handler
        if code - 128 not in (signal.SIGKILL, signal.SIGSTOP):
            signal.signal(code - 128, signal.SIG_DFL)
        os.kill(os.getpid(), code - 128)
    os._exit(code)


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
        _reap_until(worker)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)


def _reap_until(worker: int) -> None:
    """G's last step: as PID 1, reap every orphan of the namespace until the worker is done."""
    while True:
        pid, status = os.wait()
        if pid == worker:
            _exit_like(status)


# ---- a spare request: forked and warmed before its request comes ---------------------------------

def _fork_spare(cfg: dict, zygote: int) -> tuple[int, socket.socket]:
    """Fork a spare C (see the module docstring); returns its pid and the zygote's end of its socket,
    which says b"ready" once the spare's worker is warm and then carries the request."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        mine.close()
        _spare_request(cfg, zygote, theirs.detach())
    theirs.close()
    return pid, mine  # the caller closes it when the spare is used or retired


def _spare_child(cfg: dict, role) -> tuple[int, socket.socket, int | None]:
    """Fork the next process of a spare chain, which runs `role(cfg, fd)` with `fd` its end of a
    new socket pair; returns its pid, this end, and its PID namespace in the jail, once that
    child said b"ready". The namespace is read before the child may go on: a spare G's
    pivot_root moves its parent's root too (one mount namespace), after which its parent's /proc
    shows only the request's processes."""
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    child = os.fork()
    if child == 0:
        mine.close()
        _place_descriptors([theirs.detach()])  # nothing of its parent's: its socket at 3
        if os.read(3, 16) != b"go":
            os._exit(1)
        role(cfg, 3)
    theirs.close()
    ns = jail.pid_namespace(child) if cfg["jail"] and role is _spare_init else None
    mine.send(b"go")
    if mine.recv(16) != b"ready":
        os._exit(EXIT_CRASH)  # the child died warming up
    return child, mine, ns


def _await_request(up: socket.socket, down: socket.socket, count: int) -> tuple[bytes, list[int]]:
    """Report ready upwards and wait for the request: its message and `count` descriptors. Leaves
    if the parent closes its end (the spare retired) or the child dies first."""
    up.send(b"ready")
    ready, _, _ = select.select([up, down], [], [])
    if down in ready:
        os._exit(EXIT_CRASH)
    data, fds, _, _ = socket.recv_fds(up, 1 << 16, 8)
    if not data or len(fds) != count:
        os._exit(0)
    up.close()
    return data, fds


def _spare_request(cfg: dict, zygote: int, fd: int) -> None:
    """A spare C: as `_request`, but the namespaces, the root and a warm worker are made before the
    request, whose descriptors then come over the zygote's socket; never returns."""
    try:
        _leave_session(zygote)
        jail.set_process_name(SPARE_NAME)  # G and W inherit it; each takes the zygote's back with a request
        _place_descriptors([fd])
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.close(null)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if cfg["jail"]:
            jail.enter_request_namespaces()
        child, down, ns = _spare_child(cfg, _spare_init if cfg["jail"] else _spare_worker)
        data, fds = _await_request(socket.socket(fileno=3), down, 5)
        jail.set_process_name(_NAME)
        _place_descriptors([*fds, down.detach()])  # the child's socket at FD_ALIVE
        os.dup2(FD_LOG, 2)
        _write_info(child, cfg, ns)
        _hand_down(data, FD_ALIVE)
        os.close(FD_INFO)
        _end_like(child)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)


def _hand_down(data: bytes, fd: int) -> None:
    """Pass the request and the worker's four descriptors (FD_REQUEST..FD_LOG) to the child on
    socket `fd`; close them all here."""
    down = socket.socket(fileno=fd)
    socket.send_fds(down, [data], [FD_REQUEST, FD_RESULT, FD_PROGRESS, FD_LOG])
    down.close()
    for fd in (FD_REQUEST, FD_RESULT, FD_PROGRESS, FD_LOG):
        os.close(fd)


def _spare_init(cfg: dict, fd: int) -> None:
    """A spare G: the root as far as it goes without the request (`jail.enter_root`), a scratch
    folder and a warm worker; when the request comes, its paths bound, the root sealed, privileges
    dropped, and the worker handed its descriptors; never returns."""
    try:
        jail.set_parent_death_signal()
        bound = jail.enter_root(cfg["expose"], SPARE_TMP)
        jail.spare_scratch()
        worker, down, _ = _spare_child(cfg, _spare_worker)
        data, fds = _await_request(socket.socket(fileno=fd), down, 4)
        jail.set_process_name(_NAME)
        msg = json.loads(data)
        limits = msg["limits"]
        jail.seal_root(bound, msg.get("expose", []), msg.get("hide", []), limits["tmp"], spare=True)
        jail.cap_processes(limits.get("processes") or 0)
        jail.drop_privileges()
        _place_descriptors([*fds, down.detach()])  # FD_REQUEST..FD_LOG, the worker's socket after them
        _hand_down(data, FD_INFO)
        _reap_until(worker)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)


def _spare_worker(cfg: dict, fd: int) -> None:
    """A spare W: drops its privileges, warms up (the handler's `warm_spare`: the pages a request
    touches become this process's own), then waits for its request; never returns."""
    try:
        jail.set_parent_death_signal()
        if cfg["jail"]:
            jail.drop_privileges()  # before any code runs: unsharing needs a single thread
            _scratch_at(jail.SPARE_SCRATCH)
        if hasattr(_HANDLER, "warm_spare"):
            _warm_step(_HANDLER.warm_spare)
        gc.collect()
        gc.freeze()
        up = socket.socket(fileno=fd)
        up.send(b"ready")
        data, fds, _, _ = socket.recv_fds(up, 1 << 16, 8)
        if not data or len(fds) != 4:
            os._exit(0)
        up.close()
        jail.set_process_name(_NAME)
        _place_descriptors(fds)
        os.dup2(FD_LOG, 2)
        msg = json.loads(data)
        if cfg["jail"]:
            _scratch_at("/tmp")
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)
    _serve(msg, cfg)


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
    try:
        _wait_for_parent()
        if cfg["jail"]:
            _scratch_at("/tmp")
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)
    _serve(msg, cfg)


def _scratch_at(folder: str) -> None:
    """In the jail: every scratch and cache path of the worker under `folder` (the private /tmp,
    the only writable place; a spare's scratch folder while it warms up)."""
    os.environ.update(HOME=folder, TMPDIR=folder, TRITON_HOME=folder, TRITON_CACHE_DIR=f"{folder}/.triton/cache")
    tempfile.tempdir = None
    os.chdir(folder)
    if hasattr(_HANDLER, "in_jail"):  # the handler's own settings for the jail's paths
        _HANDLER.in_jail(folder)


def _serve(msg: dict, cfg: dict) -> None:
    """W, its request's descriptors in place: limits, the handler's `serve`, the result; never returns."""
    code = 0
    try:
        me = os.getpid()
        limits = msg["limits"]
        if limits.get("memory"):  # new allocations bounded: what this process maps now plus the allowance
            limits["address_space"] = _vm_size() + int(limits["memory"])
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
_NAME = "python"  # the zygote's process name, which a spare's processes take back with their request


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

    global _HANDLER, _NAME
    _HANDLER = importlib.import_module(cfg["handler"])
    with open("/proc/self/comm") as f:
        _NAME = f.read().strip()

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
    spare: tuple[int, socket.socket] | None = None  # the spare C and its socket
    spare_ready, spare_failures = False, 0
    while True:
        idle = bool(steps) and not children and (served or not getattr(steps[0], "after_first_request", False))
        if (cfg.get("spare") and spare is None and not steps and not children
                and spare_failures < MAX_SPARE_FAILURES):
            # Warm and between requests: make the next request's processes now.
            spare, spare_ready = _fork_spare(cfg, zygote), False
        if not idle:
            wait = 1.0 if children else None
        elif served:
            wait = 0.0
        else:
            wait = max(0.0, quiet_since + WARM_AFTER_QUIET - time.monotonic())
        ready, _, _ = select.select([ctl, wake_r] + ([spare[1]] if spare else []), [], [], wait)
        if spare and spare[1] in ready:
            if spare[1].recv(16) == b"ready" and not spare_ready:
                spare_ready = True
                send({"event": "spare"})
            else:  # it died (or said something it should not): retire it
                _kill(spare[0])
                spare[1].close()
                spare, spare_failures = None, spare_failures + 1
                if spare_failures == MAX_SPARE_FAILURES:
                    print(f"inspector: {spare_failures} spare workers died before their request; "
                          "requests are forked afresh from now on", file=sys.stderr, flush=True)
            continue
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
                pid = None
                if spare and spare_ready:
                    try:
                        socket.send_fds(spare[1], [json.dumps(msg).encode()], fds)
                        pid = spare[0]
                    except OSError:  # it died since it said ready
                        _kill(spare[0])
                    spare[1].close()
                    spare = None
                if pid is None:
                    pid = os.fork()
                    if pid == 0:
                        _request(msg, fds, cfg, zygote)
                    from_spare = False
                else:
                    from_spare = True
                quiet_since, served = time.monotonic(), True
                children[pid] = msg["id"]
                by_id[msg["id"]] = pid
                send({"id": msg["id"], "event": "started", "spare": from_spare})
            elif msg.get("op") == "kill" and msg.get("id") in by_id:
                _kill(by_id[msg["id"]])
            for fd in fds:
                os.close(fd)
        while True:  # requests that ended, and spares that died
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if spare and pid == spare[0]:  # a spare died: retire it now, before its pid can be reused
                spare[1].close()
                spare, spare_failures = None, spare_failures + 1
                continue
            quiet_since = time.monotonic()
            rid = children.pop(pid, None)
            if rid is not None:
                by_id.pop(rid, None)
                code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                send({"id": rid, "event": "exited", "status": code})
    for pid in [*children, *([spare[0]] if spare else [])]:
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
