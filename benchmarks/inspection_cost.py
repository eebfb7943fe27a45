"""What a full inspection costs against a bare Triton compile of the same kernel, cold and warm,
and what a cache hit costs through the command line.

For each bundled kernel and target:
- bare, fresh process: `python` starts, imports torch and Triton, and Triton compiles the
  kernel's launch (JITFunction.run with an empty Triton cache): what a user's script pays. The
  launch is recorded from the file's example() in the same process first; GPU-free, running the
  example on meta tensors is not counted (a user's script on a GPU has real tensors); natively the
  whole process counts (import, example's launch, compile: exactly what a script pays).
- CLI, cold: `python -m inspector compile FILE --target T --no-cache` in a fresh process with an
  empty workspace home, no warm worker pool (TRITON_INSPECTOR_POOL=0): start-up, the sandboxed
  worker's imports, running the file, compile, resources, record. SASS is left for later (the
  call prints PTX; `--stage sass` or `--json` makes it).
- bare, warm process: the same compile in a process that has compiled before (imports, LLVM and
  backend initialisation done; natively, also a native compile of another kernel, so CUDA and
  Triton's driver are up): Triton's pipeline alone. One such process serves every round
  (`WarmBare`); each time it runs the file again (a new JIT function, an empty Triton cache) and
  compiles twice, timing the second, so that it is just warm, as the spare the inspection gets.
- inspection, warm: `inspect_kernel(use_cache=False, defer=("sass",))` from the caller with a
  warm worker manager (every warm-up step done) holding a warm spare (what a user who edits
  between compiles gets; `Sandbox.wait_for_spare`): hand the request to the spare's jailed
  worker, import the file, run example(), compile, resources, reproducer, record back as JSON.
- no spare: the same with spares off (TRITON_INSPECTOR_SPARE=0): each request forks its
  processes from the worker manager and builds its jail first (what a request gets when no
  spare is ready).
- back to back: inspections called one after another with no pause, as a script's loop calls
  them, and how many of them a spare served (spares are made between requests, so a loop's
  requests are mostly forked afresh; TRITON_INSPECTOR_SPARE=beside makes them beside one).
- + SASS: `complete(rec)` of the previous round's record, when the SASS is first asked for
  (nvdisasm in the sandbox).
- CLI cache hit: `python -m inspector compile FILE --target T` served from the cache, wall-clock
  of the whole process (median of 5).

`--warm-only` skips the fresh-process, cold and cache-hit columns (minutes on a lent GPU). The
JSON keeps each round's samples, and the worker's own time for each inspection (its
`compile_seconds`), which tells a slow compile from a slow hand-over.

Each column is a median of `--repeat` samples. The warm ones (no spare, bare warm, + SASS,
inspection) are sampled in rounds, one of each per round, so a machine whose speed drifts between
minutes slows both sides of a ratio alike; the JSON also keeps the median of the per-round
ratios of inspection to bare (`warm_ratio_rounds`).

Run: python benchmarks/inspection_cost.py [--targets sm_90,gfx942|native] [--kernels add,matmul] [--repeat 3]
     [--json OUT.json]
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
# the bare processes import the checkout's inspector (its worker, as the inspection runs it)
_ENV = {**os.environ, "PYTHONPATH": str(REPO)}

_BARE = r"""
import json, os, sys, time, tempfile, warnings
t_start = time.perf_counter()
warnings.simplefilter("ignore")
import contextlib
import torch, triton
from inspector import triton_compat as tc
from inspector.worker import kernel_file as kf, handler
from inspector.worker.stand_in_device import stand_in_device
from inspector.hardware.targets import parse_target
if {warm!r}:
    handler.warm_up()
    if {target!r} == "native":  # a native compile before: CUDA, Triton's driver and its launcher built
        handler.warm_spare(native=True)
native = {target!r} == "native"
target = None if native else parse_target({target!r})


def compile_once():
    driver = contextlib.nullcontext() if native else tc.offline_target(target)
    with tc.use_cache_dir(tempfile.mkdtemp()), driver, stand_in_device(target):
        t_example = time.perf_counter()
        with tc.capture_launches() as launches:
            module, _ = kf.execute_file({path!r})
            if callable(getattr(module, "example", None)) and not launches:
                kf.run_example(module, {path!r})
        example = time.perf_counter() - t_example
        launch = launches[0]
        configs = tc.autotune_configs(launch.obj)
        launch.jit.device_caches.clear()  # an example that called warmup() compiled it already
        with tc.use_cache_dir(tempfile.mkdtemp()):
            t0 = time.perf_counter()
            kernel, _ = tc.compile_launch(launch, {{}}, {{}}, configs[0] if configs else None)
            t1 = time.perf_counter()
    return {{"compile": t1 - t0, "process": t1 - t_start, "example": example}}


if {warm!r}:  # a warm process that compiles afresh each time it is asked (a line on stdin)
    print(json.dumps(compile_once()), flush=True)  # untimed: this kernel's first compile here
    for _ in sys.stdin:
        compile_once()  # just warm, as the spare is (on the VM, pages idle a second are reclaimed)
        print(json.dumps(compile_once()), flush=True)
else:
    print(json.dumps(compile_once()))
"""


def bare_fresh(path: Path, target: str) -> dict:
    """One bare compile in a fresh interpreter: {"compile", "process", "example", "wall"} seconds."""
    code = _BARE.format(path=str(path), target=target, warm=False)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_ENV, check=True)
    wall = time.perf_counter() - t0
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    # What a script pays: the whole process, less emulating the example on meta tensors GPU-free.
    result["script"] = wall if target == "native" else wall - result["example"]
    return result


class WarmBare:
    """A process that has compiled before (every warm-up step done) and compiles the kernel afresh
    when asked: the file run again, so a new JIT function with no compiled kernel in memory, and
    an empty Triton cache; the compile timed is the second of two, so the process is just warm,
    as the spare the inspection gets is. One process for every round, not one started per round."""

    def __init__(self, path: Path, target: str) -> None:
        code = _BARE.format(path=str(path), target=target, warm=True)
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=_ENV)
        self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the warm bare process ended (status {self.proc.wait()})")
        return json.loads(line)

    def compile(self) -> float:
        """Seconds of one compile (Triton's pipeline alone)."""
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        return self._read()["compile"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def cli(path: Path, target: str, home: str, *flags: str, pool: bool = False) -> float:
    """Wall-clock seconds of one `python -m inspector compile` process."""
    env = {**os.environ, "TRITON_INSPECTOR_HOME": home, "TRITON_INSPECTOR_POOL": "1" if pool else "0"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "inspector", "compile", str(path), "--target", target, *flags],
                   cwd=REPO, env=env, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", default="sm_90,gfx942")
    ap.add_argument("--kernels", default="", help="comma-separated kernel file stems (default: all bundled)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--warm-only", action="store_true",
                    help="only the warm columns (no fresh process, cold CLI or cache hit: quicker on a lent GPU)")
    ns = ap.parse_args()

    from inspector.compile.api import triton_version
    from inspector.compile.cache import Cache
    from inspector.isolation.sandbox import Sandbox

    kernels = sorted(p for p in (REPO / "kernels").glob("*.py") if not p.name.startswith("_"))
    if ns.kernels:
        wanted = set(ns.kernels.split(","))
        kernels = [p for p in kernels if p.stem in wanted]
    box = Sandbox(warm_up_worker=True)
    box.warm_up(complete=True)
    fresh_box = Sandbox(warm_up_worker=True, spare=False)
    fresh_box.warm_up(complete=True)
    cache = Cache(tempfile.mkdtemp(prefix="inspection-cost-"))
    machine = (f"{platform.node()} {platform.machine()}, {os.cpu_count()} cores; Python "
               f"{platform.python_version()}; Triton {triton_version()}")
    print(f"machine: {machine}\n")
    print("| kernel | target | bare, fresh process (s) | CLI, cold (s) | cold / bare | bare, warm process (s) "
          "| inspection, warm (s) | warm / bare | no spare (s) | no spare / bare | back to back (s) (by a spare) "
          "| + SASS when asked (s) | CLI cache hit (s) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    rows = []
    for path in kernels:
        for target in ns.targets.split(","):
            try:
                row = _row(path, target, ns.repeat, box, fresh_box, cache, warm_only=ns.warm_only)
            except (subprocess.CalledProcessError, SystemExit) as e:
                detail = getattr(e, "stderr", "") or str(e)
                print(f"| {path.stem} | {target} | failed: {detail.strip().splitlines()[-1][:200] if detail.strip() else e} |",
                      flush=True)
                continue
            rows.append(row)
            warm, fresh = row["bare_warm"], row["bare_fresh"]
            cold = (f"{fresh:.2f} | {row['cli_cold']:.2f} | {row['cli_cold'] / fresh:.2f}x" if fresh is not None
                    else "- | - | -")
            print(f"| {path.stem} | {target} | {cold} | "
                  f"{warm:.3f} | {row['inspection_warm']:.3f} | {row['inspection_warm'] / warm:.2f}x "
                  f"({row['warm_ratio_rounds']:.2f}x by rounds) | "
                  f"{row['no_spare']:.3f} | {row['no_spare'] / warm:.2f}x | "
                  f"{row['back_to_back']:.3f} ({row['back_to_back_by_spare']}) | "
                  f"{row['sass']:.3f} | {'-' if row['cli_hit'] is None else format(row['cli_hit'], '.2f')} |",
                  flush=True)
    box.close()
    fresh_box.close()
    if ns.json:
        Path(ns.json).write_text(json.dumps({"machine": machine, "rows": rows}, indent=1))


def _row(path: Path, target: str, repeat: int, box, fresh_box, cache, warm_only: bool = False) -> dict:
    """One kernel and target: every column's median (the fresh, cold and cache-hit ones None
    with `warm_only`)."""
    from inspector.compile.api import complete, inspect_kernel

    med = statistics.median
    fresh = cold = hit = None
    if not warm_only:
        fresh = med(bare_fresh(path, target)["script"] for _ in range(repeat))
        cold = med(cli(path, target, tempfile.mkdtemp(prefix="inspection-cost-home-"), "--no-cache")
                   for _ in range(repeat))
    # One untimed inspection of this kind first: the spare after it is warmed for this kind
    # (GPU-free or native), as a user's next compile of the same kind finds it.
    rec = inspect_kernel(path, target=target, use_cache=False, sandbox=box, timeout=600, cache=cache,
                         defer=("sass",))
    # The warm columns in rounds (see the module docstring): the GPU machine's host drifted by 30%
    # between minutes, more than the ratios measured.
    warm, forked, fulls, sass, in_worker = [], [], [], [], []
    warm_bare = WarmBare(path, target)
    for _ in range(repeat):
        t0 = time.perf_counter()
        inspect_kernel(path, target=target, use_cache=False, sandbox=fresh_box, timeout=600, cache=cache,
                       defer=("sass",))
        forked.append(time.perf_counter() - t0)
        warm.append(warm_bare.compile())
        # SASS for the previous record takes the spare that waited through the bare compile: on a
        # machine that pages out what sat unused for a second (the VM's DAMON reclaim), an idle
        # spare is a cold one. The timed inspection then gets the spare made after it, just warm.
        t0 = time.perf_counter()
        complete(rec, sandbox=box, cache=cache)
        sass.append(time.perf_counter() - t0)
        box.wait_for_spare()
        t0 = time.perf_counter()
        rec = inspect_kernel(path, target=target, use_cache=False, sandbox=box, timeout=600,
                             cache=cache, defer=("sass",))
        fulls.append(time.perf_counter() - t0)
        in_worker.append(rec.compile_seconds)
        if rec.error:
            warm_bare.close()
            raise SystemExit(f"{path.name} {target}: {rec.error.short()}")
    warm_bare.close()
    # Back to back, as a script's loop calls: each request comes as the last one's record is back.
    box.wait_for_spare()
    before, loop = box.served_by_spare, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        inspect_kernel(path, target=target, use_cache=False, sandbox=box, timeout=600, cache=cache, defer=("sass",))
        loop.append(time.perf_counter() - t0)
    by_spare = box.served_by_spare - before
    if not warm_only:
        home = tempfile.mkdtemp(prefix="inspection-cost-home-")
        cli(path, target, home)
        hit = med(cli(path, target, home) for _ in range(5))
    return {"kernel": path.stem, "target": target, "bare_fresh": fresh, "cli_cold": cold,
            "bare_warm": med(warm), "inspection_warm": med(fulls), "no_spare": med(forked), "sass": med(sass),
            "cli_hit": hit, "warm_ratio_rounds": med(f / w for f, w in zip(fulls, warm)),
            "back_to_back": med(loop), "back_to_back_by_spare": f"{by_spare}/{repeat}",
            # each round's figures, in order: the spread behind a median, and where a slow
            # inspection lost its time (in the worker's inspect_file, or around it)
            "samples": {"bare_warm": warm, "inspection_warm": fulls, "inspection_in_worker": in_worker}}


if __name__ == "__main__":
    main()
