"""What capturing costs a running program: the same launches with and without `inspector.capture`.

The workload is the axpy kernel of tests/capture_program (BLOCK 1024; 4096 fp32 elements on a GPU,
1024 on the interpreter so that one program interprets per launch), launched
--launches times in a loop; each round times the loop without a capture, inside one, and (on a GPU)
inside one that times every launch (`time=True`), taking turns so that a drift in the machine's load
falls on all alike. On a GPU the kernels run natively; without one (or with TRITON_INTERPRET=1) on
Triton's CPU interpreter, where a launch costs milliseconds and the capture's share is small. Also
timed: starting and stopping a capture with its file written (`start+save`).

Run: python benchmarks/capture_overhead.py [--launches 2000] [--rounds 7]
Prints a markdown table; say which machine it ran on.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The workload: the capture tests' user program, loaded from its file as a user's module would be.
PROGRAM = REPO / "tests" / "capture_program" / "axpy_kernels.py"


def _program():
    """The program's module (`axpy`, `axpy_kernel`), loaded once."""
    import importlib.util

    if "axpy_kernels" not in sys.modules:
        spec = importlib.util.spec_from_file_location("axpy_kernels", PROGRAM)
        module = importlib.util.module_from_spec(spec)
        sys.modules["axpy_kernels"] = module
        spec.loader.exec_module(module)
    return sys.modules["axpy_kernels"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--launches",
        type=int,
        default=None,
        help="launches per loop (default 2000 on a GPU, 100 on the interpreter)",
    )
    ap.add_argument("--rounds", type=int, default=7)
    ns = ap.parse_args()

    import torch

    gpu = torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"
    if not gpu and os.environ.get("TRITON_INTERPRET") != "1":
        # the interpreter is chosen when kernels are decorated: start again with it on
        env = {**os.environ, "TRITON_INTERPRET": "1"}
        raise SystemExit(subprocess.call([sys.executable, *sys.argv], env=env))

    import triton
    axpy = _program().axpy

    import inspector

    launches = ns.launches or (2000 if gpu else 100)
    device = "cuda" if gpu else "cpu"
    n = 4096 if gpu else 1024
    x = torch.randn(n, device=device)
    y = torch.randn(n, device=device)
    sync = torch.cuda.synchronize if gpu else (lambda: None)

    def loop() -> float:
        sync()
        t0 = time.perf_counter()
        for _ in range(launches):
            axpy(0.5, x, y)
        sync()
        return time.perf_counter() - t0

    loop()  # compile (GPU) / rewrite (interpreter) once
    modes = ["plain", "capture"] + (["capture+time"] if gpu else [])
    times: dict[str, list[float]] = {m: [] for m in modes}
    saves: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.inspector")
        for _ in range(ns.rounds):
            for mode in modes:
                if mode == "plain":
                    times[mode].append(loop())
                    continue
                t0 = time.perf_counter()
                with inspector.capture(out, time=(mode == "capture+time")):
                    t1 = time.perf_counter()
                    elapsed = loop()
                    t2 = time.perf_counter()
                t3 = time.perf_counter()
                times[mode].append(elapsed)
                saves.append((t1 - t0) + (t3 - t2))
        cap = inspector.capture.load(out)
    (entry,) = [k for k in cap.kernels if k.name == "axpy_kernel"]
    assert entry.launches == launches, (entry.launches, launches)

    hot = _hot_path(x, y, n)
    where = (
        torch.cuda.get_device_name()
        if gpu
        else f"{platform.processor() or platform.machine()} CPU, interpreter"
    )
    print(
        f"capture overhead on {where}; {os.cpu_count()} CPUs; Python {platform.python_version()}, "
        f"torch {torch.__version__}, Triton {triton.__version__}; "
        f"{launches} launches of axpy_kernel ({n} elements) "
        "per loop, "
        f"median of {ns.rounds} rounds (min-max)\n"
    )
    print("| mode | per launch (us) | overhead per launch (us) | overhead |")
    print("|---|---|---|---|")
    base = statistics.median(times["plain"]) / launches * 1e6
    for mode in modes:
        per = [t / launches * 1e6 for t in times[mode]]
        med = statistics.median(per)
        print(
            f"| {mode} | {med:.2f} ({min(per):.2f}-{max(per):.2f}) | {med - base:+.2f} | "
            f"{(med - base) / base * 100:+.1f}% |"
        )
    print(
        f"\nstarting a capture and writing its file: median {statistics.median(saves) * 1e3:.1f} ms "
        f"({min(saves) * 1e3:.1f}-{max(saves) * 1e3:.1f})"
    )
    print(
        f"the recorder's own work per launch of a kernel it has seen (no kernel run; {hot['calls']} calls): "
        f"{hot['interpreted']:.2f} us for an interpreted launch "
        "(Triton's binder computes its specialisation), "
        f"{hot['compiled']:.2f} us for a compiled one (keyed by the compiled kernel)"
    )
    if gpu and entry.time_ms is not None:
        print(
            f"measured GPU time of the last timed capture: {entry.time_ms:.3f} ms "
            f"for {entry.launches} launches"
        )


def _hot_path(x, y, n: int, calls: int = 20000) -> dict[str, float]:
    """Microseconds `Recorder.jit_launch` takes for a launch it has seen: the capture's whole
    per-launch work besides one wrapper call. The compiled case uses a kernel compiled for sm_90
    GPU-free (its launch is not run)."""
    import torch
    axpy_kernel = _program().axpy_kernel

    from inspector import triton_compat as tc
    from inspector.triton_compat import launch_hooks as hooks
    from inspector.capture.recorder import Recorder
    from inspector.hardware.targets import parse_target

    rec = Recorder()
    args, kwargs, grid = (x, y, n, 0.5), {"BLOCK": 1024}, (triton_cdiv(n, 1024),)
    out: dict[str, float] = {"calls": calls}
    interpreted = hooks.InterpretedFunction is not None and isinstance(axpy_kernel, hooks.InterpretedFunction)
    if interpreted:
        rec.jit_launch(axpy_kernel, args, kwargs, grid, None, None, False, True)
        t0 = time.perf_counter()
        for _ in range(calls):
            rec.jit_launch(axpy_kernel, args, kwargs, grid, None, None, False, True)
        out["interpreted"] = (time.perf_counter() - t0) / calls * 1e6
        jit = hooks.as_jit(axpy_kernel)
    else:
        out["interpreted"] = float("nan")
        jit = axpy_kernel
    with tc.offline_target(parse_target("sm_90"), [jit]):
        kernel = jit.warmup(
            torch.empty(n, device="meta"), torch.empty(n, device="meta"), n, 0.5, BLOCK=1024, grid=grid
        )
    rec.jit_launch(jit, args, kwargs, grid, kernel, None, False, False)
    t0 = time.perf_counter()
    for _ in range(calls):
        rec.jit_launch(jit, args, kwargs, grid, kernel, None, False, False)
    out["compiled"] = (time.perf_counter() - t0) / calls * 1e6
    return out


def triton_cdiv(a: int, b: int) -> int:
    return -(-a // b)


if __name__ == "__main__":
    main()
