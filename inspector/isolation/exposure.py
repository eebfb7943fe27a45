"""What a request may see and which isolation this machine offers: the folders shown to a
request (its project, read-only) and those always hidden, the environment passed on, and the
jail available (bubblewrap, unshare, or none). The sandbox (`inspector.isolation.sandbox`) and the
benchmark jail (`inspector.bench.client`) both apply it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Any

from .. import places
from . import jail

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
# Environment the worker manager keeps from the server's (everything else, secrets included, is dropped).
ENV_KEEP = {"PATH", "LANG", "LANGUAGE", "TZ", "HOME", "USER", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHASHSEED",
            "OMP_NUM_THREADS"}
ENV_KEEP_PREFIXES = ("LC_", "TRITON_", "CUDA_", "NVIDIA_", "HIP_", "ROCM_", "ROCR_", "HSA_")


# ---- what a request may see ------------------------------------------------------------------

def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def project_root(file: str) -> str:
    """The folder a kernel file's compile must see: the top of its package (the chain of
    __init__.py folders), or above it the nearest folder with pyproject.toml, setup.py or
    setup.cfg; the file's own folder when it belongs to neither."""
    folder = os.path.dirname(os.path.abspath(file))
    top = folder
    while os.path.isfile(os.path.join(top, "__init__.py")) and os.path.dirname(top) != top:
        top = os.path.dirname(top)
    d = top
    while True:
        if any(os.path.isfile(os.path.join(d, m)) for m in PROJECT_MARKERS):
            return d
        if os.path.dirname(d) == d:
            return top
        d = os.path.dirname(d)


def hidden_paths() -> list[str]:
    """Never shown to a request, even inside a folder it may see: the inspection cache, the
    inspector's home (the workspaces), the home folder itself."""
    home = os.path.expanduser("~")
    return sorted({os.path.realpath(p) for p in (places.cache_dir(), places.inspector_home(), home)})


SCRATCH_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")


def request_paths(request: dict[str, Any]) -> list[str]:
    """What a request may read besides the system and Python: its project root (the request's
    `project_root`, else `root`, else `project_root(file)`), and its file. A root that is /, /tmp,
    the home folder or one above it would show too much (or hide the private /tmp): then only the
    file's folder, or if that is one of them too, the file."""
    file = request.get("file")
    if not file:
        return []
    file = os.path.realpath(file)
    home = os.path.realpath(os.path.expanduser("~"))
    out = []
    root = request.get("project_root") or request.get("root") or project_root(file)
    for candidate in (root, os.path.dirname(file), file):
        candidate = os.path.realpath(candidate)
        # /tmp itself would cover the request's private /tmp with a read-only one: a file lying
        # directly in /tmp is shown alone.
        if candidate not in ("/", *SCRATCH_ROOTS) and not _within(home, candidate):
            out.append(candidate)
            break
    if out and not _within(file, out[0]):
        out.append(file)
    return out


# ---- the environment and the isolation available ---------------------------------------------

def clean_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """The worker manager's environment: what a compile needs from `base` (the server's), no more."""
    base = dict(os.environ if base is None else base)
    env = {k: v for k, v in base.items() if k in ENV_KEEP or k.startswith(ENV_KEEP_PREFIXES)}
    env["PYTHONPATH"] = REPO_ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("PATH", os.defpath)
    return env


_isolation: dict[str, dict[str, Any]] = {}
_isolation_lock = threading.Lock()
_warned = False


def _probe(command: list[str], env: dict[str, str]) -> str | None:
    """Run the jail's self-test; None when it holds, else why not."""
    try:
        out = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    if out.returncode == 0:
        return None
    return (out.stderr.strip().splitlines() or [f"status {out.returncode}"])[-1]


def isolation(mode: str | None = None) -> dict[str, Any]:
    """What this machine gives a request (probed once per process and mode): {"isolated": bool,
    "how": words, "missing": what is missing for full isolation ("" when nothing), "mode":
    "bwrap" | "unshare" | "off"}. `mode` defaults to $TRITON_INSPECTOR_SANDBOX ("auto")."""
    mode = (mode or os.environ.get("TRITON_INSPECTOR_SANDBOX") or "auto").lower()
    with _isolation_lock:
        if mode in _isolation:
            return dict(_isolation[mode])
        env = clean_environment()
        probe = [sys.executable, "-m", "inspector.isolation.jail"]
        missing = ""
        result: dict[str, Any] | None = None
        if mode == "off":
            result = {"isolated": False, "mode": "off", "missing": "TRITON_INSPECTOR_SANDBOX=off",
                      "how": "not sandboxed (TRITON_INSPECTOR_SANDBOX=off, for debugging): a process group with "
                             "time, memory and output limits only"}
        if result is None and mode in ("auto", "bwrap"):
            if jail.bwrap_path() is None:
                missing = "bubblewrap (bwrap) is not installed"
            else:
                why = _probe(jail.outer_command(probe + (["--uncover"] if os.geteuid() == 0 else []), env), env)
                if why is None:
                    result = {"isolated": True, "mode": "bwrap", "missing": "",
                              "how": "bubblewrap around the worker manager, and namespaces of its own for every "
                                     "compile (no network, read-only system, private /tmp, no home, cache or "
                                     "other compiles in view)"}
                else:
                    missing = f"bubblewrap does not run here ({why})"
        if result is None and mode != "off":
            why = _probe(probe, env)
            if why is None:
                result = {"isolated": True, "mode": "unshare", "missing": missing,
                          "how": "namespaces of its own for every compile (no network, read-only system, private "
                                 "/tmp, no home, cache or other compiles in view); the worker manager itself "
                                 "runs without bubblewrap"}
            else:
                result = {"isolated": False, "mode": "off", "missing": f"{missing + '; ' if missing else ''}"
                          f"this machine cannot create the compile's namespaces ({why})",
                          "how": "NOT sandboxed: kernel files run with this user's rights (a process group with "
                                 "time, memory and output limits only)"}
        assert result is not None
        _isolation[mode] = result
        return dict(result)


def _warn_once(status: dict[str, Any]) -> None:
    global _warned
    if not status["isolated"] and not _warned:
        _warned = True
        hint = "" if status["missing"].startswith("TRITON_INSPECTOR_SANDBOX") else (
            " Install bubblewrap (scripts/install.sh) and allow unprivileged user namespaces.")
        sys.stderr.write(f"triton-inspector: WARNING: compiles are {status['how']}. "
                         f"Missing: {status['missing']}.{hint}\n")
        sys.stderr.flush()
