"""Roofline data from result records: arithmetic intensity against achieved rate, under two measured roofs.

The roof at intensity I (FLOP per byte of device memory traffic) is
    min(matmul_tflops, I * copy_gbps / 1000)   TFLOP/s
with both ceilings measured on the device (`inspector.bench.ceilings`). The compute roof is the
dense bf16 tensor-core rate: for fp32 CUDA-core arithmetic the real roof is lower, which only
matters for kernels right of the ridge that do not use tensor cores.
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import BenchResult, Ceilings, Sweep


@dataclass
class RooflinePoint:
    """One implementation at one size, placed on the roofline."""

    variant: str
    impl: str
    size: str  # the size's label
    intensity: float  # FLOP / byte
    tflops: float  # achieved
    gbps: float  # achieved, from bytes_moved
    roof_tflops: float  # the roof at this intensity
    bound: str  # "memory" left of the ridge, "compute" right of it
    efficiency: float  # achieved / roof

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def roof(intensity: float, ceilings: Ceilings) -> float:
    """The attainable TFLOP/s at `intensity` FLOP/byte."""
    return min(ceilings.matmul_tflops, intensity * ceilings.copy_gbps / 1e3)


def roof_line(
    ceilings: Ceilings, lo: float = 1e-2, hi: float = 1e4, samples: int = 2
) -> tuple[list[float], list[float]]:
    """x, y of the roof for plotting: from `lo` to `hi` FLOP/byte through the ridge (exact corner)."""
    ridge = ceilings.ridge
    xs = sorted({lo, hi, *([ridge] if lo < ridge < hi else [])})
    return xs, [roof(x, ceilings) for x in xs]


def sweep_points(
    sweep: Sweep, ceilings: Ceilings, impls: list[str] | None = None, method: str = "do_bench"
) -> list[RooflinePoint]:
    """Every timed (impl, size) of a sweep with both a FLOP and a byte count."""
    out = []
    for p in sweep.points:
        intensity = p.intensity
        if intensity is None:
            continue
        for t in p.timings:
            if t.method != method or (impls and t.impl not in impls) or t.tflops is None:
                continue
            r = roof(intensity, ceilings)
            out.append(
                RooflinePoint(
                    variant=sweep.variant,
                    impl=t.impl,
                    size=p.label,
                    intensity=intensity,
                    tflops=t.tflops,
                    gbps=t.gbps or 0.0,
                    roof_tflops=r,
                    bound="memory" if intensity < ceilings.ridge else "compute",
                    efficiency=t.tflops / r if r > 0 else 0.0,
                )
            )
    return out


def roofline(
    result: BenchResult, impls: list[str] | None = None, method: str = "do_bench"
) -> list[RooflinePoint]:
    """Roofline points of every sweep in a result (empty without measured ceilings)."""
    if result.ceilings is None:
        return []
    return [pt for s in result.sweeps for pt in sweep_points(s, result.ceilings, impls, method)]


def memory_bound(sweep: Sweep, ceilings: Ceilings | None) -> bool:
    """Whether most of a sweep's sizes sit left of the ridge (then GB/s is the figure to show)."""
    intensities = [p.intensity for p in sweep.points if p.intensity is not None]
    if not intensities:
        return any(p.bytes_moved for p in sweep.points)
    ridge = ceilings.ridge if ceilings else 100.0
    return sum(i < ridge for i in intensities) * 2 >= len(intensities)
