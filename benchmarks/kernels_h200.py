"""Speed of the bundled kernels on a CUDA GPU (written for the H200), against PyTorch and the ceilings.

A script, not a test: run it on the GPU machine.

    PYTHONUNBUFFERED=1 python3 benchmarks/kernels_h200.py --out $OUT [--kernels softmax,matmul] [--quick]

It first measures the two ceilings (a large device-to-device copy, counting bytes read plus written,
and cuBLAS bf16 matmuls on random data), then, for every bundled kernel, variant and size: checks
the output against the reference on fresh random inputs written into a NaN-poisoned buffer, and
times the Triton launch and the PyTorch baseline with `triton.testing.do_bench` (median of the
repetitions, L2 flushed before each). Attention is also timed against scaled_dot_product_attention
forced onto its flash backend. It prints a table and writes everything, with the device, driver and
versions, to OUT/kernels_h200.json.
"""

from __future__ import annotations

import argparse
import datetime
import functools
import inspect
import json
import platform
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]

import torch  # noqa: E402
import triton  # noqa: E402
from triton.testing import do_bench  # noqa: E402

from inspector.bench import protocol as gallery  # noqa: E402

QUANTILES = [0.5, 0.2, 0.8]
DEVICE = "cuda"
SWEEP_SIZES = ((16384, 1024), (16384, 16384))  # a short row and the longest one


def timed(fn: Callable[[], Any]) -> tuple[float, float, float]:
    """(median, p20, p80) milliseconds."""
    return tuple(float(v) for v in do_bench(fn, warmup=25, rep=100, quantiles=QUANTILES))  # type: ignore[return-value]


def environment() -> dict[str, Any]:
    props = torch.cuda.get_device_properties(0)
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        smi = ""
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "device": props.name,
        "nvidia_smi": smi,
        "sms": props.multi_processor_count,
        "l2_bytes": getattr(props, "L2_cache_size", None),
        "memory_bytes": props.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "triton": triton.__version__,
        "python": platform.python_version(),
    }


def ceilings() -> dict[str, Any]:
    """Device-to-device copy bandwidth and cuBLAS bf16 matmul rates, measured here."""
    out: dict[str, Any] = {}
    src = torch.randn(2**28, device="cuda")  # 1 GiB
    dst = torch.empty_like(src)
    ms = timed(lambda: dst.copy_(src))[0]
    out["copy_gbps"] = 2 * src.numel() * 4 / (ms * 1e-3) / 1e9
    del src, dst
    for n in (4096, 8192):
        a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
        ms = timed(lambda: a @ b)[0]
        out[f"cublas_bf16_{n}_tflops"] = 2 * n**3 / (ms * 1e-3) / 1e12
    torch.cuda.empty_cache()
    return out


def bound(fn: Callable, inputs: tuple, variant: dict[str, Any]) -> Callable[[], Any]:
    """fn(*inputs, **the variant keywords fn accepts), with the keywords matched once, not per call."""
    return functools.partial(fn, *inputs, **{k: v for k, v in variant.items()
                                             if k in inspect.signature(fn).parameters})


def flash_sdpa(q, k, v, causal: bool = False):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def bench_kernel(name: str, sizes_override: list | None, ceil: dict[str, Any]) -> list[dict[str, Any]]:
    module = gallery.load_gallery(name)
    rows = []
    for variant, kw in gallery.variants(module).items():
        for size in sizes_override or module.SIZES:
            row: dict[str, Any] = {"kernel": name, "variant": variant, "size": list(size) if isinstance(size, tuple) else size}
            try:
                torch.manual_seed(hash((name, variant, str(size))) & 0xFFFF)
                tuner = getattr(module, module.KERNEL)
                timings_before = getattr(tuner, "configs_timings", None)
                result = gallery.check(module, size, variant, DEVICE)
                row.update(ok=result.ok, max_abs_error=result.max_abs_error, rel_error=result.rel_error,
                           message=result.message)
                inputs = gallery.call(module.make_inputs, size, DEVICE, **kw)
                work_flops = gallery.call(module.flops, size, **kw)
                work_bytes = gallery.call(module.bytes_moved, size, **kw)
                row["flops"], row["bytes"] = work_flops, work_bytes
                # Bind the keywords once: matching them per call costs microseconds of Python, as
                # much as a small kernel runs.
                impls = {"triton": bound(module.launch, inputs, kw), "eager": bound(module.baseline, inputs, kw)}
                if name == "attention":
                    impls["sdpa_flash"] = lambda: flash_sdpa(*inputs, causal=kw["causal"])
                for impl, fn in impls.items():
                    med, p20, p80 = timed(fn)
                    row[f"{impl}_ms"], row[f"{impl}_p20_ms"], row[f"{impl}_p80_ms"] = med, p20, p80
                    row[f"{impl}_gbps"] = work_bytes / (med * 1e-3) / 1e9
                    row[f"{impl}_tflops"] = work_flops / (med * 1e-3) / 1e12
                row["triton_vs_eager"] = row["eager_ms"] / row["triton_ms"]  # > 1: Triton faster
                row["triton_of_copy_bw"] = row["triton_gbps"] / ceil["copy_gbps"]
                if name == "attention":
                    row["triton_vs_flash"] = row["sdpa_flash_ms"] / row["triton_ms"]
                if getattr(tuner, "best_config", None) is not None:
                    row["best_config"] = str(tuner.best_config)
                    timings = getattr(tuner, "configs_timings", None)
                    if timings is not None and timings is not timings_before:  # this size was tuned now
                        row["config_ms"] = {str(c): (t[0] if isinstance(t, (list, tuple)) else t)
                                            for c, t in timings.items()}
                if name == "softmax" and inputs[0].is_cuda:  # the persistent grid this size ran with
                    x = inputs[0]
                    block, warps, stages = module.launch_params(x.shape[1], x.element_size())
                    row["programs"] = min(module.resident_programs(x, torch.empty_like(x), block, warps, stages),
                                          x.shape[0])
                del inputs
            except Exception:  # noqa: BLE001 - one failing size must not end the run
                row.update(ok=False, message=traceback.format_exc(limit=8))
            rows.append(row)
            torch.cuda.empty_cache()
            print(one_line(row), flush=True)
    return rows


def sweep_launch_params(ceil: dict[str, Any]) -> list[dict[str, Any]]:
    """num_warps x num_stages for the persistent row kernels at a short and the longest row."""
    rows = []
    for name in ("softmax", "layer_norm"):
        module = gallery.load_gallery(name)
        for variant, kw in gallery.variants(module).items():
            for size in SWEEP_SIZES:
                inputs = gallery.call(module.make_inputs, size, DEVICE, **kw)
                work_bytes = gallery.call(module.bytes_moved, size, **kw)
                block = triton.next_power_of_2(size[1])
                default = module.launch_params(size[1], inputs[0].element_size())
                eager_ms = timed(bound(module.baseline, inputs, kw))[0]
                for warps in (2, 4, 8, 16, 32):
                    if block // (32 * warps) < 1 or block // (32 * warps) > 64:
                        continue
                    for stages in (2, 3, 4):
                        if (stages - 1) * block * inputs[0].element_size() > 160 * 1024:
                            continue
                        try:
                            ms = timed(lambda: module.launch(*inputs, num_warps=warps, num_stages=stages))[0]
                        except Exception as e:  # noqa: BLE001 - e.g. out of shared memory
                            print(f"sweep {name} {variant} {size} w{warps} s{stages}: {type(e).__name__}")
                            continue
                        gbps = work_bytes / (ms * 1e-3) / 1e9
                        rows.append(dict(kernel=name, variant=variant, size=list(size), num_warps=warps,
                                         num_stages=stages, ms=ms, gbps=gbps, of_copy=gbps / ceil["copy_gbps"],
                                         vs_eager=eager_ms / ms, default=(warps, stages) == default[1:]))
                best = max((r for r in rows if r["kernel"] == name and r["variant"] == variant
                            and r["size"] == list(size)), key=lambda r: r["gbps"])
                dflt = [r for r in rows if r["kernel"] == name and r["variant"] == variant
                        and r["size"] == list(size) and r["default"]]
                print(f"sweep {name:<10} {variant} {size}: best w{best['num_warps']} s{best['num_stages']} "
                      f"{100 * best['of_copy']:.1f}% copy {best['vs_eager']:.2f}x eager; default w{default[1]} "
                      f"s{default[2]} " + (f"{100 * dflt[0]['of_copy']:.1f}%" if dflt else "not swept"), flush=True)
                del inputs
                torch.cuda.empty_cache()
    return rows


def one_line(r: dict[str, Any]) -> str:
    if "triton_ms" not in r:
        return f"{r['kernel']:<26} {r['variant']:<16} {str(r['size']):<22} FAILED {r.get('message', '')[-600:]}"
    extra = f" flash {r['sdpa_flash_ms']:.3f} ms ({r['triton_vs_flash']:.2f}x)" if "sdpa_flash_ms" in r else ""
    return (f"{r['kernel']:<26} {r['variant']:<16} {str(r['size']):<22} {'ok ' if r['ok'] else 'BAD'} "
            f"triton {r['triton_ms']:.4f} ms {r['triton_gbps']:7.0f} GB/s {r['triton_tflops']:7.1f} TF/s | "
            f"eager {r['eager_ms']:.4f} ms | vs eager {r['triton_vs_eager']:.2f}x | "
            f"{100 * r['triton_of_copy_bw']:5.1f}% copy{extra}")


def summary(rows: list[dict[str, Any]], ceil: dict[str, Any]) -> list[str]:
    """The issue's goals, at the sizes they name."""
    lines = []

    def largest(kernel: str, variant: str) -> dict[str, Any] | None:
        cands = [r for r in rows if r["kernel"] == kernel and r["variant"] == variant and "triton_ms" in r]
        return cands[-1] if cands else None

    for kernel, variant in (("add", "default"), ("gelu", "fp32"), ("gelu", "bf16"), ("softmax", "fp32"),
                            ("softmax", "bf16"), ("layer_norm", "fp32"), ("layer_norm", "bf16")):
        r = largest(kernel, variant)
        if r:
            lines.append(f"{kernel}/{variant} at {r['size']}: {r['triton_gbps']:.0f} GB/s = "
                         f"{100 * r['triton_of_copy_bw']:.1f}% of copy (goal >= 90%), "
                         f"{r['triton_vs_eager']:.2f}x eager (goal >= 1)")
    for r in rows:
        if r["kernel"] == "matmul" and r["size"] == [4096, 4096, 4096] and r["variant"] == "bf16" and "triton_ms" in r:
            lines.append(f"matmul bf16 4096^3: {r['triton_tflops']:.0f} TFLOP/s = {100 * r['triton_vs_eager']:.1f}% "
                         f"of torch.matmul ({r['eager_tflops']:.0f}) (goal >= 90%)")
        if r["kernel"] == "attention" and r["size"][2] == 4096 and "triton_ms" in r:
            lines.append(f"attention {r['variant']} N=4096: {r['triton_tflops']:.0f} TFLOP/s = "
                         f"{100 * r['triton_vs_flash']:.1f}% of SDPA flash ({r['sdpa_flash_tflops']:.0f}) (goal >= 80%)")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".", help="folder for kernels_h200.json")
    ap.add_argument("--kernels", default="", help="comma-separated names (default: all bundled)")
    ap.add_argument("--quick", action="store_true", help="only each kernel's largest size")
    ap.add_argument("--sweep", action="store_true", help="also sweep num_warps x num_stages of softmax and layer_norm")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("needs a CUDA GPU", file=sys.stderr)
        return 2
    start = time.time()
    env = environment()
    print(json.dumps(env), flush=True)
    ceil = ceilings()
    print(f"ceilings: copy {ceil['copy_gbps']:.0f} GB/s (read + write), cuBLAS bf16 "
          f"{ceil['cublas_bf16_4096_tflops']:.0f} TFLOP/s at 4096^3, {ceil['cublas_bf16_8192_tflops']:.0f} at 8192^3",
          flush=True)
    names = [n for n in args.kernels.split(",") if n] or gallery.gallery_names()
    rows: list[dict[str, Any]] = []
    for name in names:
        sizes = [gallery.load_gallery(name).SIZES[-1]] if args.quick else None
        rows += bench_kernel(name, sizes, ceil)
    sweep = sweep_launch_params(ceil) if args.sweep else []
    result = {"environment": env, "ceilings": ceil, "rows": rows, "sweep": sweep, "seconds": time.time() - start}
    out = Path(args.out) / "kernels_h200.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, default=str))
    print("\n== goals ==")
    for line in summary(rows, ceil):
        print(line)
    bad = [r for r in rows if not r.get("ok")]
    print(f"{len(rows)} rows, {len(bad)} failed checks, {time.time() - start:.0f} s; wrote {out}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
