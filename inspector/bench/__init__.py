"""Benchmarks: Triton kernels against PyTorch eager and torch.compile, with a measured roofline.

    from inspector.bench import run_benchmark, recorded_result
    result = run_benchmark("softmax", variants=["bf16"], progress=print_progress)   # needs a GPU
    result = recorded_result("softmax")          # recorded on an H200: for machines without one
    from inspector.bench.plots import time_figure  # plotly, imported only there
    fig = time_figure(result)

A benchmark runs in a worker subprocess (the kernel file is the user's code): for each variant
and size it checks the kernel, PyTorch eager and torch.compile against the file's reference on
fresh random inputs, then times what passed (`timing.bench_graph_time`: CUDA-graph replays cycling
through input copies larger than the L2 cache; median and 20th/80th percentiles; a call that
cannot be captured falls back to do_bench's events with an L2 flush). GB/s and TFLOP/s come
from the file's `bytes_moved` and `flops`; the device's copy bandwidth and bf16 matmul rate are
measured once per device and cached (`inspector.bench.ceilings`).

What a kernel file must define is in `inspector.bench.protocol` (launch, make_inputs, reference,
SIZES; optionally flops, bytes_moved, baseline, VARIANTS, TOLERANCE, ...). Modules:
records (result dataclasses, JSON), protocol, runner (the sweep, in the worker), worker, client
(subprocess, timeout, progress), ceilings, roofline, recorded (assets/bench), plots (plotly),
compare (run-to-run differences).
"""

from .client import DEFAULT_TIMEOUT, run_benchmark, run_benchmarks
from .settings import BenchSettings
from .protocol import ProtocolError, bundled_kernels, resolve
from .shipped import RECORDED_DIR, recorded_kernels, recorded_path, recorded_result
from .records import (
    BenchError,
    BenchResult,
    Ceilings,
    Check,
    DeviceInfo,
    Point,
    Sweep,
    Timing,
    load_result,
    parse_size,
    save_result,
    size_axis,
    size_label,
)
from .roofline import RooflinePoint, roofline

__all__ = [
    "DEFAULT_TIMEOUT",
    "run_benchmark",
    "run_benchmarks",
    "BenchSettings",
    "ProtocolError",
    "bundled_kernels",
    "resolve",
    "RECORDED_DIR",
    "recorded_kernels",
    "recorded_path",
    "recorded_result",
    "BenchError",
    "BenchResult",
    "Ceilings",
    "Check",
    "DeviceInfo",
    "Point",
    "Sweep",
    "Timing",
    "load_result",
    "parse_size",
    "save_result",
    "size_axis",
    "size_label",
    "RooflinePoint",
    "roofline",
]
