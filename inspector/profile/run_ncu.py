"""Profiling a recorded launch under Nsight Compute, on a GPU, in the benchmark jail.

The launch profiled is the inspection's reproducer (`rec.reproducer`: the kernel and an
`example(device)` that launches it exactly as recorded), run by a two-line runner, so what is
measured is what was inspected. One profiling run writes a report with the sections the profile
reads (source counters and warp states per line; launch statistics, occupancy, speed of light and
memory workload for the kernel's figures, and the FLOP and byte counts of its roofline point,
`rate.METRICS`); the source and details pages are then printed from the report, which needs no
GPU, both at once.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field

from .rate import METRICS
from ..launch_data import sidecar
from .workdir import reproducer_folder

SECTIONS = ("SourceCounters", "WarpStateStats", "LaunchStats", "Occupancy", "SpeedOfLight",
            "MemoryWorkloadAnalysis")
NCU_PATHS = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu")
RUNNER = """import runpy, sys, torch
namespace = runpy.run_path(sys.argv[1])
namespace["example"]("cuda")
torch.cuda.synchronize()
"""
# `EarlyRun`'s runner: torch, CUDA and Triton's driver (its C helpers, built by the compiler on a
# fresh cache; `get_current_target` as Triton's tutorials call it) start first; then it waits for
# "go" (the reproducer written) and runs RUNNER.
EARLY_RUNNER = """import sys, torch, triton
torch.cuda.init()
triton.runtime.driver.active.get_current_target()
if sys.stdin.readline().strip() != "go":
    sys.exit(0)
""" + RUNNER


class ProfileError(Exception):
    """Profiling could not run; the message says why and what to do. `fallback`: Nsight Compute
    itself is unusable here (missing, counters forbidden), so Proton may still time the kernel."""

    def __init__(self, message: str, fallback: bool = False) -> None:
        super().__init__(message)
        self.fallback = fallback


@dataclass
class NcuPages:
    source: str  # `--page source --csv --print-source sass,cuda`
    details: str  # `--page details --csv`
    version: str  # "2025.3.1"
    profiled_text: str  # the reproducer that ran
    seconds: dict[str, float] = field(default_factory=dict)  # wall time of each step, in order


def find_ncu(explicit: str | None = None) -> str | None:
    """The ncu binary: `explicit` (only it, when given), else $NCU, on PATH, or CUDA's usual places."""
    for candidate in ((explicit,) if explicit else (os.environ.get("NCU"), shutil.which("ncu"), *NCU_PATHS)):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _version(ncu: str) -> str:
    out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"Version (\d[\d.]*)", out)
    return m.group(1) if m else "unknown"


def _explain(output: str) -> str:
    if "ERR_NVGPUCTRPERM" in output:
        return ("the GPU's performance counters are not permitted for this user (ERR_NVGPUCTRPERM): run as "
                "root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0 "
                "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)")
    if "No kernels were profiled" in output:
        return ("the launch never reached the GPU (no kernel was profiled; a program that launches the kernel "
                "fewer times than when it was captured does so too)")
    return output.strip()[-1500:]


def _binary(ncu: str | None) -> str:
    binary = find_ncu(ncu)
    if binary is None:
        raise ProfileError(f"Nsight Compute (ncu) is not {'at ' + ncu if ncu else 'installed here'}: install the "
                           "CUDA toolkit's Nsight Compute, or pass --ncu PATH", fallback=True)
    return binary


def _ncu_args(binary: str, kernels: list[str], work: str, skip: int = 0) -> list[str]:
    """ncu profiling the launch after the first `skip` of kernels named in `kernels`, into `work`."""
    names = "|".join(re.escape(k) for k in kernels)
    return [binary, "--target-processes", "all", "-k", f"regex:^({names})$", "--launch-skip", str(skip),
            "--launch-count", "1", *[a for s in SECTIONS for a in ("--section", s)], "--metrics", ",".join(METRICS),
            "--import-source", "yes", "-o", os.path.join(work, "launch"), "-f"]


def _command(binary: str, kernels: list[str], work: str, runner: str, repro: str, env: dict[str, str],
             jailed: bool) -> list[str]:
    """ncu on `runner repro`, profiling the first launch of a kernel named in `kernels`."""
    command = [*_ncu_args(binary, kernels, work), sys.executable, runner, repro]
    if not jailed:
        return command
    from ..bench.client import jailed_command

    # ncu is a launcher beside its own libraries and sections (CUDA's bin/ncu starts
    # ../nsight-compute-*/ncu): its folder, or the toolkit above a bin/, read-only
    folder = os.path.dirname(os.path.realpath(binary))
    tools = [os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder]
    return jailed_command(command, [repro], env, writable=[work], tools=tools)


def _pages(binary: str, work: str, kernel: str, output: str, returncode: int, timeout: float,
           seconds: dict[str, float], reproducer: str) -> NcuPages:
    """Both pages of the run's report, printed at once (each its own ncu process reading it)."""
    report = os.path.join(work, "launch.ncu-rep")
    if returncode != 0 or not os.path.exists(report):
        raise ProfileError(f"ncu could not profile {kernel}: {_explain(output)}", fallback="ERR_NVGPUCTRPERM" in output)
    started = time.perf_counter()

    def page(args: list[str]) -> str:
        out = subprocess.run([binary, "--import", report, *args], capture_output=True, text=True, timeout=timeout)
        if out.returncode != 0:
            raise ProfileError(f"ncu could not print the {args[1]} page: {_explain(out.stdout + out.stderr)}")
        return out.stdout

    with ThreadPoolExecutor(2) as pool:
        source, details = pool.map(page, (["--page", "source", "--csv", "--print-source", "sass,cuda"],
                                          ["--page", "details", "--csv"]))
    seconds["its two pages printed"] = time.perf_counter() - started
    return NcuPages(source, details, _version(binary), reproducer, seconds)


def profile_reproducer(reproducer: str, kernel: str, ncu: str | None = None, timeout: float = 600,
                       jailed: bool = True, data: bytes = b"") -> NcuPages:
    """Run the reproducer once under Nsight Compute (its first launch of `kernel`) and print both
    pages of the report; `data`: the launch's carried tensors (inspector.launch_data), read by the
    reproducer's example(). Raises ProfileError saying why not."""
    binary = _binary(ncu)
    with reproducer_folder("inspector-profile-", reproducer, RUNNER, data) as (work, repro, runner, env):
        command = _command(binary, [kernel], work, runner, repro, env, jailed)
        started = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=work)
        seconds = {"Nsight Compute run": time.perf_counter() - started}
        return _pages(binary, work, kernel, run.stdout + run.stderr, run.returncode, timeout, seconds, reproducer)


def profile_program(program: list[str], kernel: str, skip: int, profiled_text: str, cwd: str | None = None,
                    ncu: str | None = None, timeout: float = 600) -> NcuPages:
    """Run the user's own program (`python PROGRAM...`, as `capture.by_running.program_of` gives it)
    under Nsight Compute and profile its launch of `kernel` after the first `skip` launches of that
    name, so the data measured is the program's own. It runs as the user who asked, like the
    program's capture (`compile --run`). `profiled_text`: the text of the file defining the kernel,
    for the line mapping. Raises ProfileError saying why not."""
    binary = _binary(ncu)
    work = tempfile.mkdtemp(prefix="inspector-profile-run-")
    try:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([cwd or os.getcwd()] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        command = [*_ncu_args(binary, [kernel], work, skip), sys.executable, *program]
        started = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
        seconds = {"the program under Nsight Compute": time.perf_counter() - started}
        return _pages(binary, work, kernel, run.stdout + run.stderr, run.returncode, timeout, seconds, profiled_text)
    except subprocess.TimeoutExpired:
        raise ProfileError(f"the program did not finish under Nsight Compute within {timeout:g} s") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


class EarlyRun:
    """Nsight Compute started before the reproducer exists, so that Python, torch and CUDA start
    under it while the inspector compiles the kernel (`python -m inspector profile` does both at
    once). The runner waits on its stdin: `finish(reproducer, kernel)` writes the reproducer and
    says "go"; `cancel()` says "stop". It profiles the first launch of any kernel named in
    `kernels` (the file's @jit functions: which one the inspection picks is not known yet), and
    `finish` refuses (returns None, so the caller profiles the usual way) when the kernel
    inspected is not among them."""

    def __init__(self, kernels: list[str], ncu: str | None = None, jailed: bool = True) -> None:
        self.kernels = list(kernels)
        self.binary = _binary(ncu)
        self._folder = ExitStack()  # the run's folder, removed by finish or cancel
        self.work, self.repro, runner, env = self._folder.enter_context(
            reproducer_folder("inspector-profile-", "", EARLY_RUNNER))
        command = _command(self.binary, self.kernels, self.work, runner, self.repro, env, jailed)
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, env=env, cwd=self.work)

    def finish(self, reproducer: str, kernel: str, timeout: float = 600, data: bytes = b"") -> NcuPages | None:
        """The pages of `kernel`'s profile, or None when this run did not give them (the kernel is
        not one it waits for, the runner is gone, the run failed): `profile_reproducer` then runs
        it the usual way, and says why if it fails too. Raises ProfileError on a timeout."""
        if kernel not in self.kernels:
            self.cancel()
            return None
        with open(self.repro, "w") as f:  # the same file (and inode) the jail shows the runner
            f.write(reproducer)
        if data:
            with open(sidecar(self.repro), "wb") as f:
                f.write(data)
        go = time.perf_counter()
        try:
            output, _ = self.proc.communicate("go\n", timeout=timeout)
        except OSError:  # the runner is gone (its stdin closed)
            self.cancel()
            return None
        except subprocess.TimeoutExpired:
            self.cancel()
            raise ProfileError(f"ncu did not finish profiling {kernel} within {timeout:g} s") from None
        try:
            if self.proc.returncode != 0 or not os.path.exists(os.path.join(self.work, "launch.ncu-rep")):
                return None
            seconds = {"Nsight Compute run, after the compile (started beside it)": time.perf_counter() - go}
            return _pages(self.binary, self.work, kernel, output, 0, timeout, seconds, reproducer)
        finally:
            self._folder.close()

    def cancel(self) -> None:
        """Stop the runner (it exits without launching anything) and remove its folder."""
        if self.proc.returncode is None:
            try:
                self.proc.communicate("stop\n", timeout=30)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._folder.close()
