"""A warm worker pool shared by a user's CLI calls and the app: one daemon per key, reached over a socket.

Without it every `python -m inspector compile` starts a worker manager (`inspector.isolation.zygote`)
that imports torch and Triton, a second or more per call before any compiling. With it the first
call starts a daemon, `python -m inspector.isolation.pool serve ...`, that owns one `Sandbox` (the
same warm zygote, the same jail, the same limits as in-process: this module adds no sandboxing of
its own and removes none) and serves requests over an AF_UNIX socket; later calls only connect.
`inspector.isolation.selection.default_sandbox()` hands out a `PoolClient` (a drop-in for `Sandbox`)
while $TRITON_INSPECTOR_POOL is not "0", so the CLI and the app share the daemon.

Decisions:

- **Where**: `$TRITON_INSPECTOR_HOME/pool/` (default `~/.local/share/triton-inspector/pool/`),
  created 0700 and refused when another user owns it or it is a symlink; per daemon
  `<key>.sock` (0600), `<key>.json` (who it is), `<key>.log` (its stderr, 0600), `<key>.lock`
  (held by the daemon for its whole life) and `<key>.start` (held by the client that starts it, so
  two simultaneous first calls start one daemon). The inspector's home is one of the paths every
  compile's jail hides (`exposure.hidden_paths`), so a kernel file never sees the socket. A path
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

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import asdict
from typing import Any

from .pool_connection import Connection, dial
from .pool_keys import (DEFAULT_IDLE, IDLE_ENV, PREWARM_ENV, RETRY_AFTER, START_TIMEOUT, lock_held, pool_dir,
                        pool_environment, pool_key, pool_paths)
from .exposure import REPO_ROOT, _warn_once, isolation
from .sandbox import ZYGOTE_START_TIMEOUT, Limits, Sandbox, SandboxError


# ---- the client ----------------------------------------------------------------------------------

class PoolUnavailable(Exception):
    """The pool could not be started or reached (the client falls back to an in-process Sandbox)."""


def idle_seconds() -> float:
    try:
        return float(os.environ.get(IDLE_ENV, DEFAULT_IDLE))
    except ValueError:
        return DEFAULT_IDLE

def _log_tail(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            f.seek(max(0, os.path.getsize(path) - 1500))
            return f.read().strip()
    except OSError:
        return ""


def connect(python: str | None = None, start: bool = True) -> Connection:
    """A connection to the pool that fits this process (starting it when `start` and none runs).
    Raises PoolUnavailable saying why not."""
    python = os.path.abspath(python or sys.executable)
    try:
        folder = pool_dir()
        key = pool_key(python)
    except OSError as e:
        raise PoolUnavailable(f"no private folder for it ({e})") from e
    paths = pool_paths(folder, key)
    try:
        return dial(paths["sock"])
    except OSError:
        if not start:
            raise PoolUnavailable("no pool running") from None
    # A live daemon (it holds its lock for its whole life) that did not answer at once is starting,
    # stopping, or busy with a full backlog: wait for it. Starting another would only find the
    # lock held and exit (status 4), and the caller would give up on the pool for a minute
    # (seen by benchmarks/soak.py: four browser sessions and a CLI loop on two cores).
    end = time.monotonic() + START_TIMEOUT
    while lock_held(paths["lock"]) and time.monotonic() < end:
        try:
            return dial(paths["sock"])
        except OSError:
            time.sleep(0.1)
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
            return dial(paths["sock"])
        except OSError:
            pass
        _spawn(python, key, paths)
        while True:
            try:
                return dial(paths["sock"])
            except OSError as e:
                if not lock_held(paths["lock"]):
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
    command = [sys.executable, "-m", "inspector.isolation.pool_server", "serve", "--python", python, "--key", key,
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

    def _connect(self) -> Connection:
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
        conn: Connection | None = None
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

    def _wait(self, conn: Connection, entry: dict[str, Any], limits: Limits,
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
        paths = pool_paths(folder, key)
        try:
            with open(paths["json"]) as f:
                info = json.load(f)
        except (OSError, ValueError):
            continue
        if not lock_held(paths["lock"]):
            for p in (paths["sock"], paths["json"]):
                try:
                    os.unlink(p)
                except OSError:
                    pass
            continue
        try:
            conn = dial(paths["sock"], timeout=2)
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
    paths = pool_paths(folder, key)
    try:
        conn = dial(paths["sock"], timeout=2)
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
                if b"inspector.isolation.pool" in f.read() and lock_held(paths["lock"]):
                    os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError, KeyError):
            pass
    end = time.monotonic() + wait
    while lock_held(paths["lock"]):
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
