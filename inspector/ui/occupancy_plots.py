"""Plotly figures of the occupancy calculator's curves (numbers in, figure out; no Streamlit).

Each of the three panels varies one input of the kernel (threads per block, registers per
thread, shared memory per block) and keeps the others, as NVIDIA's calculator draws them; the
kernel's own point is marked, and a what-if point when one is given.
"""

from __future__ import annotations

from inspector.occupancy import Curve, Curves

_PANELS = ("block_size", "registers", "shared_memory")
_TITLES = {"block_size": "Threads per block", "registers": "Registers per thread",
           "shared_memory": "Shared memory per block (KiB)"}


def _x(curve: Curve, values: list[int] | int):
    """Shared memory is plotted in KiB, the others as they are."""
    if curve.name != "shared_memory":
        return values
    return [v / 1024 for v in values] if isinstance(values, list) else values / 1024


def curves_figure(curves: Curves, base: Curves | None = None, height: int = 320):
    """Three side-by-side occupancy curves for `curves`; `base` (the compiled kernel, when
    `curves` is a what-if) is drawn dashed with its point, so the change is visible."""
    from plotly.subplots import make_subplots
    import plotly.graph_objects as go

    titles = [_TITLES[n] for n in _PANELS]
    if not curves.current.backend == "cuda":
        titles[1] = "VGPRs per work-item"
        titles[2] = "LDS per workgroup (KiB)"
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, shared_yaxes=True, horizontal_spacing=0.04)
    for col, name in enumerate(_PANELS, start=1):
        curve: Curve = getattr(curves, name)
        if base is not None:
            b: Curve = getattr(base, name)
            fig.add_trace(go.Scatter(x=_x(b, b.x), y=[100 * o for o in b.occupancy], mode="lines",
                                     line=dict(color="#a0a4ad", dash="dot", shape="hv"), name="compiled",
                                     showlegend=col == 1, hoverinfo="skip"), row=1, col=col)
            fig.add_trace(go.Scatter(x=[_x(b, b.current_x)], y=[100 * b.current_occupancy], mode="markers",
                                     marker=dict(color="#a0a4ad", size=9), name="compiled kernel",
                                     showlegend=col == 1), row=1, col=col)
        fig.add_trace(go.Scatter(
            x=_x(curve, curve.x), y=[100 * o for o in curve.occupancy], mode="lines",
            line=dict(color="#4e79d9", shape="hv"), name="what-if" if base is not None else "occupancy",
            showlegend=col == 1, customdata=curve.blocks_per_sm,
            hovertemplate="%{x}: %{y:.1f}% (%{customdata} blocks/SM)<extra></extra>"), row=1, col=col)
        point = "what-if point" if base is not None else "this kernel"
        fig.add_trace(go.Scatter(x=[_x(curve, curve.current_x)], y=[100 * curve.current_occupancy], mode="markers",
                                 marker=dict(color="#e4572e", size=11, symbol="diamond"),
                                 name=point, showlegend=col == 1,
                                 hovertemplate=f"%{{x}}: %{{y:.1f}}%<extra>{point}</extra>"), row=1, col=col)
    fig.update_yaxes(title_text="occupancy (%)", range=[0, 105], row=1, col=1)
    fig.update_layout(height=height, margin=dict(l=50, r=10, t=40, b=30),
                      legend=dict(orientation="h", y=-0.18, x=0), hovermode="closest")
    return fig
