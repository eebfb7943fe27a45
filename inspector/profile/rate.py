"""What one profiled launch achieved: FLOP, bytes and time counted by Nsight Compute, placed on the
device's measured roofline.

The counts come from metrics `run_ncu` asks for by name (`--metrics`), which the details page
prints under "Command line profiler metrics":

- tensor cores: `sm__ops_path_tensor_src_<type>.sum`, operations with a multiply-add counted as
  two (a 4096^3 bf16 matmul reads exactly 2 * 4096^3: docs/profile.md#the-roofline-point);
- CUDA cores, as Nsight Compute's own roofline counts them: add + mul + 2 * fma thread
  instructions of each precision (`sm__sass_thread_inst_executed_op_{f,h,d}{add,mul,fma}_pred_on.sum`;
  a packed half2 instruction counts once, as Nsight Compute counts it);
- device memory and L2: `dram__bytes.sum`, `lts__t_bytes.sum`; time: `gpu__time_duration.sum`.

A metric this GPU does not have comes back as "n/a" (Nsight Compute runs on): its term is left
out, and when no tensor-core operation count at all was had, the point says so rather than
under-count a matmul silently.

The roof is the device's measured ceilings (`inspector.bench.ceilings`: a large copy and a large
bf16 matmul), from this machine's cache or a shipped benchmark record of the same device. Nsight
Compute locks the clocks to base while it measures, so a profiled kernel sits a little below where
it runs unprofiled; the point is for where the kernel stands, not for timing it.
"""

from __future__ import annotations

from typing import Any

from ..bench.records import Ceilings
from ..bench.roofline import roof
from .ncu_details import LaunchDetails

SECTION = "Command line profiler metrics"
TENSOR_TYPES = ("fp16", "bf16_dst_fp32", "tf32_dst_fp32", "fp8", "fp64")
TENSOR = tuple(f"sm__ops_path_tensor_src_{t}.sum" for t in TENSOR_TYPES)
CUDA_CORE = {p: tuple(f"sm__sass_thread_inst_executed_op_{p}{op}_pred_on.sum" for op in ("add", "mul", "fma"))
             for p in ("f", "h", "d")}  # fp32, fp16, fp64
# arithmetic the measured compute roof (a bf16 matmul) stands for; the rest peaks lower
FULL_ROOF = ("tensor cores, bf16", "tensor cores, fp16", "tensor cores, fp8")
DRAM_BYTES = "dram__bytes.sum"
L2_BYTES = "lts__t_bytes.sum"
DURATION = "gpu__time_duration.sum"
METRICS = (*TENSOR, *(m for ms in CUDA_CORE.values() for m in ms), DRAM_BYTES, L2_BYTES,
           DURATION)

_BYTES = {"byte": 1, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12}
_SECONDS = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3, "s": 1.0,
            "second": 1.0}


def _raw(details: LaunchDetails, name: str, scale: dict[str, float] | None = None) -> float | None:
    value = details.value((SECTION, name))
    if value is None:
        return None
    if scale is None:
        return float(value)
    factor = scale.get(details.unit((SECTION, name)).strip().lower())
    return None if factor is None else float(value) * factor


def measured_rate(details: LaunchDetails | None) -> dict[str, Any] | None:
    """FLOP, bytes, time and the rates they give (see the module docstring); None when the page
    has none of the metrics (a profile taken before they were collected)."""
    if details is None:
        return None
    seconds = _raw(details, DURATION, _SECONDS)
    dram = _raw(details, DRAM_BYTES, _BYTES)
    if seconds is None or dram is None:
        return None
    tensor = {t: v for t, v in ((t, _raw(details, m)) for t, m in zip(TENSOR_TYPES, TENSOR)) if v is not None}
    flop_by = {f"tensor cores, {t.split('_')[0]}": v for t, v in tensor.items()}
    for precision, label in (("f", "fp32"), ("h", "fp16"), ("d", "fp64")):
        add, mul, fma = (_raw(details, m) or 0.0 for m in CUDA_CORE[precision])
        flop_by[f"CUDA cores, {label}"] = add + mul + 2 * fma
    flop = sum(flop_by.values())
    l2 = _raw(details, L2_BYTES, _BYTES)
    out: dict[str, Any] = {
        "flop": flop, "flop_by": {k: v for k, v in flop_by.items() if v},
        "dram_bytes": dram, "l2_bytes": l2, "seconds": seconds,
        "tflops": flop / seconds / 1e12 if seconds else None,
        "dram_gbps": dram / seconds / 1e9 if seconds else None,
        "l2_gbps": None if l2 is None or not seconds else l2 / seconds / 1e9,
        "intensity": flop / dram if dram else None,  # FLOP per byte of device memory
    }
    if not tensor:
        out["note"] = "Nsight Compute gave no tensor-core operation count for this GPU: any tensor-core FLOP are " \
                      "left out of the count"
    return out


def place_on_roofline(rate: dict[str, Any], ceilings: Ceilings) -> dict[str, Any]:
    """`rate` with the roof at its intensity, whether memory or compute bounds it there, and how
    far below the roof and the bandwidth ceiling it sits."""
    out = dict(rate, ceilings={"copy_gbps": ceilings.copy_gbps, "matmul_tflops": ceilings.matmul_tflops,
                               "device": ceilings.device, "measured": ceilings.measured})
    if rate.get("dram_gbps") is not None and ceilings.copy_gbps:
        out["dram_of_ceiling"] = rate["dram_gbps"] / ceilings.copy_gbps
    intensity = rate.get("intensity")
    if intensity:
        top = roof(intensity, ceilings)
        out.update(roof_tflops=top, bound="memory" if intensity < ceilings.ridge else "compute",
                   of_roof=(rate["tflops"] or 0.0) / top if top else None)
    return out


def _amount(value: float, unit: str) -> str:
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def describe_rate(rate: dict[str, Any]) -> list[str]:
    """The point in words, one sentence per line: what was done, how fast, where it sits."""
    by = ", ".join(f"{k} {v * 100 / rate['flop']:.0f}%" for k, v in rate.get("flop_by", {}).items()) \
        if rate.get("flop") else ""
    out = [f"{_amount(rate['flop'], 'FLOP')}" + (f" ({by})" if by else "") +
           f" and {_amount(rate['dram_bytes'], 'B')} of device memory traffic in {rate['seconds'] * 1e6:,.1f} us"]
    speed = f"{rate['tflops']:.3g} TFLOP/s" if rate.get("tflops") else ""
    dram = f"DRAM {rate['dram_gbps']:,.0f} GB/s" if rate.get("dram_gbps") is not None else ""
    if rate.get("dram_of_ceiling") is not None:
        dram += f" ({rate['dram_of_ceiling'] * 100:.0f}% of the measured {rate['ceilings']['copy_gbps']:,.0f} GB/s)"
    l2 = f"L2 {rate['l2_gbps']:,.0f} GB/s" if rate.get("l2_gbps") is not None else ""
    out.append(", ".join(x for x in (speed, dram, l2) if x))
    if rate.get("intensity"):
        where = f"{rate['intensity']:.3g} FLOP per byte of device memory"
        if rate.get("roof_tflops") is not None:
            where += (f": {rate['bound']}-bound there, at {rate['of_roof'] * 100:.1f}% of the roof "
                      f"({rate['roof_tflops']:.3g} TFLOP/s; ceilings measured on {rate['ceilings']['device']})")
            other = sum(v for k, v in rate.get("flop_by", {}).items() if k not in FULL_ROOF)
            if rate["bound"] == "compute" and other > rate["flop"] / 2:
                where += ("; the roof is the bf16 matmul rate, and most of this arithmetic is of a kind that peaks "
                          "lower (tf32 tensor cores at half of it on Hopper, CUDA cores far lower)")
        else:
            where += " (no measured ceilings for this device: `python -m inspector bench` measures them)"
        out.append(where)
    elif rate.get("flop") == 0:
        out.append("no floating-point arithmetic counted: a pure data-movement kernel, judged by bandwidth")
    if rate.get("note"):
        out.append(rate["note"])
    return out
