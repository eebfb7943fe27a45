"""The occupancy figure builder: numbers in, plotly figure out."""

from __future__ import annotations

from inspector.occupancy import occupancy_curves, triton_occupancy
from inspector.ui.occupancy_plots import curves_figure


def test_curves_mark_the_kernel_on_each_panel():
    curves = occupancy_curves("sm_90", 8, 164, 213016)  # the bundled matmul's first config on sm_90
    fig = curves_figure(curves)
    points = [t for t in fig.data if t.mode == "markers"]
    assert len(fig.data) == 6 and len(points) == 3
    expected = 100 * triton_occupancy("sm_90", 8, 164, 213016).occupancy
    assert all(abs(p.y[0] - expected) < 1e-9 for p in points)
    assert [p.x[0] for p in points] == [256, 164, 213016 / 1024]  # threads, registers, shared memory in KiB


def test_what_if_draws_the_compiled_kernel_behind_it():
    base = occupancy_curves("sm_90", 4, 26, 0)
    what_if = occupancy_curves("sm_90", 1, 26, 0)
    fig = curves_figure(what_if, base=base)
    names = {t.name for t in fig.data}
    assert {"compiled", "compiled kernel", "what-if", "what-if point"} <= names
    point = next(t for t in fig.data if t.name == "what-if point")
    assert point.y[0] == 50.0  # one warp per block on sm_90: 32 blocks x 1 warp of 64


def test_amd_panels_are_named_in_amd_terms():
    fig = curves_figure(occupancy_curves("gfx942", 4, 9, 0))
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["Threads per block", "VGPRs per work-item", "LDS per workgroup (KiB)"]
