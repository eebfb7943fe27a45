"""Open a kernel through the code that really calls it: run a test, a benchmark or a script (GPU-free
under Triton's interpreter, natively on a GPU), record its launches, and compile the chosen one
for any target. The call is the real one: real shapes, strides, dtypes and constexprs, and the
specialisation Triton gives them; no guessing from names.

    open_by_running("pytest tests/test_ops.py::test_rowscale", kernel="_rowscale_kernel", target="sm_90")

Without a GPU (any target but `native`), the program runs with TRITON_INTERPRET=1 and the
stand-in device (`inspector.capture.run_program --stand-in`): tensors asked for on `cuda` live on
the CPU with their data, torch answers as the target's GPU, and the kernels run on the CPU, so a
test's own checks run too. A kernel the interpreter cannot run (Gluon, some tensor-descriptor
code) is still recorded at its launch, with its specialisation, before the run stops. On the
command line the program runs as the user who asked, in its own process; the app runs it in the
benchmark jail (`jailed=True`: no network, no home, cache or workspaces, the project read-only).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..record import ErrorInfo, Inspection
from ..hardware.targets import DEFAULT_TARGET

PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent.parent)  # the folder holding `inspector`
OUTPUT_TAIL = 4000  # characters of the program's output kept for an error message


@dataclass
class RunResult:
    """What running the program left: its exit status, the capture, the end of its output."""

    status: int
    capture: Any  # inspector.capture.store.Capture, or None when none was written
    output: str
    program: list[str]


def program_of(command: str | list[str]) -> list[str]:
    """What run_program runs for a command as a user types it: `pytest ARGS` and a bare pytest node
    id (`tests/t.py::test_x`) run pytest; `python X ...` runs X; `script.py ...` a script; anything
    else is a module (`mypkg.bench --size 4096`)."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    if not words:
        raise ValueError("an empty command: give a pytest node id, `pytest ...`, `python script.py ...` or a script")
    first = os.path.basename(words[0])
    if first in ("pytest", "py.test"):
        return ["-m", "pytest", *words[1:]]
    if "::" in words[0] or (words[0].endswith(".py") and os.path.basename(words[0]).startswith("test_")):
        return ["-m", "pytest", *words]
    if first.startswith("python"):
        rest = words[1:]
        while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
            rest = rest[1:]
        if not rest:
            raise ValueError(f"{command!r}: python with nothing to run")
        return rest
    if words[0].endswith(".py"):
        return words
    return ["-m", *words]


def run_program(command: str | list[str], target: str = DEFAULT_TARGET, cwd: str | os.PathLike | None = None,
                timeout: float | None = None, jailed: bool = False) -> RunResult:
    """Run the command under a capture (see the module docstring); never raises for the program's
    own failures: they are in `status` and `output`. `jailed` (the app): in the benchmark jail,
    which sees the project folder `cwd` read-only and writes only the capture."""
    from . import CaptureFileError, load

    program = program_of(command)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_ROOT, str(cwd or os.getcwd())]
                                        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    flags: list[str] = []
    if target != "native":
        env["TRITON_INTERPRET"] = "1"
        flags = ["--stand-in", target]
    with tempfile.TemporaryDirectory(prefix="inspector-run-") as tmp:
        out = os.path.join(tmp, "run.inspector")
        cmd = [sys.executable, "-m", "inspector.capture.run_program", out, *flags, "--", *program]
        if jailed:
            from ..bench.client import jailed_command

            # the jail keeps PYTHONPATH and the TRITON_ variables set above (clean_environment)
            cmd = jailed_command(cmd, [str(cwd or os.getcwd())], env, writable=[tmp])
        try:
            proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
            status, output = proc.returncode, (proc.stdout + proc.stderr)
        except subprocess.TimeoutExpired as e:
            status = 124
            output = ((e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")) \
                + f"\n(stopped after {timeout} s)"
        try:
            cap = load(out)
        except CaptureFileError:
            cap = None
    return RunResult(status, cap, output[-OUTPUT_TAIL:], program)


@dataclass
class RunOpened:
    """What `open_run` gives: the record, the run that launched it and its capture entry (None
    where the run launched nothing usable: the record then says why)."""

    rec: Inspection
    run: RunResult | None = None
    entry: Any = None  # inspector.capture.store.KernelEntry

    def kernel_file_text(self) -> str:
        """The text of the file that defines the kernel, as the run saw it ("" when not kept)."""
        if self.run is None or self.run.capture is None or self.entry is None:
            return ""
        return (self.run.capture.files.get(self.entry.file_id) or {}).get("text", "")


def open_by_running(command: str | list[str], kernel: str | None = None, target: str = DEFAULT_TARGET,
                    cwd: str | os.PathLike | None = None, run_timeout: float | None = 600,
                    **inspect_kwargs: Any) -> Inspection:
    """Run `command`, then compile its launch of `kernel` (default: the kernel launched most) for
    `target`; inspect_kwargs go to inspect_kernel (consts, args, options, ...). A run that
    launched no kernel, or not the one asked for, comes back as a failed record saying what ran."""
    return open_run(command, kernel, target, cwd, run_timeout, **inspect_kwargs).rec


def open_run(command: str | list[str], kernel: str | None = None, target: str = DEFAULT_TARGET,
             cwd: str | os.PathLike | None = None, run_timeout: float | None = 600,
             **inspect_kwargs: Any) -> RunOpened:
    """`open_by_running`, keeping the run and the capture entry the record was made from."""
    from .reopen import NoReproducer, reopen
    from .table import find

    shown = command if isinstance(command, str) else shlex.join(command)
    try:
        run = run_program(command, target=target, cwd=cwd, timeout=run_timeout)
    except ValueError as e:
        return RunOpened(Inspection.failure(ErrorInfo("bad_argument", str(e))))
    if run.capture is None or not run.capture.kernels:
        return RunOpened(Inspection.failure(ErrorInfo(
            "no_launch", f"`{shown}` ran (exit status {run.status}) and launched no Triton kernel"
                         + (f"; the end of its output:\n{run.output}" if run.output.strip() else ""),
            details={"status": run.status, "program": run.program})), run)
    cap = run.capture
    try:
        entry = find(cap, kernel) if kernel else max(cap.sorted_kernels(), key=lambda k: k.launches)
    except KeyError as e:
        return RunOpened(Inspection.failure(ErrorInfo("bad_argument", f"`{shown}`: {e.args[0]}",
                                                      details={"status": run.status})), run)
    try:
        rec = reopen(cap, entry, target=target, **inspect_kwargs)
    except NoReproducer as e:
        return RunOpened(Inspection.failure(ErrorInfo("bad_argument", str(e))), run, entry)
    rec.call_origin = f"run: {shown}"
    if run.status not in (0, None) and rec.error is None:
        rec.log += f"\nnote: `{shown}` exited with {run.status} after the launch was recorded\n"
    return RunOpened(rec, run, entry)
