"""Where a user's pools live, which pool a caller gets (the key), and the pool's settings.

The design is in `inspector.isolation.pool`."""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import socket
import struct
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .. import places
from .exposure import REPO_ROOT, clean_environment

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
    """The inspector's home (`inspector.places`), as text."""
    return str(places.inspector_home())


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
    `exposure.hidden_paths` reads them in the daemon; `inspector.places`)
    and the sandbox mode. Applying it to its own result changes nothing."""
    base = dict(os.environ if base is None else base)
    env = {k: v for k, v in clean_environment(base).items() if not k.startswith(_CALLER_ONLY)}
    env["PYTHONPATH"] = _dedupe_path(env.get("PYTHONPATH", ""))
    env["TRITON_INSPECTOR_HOME"] = os.path.abspath(places.inspector_home(base))
    env["TRITON_INSPECTOR_CACHE"] = os.path.abspath(places.cache_dir(base))
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


def pool_paths(folder: str, key: str) -> dict[str, str]:
    return {ext: os.path.join(folder, f"{key}.{ext}") for ext in ("sock", "json", "log", "lock", "start")}


@contextmanager
def socket_address(path: str) -> Iterator[str]:
    """An AF_UNIX address for `path`: itself, or through /proc/self/fd when it is too long."""
    if len(os.fsencode(path)) <= _SUN_PATH_MAX:
        yield path
        return
    fd = os.open(os.path.dirname(path), os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{os.path.basename(path)}"
    finally:
        os.close(fd)


def peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def lock_held(lock_path: str) -> bool:
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
