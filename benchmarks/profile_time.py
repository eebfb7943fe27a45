"""Where a profile's wall time goes: Nsight Compute run on a gallery kernel's example with the
sections `inspector profile` collects, and with single changes to its options, each timed end to
end (python start, the example, every replay pass), so the cost of each choice is measured.

    python benchmarks/profile_time.py [--kernels layer_norm,matmul_tf32_vs_ieee,add] [--json out.json]  (GPU + ncu)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

from inspector.profile.run_ncu import RUNNER, SECTIONS, find_ncu  # noqa: E402

KERNEL_NAMES = {"layer_norm": "layer_norm_kernel", "matmul_tf32_vs_ieee": "matmul_fp32_kernel", "add": "add_kernel"}
VARIANTS = {
    "as profile runs it": [],
    "--cache-control none": ["--cache-control", "none"],
    "--clock-control none": ["--clock-control", "none"],
    "no SourceCounters": "drop:SourceCounters",
    "no WarpStateStats": "drop:WarpStateStats",
    "no MemoryWorkloadAnalysis": "drop:MemoryWorkloadAnalysis",
}


def run(ncu: str, file: Path, kernel: str, extra, work: str) -> float:
    sections = [s for s in SECTIONS if not (isinstance(extra, str) and extra == f"drop:{s}")]
    runner = os.path.join(work, "run.py")
    Path(runner).write_text(RUNNER)
    cmd = [ncu, "--target-processes", "all", "-k", f"regex:^{kernel}$", "--launch-count", "1",
           *[a for s in sections for a in ("--section", s)], "--import-source", "yes",
           *(extra if isinstance(extra, list) else []), "-o", os.path.join(work, "r"), "-f",
           sys.executable, runner, str(file)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TRITON_CACHE_DIR": os.path.join(work, "tc")})
    took = time.perf_counter() - t0
    if out.returncode != 0:
        print(out.stdout[-800:], out.stderr[-800:])
    return took


def phases(ns: argparse.Namespace) -> int:
    """The phases of one `profile` call per kernel, timed by wrapping subprocess.run."""
    from inspector.compile.api import inspect_kernel
    from inspector.profile import run_ncu

    rows = []
    real = subprocess.run
    for name in ns.kernels.split(","):
        spans: list[tuple[str, float]] = []

        def timed(cmd, *a, **k):
            t0 = time.perf_counter()
            try:
                return real(cmd, *a, **k)
            finally:
                what = "ncu --import " + cmd[cmd.index("--page") + 1] if "--import" in cmd else \
                    "ncu --version" if "--version" in cmd else "ncu run (profiling)"
                spans.append((what, time.perf_counter() - t0))
        t0 = time.perf_counter()
        rec = inspect_kernel(REPO / "kernels" / f"{name}.py", target="native", use_cache=False)
        spans.append(("native compile (inspect)", time.perf_counter() - t0))
        run_ncu.subprocess.run = timed  # type: ignore[attr-defined]
        try:
            t0 = time.perf_counter()
            run_ncu.profile_reproducer(rec.reproducer, rec.kernel)
            total = time.perf_counter() - t0 + spans[0][1]
        finally:
            run_ncu.subprocess.run = real  # type: ignore[attr-defined]
        print(f"{name} ({rec.kernel}): {total:.1f} s in all")
        for what, took in spans:
            print(f"  {what:28s} {took:6.1f} s")
        rows.append({"kernel": name, "total": round(total, 2), "phases": [[w, round(t, 2)] for w, t in spans]})
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", default="layer_norm,matmul_tf32_vs_ieee,add")
    ap.add_argument("--json")
    ap.add_argument("--phases", action="store_true",
                    help="time `inspector profile`'s own phases instead: the native compile, the ncu run, each page")
    ns = ap.parse_args()
    if ns.phases:
        return phases(ns)
    ncu = find_ncu()
    rows = []
    for name in ns.kernels.split(","):
        file = REPO / "kernels" / f"{name}.py"
        with tempfile.TemporaryDirectory() as work:  # a compile outside ncu: the Triton cache warm, as profile's is not
            plain = time.perf_counter()
            subprocess.run([sys.executable, "-c", RUNNER.replace("sys.argv[1]", repr(str(file)))],
                           env={**os.environ, "TRITON_CACHE_DIR": os.path.join(work, "tc")}, check=True)
            plain = time.perf_counter() - plain
            print(f"{name}: the example alone, cold Triton cache: {plain:.1f} s")
            for label, extra in VARIANTS.items():
                with tempfile.TemporaryDirectory() as w2:
                    took = run(ncu, file, KERNEL_NAMES[name], extra, w2)
                print(f"  {label:28s} {took:6.1f} s")
                rows.append({"kernel": name, "variant": label, "seconds": round(took, 2), "example_alone": round(plain, 2)})
    if ns.json:
        Path(ns.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
