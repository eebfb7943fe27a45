"""Timing a recorded launch with Triton's Proton profiler (`triton.profiler`), the fallback where
Nsight Compute is missing or the GPU's counters are forbidden to this user: Proton's default
backend reads kernel times through CUPTI's activity API, which needs no counter permission.

The reproducer runs once to compile and warm up, then `REPEATS` more times inside one Proton
session; the session's tree (`.hatchet`, JSON) gives each kernel's total time and launch count.
Then `REPEATS` more launches run in a second session with CUPTI's PC sampling
(`backend="cupti", mode="pcsampling"`, Triton 3.6+), apart from the timed ones because sampling
slows them: the warps' stall reasons over the whole kernel. Proton's tree puts the samples on
the kernel, not on its lines (Proton 3.6: docs/profile.md#without-nsight-compute-proton), so the
per-line counters stay Nsight Compute's. Where PC sampling cannot run (CUPTI refuses, an older Proton), the profile has
the kernel's time alone and says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

from .run_ncu import ProfileError
from .workdir import reproducer_folder

REPEATS = 20
RUNNER = """import runpy, sys, torch
import triton.profiler as proton
namespace = runpy.run_path(sys.argv[1])
namespace["example"]("cuda")
torch.cuda.synchronize()
proton.start(sys.argv[2])
for _ in range(int(sys.argv[3])):
    namespace["example"]("cuda")
torch.cuda.synchronize()
proton.finalize()
try:
    proton.start(sys.argv[2] + "-pcsampling", backend="cupti", mode="pcsampling")
    for _ in range(int(sys.argv[3])):
        namespace["example"]("cuda")
    torch.cuda.synchronize()
    proton.finalize()
except Exception as e:  # CUPTI's PC sampling refused, or a Proton without it
    print(f"inspector: PC sampling did not run: {type(e).__name__}: {e}", file=sys.stderr)
"""


@dataclass
class ProtonTimes:
    """A kernel's launches in the session: count, and mean time per launch."""

    launches: int
    mean_ns: float
    triton_version: str
    stalls: list[tuple[str, int]] = field(default_factory=list)  # PC sampling: reason, samples (most first)
    samples: int = 0  # PC samples of the kernel, stalled or not
    sampling_note: str = ""  # why there are no stall reasons, when there are none


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    stack = list(tree) if isinstance(tree, list) else [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield node
            stack.extend(node.get("children") or [])


def kernel_times(tree: Any, kernel: str) -> tuple[int, float]:
    """(launches, total ns) of the frames named `kernel` in a Proton session's tree."""
    count, total = 0, 0.0
    for node in _nodes(tree):
        name = str((node.get("frame") or {}).get("name", ""))
        metrics = node.get("metrics") or {}
        if name == kernel and "time (ns)" in metrics:
            count += int(metrics.get("count", 1))
            total += float(metrics["time (ns)"])
    return count, total


def kernel_stalls(tree: Any, kernel: str) -> tuple[int, list[tuple[str, int]]]:
    """(samples, [(stall reason, samples), ...] most first) of the frames named `kernel` in a PC
    sampling session's tree; reasons without a sample are left out."""
    samples, by_reason = 0, {}
    for node in _nodes(tree):
        if str((node.get("frame") or {}).get("name", "")) != kernel:
            continue
        metrics = node.get("metrics") or {}
        samples += int(metrics.get("num_samples", 0))
        for key, value in metrics.items():
            if key.startswith("stalled_") and isinstance(value, (int, float)) and value:
                by_reason[key[len("stalled_"):]] = by_reason.get(key[len("stalled_"):], 0) + int(value)
    return samples, sorted(by_reason.items(), key=lambda kv: -kv[1])


def time_reproducer(reproducer: str, kernel: str, timeout: float = 600, jailed: bool = True) -> ProtonTimes:
    """Run the reproducer under Proton (see the module docstring). Raises ProfileError saying why not."""
    import triton

    with reproducer_folder("inspector-proton-", reproducer, RUNNER) as (work, repro, runner, env):
        session = os.path.join(work, "session")
        command = [sys.executable, runner, repro, session, str(REPEATS)]
        if jailed:
            from ..bench.client import jailed_command

            command = jailed_command(command, [repro], env, writable=[work])
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=work)
        except subprocess.TimeoutExpired:
            raise ProfileError(f"Proton: the reproducer ran longer than {timeout:.0f} s") from None
        path = session + ".hatchet"
        if run.returncode != 0 or not os.path.exists(path):
            raise ProfileError("Proton could not time it: " + (run.stdout + run.stderr).strip()[-1200:])
        with open(path, encoding="utf-8") as f:
            count, total = kernel_times(json.load(f), kernel)
        if not count:
            raise ProfileError(f"Proton recorded no launch of {kernel}")
        times = ProtonTimes(count, total / count, triton.__version__)
        sampled = session + "-pcsampling.hatchet"
        if os.path.exists(sampled):
            with open(sampled, encoding="utf-8") as f:
                times.samples, times.stalls = kernel_stalls(json.load(f), kernel)
        if not times.samples:
            said = [l for l in run.stderr.splitlines() if l.startswith("inspector: PC sampling")]
            times.sampling_note = said[-1][len("inspector: "):] if said else "PC sampling recorded no sample"
        return times
