"""A warm worker pool shared by a user's CLI calls and the app: one daemon per key, reached over a socket.

Without it every `python -m inspector compile` starts a worker manager (`inspector.compile.zygote`)
that imports torch and Triton, a second or more per call before any compiling. With it the first
call starts a daemon, `python -m inspector.compile.pool serve ...`, that owns one `Sandbox` (the
same warm zygote, the same jail, the same limits as in-process: this module adds no sandboxing of
its own and removes none) and serves requests over an AF_UNIX socket; later calls only connect.
`inspector.compile.sandboxes.default_sandbox()` hands out a `PoolClient` (a drop-in for `Sandbox`)
while $TRITON_INSPECTOR_POOL is not "0", so the CLI and the app share the daemon.

Decisions:

- **Where**: `$TRITON_INSPECTOR_HOME/pool/` (default `~/.local/share/triton-inspector/pool/`),
  created 0700 and refused when another user owns it or it is a symlink; per daemon
  `<key>.sock` (0600), `<key>.json` (who it is), `<key>.log` (its stderr, 0600), `<key>.lock`
  (held by the daemon for its whole life) and `<key>.start` (held by the client that starts it, so
  two simultaneous first calls start one daemon). The inspector's home is one of the paths every
  compile's jail hides (`sandbox.hidden_paths`), so a kernel file never sees the socket. A path
  too long for AF_UNIX (108 bytes) is reached through `/proc/self/fd/<dir>/<key>.sock`.
- **Who may connect**: the directory's mode, the socket's mode, and on every connection the
  peer's uid (SO_PEERCRED) must be this user's; the client checks the daemon's uid the same way.
- **The key** (in the socket's name): a hash of the interpreter the worker manager runs, the
  daemon's interpreter, the checkout and a hash of every .py file of the `inspector` package (an
  edited checkout gets a fresh pool), the sandbox mode, and the environment the workers get
  (`pool_environment()`: `clean_environment()` less the inspector's own caller-side variables
  such as TRITON_INSPECTOR_PREWARM or _TIMEOUT, plus the resolved inspector home and cache folder,
  which the jail hides). Callers whose key differs get a daemon of their own.
- **Lifetime**: started detached (its own session) on first use; stops after
  $TRITON_INSPECTOR_POOL_IDLE seconds (default 300) with no connection open; `python -m inspector
  pool stop` stops it at once (compiles in flight end as "cancelled"). Killing it kills its
  zygote and every compile in flight (bwrap's --die-with-parent / PR_SET_PDEATHSIG, as today); the
  next call starts a new one. The daemon's zygote does the warm-up compile (a long-lived worker
  manager is worth it; $TRITON_INSPECTOR_POOL_PREWARM=0 skips it).
- **A request** is one connection: length-prefixed JSON frames. The client sends {"op": "run",
  "request", "limits"}; the daemon answers "accepted" (with its isolation, which the client warns
  about on its own stderr like `Sandbox` does), then "progress" frames (the phase and line the
  worker announces, for `active()`), then "result" or "error" (a `SandboxError`'s kind, message,
  details). The client's cancel event sends {"op": "cancel"}; the connection closing (the client
  killed) does the same: the daemon's `Sandbox.run` kills the request's processes, and a
  cancel's answer only comes once they are gone.
- **Never fail a compile because of the pool**: when the daemon cannot be started or reached, the
  client runs the request in an in-process `Sandbox` (today's behaviour), says why once on stderr,
  and tries the pool again a minute later. A daemon that stops between the connect and the
  "accepted" (an idle stop racing a new call) is started again and the request resent; one that
  dies after accepting fails the request as "crashed", as a dying zygote does.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import hashlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator
from contextlib import contextmanager

from .sandbox import (REPO_ROOT, ZYGOTE_START_TIMEOUT, Limits, Sandbox, SandboxError, _warn_once,
                      clean_environment, isolation)

IDLE_ENV = "TRITON_INSPECTOR_POOL_IDLE"
PREWARM_ENV = "TRITON_INSPECTOR_POOL_PREWARM"
DEFAULT_IDLE = 300.0
START_TIMEOUT = 60.0  # seconds a client waits for a daemon to listen (the zygote starts after)
RETRY_AFTER = 60.0  # seconds an unreachable pool is left alone before the next try
MAX_FRAME = 1 << 30
# The inspector's own variables that only its caller reads: not passed to workers, not in the key.
_CALLER_ONLY = "TRITON_INSPECTOR_"
_SUN_PATH_MAX = 100
PACKAGE_DIR = Path(__file__).resolve().parent.parent


# ---- where, and which pool ---------------------------------------------------------------------

def inspector_home() -> str:
    """$TRITON_INSPECTOR_HOME, or ~/.local/share/triton-inspector (as the workspaces use)."""
    return os.environ.get("TRITON_INSPECTOR_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share",
                                                                   "triton-inspector")


def pool_dir(create: bool = True) -> str:
    """The private folder of this user's pools (mode 0700). Raises OSError when it is not this
    user's own or is not a plain folder."""
    path = os.path.join(inspector_home(), "pool")
    if create:
        os.makedirs(inspector_home(), exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    st = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path) or st.st_uid != os.getuid():
        raise OSError(errno.EPERM, f"{path} is not a folder of this user's")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def _dedupe_path(value: str) -> str:
    seen: list[str] = []
    for part in value.split(os.pathsep):
        if part and part not in seen:
            seen.append(part)
    return os.pathsep.join(seen)


def pool_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The daemon's environment, which its zygote and workers get (cleaned again by `Sandbox`):
    `clean_environment(base)` without the inspector's caller-side variables, with the inspector
    home and the cache folder resolved as `base` resolves them (the jail hides both:
    `sandbox.hidden_paths` reads them in the daemon; the same rules as `cache.default_cache_dir`)
    and the sandbox mode. Applying it to its own result changes nothing."""
    base = dict(os.environ if base is None else base)
    env = {k: v for k, v in clean_environment(base).items() if not k.startswith(_CALLER_ONLY)}
    env["PYTHONPATH"] = _dedupe_path(env.get("PYTHONPATH", ""))
    home = base.get("HOME") or os.path.expanduser("~")
    env["TRITON_INSPECTOR_HOME"] = os.path.abspath(
        base.get("TRITON_INSPECTOR_HOME") or os.path.join(home, ".local", "share", "triton-inspector"))
    env["TRITON_INSPECTOR_CACHE"] = os.path.abspath(
        base.get("TRITON_INSPECTOR_CACHE")
        or os.path.join(base.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "triton-inspector"))
    env["TRITON_INSPECTOR_SANDBOX"] = (base.get("TRITON_INSPECTOR_SANDBOX") or "auto").lower()
    return env


_code_memo: tuple[tuple, str] | None = None


def code_digest() -> str:
    """A hash of every .py file of the inspector package (recomputed only when one's size or
    modification time changed)."""
    global _code_memo
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    stamp = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            continue
        stamp.append((str(f), st.st_size, st.st_mtime_ns))
    signature = tuple(stamp)
    if _code_memo is not None and _code_memo[0] == signature:
        return _code_memo[1]
    h = hashlib.sha256()
    for path, _, _ in stamp:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        h.update(os.path.relpath(path, PACKAGE_DIR).encode() + b"\0" + data + b"\0")
    digest = h.hexdigest()
    _code_memo = (signature, digest)
    return digest


def pool_key(python: str | None = None, env: dict[str, str] | None = None) -> str:
    """The key of the pool a caller with environment `env` (default this process's), compiling with
    interpreter `python` (default this one), may use."""
    penv = pool_environment(env)
    parts = {"python": os.path.abspath(python or sys.executable), "daemon": os.path.abspath(sys.executable),
             "repo": REPO_ROOT, "code": code_digest(), "mode": penv["TRITON_INSPECTOR_SANDBOX"],
             "env": sorted(penv.items()), "uid": os.getuid()}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:24]


def _paths(folder: str, key: str) -> dict[str, str]:
    return {ext: os.path.join(folder, f"{key}.{ext}") for ext in ("sock", "json", "log", "lock", "start")}


@contextmanager
def _address(path: str) -> Iterator[str]:
    """An AF_UNIX address for `path`: itself, or through /proc/self/fd when it is too long."""
    if len(os.fsencode(path)) <= _SUN_PATH_MAX:
        yield path
        return
    fd = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{os.path.basename(path)}"
    finally:
        os.close(fd)


def _peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def _held(lock_path: str) -> bool:
    """Whether a daemon holds this lock file (it does for its whole life)."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


# ---- frames --------------------------------------------------------------------------------------

class _Conn:
    """Length-prefixed JSON frames (8-byte big-endian length, then the JSON) on a stream socket."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.frames: list[dict[str, Any]] = []
        self.eof = False
        self._send_lock = threading.Lock()

    def send(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj, default=str).encode()
        with self._send_lock:
            self.sock.sendall(struct.pack(">Q", len(data)) + data)

    def _split(self) -> None:
        while len(self.buf) >= 8:
            n = struct.unpack(">Q", bytes(self.buf[:8]))[0]
            if n > MAX_FRAME:
                raise OSError(errno.EPROTO, "frame too large")
            if len(self.buf) < 8 + n:
                break
            self.frames.append(json.loads(bytes(self.buf[8:8 + n])))
            del self.buf[:8 + n]

    def poll(self, timeout: float) -> list[dict[str, Any]] | None:
        """The frames there are, waiting up to `timeout` seconds for one ([] when none came);
        None once the peer has closed and every frame was read."""
        end = time.monotonic() + timeout
        while not self.frames and not self.eof:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                break
            try:
                data = self.sock.recv(1 << 20)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            if not data:
                self.eof = True
                break
            self.buf += data
            self._split()
        if not self.frames and self.eof:
            return None
        out, self.frames = self.frames, []
        return out

    def read_one(self, timeout: float) -> dict[str, Any] | None:
        """The next frame, or None (the peer closed, or nothing came within `timeout`)."""
        frames = self.poll(timeout)
        if not frames:
            return None
        self.frames = frames[1:] + self.frames
        return frames[0]

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


# ---- the daemon ----------------------------------------------------------------------------------

class _PoolSandbox(Sandbox):
    """The daemon's `Sandbox`, which also tells the phase of a given request (for the client's
    `active()`) and counts zygote starts (for `pool status`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._runs: dict[int, Any] = {}
        self.zygote_starts = 0

    def _start(self):  # type: ignore[override]
        self.zygote_starts += 1
        return super()._start()

    def _wait(self, run, pending, limits, cancel, request):  # type: ignore[override]
        self._runs[id(request)] = run
        try:
            return super()._wait(run, pending, limits, cancel, request)
        finally:
            self._runs.pop(id(request), None)

    def progress_of(self, request: dict[str, Any]) -> dict[str, Any] | None:
        run = self._runs.get(id(request))
        marker = getattr(run, "marker", None) or {}
        return {"phase": marker.get("phase"), "line": marker.get("line")} if run is not None else None

    def zygote_pid(self) -> int | None:
        proc = getattr(self, "_proc", None)
        return proc.pid if proc is not None and proc.poll() is None else None


class PoolServer:
    def __init__(self, folder: str, key: str, python: str, idle: float, prewarm: bool) -> None:
        self.folder, self.key, self.python, self.idle = folder, key, python, idle
        self.paths = _paths(folder, key)
        self.box = _PoolSandbox(python=python, warm_up_worker=prewarm)
        self.lock = threading.Lock()
        self.conns = 0
        self.running: dict[int, threading.Event] = {}
        self.served = 0
        self.started = time.time()
        self.last = time.monotonic()
        self.closing = False
        self.stop_reason = ""
        self.threads: list[threading.Thread] = []
        self.listener: socket.socket | None = None

    def info(self, asking: int = 0) -> dict[str, Any]:
        """Who this daemon is and what it does; `asking`: connections to leave out (a status request's own)."""
        with self.lock:
            conns, running, served = self.conns - asking, len(self.running), self.served
            idle_for = 0.0 if conns else time.monotonic() - self.last
        return {"key": self.key, "pid": os.getpid(), "python": self.python, "daemon_python": sys.executable,
                "repo": REPO_ROOT, "code": code_digest(), "mode": os.environ.get("TRITON_INSPECTOR_SANDBOX", "auto"),
                "started": self.started, "idle_limit": self.idle, "idle_for": round(idle_for, 3),
                "running": running, "served": served, "zygote_pid": self.box.zygote_pid(),
                "zygote_starts": self.box.zygote_starts, "socket": self.paths["sock"]}

    def listen(self) -> None:
        try:
            os.unlink(self.paths["sock"])
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        with _address(self.paths["sock"]) as addr:
            sock.bind(addr)
        os.chmod(self.paths["sock"], 0o600)
        sock.listen(64)
        self.listener = sock
        tmp = self.paths["json"] + f".{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump({k: v for k, v in self.info().items() if k not in ("idle_for", "running", "served")}, f)
        os.replace(tmp, self.paths["json"])

    def serve_forever(self) -> None:
        signal.signal(signal.SIGTERM, lambda *_: self._request_stop("stopped by SIGTERM"))
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        self.listen()
        # Start the zygote now: the first request would otherwise wait for torch's import from its start.
        threading.Thread(target=self._warm, daemon=True).start()
        assert self.listener is not None
        while not self.closing:
            ready = select.select([self.listener], [], [], 0.5)[0]
            if ready:
                try:
                    sock, _ = self.listener.accept()
                except OSError:
                    continue
                with self.lock:
                    self.conns += 1
                t = threading.Thread(target=self._handle, args=(sock,), daemon=True)
                self.threads = [x for x in self.threads if x.is_alive()] + [t]
                t.start()
                continue
            with self.lock:
                idle = self.conns == 0 and time.monotonic() - self.last > self.idle
            if idle:
                self._request_stop(f"idle for {self.idle:g} s")
        self.shutdown()

    def _warm(self) -> None:
        try:
            self.box.warm_up()
        except Exception as e:  # noqa: BLE001 - the first request reports it
            sys.stderr.write(f"pool: the worker manager did not start: {e}\n")

    def _request_stop(self, why: str) -> None:
        # No lock: this also runs as the SIGTERM handler, in the main thread, which may hold it.
        if not self.stop_reason:
            self.stop_reason = why
        self.closing = True

    def shutdown(self) -> None:
        sys.stderr.write(f"pool {self.key}: stopping ({self.stop_reason})\n")
        for path in (self.paths["sock"], self.paths["json"]):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        if self.listener is not None:
            self.listener.close()
        with self.lock:
            for event in self.running.values():
                event.set()
        end = time.monotonic() + 20
        for t in self.threads:
            t.join(max(0.0, end - time.monotonic()))
        self.box.close()

    def _handle(self, sock: socket.socket) -> None:
        conn = _Conn(sock)
        try:
            if _peer_uid(sock) != os.getuid():
                return  # another user: not a word
            msg = conn.read_one(30)
            if msg is None:
                return
            op = msg.get("op")
            if op == "run":
                self._run(conn, msg)
            elif op == "status":
                conn.send({"event": "status", **self.info(asking=1), "isolation": self.box.isolation()})
            elif op == "warm_up":
                try:
                    warm = self.box.warm_up(complete=bool(msg.get("complete")), timeout=float(msg.get("timeout") or 120))
                    conn.send({"event": "ok", "warm": bool(warm)})
                except SandboxError as e:
                    conn.send({"event": "error", "kind": e.kind, "message": e.message, "details": e.details})
            elif op == "stop":
                self._request_stop(f"stopped by {msg.get('by') or 'a client'}")
                conn.send({"event": "ok", "pid": os.getpid()})
        except (OSError, ValueError) as e:
            sys.stderr.write(f"pool: a connection failed: {e}\n")
        finally:
            conn.close()
            with self.lock:
                self.conns -= 1
                self.last = time.monotonic()

    def _run(self, conn: _Conn, msg: dict[str, Any]) -> None:
        request = msg["request"]
        fields = Limits.__dataclass_fields__
        limits = Limits(**{k: v for k, v in (msg.get("limits") or {}).items() if k in fields})
        cancel = threading.Event()
        with self.lock:
            if self.closing:
                conn.send({"event": "closing"})
                return
            self.running[id(cancel)] = cancel
        try:
            conn.send({"event": "accepted", "pid": os.getpid(), "isolation": self.box.isolation()})
            out: dict[str, Any] = {}

            def work() -> None:
                try:
                    out["result"] = self.box.run(request, limits, cancel)
                except SandboxError as e:
                    out["error"] = {"kind": e.kind, "message": e.message, "details": e.details}
                except Exception as e:  # noqa: BLE001
                    out["error"] = {"kind": "crashed", "message": f"the compile pool failed: {type(e).__name__}: {e}",
                                    "details": {}}

            t = threading.Thread(target=work, daemon=True)
            t.start()
            last: dict[str, Any] | None = None
            while t.is_alive():
                frames = conn.poll(0.1) if not conn.eof else (t.join(0.1) or [])
                if frames is None or any(f.get("op") == "cancel" for f in frames):
                    cancel.set()  # the client asked, closed its socket, or died
                now = self.box.progress_of(request)
                if now is not None and now != last and not conn.eof:
                    last = now
                    try:
                        conn.send({"event": "progress", **now})
                    except OSError:
                        cancel.set()
            t.join()
            if "error" in out:
                err = out["error"]
                if err["kind"] == "cancelled" and self.stop_reason and not conn.eof:
                    err = {**err, "message": f"the compile pool was {self.stop_reason} while this compile ran"}
                reply = {"event": "error", **err}
            else:
                reply = {"event": "result", "result": out.get("result")}
            try:
                conn.send(reply)
            except OSError:
                pass
        finally:
            with self.lock:
                self.running.pop(id(cancel), None)
                self.served += 1


def _serve(ns: argparse.Namespace) -> int:
    os.umask(0o077)
    os.chdir(REPO_ROOT)
    folder = pool_dir()
    key = pool_key(ns.python)
    if key != ns.key:
        sys.stderr.write(f"pool: this environment's key is {key}, not {ns.key}; not starting\n")
        return 3
    paths = _paths(folder, key)
    lock = os.open(paths["lock"], os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    end = time.monotonic() + 30  # a stopping daemon of the same key holds it a few seconds more
    while True:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > end:
                sys.stderr.write("pool: another daemon holds the lock; not starting\n")
                return 4
            time.sleep(0.05)
    # Detach: the client waits for this process only; the daemon (holding the lock, which its
    # open file carries across the fork) is nobody's child but init's.
    if os.fork():
        os._exit(0)
    sys.stderr.write(f"pool {key}: pid {os.getpid()}, python {ns.python}, idle stop after {ns.idle:g} s\n")
    server = PoolServer(folder, key, ns.python, ns.idle, ns.prewarm)
    try:
        server.serve_forever()
    finally:
        sys.stderr.flush()
        os._exit(0)  # the lock goes with the process


# ---- the client ----------------------------------------------------------------------------------

class PoolUnavailable(Exception):
    """The pool could not be started or reached (the client falls back to an in-process Sandbox)."""


def idle_seconds() -> float:
    try:
        return float(os.environ.get(IDLE_ENV, DEFAULT_IDLE))
    except ValueError:
        return DEFAULT_IDLE


def _dial(sock_path: str, timeout: float = 5.0) -> _Conn:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(timeout)
        with _address(sock_path) as addr:
            sock.connect(addr)
        sock.settimeout(None)
        if _peer_uid(sock) != os.getuid():
            raise OSError(errno.EPERM, f"{sock_path} is served by another user")
    except BaseException:
        sock.close()
        raise
    return _Conn(sock)


def _log_tail(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            f.seek(max(0, os.path.getsize(path) - 1500))
            return f.read().strip()
    except OSError:
        return ""


def connect(python: str | None = None, start: bool = True) -> _Conn:
    """A connection to the pool that fits this process (starting it when `start` and none runs).
    Raises PoolUnavailable saying why not."""
    python = os.path.abspath(python or sys.executable)
    try:
        folder = pool_dir()
        key = pool_key(python)
    except OSError as e:
        raise PoolUnavailable(f"no private folder for it ({e})") from e
    paths = _paths(folder, key)
    try:
        return _dial(paths["sock"])
    except OSError:
        if not start:
            raise PoolUnavailable("no pool running") from None
    start_fd = os.open(paths["start"], os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        end = time.monotonic() + START_TIMEOUT
        while True:  # one client starts it; the others wait here, then connect
            try:
                fcntl.flock(start_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > end:
                    raise PoolUnavailable("another call has been starting it for too long") from None
                time.sleep(0.02)
        try:
            return _dial(paths["sock"])
        except OSError:
            pass
        _spawn(python, key, paths)
        while True:
            try:
                return _dial(paths["sock"])
            except OSError as e:
                if not _held(paths["lock"]):
                    raise PoolUnavailable(f"the pool daemon stopped at start: {_log_tail(paths['log'])}") from e
                if time.monotonic() > end:
                    raise PoolUnavailable(f"the pool daemon did not listen within {START_TIMEOUT:g} s") from e
                time.sleep(0.02)
    finally:
        os.close(start_fd)  # releases the start lock


def _spawn(python: str, key: str, paths: dict[str, str]) -> None:
    try:
        if os.path.getsize(paths["log"]) > 1 << 20:
            os.truncate(paths["log"], 0)
    except OSError:
        pass
    log = os.open(paths["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    prewarm = os.environ.get(PREWARM_ENV, "1").strip() != "0"
    command = [sys.executable, "-m", "inspector.compile.pool", "serve", "--python", python, "--key", key,
               "--idle", str(idle_seconds())] + ([] if prewarm else ["--no-prewarm"])
    try:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=REPO_ROOT,
                                env=pool_environment(), start_new_session=True, close_fds=True)
    except OSError as e:
        raise PoolUnavailable(f"cannot start the pool daemon: {e}") from e
    finally:
        os.close(log)
    try:
        rc = proc.wait(45)  # returns once the daemon has its lock and has detached
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise PoolUnavailable("the pool daemon did not detach") from None
    if rc != 0:
        raise PoolUnavailable(f"the pool daemon did not start (status {rc}): {_log_tail(paths['log'])}")


_said: set[str] = set()


def _say_once(why: str) -> None:
    if why not in _said:
        _said.add(why)
        sys.stderr.write(f"triton-inspector: the warm worker pool is not used ({why}); compiling in this "
                         "process's own worker\n")
        sys.stderr.flush()


class PoolClient:
    """A drop-in for `Sandbox` (run, isolation, warm_up, active, close, python) whose requests run in
    the shared pool daemon; an in-process `Sandbox` when the pool cannot be had."""

    def __init__(self, python: str | None = None) -> None:
        self.python = os.path.abspath(python or sys.executable)
        self._lock = threading.Lock()
        self._active: dict[str, dict[str, Any]] = {}
        self._fallback: Sandbox | None = None
        self._failed_at: float | None = None

    # -- fallback --------------------------------------------------------------------------------
    def _local(self) -> Sandbox:
        with self._lock:
            if self._fallback is None:
                self._fallback = Sandbox(python=None if self.python == os.path.abspath(sys.executable)
                                         else self.python)
            return self._fallback

    def _pool_blocked(self) -> bool:
        return self._failed_at is not None and time.monotonic() - self._failed_at < RETRY_AFTER

    def _give_up(self, why: str) -> Sandbox:
        self._failed_at = time.monotonic()
        _say_once(why)
        return self._local()

    def _connect(self) -> _Conn:
        conn = connect(self.python)
        self._failed_at = None
        return conn

    # -- the Sandbox interface -------------------------------------------------------------------
    def run(self, request: dict[str, Any], limits: Limits | None = None,
            cancel: threading.Event | None = None) -> dict[str, Any]:
        """As `Sandbox.run`, in the pool: the same result, the same SandboxError kinds."""
        limits = limits or Limits()
        if self._pool_blocked():
            return self._local().run(request, limits, cancel)
        rid = uuid.uuid4().hex
        entry = {"id": rid, "t0": time.monotonic(), "phase": None, "line": None}
        with self._lock:
            self._active[rid] = entry
        conn: _Conn | None = None
        try:
            why, first = "", None
            for attempt in range(4):
                try:
                    conn = self._connect()
                except PoolUnavailable as e:
                    why = str(e)
                    break
                try:
                    conn.send({"op": "run", "request": request, "limits": asdict(limits)})
                    first = conn.read_one(ZYGOTE_START_TIMEOUT)
                except OSError as e:
                    first, why = None, f"its socket failed: {e}"
                if first is not None and first.get("event") == "accepted":
                    break
                # Closed before accepting ("closing", or an idle stop that left this connection in
                # its backlog): that daemon is going; the next attempt starts a new one.
                conn.close()
                conn = None
                why = why or "it closed the connection before accepting the request"
                time.sleep(0.1 * (attempt + 1))
            if conn is None or first is None:
                with self._lock:
                    self._active.pop(rid, None)
                return self._give_up(why).run(request, limits, cancel)
            _warn_once(first.get("isolation") or {"isolated": True})
            return self._wait(conn, entry, limits, cancel)
        finally:
            if conn is not None:
                conn.close()
            with self._lock:
                self._active.pop(rid, None)

    def _wait(self, conn: _Conn, entry: dict[str, Any], limits: Limits,
              cancel: threading.Event | None) -> dict[str, Any]:
        # The daemon enforces the timeout (counted, as in-process, once its zygote is up); this
        # deadline only guards against a hung daemon.
        deadline = entry["t0"] + ZYGOTE_START_TIMEOUT + limits.timeout + 60
        asked = False
        while True:
            if cancel is not None and cancel.is_set() and not asked:
                asked = True
                deadline = min(deadline, time.monotonic() + 30)
                try:
                    conn.send({"op": "cancel"})
                except OSError:
                    pass
            frames = conn.poll(0.1)
            if frames is None:
                raise SandboxError("crashed", "the compile pool stopped while this compile ran; try again")
            for f in frames:
                event = f.get("event")
                if event == "progress":
                    entry["phase"], entry["line"] = f.get("phase"), f.get("line")
                elif event == "result":
                    return f["result"]
                elif event == "error":
                    raise SandboxError(f.get("kind") or "crashed", f.get("message") or "", f.get("details") or {})
            if time.monotonic() > deadline:
                conn.close()
                if asked:
                    raise SandboxError("cancelled", "the compile was cancelled (the pool did not confirm it)")
                raise SandboxError("timeout", f"the compile pool gave no answer within {limits.timeout:g} s",
                                   {"timeout": limits.timeout})

    def isolation(self) -> dict[str, Any]:
        """The pool's isolation (its Sandbox's), else this process's `isolation()`."""
        if not self._pool_blocked():
            try:
                conn = self._connect()
                try:
                    conn.send({"op": "status"})
                    reply = conn.read_one(60)
                finally:
                    conn.close()
                if reply and reply.get("isolation"):
                    return dict(reply["isolation"])
            except (PoolUnavailable, OSError):
                pass
        return isolation()

    def warm_up(self, complete: bool = False, timeout: float = 120.0) -> bool:
        """Start the pool (and its zygote) now; as `Sandbox.warm_up`: with `complete`, also wait
        (up to `timeout` s) for the zygote's warming; returns whether it is warm."""
        if not self._pool_blocked():
            try:
                conn = self._connect()
                try:
                    conn.send({"op": "warm_up", "complete": complete, "timeout": timeout})
                    reply = conn.read_one(ZYGOTE_START_TIMEOUT + timeout + 10)
                finally:
                    conn.close()
                if reply and reply.get("event") == "error":
                    raise SandboxError(reply.get("kind") or "crashed", reply.get("message") or "")
                if reply is not None:
                    return bool(reply.get("warm"))
                self._give_up("it gave no answer to warm_up")
            except PoolUnavailable as e:
                self._give_up(str(e))
            except OSError as e:
                self._give_up(f"its socket failed: {e}")
        return bool(self._local().warm_up(complete=complete, timeout=timeout))

    def active(self) -> list[dict[str, Any]]:
        """This process's requests in flight: {"id", "seconds", "phase", "line"} each (the phase
        and line as the pool streams them)."""
        now = time.monotonic()
        with self._lock:
            mine = [{"id": e["id"], "seconds": round(now - e["t0"], 3), "phase": e["phase"], "line": e["line"]}
                    for e in self._active.values()]
            local = self._fallback
        return mine + (local.active() if local is not None else [])

    def close(self) -> None:
        """Close this client (the shared pool runs on until idle; `stop_pools` stops it)."""
        with self._lock:
            local, self._fallback = self._fallback, None
        if local is not None:
            local.close()


# ---- status and stop -----------------------------------------------------------------------------

def pools() -> list[dict[str, Any]]:
    """This user's pools under $TRITON_INSPECTOR_HOME: their info, live status when reachable.
    Leftovers of a daemon that was killed are removed."""
    try:
        folder = pool_dir(create=False)
    except OSError:
        return []
    out = []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".json"):
            continue
        key = name[:-5]
        paths = _paths(folder, key)
        try:
            with open(paths["json"]) as f:
                info = json.load(f)
        except (OSError, ValueError):
            continue
        if not _held(paths["lock"]):
            for p in (paths["sock"], paths["json"]):
                try:
                    os.unlink(p)
                except OSError:
                    pass
            continue
        try:
            conn = _dial(paths["sock"], timeout=2)
            try:
                conn.send({"op": "status"})
                reply = conn.read_one(10)
            finally:
                conn.close()
            if reply:
                info.update({k: v for k, v in reply.items() if k != "event"})
        except OSError:
            pass
        info["current"] = key == _safe_key(info.get("python"))
        out.append(info)
    return out


def _safe_key(python: str | None) -> str | None:
    try:
        return pool_key(python)
    except OSError:
        return None


def stop_pool(key: str, wait: float = 30.0) -> bool:
    """Stop the pool `key` (its compiles in flight are cancelled); True once it is gone."""
    try:
        folder = pool_dir(create=False)
    except OSError:
        return True
    paths = _paths(folder, key)
    try:
        conn = _dial(paths["sock"], timeout=2)
        try:
            conn.send({"op": "stop", "by": "python -m inspector pool stop"})
            conn.read_one(10)
        finally:
            conn.close()
    except OSError:
        try:
            with open(paths["json"]) as f:
                pid = int(json.load(f)["pid"])
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"inspector.compile.pool" in f.read() and _held(paths["lock"]):
                    os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            pass
    end = time.monotonic() + wait
    while _held(paths["lock"]):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


def stop_pools(python: str | None = None) -> list[str]:
    """Stop every pool of this user (under $TRITON_INSPECTOR_HOME), or only those whose workers run
    `python`; the keys stopped."""
    stopped = []
    for info in pools():
        if python is not None and os.path.abspath(info.get("python", "")) != os.path.abspath(python):
            continue
        if stop_pool(info["key"]):
            stopped.append(info["key"])
    return stopped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m inspector.compile.pool")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="run a pool daemon (started by the client; not by hand)")
    p.add_argument("--python", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--idle", type=float, default=DEFAULT_IDLE)
    p.add_argument("--no-prewarm", dest="prewarm", action="store_false")
    ns = ap.parse_args(argv)
    return _serve(ns)


if __name__ == "__main__":
    sys.exit(main())
