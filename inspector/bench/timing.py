"""Timing a GPU call: CUDA-graph replays cycling through input copies larger than the L2 cache
(`bench_graph_time`), and do_bench's own measurement with the host's launch cost kept out
(`bench_gpu_time`). The sweep (`runner`) decides what to time and keeps the median round.
"""

from __future__ import annotations

import math
from typing import Any, Callable

QUANTILES = [0.5, 0.2, 0.8]
DEFAULT_REP_MS = 50  # per round
DEFAULT_WARMUP_MS = 25

def bench_gpu_time(
    fn: Callable[[], Any], warmup_ms: int, rep_ms: int, quantiles: list[float], batch: int = 64
) -> list[float]:
    """`triton.testing.do_bench`'s measurement (CUDA events around each call, the L2 flushed before
    each by zeroing Triton's 256 MB buffer, repetitions sized from a 5-call estimate), with the
    host's launch cost kept out of it.

    do_bench enqueues flush, event, call, event and lets the GPU run while Python prepares the next
    call; when the call's Python side (an autotuner, descriptors made on the host, torch.compile's
    guards) takes longer than the flush and the kernel run on the GPU, the GPU waits between the
    start event and the kernel, and that wait, which jitters with the host, was timed as the kernel
    (small matmuls read several times their kernel's time: docs/benchmarks.md#what-one-point-does).
    Here each batch of repetitions is queued behind `torch.cuda._sleep`, a spinning kernel long
    enough to cover the host's time to enqueue the batch, so the GPU runs the batch back to back,
    as nvbench's blocking kernel does. What is timed is the GPU time of the call: the same quantity do_bench measures
    whenever the host keeps up.
    """
    import time

    import torch
    from .. import triton_compat as tc

    di = tc.device_interface()
    fn()
    di.synchronize()
    cache = tc.empty_cache_for_benchmark()

    def clear() -> None:
        tc.clear_cache(cache)

    start, end = di.Event(enable_timing=True), di.Event(enable_timing=True)
    t0 = time.perf_counter()
    start.record()
    for _ in range(5):
        clear()
        fn()
    end.record()
    host_s = (time.perf_counter() - t0) / 5  # enqueueing one repetition (the GPU was not waited for)
    di.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 5, 1e-4)
    n_warmup = max(1, int(warmup_ms / estimate_ms))
    n_repeat = max(1, int(rep_ms / estimate_ms))
    for _ in range(n_warmup):
        fn()
    starts = [di.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [di.Event(enable_timing=True) for _ in range(n_repeat)]
    # Cycles of the spin per second of host time to cover: 2e9 is about the top SM clock of current
    # GPUs (Hopper's boost clock is 1980 MHz: `hardware.catalogue`, from the datasheets); at a
    # lower clock the spin only lasts longer.
    lead_s = max(1.5 * host_s - estimate_ms * 1e-3, 0.0)
    i = 0
    while i < n_repeat:
        b = min(batch, n_repeat - i)
        if lead_s > 0:
            torch.cuda._sleep(int(2e9 * (b * lead_s + 50e-6)))
        for j in range(i, i + b):
            clear()
            starts[j].record()
            fn()
            ends[j].record()
        i += b
    di.synchronize()
    times = torch.tensor([a.elapsed_time(z) for a, z in zip(starts, ends)], dtype=torch.float64)
    return [float(v) for v in torch.quantile(times, torch.tensor(quantiles, dtype=torch.float64))]


# Input copies cycled through by the graph timer cover this multiple of the L2 cache, so each call
# finds its inputs evicted by the calls before it (a cold cache without a flush to time around);
# at most this many bytes of copies; graphs of about this many ms per replay.
ROTATE_L2_MULTIPLE = 3
MAX_ROTATE_BYTES = 4 << 30
GRAPH_TARGET_MS = 2.0
MAX_GRAPH_CALLS = 2000


def nbytes(value: Any) -> int:
    if isinstance(value, (tuple, list)):
        return sum(nbytes(v) for v in value)
    size = getattr(value, "nbytes", None)
    return int(size) if isinstance(size, int) and hasattr(value, "data_ptr") else 0


def clone(value: Any) -> Any:
    """A deep copy of the tensors in `value` (strides kept); anything else is shared."""
    if isinstance(value, tuple):
        return tuple(clone(v) for v in value)
    if isinstance(value, list):
        return [clone(v) for v in value]
    if hasattr(value, "data_ptr") and hasattr(value, "clone"):
        import torch

        return value.clone(memory_format=torch.preserve_format)
    return value


def rotation_count(set_bytes: int, l2_bytes: int | None) -> int:
    """How many input sets the graph timer cycles through: enough to cover ROTATE_L2_MULTIPLE x the
    L2 cache (one when a single set already does), within MAX_ROTATE_BYTES."""
    l2 = l2_bytes or 64 << 20  # unknown: assume a large one
    want = math.ceil(ROTATE_L2_MULTIPLE * l2 / max(set_bytes, 1))
    return max(1, min(want, MAX_ROTATE_BYTES // max(set_bytes, 1), 1024))


def bench_graph_time(
    calls: list[Callable[[], Any]], rep_ms: int, quantiles: list[float], warmup_ms: int = DEFAULT_WARMUP_MS
) -> list[float]:
    """The GPU time of one call, from replays of a CUDA graph of many calls back to back.

    `calls` are the same computation on different input copies (`rotation_count` of them); the graph
    cycles through them, so every call starts with its inputs out of the L2 cache, as after
    do_bench's flush, but nothing else is timed with it. Each replay (about GRAPH_TARGET_MS) is
    timed with CUDA events and divided by its number of calls: event resolution and per-launch
    jitter, which set the run-to-run spread of 5-20 us kernels under `bench_gpu_time`, average out
    over hundreds of calls. The launch gaps inside a graph (about a microsecond) are part of each call's
    time, as the gap after a flush is in do_bench's. Quantiles are over replays.
    Raises whatever capture raises (a call that synchronises, reads a value back, ...).
    """
    import torch

    current = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(current)
    with torch.cuda.stream(side):  # first calls off the capture, as torch.cuda.graphs asks
        for f in calls[:3]:
            f()
    current.wait_stream(side)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    probe = max(len(calls), 5)
    start.record()
    for i in range(probe):
        calls[i % len(calls)]()
    end.record()
    torch.cuda.synchronize()
    per_call = max(start.elapsed_time(end) / probe, 1e-4)  # an overestimate when the host is slower
    n_calls, graph = 0, None
    while True:  # a second capture when the first graph came out much shorter than wanted
        want = min(max(len(calls), math.ceil(GRAPH_TARGET_MS / per_call)), MAX_GRAPH_CALLS)
        if graph is not None and want <= 2 * n_calls:
            break
        n_calls, graph = want, torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for i in range(n_calls):
                calls[i % len(calls)]()
        graph.replay()
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        per_call = max(start.elapsed_time(end) / n_calls, 1e-5)
    replay_ms = per_call * n_calls
    for _ in range(min(int(warmup_ms / replay_ms), 200)):  # clocks up before anything is timed
        graph.replay()
    n_rep = max(5, min(int(rep_ms / replay_ms), 500))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    for a, z in zip(starts, ends):
        a.record()
        graph.replay()
        z.record()
    torch.cuda.synchronize()
    times = torch.tensor([a.elapsed_time(z) / n_calls for a, z in zip(starts, ends)], dtype=torch.float64)
    del graph
    return [float(v) for v in torch.quantile(times, torch.tensor(quantiles, dtype=torch.float64))]


def time_fn(fn: Callable[[], Any], method: str, rep_ms: int, warmup_ms: int) -> tuple[float, float, float]:
    """(median, p20, p80) in ms of `fn` by `bench_gpu_time` (do_bench's measurement without the
    host's launch cost) or Triton's do_bench_cudagraph."""
    from triton.testing import do_bench_cudagraph

    if method == "cudagraph":
        q = do_bench_cudagraph(fn, rep=rep_ms, quantiles=QUANTILES)
    else:
        q = bench_gpu_time(fn, warmup_ms, rep_ms, QUANTILES)
    median, p20, p80 = (float(v) for v in q)
    return median, p20, p80
