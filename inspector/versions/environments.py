"""Side environments: one virtual environment per extra Triton release, kept under the inspector's home.

    $TRITON_INSPECTOR_HOME/triton-versions/<version>/
        env/           a venv that sees the base interpreter's packages (torch, the inspector's
                       dependencies) and holds only that Triton, which shadows the base one
        state.json     what the installer is doing or did: state, step, phase, timings, size
        install.log    pip's output

The Triton installed beside the app stays the default; a side environment is only used when a
compile asks for its version. Adding one runs `inspector.versions.install` in a background
process (the app and the command line both read its progress from state.json); removing one
deletes its folder, and the `triton-versions` folder when it is left empty.

Nothing here imports torch or Triton: versions are read from package metadata and state files.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .. import places
from ..files import atomic_write_text
from ..triton_compat import releases as support
from ..triton_compat.releases import VersionError

STATE_FILE = "state.json"
LOG_FILE = "install.log"
ENV_DIR = "env"
STEPS = 4  # create the venv, install Triton, check it, measure it
STARTING_GRACE = 120.0  # seconds an install may take to write its first state before it counts as dead


def inspector_home() -> Path:
    """The inspector's home (`inspector.places`)."""
    return places.inspector_home()


def versions_dir() -> Path:
    """The folder holding one folder per side environment."""
    return inspector_home() / "triton-versions"


def base_version() -> str:
    """The version of the Triton installed beside the inspector (read from metadata, not imported)."""
    try:
        return importlib.metadata.version("triton")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


@dataclass
class SideEnvironment:
    """One side environment as its state file describes it."""

    version: str
    path: str  # the version's folder
    state: str = "installing"  # "installing" | "ready" | "failed"
    step: int = 0  # steps done, of `steps`
    steps: int = STEPS
    phase: str = "starting"  # what the installer is doing, in words
    detail: str = ""  # pip's latest line, the error's cause
    error: str | None = None
    pid: int | None = None  # the installer's process while it runs
    started: float = 0.0  # epoch seconds
    finished: float | None = None
    seconds: float | None = None  # the whole install, once ready
    bytes: int | None = None  # disk size of the folder, once ready
    python: str = ""  # the environment's interpreter
    triton_file: str = ""  # where its `import triton` resolves (inside env/)
    torch_file: str = ""  # where its `import torch` resolves (the base torch)
    source: str = ""  # "PyPI", or the wheel it was installed from
    warning: str | None = None  # a release newer than any tried

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    @property
    def env_path(self) -> str:
        return os.path.join(self.path, ENV_DIR)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """One line: version, state, progress or size."""
        if self.state == "ready":
            size = f"{(self.bytes or 0) / 2**20:.0f} MiB" if self.bytes is not None else "size unknown"
            took = f", added in {self.seconds:.1f} s" if self.seconds is not None else ""
            return f"{self.version}  ready  {size}{took}  ({self.path})"
        if self.state == "failed":
            return f"{self.version}  failed: {self.error}"
        elapsed = time.time() - self.started if self.started else 0.0
        detail = f" - {self.detail}" if self.detail else ""
        return f"{self.version}  installing  step {self.step + 1}/{self.steps}: {self.phase}{detail} ({elapsed:.0f} s)"


def env_python(env_path: str | os.PathLike) -> str:
    """The interpreter of a venv folder."""
    return os.path.join(os.fspath(env_path), "bin", "python")


def _folder(version: str) -> Path:
    support.parse(version)  # a release number, never a path
    return versions_dir() / version.strip()


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (finished, not yet reaped by whoever started it) is not at work
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def read_state(folder: str | os.PathLike) -> SideEnvironment | None:
    """The environment in `folder` (None when the folder is not one); an install whose process
    is gone reads as failed."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    try:
        data = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
        known = SideEnvironment.__dataclass_fields__
        env = SideEnvironment(**{k: v for k, v in data.items() if k in known})
    except FileNotFoundError:
        # The folder is made before its first state is written: an install starting.
        try:
            started = folder.stat().st_mtime
        except OSError:
            return None
        env = SideEnvironment(version=folder.name, path=str(folder), started=started)
    except (OSError, ValueError, TypeError):
        return SideEnvironment(
            version=folder.name,
            path=str(folder),
            state="failed",
            error="its state file is unreadable; remove it and add it again",
        )
    env.path = str(folder)
    if env.state == "installing":
        gone = not _alive(env.pid) if env.pid else time.time() - env.started > STARTING_GRACE
        if gone:
            env.state = "failed"
            env.error = (
                f"the install stopped ({env.phase}) and its process is gone; "
                f"`python -m inspector versions add {env.version}` tries again"
            )
    return env


def write_state(env: SideEnvironment) -> None:
    """Replace the state file atomically (readers see the old state or the new one). Raises
    VersionError when the folder is gone (removed meanwhile): it is never made again here."""
    if not Path(env.path).is_dir():
        raise VersionError(f"the side environment of Triton {env.version} was removed")
    atomic_write_text(Path(env.path) / STATE_FILE, json.dumps(env.to_dict(), indent=1))


def list_environments() -> list[SideEnvironment]:
    """Every side environment, oldest release first."""
    root = versions_dir()
    if not root.is_dir():
        return []
    out = []
    for folder in root.iterdir():
        if folder.name.startswith("."):
            continue
        try:
            support.parse(folder.name)
        except support.UnsupportedVersion:
            continue
        env = read_state(folder)
        if env is not None:
            out.append(env)
    return sorted(out, key=lambda e: support.parse(e.version))


def get(version: str) -> SideEnvironment | None:
    """The side environment of `version`, in whatever state, or None."""
    return read_state(_folder(version))


def available_versions() -> list[str]:
    """The versions a compile can use now: the base one first, then every ready side environment."""
    base = base_version()
    return [base] + [e.version for e in list_environments() if e.ready and e.version != base]


def python_for(version: str) -> str:
    """The interpreter of the ready side environment of `version`; raises VersionError saying how
    to add it (or what its install is doing)."""
    env = get(version)
    if env is None:
        raise VersionError(
            f"Triton {version} is not available: the installed one is {base_version()}, and no "
            f"side environment holds {version}. Add it with `python -m inspector versions add "
            f"{version}` (or from the app's version picker)."
        )
    if env.state == "installing":
        raise VersionError(
            f"Triton {version} is still being added ({env.phase}); try again when "
            f"`python -m inspector versions list` says ready"
        )
    if env.state == "failed":
        raise VersionError(
            f"Triton {version} could not be added: {env.error}. Remove it with "
            f"`python -m inspector versions remove {version}` and add it again"
        )
    return env.python


def add(version: str, wheel: str | None = None, find_links: str | None = None) -> SideEnvironment:
    """Start adding Triton `version` as a side environment, in a background process; return its
    state at once (poll `get(version)` for progress). An environment already ready, or being
    added, is returned as it is (adding twice costs nothing); a failed one is replaced.

    `wheel` installs from a wheel file instead of the package index (a machine without
    internet); `find_links` adds a folder of wheels for pip to look in. Raises VersionError
    (UnsupportedVersion) for a release the inspector does not support."""
    support.check(version)
    version = version.strip()
    if wheel is not None:
        wheel = os.path.abspath(wheel)
        if not os.path.isfile(wheel):
            raise VersionError(f"no wheel at {wheel}")
        name = os.path.basename(wheel)
        if not name.startswith(f"triton-{version}-"):
            raise VersionError(
                f"{name} is not a wheel of triton {version} (its name should start with triton-{version}-)"
            )
    folder = _folder(version)
    folder.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        try:
            folder.mkdir()  # whoever makes the folder runs the install
            break
        except FileExistsError:
            current = read_state(folder)
            if current is not None and current.state != "failed":
                return current
            _delete(folder)
    else:
        raise VersionError(f"cannot claim {folder}: another process keeps re-creating it")
    env = SideEnvironment(
        version=version,
        path=str(folder),
        started=time.time(),
        source=wheel or "PyPI",
        python=env_python(folder / ENV_DIR),
    )
    write_state(env)
    command = [sys.executable, "-m", "inspector.versions.install", "--dir", str(folder), "--version", version]
    if wheel:
        command += ["--wheel", wheel]
    if find_links:
        command += ["--find-links", os.path.abspath(find_links)]
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    environ = dict(os.environ)
    environ["PYTHONPATH"] = package_root + (
        os.pathsep + environ["PYTHONPATH"] if environ.get("PYTHONPATH") else ""
    )
    with open(folder / LOG_FILE, "ab") as log:
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=environ, start_new_session=True
        )  # it outlives a page rerun or a CLI's Ctrl+C
    # The installer writes its own pid first; this covers the moment before it does.
    current = read_state(folder)
    if current is not None and current.state == "installing" and current.pid is None:
        current.pid = proc.pid
        write_state(current)
    _reapers.append(proc)
    return read_state(folder) or env


_reapers: list[subprocess.Popen] = []  # installers started here (polled so none stays a zombie)


def wait(version: str, timeout: float | None = None, on_progress=None, poll: float = 0.5) -> SideEnvironment:
    """Wait until the install of `version` is ready or failed (or `timeout` seconds pass);
    `on_progress(env)` is called whenever its step or phase changes."""
    end = None if timeout is None else time.monotonic() + timeout
    seen = None
    while True:
        for proc in list(_reapers):
            if proc.poll() is not None:
                _reapers.remove(proc)
        env = get(version)
        if env is None:
            raise VersionError(f"Triton {version} is not being added (its folder is gone)")
        mark = (env.state, env.step, env.phase, env.detail)
        if on_progress is not None and mark != seen:
            on_progress(env)
        seen = mark
        if env.state != "installing" or (end is not None and time.monotonic() > end):
            return env
        time.sleep(poll)


def remove(version: str) -> int:
    """Delete the side environment of `version` (stopping its install if one runs) and return
    the bytes freed. Compiles already running with it fail; the folder is renamed away first, so
    no reader ever sees half an environment. Raises VersionError when there is none."""
    folder = _folder(version)
    env = read_state(folder)
    if env is None:
        raise VersionError(
            f"there is no side environment of Triton {version} "
            f"(`python -m inspector versions list` shows them)"
        )
    if env.state == "installing" and env.pid and _alive(env.pid):
        try:
            os.killpg(env.pid, signal.SIGKILL)  # the installer leads its own session (pip with it)
        except (ProcessLookupError, PermissionError):
            pass
        end = time.monotonic() + 10
        while _alive(env.pid) and time.monotonic() < end:
            time.sleep(0.05)
    try:  # its warm worker manager, when this process runs one
        from ..isolation.selection import close_sandbox_for

        close_sandbox_for(env_python(folder / ENV_DIR))
    except ImportError:
        pass
    size = disk_usage(folder)
    _delete(folder)
    try:
        folder.parent.rmdir()  # the last one: leave nothing behind
    except OSError:
        pass
    return size


def _delete(folder: Path) -> None:
    away = folder.parent / f".removing-{folder.name}-{uuid.uuid4().hex[:8]}"
    try:
        os.rename(folder, away)
    except FileNotFoundError:
        return
    shutil.rmtree(away, ignore_errors=True)
    if away.exists():
        shutil.rmtree(away)  # a second try raises, naming what could not be removed


def disk_usage(folder: str | os.PathLike) -> int:
    """Bytes a folder takes on disk (allocated blocks, each hard-linked file once)."""
    total, seen = 0, set()
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total
