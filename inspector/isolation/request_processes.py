"""The processes of one request, as the worker manager (`inspector.isolation.zygote`) forks them.

A request is three processes, so that each has one job:

    C  the zygote's fork: a session of its own; in jail mode enters new user, PID, mount,
       network, IPC and UTS namespaces (`inspector.isolation.jail`); writes the request's
       identity on the info pipe; waits for its child and exits with its status. Killing C
       kills the request.
    G  PID 1 of the new PID namespace (jail mode only): builds the request's root, drops its
       capabilities, forks W and reaps everything until W is done. When G exits or dies, the
       kernel kills every process left in the namespace (setsid and double forks included).
    W  the worker: limits, then the handler's `serve(request)` (`inspector.worker.handler`),
       the user's code. Its result goes back, length-prefixed, on the request's own result
       pipe, which no other request holds.

**The spare.** Once warm (with `spare` in the config), the zygote makes the next request's
processes ahead (between requests; beside a running one if asked: `zygote.SPARE_BESIDE`): a spare C
enters the namespaces, its G builds the root as far as it can without the request
(`jail.enter_root`: the old root is kept at /.old) and forks W, which drops its privileges and
warms up in a scratch folder (the handler's `warm_spare`, the inspector's own code: a fresh fork
pays copy-on-write faults on the pages a request touches, a large part of a small kernel's warm
inspection (docs/performance.md#spares), which W then owns), then takes the copy-on-write faults
that remain ahead of the request (`own_pages`). Each says "ready" up the
chain. A request then goes to the spare over its socket, with its descriptors: C writes the info
line, G binds the request's paths, covers what is hidden, drops the scratch folder, detaches the
old root (`jail.seal_root`), drops its privileges and hands W the descriptors; W serves. What the
user's code sees is what a fork would have shown it (tests/isolation/test_spare.py compares the
two). Spare processes are named `inspector-spare` until their request comes. A spare serves one
request; one that dies first is replaced, and after `zygote.MAX_SPARE_FAILURES` the zygote forks
afresh only. A request that comes while the spare still warms is forked afresh, unless the spare is
nearly warm (`zygote.HOLD_FOR_SPARE`).

Each of them dies with its parent (PR_SET_PDEATHSIG), so killing the server or the zygote kills
every request in flight, and the spare. When the jail is unavailable (fallback mode), C forks W
directly and today's process group and resource limits are all there is (the sandbox says so).
"""

from __future__ import annotations

import errno
import faulthandler
import fcntl
import gc
import json
import os
import resource
import select
import shutil
import signal
import socket
import struct
import sys
import tempfile
import traceback
from typing import Any

from inspector.isolation import jail, progress
from inspector.isolation.own_pages import own_shared_pages

# Where the request's descriptors sit in C, G and W.
FD_REQUEST, FD_RESULT, FD_PROGRESS, FD_LOG, FD_INFO, FD_ALIVE = 3, 4, 5, 6, 7, 8
EXIT_MEMORY, EXIT_OUTPUT, EXIT_CRASH = 86, 87, 3
# Named in W's environment: the file W's compiler output goes to (fd 2 while Triton compiles, the
# handler's choice; `triton_compat.compiler_stderr`). W's parent (G in the jail, C without it) reads
# its end after W dies of a signal and puts it on the log: an LLVM assertion prints its message,
# then aborts, and without this the message died with W ("killed by SIGABRT", nothing else).
COMPILER_OUTPUT_ENV = "TRITON_INSPECTOR_COMPILER_OUTPUT"
SPARE_NAME = "inspector-spare"  # a spare's processes, as ps shows them until their request comes
SPARE_TMP = 1024**3  # a spare's /tmp before its request sizes it

HANDLER: Any = None  # the module named by the config's "handler" (`Sandbox(handler=)`), set by the zygote
NAME = "python"  # the zygote's process name, which a spare's processes take back with their request


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


def _compiler_output(pid: int, scratch: str | None) -> str:
    """W's compiler-output file: in the request's scratch folder without the jail, else in the
    jail's private /tmp (named by W's pid)."""
    return os.path.join(scratch, "compiler-output") if scratch else f"/tmp/.inspector-compiler-output-{pid}"


def _new_scratch(cfg: dict) -> str | None:
    """Without the jail, the request's own scratch folder (W's TMPDIR), made by C and named on the
    info line: whoever ends the request removes it (C after W, the sandbox after killing them),
    so a request killed mid-compile leaves nothing in the machine's /tmp. In the jail the private
    /tmp is that folder."""
    return None if cfg["jail"] else tempfile.mkdtemp(prefix=jail.SCRATCH_PREFIX)


def _report_compiler_output(worker: int, status: int, scratch: str | None) -> None:
    """After W (`worker`) is done: if it died of a signal, the end of its compiler output onto the
    log (fd 2 here); the file is removed either way. Never raises."""
    path = _compiler_output(worker, scratch)
    try:
        if os.WIFSIGNALED(status):
            with open(path, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 4000))
                tail = f.read().strip()
            if tail:
                os.write(2, b"\nthe compiler's last output before the worker died:\n" + tail + b"\n")
    except OSError:
        pass
    try:
        os.unlink(path)
    except OSError:
        pass


def _exit_like(status: int) -> None:
    """Leave with the same outcome as a child whose wait status is `status`."""
    if os.WIFSIGNALED(status):
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else EXIT_CRASH)


def request(msg: dict, fds: list[int], cfg: dict, zygote: int) -> None:
    """C of a request forked afresh: runs in the zygote's fork; never returns."""
    try:
        _leave_session(zygote)
        _place_descriptors(fds)
        alive_w = _pipe_to_alive()
        os.dup2(FD_LOG, 2)
        _enter_request(cfg)
        msg["scratch"] = _new_scratch(cfg)
        child = os.fork()
        if child == 0:
            os.close(alive_w)
            os.close(FD_INFO)
            (_init if cfg["jail"] else _worker)(msg, cfg)
        _write_info(child, cfg, scratch=msg["scratch"])
        for fd in (FD_REQUEST, FD_RESULT, FD_PROGRESS, FD_LOG, FD_INFO):
            os.close(fd)
        os.write(alive_w, b"g")  # the child may go on: the info line is out first
        _end_like(child, msg["scratch"])
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


def _enter_request(cfg: dict) -> None:
    """C's set-up before its child: stdin and stdout on /dev/null, no core files, and in jail mode
    the request's namespaces."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if cfg["jail"]:
        jail.enter_request_namespaces()


def _write_info(child: int, cfg: dict, ns: int | None = None, scratch: str | None = None) -> None:
    """The request's identity on FD_INFO, for the sandbox to watch and kill it by (`ns`: the
    request's PID namespace, where the child's /proc entry is out of sight), and its scratch
    folder, for the sandbox to remove if it kills the request."""
    if cfg["jail"] and ns is None:
        ns = jail.pid_namespace(child)
    info = {"pgid": os.getpid(), "ns": ns, "worker": None if cfg["jail"] else child, "scratch": scratch}
    os.write(FD_INFO, (json.dumps(info) + "\n").encode())


def _end_like(child: int, scratch: str | None) -> None:
    """C's last step: wait for its child and exit with its status (without the jail, the child is
    W: what its compiler printed last goes on the log if it died of a signal, and its scratch
    folder is removed)."""
    _, status = os.waitpid(child, 0)
    if scratch:
        _report_compiler_output(child, status, scratch)
        shutil.rmtree(scratch, ignore_errors=True)
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
            _report_compiler_output(worker, status, None)
            _exit_like(status)


# ---- a spare request: forked and warmed before its request comes ---------------------------------

def fork_spare(cfg: dict, zygote: int) -> tuple[int, socket.socket]:
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


def _await_request(up: socket.socket, down: socket.socket | None, count: int) -> tuple[bytes, list[int]]:
    """Report ready upwards and wait for the request: its message and `count` descriptors. Leaves
    if the parent closes its end (the spare retired) or the child (`down`, if any) dies first."""
    up.send(b"ready")
    if down is not None and down in select.select([up, down], [], [])[0]:
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
        _enter_request(cfg)
        child, down, ns = _spare_child(cfg, _spare_init if cfg["jail"] else _spare_worker)
        data, fds = _await_request(socket.socket(fileno=3), down, 5)
        jail.set_process_name(NAME)
        _place_descriptors([*fds, down.detach()])  # the child's socket at FD_ALIVE
        os.dup2(FD_LOG, 2)
        scratch = _new_scratch(cfg)
        if scratch:
            data = json.dumps({**json.loads(data), "scratch": scratch}).encode()
        _write_info(child, cfg, ns, scratch)
        _hand_down(data, FD_ALIVE)
        os.close(FD_INFO)
        _end_like(child, scratch)
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
        jail.set_process_name(NAME)
        msg = json.loads(data)
        limits = msg["limits"]
        jail.seal_root(bound, msg.get("expose", []), msg.get("hide", []), limits["tmp"], spare=True)
        jail.cap_processes(limits.get("processes") or 0)
        jail.drop_privileges()
        _place_descriptors([*fds, down.detach()])  # FD_REQUEST..FD_LOG, the worker's socket after them
        os.dup2(FD_LOG, 2)  # as a fresh G's: where W's last compiler output goes if W dies of a signal
        _hand_down(data, FD_INFO)
        _reap_until(worker)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)


def _spare_worker(cfg: dict, fd: int) -> None:
    """A spare W: drops its privileges, warms up (the handler's `warm_spare`: the pages a request
    touches become this process's own; if it raises, W exits and the zygote makes another),
    then waits for its request; never returns."""
    try:
        jail.set_parent_death_signal()
        if cfg["jail"]:
            jail.drop_privileges()  # before any code runs: unsharing needs a single thread
            _scratch_at(jail.SPARE_SCRATCH)
        # What the warm-up opens (a native one: CUDA's device files, which must stay open) goes
        # above the request's descriptors.
        placeholders = [os.open(os.devnull, os.O_RDONLY) for _ in range(FD_REQUEST + 1, FD_ALIVE + 1)]
        if hasattr(HANDLER, "warm_spare"):  # one that fails is no spare: its state is not to be trusted
            # On this thread: what its warm-up allocates (LLVM's and MLIR's memory too) must be in
            # the malloc arena the request allocates from. Warmed on another thread (one of idle
            # priority was tried), the request faulted its pages in from an arena of its own and
            # took longer (docs/performance.md#spares).
            HANDLER.warm_spare(native=bool(cfg.get("native")), target=cfg.get("warm_target"))
        gc.collect()
        gc.freeze()
        own_shared_pages()  # the copy-on-write faults a request would take, taken now
        data, fds = _await_request(socket.socket(fileno=fd), None, 4)  # closes fd: FD_REQUEST is free
        jail.set_process_name(NAME)
        for i, received in enumerate(fds):
            os.dup2(received, FD_REQUEST + i, inheritable=True)
            os.close(received)
        for held in placeholders:
            if held > FD_LOG:  # the others were replaced just now
                os.close(held)
        _close_files_of_the_warm_up()
        os.dup2(FD_LOG, 2)
        msg = json.loads(data)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        os._exit(EXIT_CRASH)
    _serve(msg, cfg)


def _close_files_of_the_warm_up() -> None:
    """Close what a spare's warm-up left open on the file system, device nodes excepted (CUDA's
    context lives on them): nothing it opened while the old root was in view reaches the request."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= FD_LOG:
            continue
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the listing's own descriptor, closed already
        if target.startswith("/") and not target.startswith("/dev/"):
            os.close(fd)


def _set_limits(limits: dict, in_jail: bool) -> None:
    if limits.get("address_space"):
        # Bound new allocations: what this worker maps when its request starts plus the allowance.
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
    if hasattr(HANDLER, "in_jail"):  # the handler's own settings for the jail's paths
        HANDLER.in_jail(folder)


def _serve(msg: dict, cfg: dict) -> None:
    """W, its request's descriptors in place: its paths (in the jail), limits, the handler's
    `serve`, the result; never returns."""
    code = 0
    try:
        if cfg["jail"]:
            _scratch_at("/tmp")
        elif msg.get("scratch"):  # the request's own folder (`_new_scratch`); its cwd and HOME stay the caller's
            os.environ["TMPDIR"] = msg["scratch"]
            tempfile.tempdir = None
        me = os.getpid()
        limits = msg["limits"]
        if limits.get("memory"):  # new allocations bounded: what this process maps now plus the allowance
            limits["address_space"] = _vm_size() + int(limits["memory"])
        progress._fd = FD_PROGRESS
        os.environ[COMPILER_OUTPUT_ENV] = _compiler_output(me, msg.get("scratch"))
        faulthandler.register(signal.SIGUSR1, file=2, all_threads=True)  # where a timeout struck
        size = os.fstat(FD_REQUEST).st_size
        request = json.loads(os.pread(FD_REQUEST, size, 0))
        os.close(FD_REQUEST)
        _set_limits(limits, cfg["jail"])
        result = HANDLER.serve(request)
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


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0
