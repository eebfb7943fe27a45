"""Benchmark records, roofline and plot builders, driven by the H200 results recorded in assets/bench."""

from __future__ import annotations

import json
import math

import pytest

from inspector.bench import (
    BenchResult,
    Ceilings,
    Check,
    DeviceInfo,
    Point,
    Sweep,
    Timing,
    bundled_kernels,
    load_result,
    parse_size,
    recorded_kernels,
    recorded_result,
    roofline,
    save_result,
    size_axis,
    size_label,
)
from inspector.bench.compare import median_differences
from inspector.bench.protocol import ProtocolError, accepted_kwargs, resolve
from inspector.bench.roofline import memory_bound, roof, roof_line

RECORDED = recorded_kernels()


def test_every_bundled_kernel_has_recorded_results():
    missing = sorted(set(bundled_kernels()) - set(RECORDED))
    assert not missing, (
        f"no assets/bench/<name>.json for {missing}: record them on the GPU (docs/benchmarks.md)"
    )


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_file_is_a_real_gpu_sweep(name):
    r = recorded_result(name)
    assert r is not None and r.recorded and r.recorded_path == f"assets/bench/{name}.json"
    assert r.error is None, r.error
    assert (
        r.device
        and r.device.name
        and r.device.sm_count
        and r.device.driver
        and r.device.torch
        and r.device.triton
    )
    assert r.device.cuda_runtime or r.device.hip
    assert r.date[:4].isdigit() and r.provenance().startswith(f"recorded on {r.device.name} on {r.date[:10]}")
    assert r.ceilings and r.ceilings.copy_gbps > 100 and r.ceilings.matmul_tflops > 10
    assert not r.settings.get("check_only") and not r.settings.get("interpreter")
    assert r.sweeps and all(s.points for s in r.sweeps)
    for s in r.sweeps:
        for p in s.points:
            t = p.timing("triton")
            # A wrong kernel is never timed: every Triton timing follows a passed check.
            assert t is not None and p.check("triton").ok, (s.variant, p.label, p.errors)
            assert 0 < t.p20_ms <= t.median_ms <= t.p80_ms
            if p.bytes_moved:
                assert t.gbps == pytest.approx(p.bytes_moved / (t.median_ms * 1e-3) / 1e9)
            if p.flops:
                assert t.tflops == pytest.approx(p.flops / (t.median_ms * 1e-3) / 1e12)
            for timing in p.timings:
                assert p.check(timing.impl).ok


@pytest.mark.parametrize("name", RECORDED)
def test_recorded_round_trip(name, tmp_path):
    r = recorded_result(name)
    again = BenchResult.from_dict(json.loads(json.dumps(r.to_dict())))
    assert again == r
    save_result(r, tmp_path / "r.json")
    assert load_result(tmp_path / "r.json") == r


def test_synthetic_round_trip(tmp_path):
    r = BenchResult(
        kernel="k",
        title="K",
        source="k.py",
        date="2026-01-02T03:04:05+00:00",
        device=DeviceInfo(name="GPU", sm_count=10, capability="9.0", driver="1.2", cuda_runtime="13.0"),
        ceilings=Ceilings(
            copy_gbps=1000.0,
            matmul_tflops=100.0,
            copy_bytes=2**31,
            matmul_n=8192,
            trials={"copy 1024 MiB": 1000.0},
        ),
        settings={"vs": ["eager"]},
        size_names=["rows", "columns"],
        sweeps=[
            Sweep(
                variant="bf16",
                params={"dtype": "torch.bfloat16"},
                points=[
                    Point(
                        size=(16, 32),
                        flops=None,
                        bytes_moved=2048,
                        checks=[Check("triton", True, 1e-3, 1e-3, 0.0, 0.0, 0, 512)],
                        timings=[Timing("triton", "do_bench", 1.0, 0.9, 1.1, gbps=2e-3)],
                        errors={"eager": "failed its check: nope"},
                    )
                ],
            ),
            Sweep(variant="x", skipped="the interpreter cannot"),
        ],
    )
    save_result(r, tmp_path / "a" / "r.json")
    back = load_result(tmp_path / "a" / "r.json")
    assert back == r
    assert back.sweeps[0].points[0].size == (16, 32) and back.sweeps[0].points[0].label == "16x32"


def test_sizes_parse_and_label():
    assert parse_size("4096") == 4096
    assert parse_size("2^20") == parse_size("2**20") == 2**20
    assert parse_size("16384x1024") == (16384, 1024)
    assert parse_size("2^14x2**10") == (16384, 1024)
    assert size_label((16384, 1024)) == "16384x1024" and size_label(7) == "7"
    with pytest.raises(ValueError):
        parse_size("lots")


def test_size_axis():
    def sweep(*sizes):
        return Sweep(points=[Point(size=s, bytes_moved=8 * (i + 1)) for i, s in enumerate(sizes)])

    assert size_axis(sweep(1, 2, 4), ["elements"]) == ([1.0, 2.0, 4.0], "elements", False)
    assert size_axis(sweep((8, 16), (8, 32)), ["rows", "columns"]) == ([16.0, 32.0], "columns", False)
    assert size_axis(sweep((8, 8, 8), (16, 16, 16)), ["M", "N", "K"]) == ([8.0, 16.0], "M = N = K", False)
    assert size_axis(sweep((4096, 4096, 4096)), ["M", "N", "K"])[0] == [4096.0]
    assert size_axis(sweep((1, 2), (2, 1)))[1:] == ("bytes moved", True)


def test_protocol_resolution(tmp_path):
    name, path, bundled = resolve("add")
    assert (name, bundled) == ("add", True) and path.name == "add.py"
    assert "add" in bundled_kernels()
    with pytest.raises(ProtocolError, match="neither a file nor a bundled kernel"):
        resolve("no_such_kernel")
    f = tmp_path / "mine.py"
    f.write_text("x = 1\n")
    assert resolve(str(f)) == ("mine", f.resolve(), False)

    def fn(x, dtype=None):
        return x

    def anything(x, **kw):
        return x

    assert accepted_kwargs(fn, {"dtype": 1, "causal": True}) == {"dtype": 1}
    assert accepted_kwargs(anything, {"dtype": 1, "causal": True}) == {"dtype": 1, "causal": True}


def test_roofline_math():
    c = Ceilings(copy_gbps=4000.0, matmul_tflops=800.0, copy_bytes=0, matmul_n=0)
    assert c.ridge == pytest.approx(200.0)
    assert roof(1.0, c) == pytest.approx(4.0)  # 1 FLOP/B x 4000 GB/s = 4 TFLOP/s
    assert roof(1000.0, c) == 800.0
    xs, ys = roof_line(c, 0.1, 1e4)
    assert xs == [0.1, 200.0, 1e4] and ys == [pytest.approx(0.4), pytest.approx(800.0), 800.0]


# ---- figures from recorded files ------------------------------------------------------------------
plots = pytest.importorskip("plotly") and __import__("inspector.bench.plots", fromlist=["plots"])


def _recorded(name):
    if name not in RECORDED:
        pytest.skip(f"no recorded results for {name}")
    return recorded_result(name)


def _trace(fig, name):
    found = [t for t in fig.data if t.name == name]
    assert found, f"no trace {name!r}; traces: {[t.name for t in fig.data]}"
    return found[0]


@pytest.mark.parametrize("name", RECORDED)
def test_time_figure_traces(name):
    r = _recorded(name)
    several = len(r.sweeps) > 1
    fig = plots.time_figure(r)
    assert "recorded on" in fig.layout.title.text and r.device.name in fig.layout.title.text
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    # whole numbers at 1, 2 and 5 of each decade, never a bare leading digit ("5 6 7 8 9 1000 2 3")
    assert (fig.layout.xaxis.dtick, fig.layout.xaxis.tickformat) == ("D2", "~g") == (fig.layout.yaxis.dtick,
                                                                                   fig.layout.yaxis.tickformat)
    for sweep in r.sweeps:
        xs = size_axis(sweep, r.size_names)[0]
        for impl in sweep.impls():
            t = _trace(fig, f"{impl} · {sweep.variant}" if several and sweep.variant else impl)
            timed = [(x, p.timing(impl)) for x, p in zip(xs, sweep.points) if p.timing(impl)]
            assert list(t.x) == [x for x, _ in timed]
            assert list(t.y) == [tm.median_ms for _, tm in timed]
            assert list(t.error_y.array) == pytest.approx([tm.p80_ms - tm.median_ms for _, tm in timed])
            assert list(t.error_y.arrayminus) == pytest.approx([tm.median_ms - tm.p20_ms for _, tm in timed])


def _throughput_with_ceiling(name: str, unit: str, ceiling_name: str, level: str):
    """The kernel's bf16 throughput figure, checked for its unit and its one ceiling line (at the
    ceilings' `level`); returns (result, figure)."""
    r = _recorded(name)
    fig = plots.throughput_figure(r, "bf16")
    assert fig.layout.yaxis.title.text == unit
    ceiling = [t for t in fig.data if t.name.startswith(ceiling_name)]
    assert len(ceiling) == 1 and set(ceiling[0].y) == {getattr(r.ceilings, level)}
    return r, fig


def test_throughput_figure_memory_bound_kernel_draws_the_copy_ceiling():
    r, fig = _throughput_with_ceiling("softmax", "GB/s", "copy ceiling", "copy_gbps")
    sweep = r.sweep("bf16")
    assert list(_trace(fig, "triton").y) == [
        p.timing("triton").gbps for p in sweep.points if p.timing("triton")
    ]
    assert memory_bound(sweep, r.ceilings)


def test_throughput_figure_compute_bound_kernel_draws_the_matmul_ceiling():
    r, fig = _throughput_with_ceiling("matmul", "TFLOP/s", "bf16 matmul ceiling", "matmul_tflops")
    assert list(_trace(fig, "triton").x) == [
        float(p.size[0]) for p in r.sweep("bf16").points if p.timing("triton")
    ]


@pytest.mark.parametrize("name", RECORDED)
def test_speedup_figure(name):
    r = _recorded(name)
    sweep = r.sweeps[0]
    fig = plots.speedup_figure(r, sweep.variant)
    assert set(_trace(fig, "parity").y) == {1.0}
    for impl in sweep.impls():
        if impl == "triton":
            continue
        expect = [
            p.timing(impl).median_ms / p.timing("triton").median_ms
            for p in sweep.points
            if p.timing(impl) and p.timing("triton")
        ]
        assert list(_trace(fig, f"vs {impl}").y) == pytest.approx(expect)


@pytest.mark.parametrize("name", RECORDED)
def test_roofline_figure(name):
    r = _recorded(name)
    fig = plots.roofline_figure(r)
    roof_trace = [t for t in fig.data if t.name.startswith("roof:")]
    assert len(roof_trace) == 1
    xs, ys = list(roof_trace[0].x), list(roof_trace[0].y)
    assert r.ceilings.ridge in xs and max(ys) == pytest.approx(r.ceilings.matmul_tflops)
    assert ys[0] == pytest.approx(xs[0] * r.ceilings.copy_gbps / 1e3)
    points = roofline(r)
    flops_known = any(p.flops and p.bytes_moved for s in r.sweeps for p in s.points)
    assert bool(points) == flops_known
    for pt in points:
        assert pt.tflops <= pt.roof_tflops * 1.15, pt  # measured roofs: a few % over is noise, not 15%
        assert pt.bound == ("memory" if pt.intensity < r.ceilings.ridge else "compute")
    plotted = sum(len(t.x) for t in fig.data if not t.name.startswith("roof:"))
    assert plotted == len(points)
    assert any(math.isclose(a.x, math.log10(r.ceilings.ridge)) for a in fig.layout.annotations)


def test_figures_all_four():
    r = _recorded("add")
    figs = plots.figures(r)
    assert set(figs) == {"time", "throughput", "speedup", "roofline"}


def test_median_differences_against_itself():
    r = _recorded("softmax")
    diffs = median_differences(r, r, largest=2)
    assert len(diffs) == 2 * len(r.sweeps) and all(d.relative == 0 for d in diffs)


def test_input_footprint_counts_nested_tensors_and_clones_them():
    import torch

    from inspector.bench.timing import clone, nbytes

    inputs = (torch.zeros(10), [torch.zeros(4, dtype=torch.float16), 3], "mode")
    assert nbytes(inputs) == 10 * 4 + 4 * 2
    copy = clone(inputs)
    assert nbytes(copy) == nbytes(inputs) and copy[0] is not inputs[0] and copy[2] == "mode"
