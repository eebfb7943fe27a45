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
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .rate import METRICS
from .workdir import reproducer_folder

SECTIONS = ("SourceCounters", "WarpStateStats", "LaunchStats", "Occupancy", "SpeedOfLight",
            "MemoryWorkloadAnalysis")
NCU_PATHS = ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/ncu")
RUNNER = """import runpy, sys, torch
namespace = runpy.run_path(sys.argv[1])
namespace["example"]("cuda")
torch.cuda.synchronize()
"""


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
        return "the launch never reached the GPU (no kernel was profiled)"
    return output.strip()[-1500:]


def profile_reproducer(reproducer: str, kernel: str, ncu: str | None = None, timeout: float = 600,
                       jailed: bool = True) -> NcuPages:
    """Run the reproducer once under Nsight Compute (its first launch of `kernel`) and print both
    pages of the report. Raises ProfileError saying why not."""
    binary = find_ncu(ncu)
    if binary is None:
        raise ProfileError(f"Nsight Compute (ncu) is not {'at ' + ncu if ncu else 'installed here'}: install the "
                           "CUDA toolkit's Nsight Compute, or pass --ncu PATH", fallback=True)
    with reproducer_folder("inspector-profile-", reproducer, RUNNER) as (work, repro, runner, env):
        report = os.path.join(work, "launch")
        command = [binary, "--target-processes", "all", "-k", f"regex:^{re.escape(kernel)}$", "--launch-count", "1",
                   *[a for s in SECTIONS for a in ("--section", s)], "--metrics", ",".join(METRICS),
                   "--import-source", "yes",
                   "-o", report, "-f", sys.executable, runner, repro]
        if jailed:
            from ..bench.client import jailed_command

            # ncu is a launcher beside its own libraries and sections (CUDA's bin/ncu starts
            # ../nsight-compute-*/ncu): its folder, or the toolkit above a bin/, read-only
            folder = os.path.dirname(os.path.realpath(binary))
            tools = [os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder]
            command = jailed_command(command, [repro], env, writable=[work], tools=tools)
        started = time.perf_counter()
        run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=work)
        seconds = {"Nsight Compute run": time.perf_counter() - started}
        if run.returncode != 0 or not os.path.exists(report + ".ncu-rep"):
            output = run.stdout + run.stderr
            raise ProfileError(f"ncu could not profile {kernel}: {_explain(output)}",
                               fallback="ERR_NVGPUCTRPERM" in output)
        started = time.perf_counter()

        def page(args: list[str]) -> str:
            out = subprocess.run([binary, "--import", report + ".ncu-rep", *args], capture_output=True, text=True,
                                 timeout=timeout)
            if out.returncode != 0:
                raise ProfileError(f"ncu could not print the {args[1]} page: {_explain(out.stdout + out.stderr)}")
            return out.stdout

        with ThreadPoolExecutor(2) as pool:  # each is its own ncu process reading the report
            source, details = pool.map(page, (["--page", "source", "--csv", "--print-source", "sass,cuda"],
                                              ["--page", "details", "--csv"]))
        seconds["its two pages printed"] = time.perf_counter() - started
        return NcuPages(source, details, _version(binary), reproducer, seconds)
