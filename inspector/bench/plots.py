"""Plotly figures from benchmark result records (no Streamlit here; plotly is imported only here).

Each builder takes a `BenchResult` (live or recorded) and returns a `plotly.graph_objects.Figure`:

- `time_figure`: median time vs size, log-log, with 20th-80th percentile error bars
- `throughput_figure`: GB/s (memory-bound kernels) or TFLOP/s vs size, with the measured ceiling
- `speedup_figure`: PyTorch's time over Triton's per size (above 1: Triton is faster)
- `roofline_figure`: achieved TFLOP/s against arithmetic intensity under the two measured roofs
- `profiled_point_figure`: one profiled launch (counted by Nsight Compute) under the same roofs

`variants` selects sweeps (a name, a list, or None for all of them). Traces are named by
implementation ("triton", "eager", "compile"), with " · <variant>" when several variants are drawn.
A recorded result says so in the title, with its device and date.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterator, Sequence

import plotly.graph_objects as go

from .records import BenchResult, Ceilings, Point, Sweep, size_axis
from .roofline import memory_bound, roof_line, sweep_points

IMPL_COLORS = {"triton": "#1f77b4", "eager": "#ff7f0e", "compile": "#2ca02c"}
IMPL_NAMES = {"triton": "Triton", "eager": "PyTorch eager", "compile": "torch.compile"}
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]
CEILING_COLOR = "#d62728"


def _sweeps(result: BenchResult, variants: str | Sequence[str] | None) -> list[Sweep]:
    if variants is None:
        return list(result.sweeps)
    names = [variants] if isinstance(variants, str) else list(variants)
    return [result.sweep(v) for v in names]


def _start(result: BenchResult, variants: str | Sequence[str] | None) -> tuple[go.Figure, list[Sweep], bool]:
    """A figure builder's start: an empty figure, the sweeps to draw, and whether there are several."""
    sweeps = _sweeps(result, variants)
    return go.Figure(), sweeps, len(sweeps) > 1


def _name(impl: str, sweep: Sweep, several: bool) -> str:
    return f"{impl} · {sweep.variant}" if several and sweep.variant else impl


def _title(result: BenchResult, what: str) -> str:
    head = f"{result.title or result.kernel}: {what}"
    if result.device is None:
        return head
    return f"{head}<br><sup>{result.provenance()}</sup>"


# Log axes label 1, 2 and 5 of each decade with the whole number: plotly's default labels the minor
# ticks with their leading digit alone ("5 6 7 8 9 1000 2 3").
LOG_TICKS = {"dtick": "D2", "tickformat": "~g"}


def _layout(
    fig: go.Figure, title: str, x_title: str, y_title: str, log_x: bool = True, log_y: bool = True
) -> None:
    fig.update_layout(
        title=title,
        template="plotly_white",
        hovermode="x unified",
        legend=dict(orientation="h", yanchor="bottom", y=-0.3),
    )
    fig.update_xaxes(title_text=x_title, type="log" if log_x else "linear", **(LOG_TICKS if log_x else {}))
    fig.update_yaxes(title_text=y_title, type="log" if log_y else "linear", **(LOG_TICKS if log_y else {}))


def _x(result: BenchResult, sweep: Sweep) -> tuple[list[float], str]:
    xs, title, is_bytes = size_axis(sweep, result.size_names)
    return xs, title


def _x_title(result: BenchResult, sweeps: list[Sweep]) -> str:
    """The size axis's title, as the last sweep's sizes name it."""
    return _x(result, sweeps[-1])[1] if sweeps else "size"


def _by_impl(
    result: BenchResult, sweeps: list[Sweep], method: str, value: Callable[[Point, str], Any]
) -> Iterator[tuple[int, Sweep, str, list[float], list[Any], list[str]]]:
    """(j, sweep, impl, x, values, size labels) for each sweep (j its index) and implementation it
    timed with `method`, over the sizes where `value(point, impl)` is not None."""
    for j, sweep in enumerate(sweeps):
        xs, _ = _x(result, sweep)
        for impl in sweep.impls(method):
            kept = [(xv, v, p.label) for xv, p in zip(xs, sweep.points) if (v := value(p, impl)) is not None]
            yield j, sweep, impl, [k[0] for k in kept], [k[1] for k in kept], [k[2] for k in kept]


def _series(fig: go.Figure, x: list, y: list, text: list, name: str, impl: str, j: int, hover: str,
            **extra: Any) -> None:
    """One implementation's line over sizes (its colour; the variant's dash)."""
    fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=name, text=text,
                             line=dict(color=IMPL_COLORS.get(impl), dash=DASHES[j % len(DASHES)]),
                             hovertemplate=f"%{{text}}: {hover}<extra>%{{fullData.name}}</extra>", **extra))


def _level(fig: go.Figure, xs: list[float], level: float, name: str, color: str, dash: str, hover: str) -> None:
    """A horizontal line across the sizes shown (a measured ceiling, parity)."""
    fig.add_trace(go.Scatter(x=[min(xs), max(xs)], y=[level, level], mode="lines", name=name,
                             line=dict(color=color, dash=dash), hoverinfo=hover))


def time_figure(
    result: BenchResult, variants: str | Sequence[str] | None = None, method: str = "do_bench"
) -> go.Figure:
    """Median time (ms) vs size per implementation, with p20/p80 error bars."""
    fig, sweeps, several = _start(result, variants)
    for j, sweep, impl, x, timings, text in _by_impl(result, sweeps, method, lambda p, impl: p.timing(impl, method)):
        lo = [max(t.median_ms - t.p20_ms, 0.0) for t in timings]
        hi = [max(t.p80_ms - t.median_ms, 0.0) for t in timings]
        _series(fig, x, [t.median_ms for t in timings], text, _name(impl, sweep, several), impl, j, "%{y:.4g} ms",
                error_y=dict(type="data", symmetric=False, array=hi, arrayminus=lo))
    _layout(fig, _title(result, "time vs size"), _x_title(result, sweeps), "median time (ms)")
    return fig


def _metric(result: BenchResult, sweeps: list[Sweep], metric: str | None) -> str:
    if metric in ("gbps", "tflops"):
        return metric
    has_bytes = any(p.bytes_moved for s in sweeps for p in s.points)
    has_flops = any(p.flops for s in sweeps for p in s.points)
    if has_bytes and (not has_flops or all(memory_bound(s, result.ceilings) for s in sweeps)):
        return "gbps"
    return "tflops"


def throughput_figure(
    result: BenchResult,
    variants: str | Sequence[str] | None = None,
    metric: str | None = None,
    method: str = "do_bench",
) -> go.Figure:
    """GB/s or TFLOP/s vs size, with the device's measured ceiling as a horizontal line.

    `metric`: "gbps", "tflops", or None to choose GB/s for memory-bound sweeps (left of the ridge).
    """
    fig, sweeps, several = _start(result, variants)
    metric = _metric(result, sweeps, metric)
    all_x: list[float] = []

    def rate(p: Point, impl: str) -> float | None:
        t = p.timing(impl, method)
        return None if t is None else (t.gbps if metric == "gbps" else t.tflops)

    for j, sweep, impl, x, y, text in _by_impl(result, sweeps, method, rate):
        all_x += x
        _series(fig, x, y, text, _name(impl, sweep, several), impl, j, "%{y:.4g}")
    unit = "GB/s" if metric == "gbps" else "TFLOP/s"
    if result.ceilings is not None and all_x:
        c = result.ceilings
        level = c.copy_gbps if metric == "gbps" else c.matmul_tflops
        label = (
            f"copy ceiling {c.copy_gbps:,.0f} GB/s (measured)"
            if metric == "gbps"
            else f"bf16 matmul ceiling {c.matmul_tflops:,.0f} TFLOP/s (measured)"
        )
        _level(fig, all_x, level, label, CEILING_COLOR, "dash", "name")
    what = "bandwidth" if metric == "gbps" else "arithmetic rate"
    _layout(fig, _title(result, f"{what} vs size"), _x_title(result, sweeps), unit, log_y=False)
    return fig


def speedup_figure(
    result: BenchResult, variants: str | Sequence[str] | None = None, method: str = "do_bench"
) -> go.Figure:
    """PyTorch time / Triton time per size, one trace per PyTorch implementation (above 1: Triton wins)."""
    fig, sweeps, several = _start(result, variants)
    all_x: list[float] = []

    def speedup(p: Point, impl: str) -> float | None:
        mine, theirs = p.timing("triton", method), p.timing(impl, method)
        if mine is None or theirs is None or mine.median_ms <= 0:
            return None
        return theirs.median_ms / mine.median_ms

    for j, sweep, impl, x, y, text in _by_impl(result, sweeps, method, speedup):
        if impl == "triton":
            continue
        all_x += x
        _series(fig, x, y, text, f"vs {_name(impl, sweep, several)}", impl, j, "%{y:.3g}x")
    if all_x:
        _level(fig, all_x, 1.0, "parity", "gray", "dot", "skip")
    _layout(
        fig,
        _title(result, "speed-up of Triton over PyTorch"),
        _x_title(result, sweeps),
        "PyTorch time / Triton time",
        log_y=False,
    )
    return fig


def roofline_figure(
    result: BenchResult, variants: str | Sequence[str] | None = None, method: str = "do_bench"
) -> go.Figure:
    """Achieved TFLOP/s vs arithmetic intensity (FLOP/byte), under the measured copy and matmul roofs."""
    fig, sweeps, several = _start(result, variants)
    c = result.ceilings
    intensities: list[float] = []
    for j, sweep in enumerate(sweeps):
        if c is None:
            break
        points = sweep_points(sweep, c, method=method)
        for impl in sweep.impls(method):
            mine = [pt for pt in points if pt.impl == impl]
            if not mine:
                continue
            intensities += [pt.intensity for pt in mine]
            fig.add_trace(
                go.Scatter(
                    x=[pt.intensity for pt in mine],
                    y=[pt.tflops for pt in mine],
                    mode="markers+lines",
                    name=_name(impl, sweep, several),
                    text=[pt.size for pt in mine],
                    customdata=[[pt.efficiency * 100] for pt in mine],
                    marker=dict(color=IMPL_COLORS.get(impl), symbol=j % 20, size=9),
                    line=dict(color=IMPL_COLORS.get(impl), dash=DASHES[j % len(DASHES)], width=1),
                    hovertemplate="%{text}: %{x:.3g} FLOP/B, %{y:.4g} TFLOP/s (%{customdata[0]:.0f}% of roof)"
                    "<extra>%{fullData.name}</extra>",
                )
            )
    if c is not None:
        _add_roof(fig, c, intensities)
    _layout(
        fig,
        _title(result, "roofline"),
        "arithmetic intensity (FLOP/byte)",
        "achieved TFLOP/s",
        log_x=True,
        log_y=True,
    )
    fig.update_layout(hovermode="closest")
    return fig


def _add_roof(fig: go.Figure, c: Ceilings, intensities: list[float]) -> None:
    """The measured roof across the points' intensities (and a decade either side of the ridge), with
    the ridge marked; both axes logarithmic."""
    lo = min([c.ridge / 100, *intensities]) / 2
    hi = max([c.ridge * 10, *intensities]) * 2
    xs, ys = roof_line(c, lo, hi)
    fig.add_trace(
        go.Scatter(
            x=xs,
            y=ys,
            mode="lines",
            line=dict(color=CEILING_COLOR, width=2),
            name=f"roof: copy {c.copy_gbps:,.0f} GB/s, bf16 matmul {c.matmul_tflops:,.0f} TFLOP/s",
            hoverinfo="name",
        )
    )
    # Annotations on log axes are placed in log10 units.
    fig.add_annotation(
        x=math.log10(c.ridge),
        y=math.log10(c.matmul_tflops),
        text=f"ridge {c.ridge:.0f} FLOP/B",
        showarrow=True,
        arrowhead=2,
        ax=0,
        ay=-30,
        xref="x",
        yref="y",
    )
    fig.update_layout(xaxis=dict(type="log"), yaxis=dict(type="log"))


def profiled_point_figure(kernel: str, rate: dict[str, Any]) -> go.Figure | None:
    """One profiled launch (`inspector.profile.rate`: counted FLOP and bytes, placed on measured
    ceilings) on the device's roof; None without ceilings or without arithmetic to place."""
    if not rate.get("intensity") or not rate.get("ceilings") or not rate.get("tflops"):
        return None
    c = Ceilings(copy_gbps=rate["ceilings"]["copy_gbps"], matmul_tflops=rate["ceilings"]["matmul_tflops"],
                 copy_bytes=0, matmul_n=0, device=rate["ceilings"].get("device", ""))
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=[rate["intensity"]],
            y=[rate["tflops"]],
            mode="markers",
            name=f"{kernel}, as profiled",
            marker=dict(color=IMPL_COLORS.get("triton"), size=12),
            hovertemplate="%{x:.3g} FLOP/B, %{y:.4g} TFLOP/s" + f" ({rate.get('of_roof', 0) * 100:.1f}% of roof)"
            "<extra></extra>",
        )
    )
    _add_roof(fig, c, [rate["intensity"]])
    _layout(fig, f"{kernel} on the roofline ({c.device})", "arithmetic intensity (FLOP/byte)",
            "achieved TFLOP/s", log_x=True, log_y=True)
    fig.update_layout(hovermode="closest")
    return fig


def figures(
    result: BenchResult, variants: str | Sequence[str] | None = None, method: str = "do_bench"
) -> dict[str, go.Figure]:
    """All four figures, keyed time, throughput, speedup, roofline."""
    return dict(
        time=time_figure(result, variants, method),
        throughput=throughput_figure(result, variants, None, method),
        speedup=speedup_figure(result, variants, method),
        roofline=roofline_figure(result, variants, method),
    )
