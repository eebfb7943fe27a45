"""Benchmarks: the kernel against PyTorch eager and torch.compile, as curves.

With a GPU here, a button runs the sweep live (`inspector.bench.run_benchmark`, in a worker
process; the kernel file is the user's code) on the file as it is now. Without one, the curves
recorded on an H200 for the bundled kernel are shown instead, labelled with the device and date
they were measured on. Plots come from `inspector.bench.plots`.
"""

from __future__ import annotations

import hashlib
import math

import streamlit as st

from inspector.bench import BenchResult, recorded_result, run_benchmark
from inspector.record import Inspection
from inspector.ui import state, target_picker

LIVE = "bench_live"  # session state: {(kernel id, file digest): BenchResult}


def _figures(result: BenchResult, key: str) -> None:
    from inspector.bench.plots import figures

    variants = result.variants
    chosen = None
    if len(variants) > 1:
        chosen = st.segmented_control("Variant", variants, default=variants[0], key=f"w.bench.variant.{key}") \
            or variants[0]
    figs = figures(result, chosen)
    for name, fig in figs.items():
        tidy(name, fig)
    names = list(figs)
    for row in range(0, len(names), 2):
        cols = st.columns(2)
        for col, name in zip(cols, names[row:row + 2]):
            col.plotly_chart(figs[name], key=f"w.bench.{key}.{name}", config={"displayModeBar": False})


def tidy(name: str, fig) -> None:
    """Axes that show the data: a speed-up chart is not scaled to one noisy point (points above
    the range are counted in a note; hovering shows every value), and the roofline's x axis spans
    the measured points and the ridge, not two decades of empty roof."""
    if name == "speedup":
        ys = sorted(y for tr in fig.data if tr.name != "parity" for y in (tr.y or ()) if y is not None)
        if len(ys) >= 4:
            p90 = ys[int(0.9 * (len(ys) - 1))]
            top = max(1.25, p90 * 1.3)
            over = sum(y > top for y in ys)
            if over:
                fig.update_yaxes(range=[0, top])
                fig.add_annotation(text=f"{over} point{'s' if over > 1 else ''} above {top:.2g}x (max {ys[-1]:.3g}x) "
                                   "off the chart: a noisy timing", xref="paper", yref="paper", x=1, y=1,
                                   xanchor="right", showarrow=False, font=dict(size=11, color="#8a5a00"))
    elif name == "roofline":
        xs = [x for tr in fig.data if not str(tr.name).startswith("roof") for x in (tr.x or ()) if x and x > 0]
        ridge = [a.text for a in fig.layout.annotations if str(a.text).startswith("ridge")]
        if xs:
            hi = max(xs) * 3
            if ridge:
                hi = max(hi, float(ridge[0].split()[1]) * 2)
            fig.update_xaxes(range=[math.log10(min(xs) / 3), math.log10(hi)])


def _run_live(path: str) -> BenchResult:
    bar = st.progress(0.0, text="Starting the benchmark worker…")

    def progress(done: int, total: int, message: str) -> None:
        bar.progress(done / total if total else 0.0, text=f"{done} of {total} sizes · {message}")

    result = run_benchmark(path, progress=progress)
    bar.empty()
    return result


def bench_panel(rec: Inspection) -> None:
    """Live curves on a GPU, the recorded H200 curves otherwise."""
    kf = state.current_kernel()
    gpu = target_picker.native()
    if gpu.get("available"):
        path = state.workspace_of_session().source_path(kf)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.exists() else ""
        live: dict = st.session_state.setdefault(LIVE, {})
        name = (gpu.get("properties") or {}).get("name", "this GPU")
        if st.button(f"Benchmark on {name}", type="primary", key="w.bench.run",
                     help="Checks the kernel against the file's reference, then times it against PyTorch."):
            live[(kf.id, digest)] = _run_live(str(path))
        result = live.get((kf.id, digest))
        if result is not None:
            if result.error:
                st.error(f"{result.error.kind}: {result.error.message}")
            else:
                st.success(f"Live: {result.provenance()}, on the file as it is now.")
                _figures(result, "live")
            return
    recorded = recorded_result(kf.file_name[:-3]) if kf.is_bundled else None
    if recorded is None:
        st.info("No GPU here, and no recorded curves for this file: benchmarks need a GPU "
                "(bundled kernels come with curves recorded on an H200).")
        return
    edited = state.workspace_of_session().is_edited(kf)
    note = " They are for the bundled file; your edits are not in them." if edited else ""
    rec_triton = recorded.device.triton if recorded.device else "?"
    if rec_triton != rec.triton_version:
        note += (f" **Recorded with Triton {rec_triton}; this page compiles with Triton {rec.triton_version}**: "
                 "the curves are not of this compile.")
    st.info(f"**Recorded, not live**: {recorded.provenance()} (Triton {rec_triton}, "
            f"torch {recorded.device.torch if recorded.device else '?'}), from `{recorded.recorded_path}`."
            + ("" if gpu.get("available") else " There is no GPU here to measure on.") + note)
    _figures(recorded, "recorded")
