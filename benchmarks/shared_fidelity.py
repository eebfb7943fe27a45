"""Predicted shared-memory wavefronts per source line against Nsight Compute's, for the same launches.

    # on a GPU with ncu (as root, or with counters allowed): measure every case and gallery kernel once
    python3 benchmarks/shared_fidelity.py measure --out DIR
    # anywhere, GPU-free: the model on the PTX the GPU's Triton made, against the counters (Markdown)
    python3 benchmarks/shared_fidelity.py compare DIR

`measure` launches the cases of benchmarks/shared_cases.py and the gallery's examples under Nsight
Compute (`--section SourceCounters`: it carries the shared wavefront columns; `--set full` gave the
same counters but attributed every inline-asm line of bank_patterns to one line), printing the
source page per SASS instruction (`--print-source sass,cuda`), and keeps the Triton cache the
launches compiled into (`DIR/cache`: each kernel's PTX, the model's input). `compare` runs
inspector.analysis.shared_banks on each kernel's PTX and sums its wavefronts per source line
against `L1 Wavefronts Shared` / `L1 Wavefronts Shared Ideal` (per request: divided by the line's
shared instructions executed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# gallery files whose example() the check runs, and the kernels they launch
GALLERY = {
    "matmul.py": ["matmul_kernel"], "attention.py": ["attention_kernel"], "softmax.py": ["softmax_kernel"],
    "layer_norm.py": ["layer_norm_kernel"], "copy_coalesced_vs_strided.py": ["copy_coalesced_kernel",
                                                                             "copy_strided_kernel"],
    "matmul_tf32_vs_ieee.py": ["matmul_fp32_kernel"], "attention_gluon.py": ["attention_kernel_hopper"],
}

_CASES_DRIVER = """
import shared_cases, torch
for case in shared_cases.CASES:
    shared_cases.run(case)
torch.cuda.synchronize()
"""
_GALLERY_DRIVER = """
import importlib, sys, torch, traceback
for file in {files!r}:
    try:
        importlib.import_module("kernels." + file[:-3]).example("cuda")
    except Exception:
        traceback.print_exc()
torch.cuda.synchronize()
"""


def _ncu(ncu: str, out_dir: Path, name: str, driver: str, kernels: list[str], sections: list[str]) -> None:
    """Profile `driver` under ncu into `name`.ncu-rep and print its source page to `name`.csv."""
    script = out_dir / f"{name}_driver.py"
    script.write_text(driver)
    report = out_dir / name
    cmd = [ncu, "-f", "-o", str(report), "-k", f"regex:^({'|'.join(kernels)})$", "--launch-count", "60",
           *sections, sys.executable, str(script)]
    env = {**os.environ, "TRITON_CACHE_DIR": str(out_dir / "cache"), "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE)])}
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    (out_dir / f"{name}.log").write_text(res.stdout + res.stderr)
    page = subprocess.run([ncu, "-i", f"{report}.ncu-rep", "--page", "source", "--csv", "--print-source",
                           "sass,cuda"], capture_output=True, text=True, check=False)
    (out_dir / f"{name}.csv").write_text(page.stdout)
    print(f"{name}: ncu exit {res.returncode}, {len(page.stdout)} bytes of source page", flush=True)


def measure(out_dir: Path, ncu: str) -> None:
    import torch
    import triton

    import shared_cases

    out_dir.mkdir(parents=True, exist_ok=True)
    case_kernels = ["bank_patterns", "transpose", "column_sum", "matmul", "transpose_gluon"]
    _ncu(ncu, out_dir, "cases", _CASES_DRIVER, case_kernels,
         ["--section", "SourceCounters"])
    gallery_kernels = sorted({k for ks in GALLERY.values() for k in ks})
    _ncu(ncu, out_dir, "gallery", _GALLERY_DRIVER.format(files=list(GALLERY)), gallery_kernels,
         ["--section", "SourceCounters"])
    ver = subprocess.run([ncu, "--version"], capture_output=True, text=True, check=False).stdout.strip()
    (out_dir / "manifest.json").write_text(json.dumps({
        "cases": list(shared_cases.CASES), "gallery": GALLERY, "device": torch.cuda.get_device_name(),
        "triton": triton.__version__, "torch": torch.__version__, "ncu": ver.splitlines()[-1] if ver else "",
    }, indent=1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--out", type=Path, required=True)
    m.add_argument("--ncu", default="/usr/local/cuda/bin/ncu")
    c = sub.add_parser("compare")
    c.add_argument("dir", type=Path)
    ns = ap.parse_args(argv)
    if ns.cmd == "measure":
        measure(ns.out, ns.ncu)
        return 0
    from shared_compare import compare_dir  # noqa: E402  (GPU-free half, beside this file)
    print(compare_dir(ns.dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
