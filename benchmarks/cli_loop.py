"""What a scripted command line pays per call: with the warm worker pool, and without it (today's behaviour).

For each mode, with a fresh $TRITON_INSPECTOR_HOME (so no pool is running) and a fresh cache:
the first `python -m inspector compile` call, a second call of a NEW kernel file (no cache hit:
with the pool, only this call's compile and the client's own start), and a loop of --calls calls
over as many distinct kernel files (variants of a small axpy kernel, one constant apart, so every
call compiles). Every call is a fresh process, timed from outside (wall clock, start to exit), as
a user's shell script would see it. Modes: "no pool" (TRITON_INSPECTOR_POOL=0: each call starts
its own worker manager, which imports torch and Triton) and "warm pool" (the default: the first
call starts the pool daemon, later calls connect to it). Each mode compiles its own files (same
kernel, other constants). The pool is stopped at the end.

Run: python benchmarks/cli_loop.py [--calls 50] [--target sm_90] [--out benchmarks/results/cli_loop.json]
Prints a markdown table; say which machine it ran on (the JSON records it).
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
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

VARIANT = '''import torch
import triton
import triton.language as tl


@triton.jit
def axpy_{i}(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * {c} + y, mask=mask)


def example(device):
    x = torch.randn(4096, device=device)
    axpy_{i}[(4,)](x, torch.randn_like(x), torch.empty_like(x), 4096, BLOCK=1024)
'''


def write_variants(folder: Path, start: int, count: int) -> list[str]:
    out = []
    for i in range(start, start + count):
        path = folder / f"axpy_{i}.py"
        path.write_text(VARIANT.format(i=i, c=f"{1.0 + i / 1024:.6f}"))
        out.append(str(path))
    return out


def call(file: str, target: str, env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "inspector", "compile", file, "--target", target], cwd=REPO,
                         env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    seconds = time.perf_counter() - t0
    if out.returncode != 0 or "(cached)" in out.stderr:
        raise SystemExit(f"{file}: status {out.returncode}, expected a fresh compile:\n{out.stderr}")
    return seconds


def run_mode(name: str, pool: bool, files: list[str], target: str, scratch: Path) -> dict:
    env = dict(os.environ)
    env.update({"TRITON_INSPECTOR_HOME": str(scratch / f"home-{name}"),
                "TRITON_INSPECTOR_CACHE": str(scratch / f"cache-{name}"),
                "TRITON_INSPECTOR_POOL": "1" if pool else "0"})
    env.pop("TRITON_INSPECTOR_POOL_IDLE", None)
    try:
        first = call(files[0], target, env)
        second = call(files[1], target, env)
        loop = []
        t0 = time.perf_counter()
        for i, f in enumerate(files[2:]):
            loop.append(call(f, target, env))
            print(f"  {name}: {i + 1}/{len(files) - 2} {loop[-1]:.2f} s", file=sys.stderr, flush=True)
        total = time.perf_counter() - t0
    finally:
        if pool:
            subprocess.run([sys.executable, "-m", "inspector", "pool", "stop"], cwd=REPO, env=env,
                           stdout=subprocess.DEVNULL, timeout=120)
    return {"mode": name, "first": round(first, 3), "second": round(second, 3), "loop_total": round(total, 2),
            "loop_calls": len(loop), "loop_median": round(statistics.median(loop), 3),
            "loop_min": round(min(loop), 3), "loop_max": round(max(loop), 3), "loop": [round(x, 3) for x in loop]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=50, help="calls in the loop (default 50)")
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--modes", default="nopool,pool", help="which modes, in order (default nopool,pool)")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "cli_loop.json"))
    ns = ap.parse_args()

    from inspector.isolation.exposure import isolation

    with tempfile.TemporaryDirectory(prefix="cli-loop-") as tmp:
        scratch = Path(tmp)
        (scratch / "kernels").mkdir()
        n = ns.calls + 2
        load_before = os.getloadavg()
        rows = []
        for k, mode in enumerate(ns.modes.split(",")):
            pool = mode.strip() == "pool"
            rows.append(run_mode("warm pool" if pool else "no pool", pool,
                                 write_variants(scratch / "kernels", k * n, n), ns.target, scratch))
        load_after = os.getloadavg()
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "triton": metadata.version("triton"), "torch": metadata.version("torch"),
                    "sandbox": isolation()["mode"], "loadavg_before": [round(x, 2) for x in load_before],
                    "loadavg_after": [round(x, 2) for x in load_after]},
        "target": ns.target, "calls": ns.calls, "rows": rows,
    }
    Path(ns.out).parent.mkdir(parents=True, exist_ok=True)
    Path(ns.out).write_text(json.dumps(result, indent=1) + "\n")

    print_table(result)


def print_table(result: dict) -> None:
    ns_calls, target, rows = result["calls"], result["target"], result["rows"]
    print(f"| `compile --target {target}` | first call (s) | second call, new kernel (s) | "
          f"{ns_calls} calls in a loop (s) | per call in the loop, median (min-max) (s) |")
    print("|---|---|---|---|---|")
    for r in rows:
        label = "today (TRITON_INSPECTOR_POOL=0)" if r["mode"] == "no pool" else "warm pool"
        print(f"| {label} | {r['first']:.2f} | {r['second']:.2f} | {r['loop_total']:.1f} | "
              f"{r['loop_median']:.2f} ({r['loop_min']:.2f}-{r['loop_max']:.2f}) |")
    if len(rows) == 2:
        base, pool = sorted(rows, key=lambda r: r["mode"] != "no pool")
        print(f"| pool speed-up | {base['first'] / pool['first']:.2f}x | {base['second'] / pool['second']:.2f}x | "
              f"{base['loop_total'] / pool['loop_total']:.2f}x | {base['loop_median'] / pool['loop_median']:.2f}x |")
    m = result["machine"]
    print(f"\n{m['cpus']} CPUs, {m['platform']}, Python {m['python']}, Triton {m['triton']}, torch {m['torch']}, "
          f"sandbox {m['sandbox']}; load average {m['loadavg_before']} before, {m['loadavg_after']} after")


if __name__ == "__main__":
    main()
