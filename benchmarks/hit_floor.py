"""What a cached answer costs on the command line, as a ratio to a bare Python start on the same
machine in the same run (machines differ threefold; the ratio does not).

    python benchmarks/hit_floor.py [--repeat 15] [--kernel kernels/add.py] [--target sm_90] [--json out.json]

Each command is a fresh process timed from outside (start to exit), interleaved round by round so
load hits all alike; medians. The floor is `python -c pass`. The hits are `compile` and `explain`
of the same kernel after one call has filled the cache. Bytecode caches are written (a user's
machine writes them; PYTHONDONTWRITEBYTECODE is dropped for the children). Goal
(docs/performance.md#a-cache-hit): a hit at most 1.5x the floor.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--kernel", default="kernels/add.py")
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--json")
    ns = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TRITON_INSPECTOR_CACHE"] = tempfile.mkdtemp(prefix="hit-floor-cache-")
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "compile (hit)": [sys.executable, "-m", "inspector", "compile", ns.kernel, "--target", ns.target],
        "explain (hit)": [sys.executable, "-m", "inspector", "explain", ns.kernel, "--target", ns.target],
    }
    for cmd in commands.values():  # fill the cache and the bytecode caches
        timed(cmd, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ns.repeat):
        for name, cmd in commands.items():
            times[name].append(timed(cmd, env))
    floor = statistics.median(times["python -c pass"])
    print(f"{'command':<16} {'median s':>9} {'x floor':>8}")
    rows = {}
    for name, xs in times.items():
        m = statistics.median(xs)
        rows[name] = {"median_s": m, "ratio": m / floor, "runs": xs}
        print(f"{name:<16} {m:9.3f} {m / floor:8.2f}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, load {load:.1f}; Python {platform.python_version()}")
    if ns.json:
        Path(ns.json).write_text(json.dumps({"machine": platform.node(), "cpus": os.cpu_count(), "load": load,
                                             "python": platform.python_version(), "kernel": ns.kernel,
                                             "target": ns.target, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
