"""Benchmarks: the kernel against PyTorch eager and torch.compile, as curves.

With a GPU here, a button runs the sweep live (`inspector.bench.run_benchmark`, in a worker
process; the kernel file is the user's code) on the file as it is now. Without one, the curves
recorded on an H200 for the bundled kernel are shown instead, labelled with the device and date
they were measured on. Plots come from `inspector.bench.plots`.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from inspector.bench import BenchResult, recorded_result, run_benchmark
from inspector.compile.record import Inspection
from inspector.ui import state, targets

LIVE = "bench_live"  # session state: {(kernel id, file digest): BenchResult}


def _figures(result: BenchResult, key: str) -> None:
    from inspector.bench.plots import figures

    variants = result.variants
    chosen = None
    if len(variants) > 1:
        chosen = st.segmented_control("Variant", variants, default=variants[0], key=f"w.bench.variant.{key}") \
            or variants[0]
    figs = figures(result, chosen)
    names = list(figs)
    for row in range(0, len(names), 2):
        cols = st.columns(2)
        for col, name in zip(cols, names[row:row + 2]):
            col.plotly_chart(figs[name], key=f"w.bench.{key}.{name}", config={"displayModeBar": False})


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
    gpu = targets.native()
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
    st.info(f"**Recorded, not live**: {recorded.provenance()} (Triton {recorded.device.triton if recorded.device else '?'}, "
            f"torch {recorded.device.torch if recorded.device else '?'}), from `{recorded.recorded_path}`."
            + ("" if gpu.get("available") else " There is no GPU here to measure on.") + note)
    _figures(recorded, "recorded")
