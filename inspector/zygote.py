"""The warm worker process: imports torch and Triton once, then forks a child per request.

Started by `inspector.sandbox.Sandbox` as `python -m inspector.zygote`; speaks JSON lines:

    in : {"id": "...", "request": {...}, "result": "/tmp/.../id.json", "stderr": ".../id.err",
          "limits": {"address_space": bytes | null, "file_size": bytes | null}}
    out: {"id": "...", "event": "started", "pid": 1234}
         {"id": "...", "event": "exited", "status": 0 | -signal | code}

Each child starts its own session (so the sandbox can kill it and everything it spawned, ptxas
included, with one killpg), applies its resource limits, runs `inspector.worker.handle` and writes
the result atomically to the given path. The zygote itself never runs user code and never
initialises CUDA, so forking stays safe.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import select
import signal
import sys
import traceback


def _child(msg: dict) -> None:
    """Runs in the forked child; never returns."""
    code = 0
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)  # fd 1 is the zygote's protocol pipe: the child must not write to it
        err = os.open(msg["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(err, 2)
        os.close(null)
        os.close(err)
        sys.stdout = open(os.devnull, "w")
        sys.stderr = os.fdopen(2, "w", buffering=1)
        limits = msg.get("limits") or {}
        if limits.get("address_space"):
            # Bound new allocations: what the zygote already maps plus the allowance.
            resource.setrlimit(resource.RLIMIT_AS, (limits["address_space"], limits["address_space"]))
        if limits.get("file_size"):
            resource.setrlimit(resource.RLIMIT_FSIZE, (limits["file_size"], limits["file_size"]))
        from inspector.worker import handle

        result = handle(msg["request"])
        payload = json.dumps(result)
        tmp = msg["result"] + ".tmp"
        with open(tmp, "w") as f:
            f.write(payload)
        os.replace(tmp, msg["result"])
    except MemoryError:
        code = 86
    except OSError as e:
        code = 87 if e.errno == errno.EFBIG else 3  # 87: the result itself exceeds the output limit
        if code == 3:
            traceback.print_exc()
    except BaseException:  # noqa: BLE001 - report anything, even SystemExit from user code
        try:
            traceback.print_exc()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        code = 3
    os._exit(code)


def _send(obj: dict) -> None:
    sys.__stdout__.write(json.dumps(obj) + "\n")
    sys.__stdout__.flush()


def main() -> None:
    # Preload what every child needs, so a fork is all a request costs.
    import torch  # noqa: F401
    import triton  # noqa: F401

    import inspector.worker

    if "--no-warm-up" not in sys.argv:
        inspector.worker.warm_up()
    vm = _vm_size()
    _send({"event": "ready", "pid": os.getpid(), "vm_bytes": vm})
    children: dict[int, str] = {}
    stdin = sys.stdin.fileno()
    buf = b""
    open_input = True
    while open_input or children:
        if open_input:
            ready, _, _ = select.select([stdin], [], [], 0.02)
            if ready:
                chunk = os.read(stdin, 1 << 16)
                if not chunk:
                    open_input = False
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not line.strip():
                        continue
                    msg = json.loads(line)
                    limits = msg.get("limits") or {}
                    if limits.get("memory"):
                        limits["address_space"] = vm + int(limits["memory"])
                    pid = os.fork()
                    if pid == 0:
                        _child(msg)
                    children[pid] = msg["id"]
                    _send({"id": msg["id"], "event": "started", "pid": pid})
        else:
            select.select([], [], [], 0.02)
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            rid = children.pop(pid, None)
            if rid is not None:
                code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                _send({"id": rid, "event": "exited", "status": code})


def _vm_size() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    main()
