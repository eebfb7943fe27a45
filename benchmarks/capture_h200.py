"""Capture a real training step on a GPU and check what reopens: a `torch.compile`d MLP (Linear,
LayerNorm, GELU, Linear; Inductor writes Triton kernels for the norm and the activation, forward
and backward) fed by Liger-Kernel's RMSNorm (tests/fixtures/published/first_four_projects, as published), trained with AdamW.

Three fresh processes run the same --steps training steps, each with its own empty Inductor and
Triton caches: without a capture, inside `inspector.capture` (compiles included), and inside one
that times every launch (`time=True`). Printed:
- the capture's table (kernels by launches, GPU time from the timed run);
- that it holds Inductor's kernels (their generated module's source kept) and Liger's;
- every kernel reopened natively through the sandboxed compile (`target="native"`) and GPU-free
  for sm_90: registers and shared memory next to what the run used (the driver's figures for the
  loaded kernel), and whether they are equal;
- the step time without and with the capture (median of the steps after the first, which
  compiles), and the first step's time (compiles) without and with it.

Run on the GPU machine (no streamlit needed): python benchmarks/capture_h200.py [--steps 30]
Exit status 1 when a kernel is missing or a reopened kernel differs from the run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIGER = REPO / "tests" / "fixtures" / "published" / "first_four_projects" / "liger_kernel" / "src"


def workload(steps: int) -> list[float]:
    """Train the model for `steps` steps; the wall time of each (synchronised)."""
    import torch
    from torch import nn

    sys.path.insert(0, str(LIGER))
    from liger_kernel.ops.rms_norm import LigerRMSNormFunction

    torch.manual_seed(0)
    dim, hidden, tokens = 1024, 4096, 8192

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.up = nn.Linear(dim, hidden)
            self.norm = nn.LayerNorm(hidden)
            self.down = nn.Linear(hidden, dim)

        def forward(self, x):
            return self.down(nn.functional.gelu(self.norm(self.up(x))))

    model = MLP().cuda()
    rms_weight = nn.Parameter(torch.ones(dim, device="cuda"))
    compiled = torch.compile(model)
    opt = torch.optim.AdamW([*model.parameters(), rms_weight], lr=1e-3)
    x = torch.randn(tokens, dim, device="cuda")
    target = torch.randn(tokens, dim, device="cuda")
    times = []
    for _ in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        h = LigerRMSNormFunction.apply(x, rms_weight, 1e-6)
        loss = nn.functional.mse_loss(compiled(h), target)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return times


def child(mode: str, steps: int, out: str) -> None:
    if mode == "plain":
        times = workload(steps)
    else:
        import inspector

        with inspector.capture(out, time=(mode == "timed")):
            times = workload(steps)
    print("RESULT " + json.dumps({"mode": mode, "times": times}))


def run_child(mode: str, steps: int, out: str) -> list[float]:
    with tempfile.TemporaryDirectory() as caches:
        env = {
            **os.environ,
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(caches, "inductor"),
            "TRITON_CACHE_DIR": os.path.join(caches, "triton"),
            "TORCHINDUCTOR_COMPILE_THREADS": "1",
            "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        }
        p = subprocess.run(
            [sys.executable, __file__, "--child", mode, "--steps", str(steps), "--out", out],
            env=env,
            capture_output=True,
            text=True,
            timeout=1800,
        )
    if p.returncode != 0:
        print(p.stdout[-3000:], p.stderr[-6000:], sep="\n")
        raise SystemExit(f"the {mode} run failed ({p.returncode})")
    line = next(t for t in p.stdout.splitlines() if t.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])["times"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--child", choices=["plain", "capture", "timed"])
    ap.add_argument("--out", default="")
    ap.add_argument("--keep", default="", help="also copy the capture files to this folder")
    ns = ap.parse_args()
    if ns.child:
        child(ns.child, ns.steps, ns.out)
        return

    import torch
    import triton

    from inspector.capture import load
    from inspector.capture.reopen import reopen
    from inspector.capture.table import format_table, kernel_id

    work = Path(tempfile.mkdtemp(prefix="capture-h200-"))
    runs = {}
    for mode in ("plain", "capture", "timed"):
        runs[mode] = run_child(mode, ns.steps, str(work / f"{mode}.inspector"))
    cap, timed = load(work / "capture.inspector"), load(work / "timed.inspector")
    print(
        f"# Capture of a training step on {torch.cuda.get_device_name()}: torch {torch.__version__}, "
        f"Triton {triton.__version__}, {ns.steps} steps\n"
    )
    print("## The capture (GPU time from the run with time=True)\n")
    print(format_table(timed))
    print()
    problems: list[str] = []
    inductor = [k for k in cap.kernels if k.kind == "inductor" or "torchinductor" in k.file]
    liger = [k for k in cap.kernels if "liger_kernel" in k.file]
    kept = sum(
        1 for k in inductor if k.file_id in cap.files and "@triton.jit" in cap.files[k.file_id]["text"]
    )
    print(
        f"Inductor kernels: {len(inductor)} ({kept} with their generated module's source kept): "
        f"{', '.join(k.name for k in inductor)}"
    )
    print(f"Liger kernels: {len(liger)}: {', '.join(k.name for k in liger)}")
    if not inductor:
        problems.append("no Inductor kernel in the capture")
    if not liger:
        problems.append("no Liger kernel in the capture")
    if cap.notes:
        print("notes: " + "; ".join(cap.notes))

    print("\n## Reopened natively and for sm_90 GPU-free, against the run\n")
    print(
        "| kernel | kind | launches | run regs | native regs | sm_90 regs | run shared | native shared | "
        "sm_90 shared | equal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for entry in cap.sorted_kernels():
        if not entry.launches:
            continue
        run = entry.compiled or {}
        native = reopen(cap, entry, target="native", folder=work / "reopened")
        offline = reopen(cap, entry, target="sm_90", folder=work / "reopened")
        for rec, what in ((native, "native"), (offline, "sm_90")):
            if rec.error is not None:
                problems.append(f"{kernel_id(cap, entry)} {what}: {rec.error.short()}")
        equal = (
            run.get("registers") is not None
            and native.ok
            and run.get("registers") == native.resources.registers
            and run.get("shared") == native.resources.shared_bytes
        )
        if not equal:
            problems.append(
                f"{kernel_id(cap, entry)}: run {run.get('registers')} regs / {run.get('shared')} B, "
                f"native {native.resources.registers} regs / {native.resources.shared_bytes} B"
            )
        print(
            f"| {kernel_id(cap, entry)} | {entry.kind} | {entry.launches} | {run.get('registers')} | "
            f"{native.resources.registers} | {offline.resources.registers} | {run.get('shared')} | "
            f"{native.resources.shared_bytes} | {offline.resources.shared_bytes} | "
            f"{'yes' if equal else 'NO'} |"
        )

    print("\n## Capture overhead\n")
    print("| run | first step (compiles) s | step after, median ms (min-max) | vs plain |")
    print("|---|---|---|---|")
    base = statistics.median(runs["plain"][1:]) * 1e3
    for mode, label in (
        ("plain", "no capture"),
        ("capture", "inspector.capture"),
        ("timed", "capture, time=True"),
    ):
        t = [s * 1e3 for s in runs[mode][1:]]
        med = statistics.median(t)
        print(
            f"| {label} | {runs[mode][0]:.2f} | {med:.3f} ({min(t):.3f}-{max(t):.3f}) | "
            f"{(med - base) / base * 100:+.1f}% |"
        )
    launches = sum(k.launches for k in cap.kernels)
    print(
        f"\n{launches} Triton launches in {ns.steps} steps; capture files {work}/capture.inspector "
        f"({(work / 'capture.inspector').stat().st_size} bytes)"
    )
    if ns.keep:
        import shutil

        os.makedirs(ns.keep, exist_ok=True)
        for mode in ("capture", "timed"):
            shutil.copy(work / f"{mode}.inspector", ns.keep)
    if problems:
        print("\nPROBLEMS:\n- " + "\n- ".join(problems))
        raise SystemExit(1)
    print("\nall kernels present; every reopened kernel has the run's registers and shared memory")


if __name__ == "__main__":
    main()
