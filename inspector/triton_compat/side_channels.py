"""What Triton prints and throws away: the ptxas log, MLIR diagnostics and pass dumps on fd 2,
and a private cache per inspection."""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from typing import Any, Iterator




# ---- side channels: ptxas log, pass dumps, private cache -------------------------------------


@contextlib.contextmanager
def ptxas_log() -> Iterator[io.StringIO]:
    """Capture what Triton prints, including ptxas's `-v` log (registers, spills, barriers)."""
    from triton import knobs

    buf = io.StringIO()
    if not hasattr(knobs.nvidia, "dump_ptxas_log"):  # 3.4: no knob (see _ptxas_log_copied)
        with contextlib.redirect_stdout(buf), _ptxas_log_copied(buf):
            yield buf
        return
    old = knobs.nvidia.dump_ptxas_log
    knobs.nvidia.dump_ptxas_log = True
    try:
        with contextlib.redirect_stdout(buf):
            yield buf
    finally:
        knobs.nvidia.dump_ptxas_log = old


@contextlib.contextmanager
def _ptxas_log_copied(buf: io.StringIO) -> Iterator[None]:
    """Triton 3.4 runs ptxas with -v into a temporary log file that it deletes on success: copy
    the log into `buf` as the call returns (through the backend module's `subprocess`)."""
    try:
        import triton.backends.nvidia.compiler as nv
    except ImportError:
        yield
        return
    real = nv.subprocess

    class _Subprocess:
        def __getattr__(self, name: str) -> Any:
            return getattr(real, name)

        def run(self, cmd: Any, *args: Any, **kwargs: Any) -> Any:
            result = real.run(cmd, *args, **kwargs)
            log = kwargs.get("stderr")
            if isinstance(cmd, list) and cmd and "ptxas" in os.path.basename(str(cmd[0])) and hasattr(log, "name"):
                with open(log.name, errors="replace") as f:
                    buf.write(f.read())
            return result

    nv.subprocess = _Subprocess()
    try:
        yield
    finally:
        nv.subprocess = real


@contextlib.contextmanager
def compiler_stderr(path: str, pass_dump: bool = False) -> Iterator[None]:
    """Send file descriptor 2 to `path` while inside: Triton's C++ writes MLIR diagnostics there
    (`file.py:27:5: error: ...`), and, with `pass_dump`, the IR around every MLIR and LLVM pass
    (MLIR_ENABLE_DUMP / LLVM_IR_ENABLE_DUMP)."""
    keys = ("MLIR_ENABLE_DUMP", "LLVM_IR_ENABLE_DUMP") if pass_dump else ()
    saved = {k: os.environ.get(k) for k in keys}
    for k in keys:
        os.environ[k] = "1"
    sys.stderr.flush()
    saved_fd = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved_fd, 2)
        os.close(saved_fd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# An MLIR diagnostic: "/path/kernel.py:27:5: error: failed to legalize operation 'tt.return' ..."
MLIR_DIAGNOSTIC = re.compile(r"^(?P<file>[^\n:]+\.py):(?P<line>\d+):(?P<col>\d+): error: (?P<msg>.*)$", re.MULTILINE)


def mlir_error(stderr_text: str, path: str) -> tuple[int, str] | None:
    """(line, message) of the first MLIR error the compiler reported in the user's file."""
    for m in MLIR_DIAGNOSTIC.finditer(stderr_text):
        if os.path.abspath(m.group("file")) == path:
            return int(m.group("line")), m.group("msg").strip()
    return None


@contextlib.contextmanager
def use_cache_dir(path: str) -> Iterator[None]:
    """Point Triton's compile cache at `path` for the duration."""
    from triton import knobs

    old = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = path
    knobs.cache.dir = path
    try:
        yield
    finally:
        knobs.cache.dir = old if old is not None else knobs.cache.get_triton_dir("cache")
        if old is None:
            os.environ.pop("TRITON_CACHE_DIR", None)
        else:
            os.environ["TRITON_CACHE_DIR"] = old
