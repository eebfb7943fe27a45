"""Check the calculator against the CUDA driver on the present GPU, with real Triton kernels.

For each kernel (every bundled kernel in kernels/*.py, launched the way its `example` launches it,
plus a classic shared-memory matmul tile at several pipeline depths) and each num_warps x maxnreg
combination, the kernel is compiled natively with `warmup` and loaded the way a launch loads it
(`_init_handles`: Triton sets the dynamic shared-memory attribute there). Then the driver's
`cuOccupancyMaxActiveBlocksPerMultiprocessor` is asked for the launch's own block size and
dynamic shared memory, and `triton_occupancy` for the same kernel from `n_regs` and
`metadata.shared`. Extra points ask both about more dynamic shared memory than the kernel uses
(valid launches too), with the kernel's attribute as the driver reports it.

Needs a CUDA GPU, torch and cuda.bindings (cuda-python); imports them only when run. Compiles in
parallel worker processes. Run: `python benchmarks/occupancy_driver_check.py [--json OUT]`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any

import triton
import triton.language as tl

REPO = Path(__file__).resolve().parents[1]
WARPS = (1, 2, 4, 8, 16, 32)
MAXNREG = (None, 32, 64, 128, 255)
TILE_STAGES = (2, 3, 4, 5)  # the shared-memory matmul tile: 32 KB per stage (fp16, 128x128x64)
EXTRA_SMEM = (1024, 8 * 1024, 40 * 1024, 100 * 1024, 200 * 1024)  # bytes added for the extra points

_CACHE: dict[str, Any] = {}


@triton.jit
def matmul_tile(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    """A classic tile: operands staged through shared memory, num_stages deep."""
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


def _capture(path: str, device: str = "cuda") -> tuple[Any, tuple, dict]:
    """Import a bundled kernel module and record the arguments its example launch passes
    (seen, not run: `triton_compat.first_jit_call`)."""
    from inspector import triton_compat as tc

    if path in _CACHE:
        return _CACHE[path]
    # as a module of the gallery's package (softmax and layer norm import its `_occupancy` helper)
    from inspector.worker.kernel_file import load_module

    mod = load_module(path)
    jit = tc.innermost_jit(getattr(mod, mod.KERNEL))
    try:
        args, kwargs = tc.first_jit_call(jit, lambda: mod.example(device))
    except RuntimeError:
        raise RuntimeError(f"{path}: example() launched nothing") from None
    _CACHE[path] = (jit, args, kwargs)
    return _CACHE[path]


def _cu_check(result: tuple) -> Any:
    err, *values = result
    if int(getattr(err, "value", err)) != 0:
        raise RuntimeError(f"CUDA driver error {err}")
    return values[0] if len(values) == 1 else values


def compile_task(task: tuple, device: str = "cuda", load: bool = True) -> Any:
    """Compile (and with `load`, load as a launch does) one task's kernel; returns the CompiledKernel."""
    import torch

    name, path, num_warps, maxnreg, stages = task
    if path is None:
        fn = matmul_tile
        args: tuple = (torch.float16, torch.float16, torch.float32, 4096, 4096, 4096)
        kwargs: dict[str, Any] = dict(BM=128, BN=128, BK=64, num_stages=stages)
    else:
        fn, args, kwargs = _capture(path, device)
        kwargs = dict(kwargs)
    kwargs["num_warps"] = num_warps
    kwargs.pop("maxnreg", None)
    if maxnreg is not None:
        kwargs["maxnreg"] = maxnreg
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        k = fn.warmup(*args, grid=(1,), **kwargs)
        if load:
            k._init_handles()
    return k


def check_one(task: tuple) -> dict:
    """Compile one (kernel, num_warps, maxnreg[, stages]) configuration and compare with the driver."""
    import torch
    from cuda.bindings import driver as cu

    from inspector.occupancy import nvidia_occupancy, triton_occupancy

    name, path, num_warps, maxnreg, stages = task
    row: dict[str, Any] = {"kernel": name, "num_warps": num_warps, "maxnreg": maxnreg, "num_stages": stages}
    try:
        k = compile_task(task)
    except Exception as exc:  # noqa: BLE001 - a config that does not compile or load is reported, not compared
        row["skipped"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120] if str(exc) else ''}"
        return row
    func = cu.CUfunction(int(k.function))
    attr = cu.CUfunction_attribute
    threads = 32 * k.metadata.num_warps
    shared = k.metadata.shared
    regs = _cu_check(cu.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_NUM_REGS, func))
    static = _cu_check(cu.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func))
    max_dyn = _cu_check(cu.cuFuncGetAttribute(attr.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, func))
    major, minor = torch.cuda.get_device_capability()
    ours = triton_occupancy((major, minor), k.metadata.num_warps, k.n_regs, shared, static_smem=static)
    try:
        driver = _cu_check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, threads, shared))
    except RuntimeError as exc:
        row["skipped"] = f"driver: {exc}"
        return row
    row.update(threads=threads, n_regs=k.n_regs, driver_regs=regs, shared=shared, static_smem=static,
               max_dynamic_smem=max_dyn, ours=ours.blocks_per_sm, limiters=ours.limiters, driver=driver,
               attribute_modelled=ours.max_dynamic_smem == max_dyn)
    extra = []
    for more in EXTRA_SMEM:
        dyn = shared + more
        try:
            theirs = _cu_check(cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(func, threads, dyn))
        except RuntimeError:
            continue  # the driver refuses the question outright (recorded by its absence)
        mine = nvidia_occupancy((major, minor), threads, k.n_regs, dyn, static, max_dynamic_smem=max_dyn)
        extra.append((dyn, mine.blocks_per_sm, theirs))
    row["extra"] = extra
    return row


def tasks(kernels_dir: Path = REPO / "kernels") -> list[tuple]:
    """Every configuration to check: bundled kernels x WARPS x MAXNREG, and the tile x stages."""
    out: list[tuple] = []
    for path in sorted(kernels_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        for w in WARPS:
            for r in MAXNREG:
                out.append((path.stem, str(path), w, r, None))
    for s in TILE_STAGES:
        for w in WARPS:
            for r in MAXNREG:
                out.append(("matmul_tile", None, w, r, s))
    return out


def run_check(workers: int | None = None, kernels_dir: Path = REPO / "kernels") -> dict:
    """Run every check (in `workers` processes) and summarise: counts, mismatches, rows."""
    import multiprocessing as mp

    todo = tasks(kernels_dir)
    workers = workers or min(16, os.cpu_count() or 1)
    ctx = mp.get_context("spawn")  # each worker starts its own CUDA context
    with ctx.Pool(workers) as pool:
        rows = pool.map(check_one, todo, chunksize=1)
    compared = [r for r in rows if "driver" in r]
    mismatches = [r for r in compared if r["ours"] != r["driver"] or not r["attribute_modelled"]]
    extra = [(r["kernel"], r["num_warps"], r["maxnreg"], *e) for r in compared for e in r["extra"]]
    extra_mismatches = [e for e in extra if e[-2] != e[-1]]
    import torch

    return {
        "device": torch.cuda.get_device_name(),
        "versions": {"triton": triton.__version__, "torch": torch.__version__, "cuda": torch.version.cuda,
                     "python": sys.version.split()[0]},
        "configurations": len(rows),
        "compared": len(compared),
        "mismatches": mismatches,
        "extra_compared": len(extra),
        "extra_mismatches": extra_mismatches,
        "skipped": [r for r in rows if "skipped" in r],
        "kernels": sorted({r["kernel"] for r in compared}),
        "rows": rows,
    }


def summary_table(result: dict) -> str:
    """A short per-kernel table: configurations compared, mismatches, distinct blocks/SM seen."""
    v = result["versions"]
    lines = [f"{result['device']}: Triton {v['triton']}, torch {v['torch']}, CUDA {v['cuda']}, Python {v['python']}",
             f"{'kernel':<14}{'compared':>9}{'skipped':>9}{'mismatch':>9}  blocks/SM seen"]
    for name in sorted({r["kernel"] for r in result["rows"]}):
        rows = [r for r in result["rows"] if r["kernel"] == name]
        done = [r for r in rows if "driver" in r]
        bad = [r for r in done if r["ours"] != r["driver"]]
        seen = sorted({r["driver"] for r in done})
        lines.append(f"{name:<14}{len(done):>9}{len(rows) - len(done):>9}{len(bad):>9}  {seen}")
    lines.append(f"launch configurations compared: {result['compared']}, mismatches: {len(result['mismatches'])}; "
                 f"extra shared-memory points: {result['extra_compared']}, mismatches: "
                 f"{len(result['extra_mismatches'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write the full result here")
    p.add_argument("--workers", type=int)
    ns = p.parse_args(argv)
    result = run_check(ns.workers)
    if ns.json:
        Path(ns.json).write_text(json.dumps(result, indent=1, default=str))
    print(summary_table(result))
    for r in result["mismatches"][:20]:
        print("MISMATCH", r)
    for e in result["extra_mismatches"][:20]:
        print("EXTRA MISMATCH", e)
    return 0 if not result["mismatches"] and not result["extra_mismatches"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
