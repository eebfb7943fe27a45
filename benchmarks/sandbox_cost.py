"""What the compile sandbox costs per compile: the same inspections with and without it.

For each kernel and sandbox mode, a warm worker manager (`Sandbox`, warm-up compile done) runs
`inspect_kernel(use_cache=False)` --repeat times, GPU-free for --target; the table has the median
and min-max wall time per compile, seen from the caller. Modes, as $TRITON_INSPECTOR_SANDBOX takes
them: "bwrap" (worker manager under bubblewrap, a namespace jail per compile), "unshare" (the jail
without bubblewrap), "off" (no jail: a process group with limits, for debugging). Modes this
machine cannot run are left out. The modes take turns, compile by compile, so that a drift in the
machine's load falls on all of them alike. The last row is the sandbox alone: a request the
worker rejects at once (the forks, the jail, the exit and the status back; no compile).

Run: python benchmarks/sandbox_cost.py [--kernels add,matmul] [--target sm_90] [--repeat 15]
Prints a markdown table; say which machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernels", default="add,matmul")
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--modes", default="bwrap,unshare,off")
    ns = ap.parse_args()

    from inspector.compile.api import inspect_kernel, triton_version
    from inspector.isolation.exposure import isolation
    from inspector.isolation.sandbox import Sandbox, SandboxError

    modes = [m for m in ns.modes.split(",") if m == "off" or isolation(m)["mode"] == m]
    boxes = {m: Sandbox(mode=m, warm_up_worker=True) for m in modes}
    for box in boxes.values():
        box.warm_up(complete=True)
    paths = [REPO / "kernels" / f"{k}.py" for k in ns.kernels.split(",")]
    times: dict[tuple[str, str], list[float]] = {(p.stem, m): [] for p in paths for m in modes}
    for path in paths:
        for m in modes:  # one unmeasured compile each: the first fork after start-up pays page faults
            inspect_kernel(path, target=ns.target, sandbox=boxes[m], use_cache=False)
        for _ in range(ns.repeat):
            for m in modes:
                t0 = time.perf_counter()
                rec = inspect_kernel(path, target=ns.target, sandbox=boxes[m], use_cache=False)
                times[(path.stem, m)].append(time.perf_counter() - t0)
                assert rec.error is None, rec.error.short()
    # The sandbox alone: a request the worker rejects at once (forks, jail, exit, status back).
    empty = {m: [] for m in modes}
    for _ in range(ns.repeat):
        for m in modes:
            t0 = time.perf_counter()
            try:
                boxes[m].run({"kind": "none"})
            except SandboxError:
                pass
            empty[m].append(time.perf_counter() - t0)
    for box in boxes.values():
        box.close()

    import torch

    print(f"{platform.node()}: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
          f"Triton {triton_version()}, torch {torch.__version__}; target {ns.target}; median of {ns.repeat} "
          "(min-max), seconds per compile\n")
    print("| kernel | " + " | ".join(modes) + " | " + " | ".join(f"{m} - off" for m in modes if m != "off") + " |")
    print("|---" * (1 + len(modes) + len([m for m in modes if m != "off"])) + "|")
    for path in paths:
        med = {m: statistics.median(times[(path.stem, m)]) for m in modes}
        cells = [f"{med[m]:.3f} ({min(times[(path.stem, m)]):.3f}-{max(times[(path.stem, m)]):.3f})" for m in modes]
        extra = [f"{(med[m] - med['off']) * 1000:+.0f} ms" for m in modes if m != "off" and "off" in med]
        print(f"| {path.stem} | " + " | ".join(cells + extra) + " |")
    med = {m: statistics.median(empty[m]) for m in modes}
    cells = [f"{med[m]:.3f} ({min(empty[m]):.3f}-{max(empty[m]):.3f})" for m in modes]
    extra = [f"{(med[m] - med['off']) * 1000:+.0f} ms" for m in modes if m != "off" and "off" in med]
    print("| (empty request) | " + " | ".join(cells + extra) + " |")


if __name__ == "__main__":
    main()
