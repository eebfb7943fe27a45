"""Which sandbox a process compiles with: the user's shared warm pool, or a worker manager of its own.

`default_sandbox()` is what the library, the CLI and the app use unless given a sandbox. It lives
apart from `sandbox.py` (the worker manager) and `pool.py` (the daemon and its client, built on
the worker manager), because it chooses between the two.
"""

from __future__ import annotations

import os
import sys
import threading
from .pool import PoolClient, stop_pools
from .sandbox import Sandbox

_default: Sandbox | None = None
_default_lock = threading.Lock()
_by_python: dict[str, Sandbox] = {}  # one sandbox (one warm zygote) per side environment's interpreter
_pool_clients: dict[str, PoolClient] = {}  # one pool client per interpreter (inspector.isolation.pool)


def pool_enabled() -> bool:
    """Whether `default_sandbox()` hands out the shared warm pool's client: $TRITON_INSPECTOR_POOL
    is not "0" (default "1")."""
    return os.environ.get("TRITON_INSPECTOR_POOL", "1").strip() != "0"


def default_sandbox(python: str | None = None) -> Sandbox | PoolClient:
    """The process-wide sandbox (one zygote per process that inspects); with `python`, the one
    whose worker manager runs that interpreter (a side environment of another Triton release).

    While the pool is enabled (`pool_enabled()`) this is an `inspector.isolation.pool.PoolClient`
    instead, one per interpreter: the same methods, its requests run in the user's shared warm
    pool daemon (the CLI's calls and the app share it), in-process when the pool cannot be had.
    The variable is read on every call, so a process may switch between the two."""
    global _default
    if pool_enabled():
        key = os.path.abspath(python or sys.executable)
        with _default_lock:
            if key not in _pool_clients:
                _pool_clients[key] = PoolClient(python=key)
            return _pool_clients[key]
    with _default_lock:
        if python is not None and os.path.abspath(python) != os.path.abspath(sys.executable):
            python = os.path.abspath(python)
            if python not in _by_python:
                _by_python[python] = Sandbox(python=python)
            return _by_python[python]
        if _default is None:
            _default = Sandbox()
        return _default


def close_sandbox_for(python: str) -> None:
    """Stop the worker manager running `python`, if this process has one, and this user's pool
    daemons whose workers run it (its environment is being removed)."""
    python = os.path.abspath(python)
    with _default_lock:
        box = _by_python.pop(python, None)
        client = _pool_clients.pop(python, None)
    if box is not None:
        box.close()
    if client is not None:
        client.close()
    stop_pools(python=python)
