"""The pool daemon: one warm `Sandbox` serving a user's requests over a socket
(`python -m inspector.isolation.pool_server serve ...`, started by the client).

The design is in `inspector.isolation.pool`."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from typing import Any

from .pool_connection import Connection
from .pool_keys import DEFAULT_IDLE, code_digest, peer_uid, pool_dir, pool_key, pool_paths, socket_address
from .exposure import REPO_ROOT
from .sandbox import Limits, Sandbox, SandboxError


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
        self.paths = pool_paths(folder, key)
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
        with socket_address(self.paths["sock"]) as addr:
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
        conn = Connection(sock)
        try:
            if peer_uid(sock) != os.getuid():
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

    def _run(self, conn: Connection, msg: dict[str, Any]) -> None:
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
    paths = pool_paths(folder, key)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m inspector.isolation.pool_server")
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
