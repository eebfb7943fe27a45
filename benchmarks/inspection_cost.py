"""What a full inspection costs against a bare Triton compile of the same kernel, and a cache hit.

For each bundled kernel and target:
- bare, fresh process: `python` starts, imports torch and Triton, and Triton compiles the kernel
  (JITFunction.warmup -> triton.compile, empty Triton cache): what a user's script pays.
- bare, warm process: the same compile in a process that has already compiled once (imports,
  LLVM and backend initialisation done): Triton's pipeline alone.
- full inspection: `inspect_kernel(use_cache=False)` from the caller with a warm worker pool: fork,
  import the file, run example(), compile, SASS through nvdisasm, resources, record back as JSON.
- cache hit: `inspect_kernel` served from the on-disk cache (median of 20).

Run: python benchmarks/inspection_cost.py [--targets sm_90,gfx942] [--kernels add,matmul] [--repeat 3]
Prints a markdown table. Timings are wall-clock on whatever machine runs it; say which.
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
sys.path.insert(0, str(REPO))

_BARE = r"""
import json, os, sys, time, tempfile, warnings
t_start = time.perf_counter()
sys.path.insert(0, {repo!r})
warnings.simplefilter("ignore")
import torch, triton
from inspector.compile import kernel_file as kf, triton_compat as tc, worker
from inspector.targets import parse_target
if {warm!r}:
    worker.warm_up()
target = parse_target({target!r})
with tc.use_cache_dir(tempfile.mkdtemp()), tc.offline_target(target):
    module = kf.load_module({path!r})
    kernels = kf.kernels_in(module, {path!r})
    launches = kf.run_example(module)
    launch = launches[0]
    configs = tc.autotune_configs(launch.obj)
    t0 = time.perf_counter()
    kernel, _ = tc.compile_launch(launch, {{}}, {{}}, configs[0] if configs else None)
    t1 = time.perf_counter()
print(json.dumps({{"compile": t1 - t0, "process": t1 - t_start}}))
"""


def bare(path: Path, target: str, warm: bool) -> dict:
    code = _BARE.format(repo=str(REPO), path=str(path), target=target, warm=warm)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default="sm_90,gfx942")
    ap.add_argument("--kernels", default="", help="comma-separated kernel file stems (default: all bundled)")
    ap.add_argument("--repeat", type=int, default=3)
    ns = ap.parse_args()

    from inspector.compile.api import inspect_kernel, triton_version
    from inspector.compile.cache import Cache
    from inspector.compile.sandbox import Sandbox

    kernels = sorted(p for p in (REPO / "kernels").glob("*.py") if not p.name.startswith("_"))
    if ns.kernels:
        wanted = set(ns.kernels.split(","))
        kernels = [p for p in kernels if p.stem in wanted]
    box = Sandbox()
    box.warm_up()
    cache = Cache(tempfile.mkdtemp(prefix="inspection-cost-"))
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores; Python "
          f"{platform.python_version()}; Triton {triton_version()}")
    print()
    print("| kernel | target | bare, fresh process (s) | bare, warm process (s) | full inspection (s) "
          "| full / bare warm | cache hit median (ms) |")
    print("|---|---|---|---|---|---|---|")
    for path in kernels:
        for target in ns.targets.split(","):
            fresh = bare(path, target, warm=False)
            warm = statistics.median(bare(path, target, warm=True)["compile"] for _ in range(ns.repeat))
            fulls = []
            for _ in range(ns.repeat):
                t0 = time.perf_counter()
                rec = inspect_kernel(path, target=target, use_cache=False, sandbox=box, timeout=600)
                fulls.append(time.perf_counter() - t0)
                if rec.error:
                    raise SystemExit(f"{path.name} {target}: {rec.error.short()}")
            full = statistics.median(fulls)
            inspect_kernel(path, target=target, cache=cache, sandbox=box)
            hits = []
            for _ in range(20):
                t0 = time.perf_counter()
                rec = inspect_kernel(path, target=target, cache=cache, sandbox=box)
                hits.append(time.perf_counter() - t0)
                assert rec.cached
            print(f"| {path.stem} | {target} | {fresh['wall']:.2f} | {warm:.3f} | {full:.3f} | "
                  f"{full / warm:.2f}x | {statistics.median(hits) * 1000:.1f} |", flush=True)
    box.close()


if __name__ == "__main__":
    main()
