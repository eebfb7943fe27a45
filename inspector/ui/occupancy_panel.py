"""Occupancy: the compiled kernel's figures and what-if sliders (num_warps, registers, shared
memory, GPU) that redraw the calculator's curves at once.

The sliders live in a fragment: moving one recomputes occupancy from `inspector.occupancy`
(microseconds to milliseconds) and reruns only this panel; nothing is recompiled. The registers
and shared memory of a what-if are the user's numbers, not what a recompile would produce.
"""

from __future__ import annotations

import math
from dataclasses import asdict

import streamlit as st

from inspector.hardware.architectures import max_shared_per_block
from inspector.hardware.catalogue import GPUS, find_gpu
from inspector.occupancy import KernelResources, occupancy_curves, waves, what_if
from inspector.hardware.targets import parse_arch
from inspector.record import Inspection
from inspector.occupancy.words import limiter_words
from inspector.ui.resources_panel import kib, percent_words, unit_name, waves_words
from inspector.ui.occupancy_plots import curves_figure

NVIDIA_WARPS = (1, 2, 4, 8, 16, 32)
AMD_WAVES = (1, 2, 4, 8, 16)
NVIDIA_MAX_REGS, AMD_MAX_VGPRS = 255, 512


def base_resources(rec: Inspection) -> KernelResources | None:
    """The compiled kernel's occupancy inputs, or None when the record has none."""
    r = rec.resources
    if rec.backend == "cuda" and r.registers is not None and r.num_warps:
        return KernelResources(rec.target, r.num_warps, r.registers, r.shared_bytes)
    if rec.backend == "hip" and r.vgprs is not None and r.num_warps:
        return KernelResources(rec.target, r.num_warps, r.vgprs, r.shared_bytes, agprs=r.agprs or 0,
                               sgprs=r.sgprs or 0)
    return None


def _gpu_choices(rec: Inspection) -> list[str]:
    vendor = "nvidia" if rec.backend == "cuda" else "amd"
    return [name for name, g in GPUS.items() if g.vendor == vendor]


def _reset(k: str) -> None:
    """on_click of "Reset to compiled": the sliders start again from the compiled kernel."""
    for name in ("warps", "regs", "smem", "gpu"):
        st.session_state.pop(f"wi.{name}.{k}", None)


def shared_steps(limit: int, compiled: int, unit: int = 256) -> list[int]:
    """The shared-memory slider's stops in bytes: every `unit` up to the limit, and the compiled
    figure itself (shown exactly, never rounded to the step)."""
    return sorted({*range(0, max(limit, compiled) + 1, unit), compiled})


@st.fragment
def occupancy_panel(rec: Inspection) -> None:
    """The what-if sliders, figures and curves for one record."""
    base = base_resources(rec)
    if base is None:
        st.info("This record has no register count, so occupancy cannot be computed.")
        return
    nvidia = rec.backend == "cuda"
    k = rec.cache_key or rec.kernel  # slider keys: a new compile starts from its own figures
    gpus = _gpu_choices(rec)
    compiled_gpu = (rec.occupancy or {}).get("gpu")  # a catalogue name, or the device's own ("NVIDIA H200")
    try:
        compiled_gpu = find_gpu(compiled_gpu).name if compiled_gpu else None
    except KeyError:
        compiled_gpu = None
    c1, c2, c3, c4 = st.columns(4)
    warps = c1.select_slider("num_warps" if nvidia else "waves per workgroup (num_warps)",
                             NVIDIA_WARPS if nvidia else AMD_WAVES, value=base.num_warps, key=f"wi.warps.{k}")
    total_regs = base.registers + (base.agprs if not nvidia else 0)
    regs = c2.slider("registers per thread" if nvidia else "VGPRs (arch + acc)", 1,
                     NVIDIA_MAX_REGS if nvidia else AMD_MAX_VGPRS, value=total_regs, key=f"wi.regs.{k}")
    if compiled_gpu not in gpus:  # an architecture without a catalogue part: its own limits, no SM count
        gpus = [None, *gpus]
    gpu_name = c4.selectbox("GPU", gpus, index=gpus.index(compiled_gpu) if compiled_gpu in gpus else 0,
                            format_func=lambda g: g or f"{rec.target} (no catalogue GPU)", key=f"wi.gpu.{k}",
                            help="Another GPU's limits for the same resources (not recompiled).")
    gpu = find_gpu(gpu_name) if gpu_name else None
    arch = parse_arch(gpu.arch if gpu else rec.target)
    smem_max = max_shared_per_block(rec.backend, arch.cc[0] * 10 + arch.cc[1] if arch.cc else arch.gfx) or 0
    smem = c3.select_slider("shared memory per block" if nvidia else "LDS per workgroup",
                            shared_steps(max(smem_max, 128 * 1024), base.shared), value=base.shared,
                            format_func=kib, key=f"wi.smem.{k}")
    changes: dict[str, object] = {"num_warps": warps, "shared": smem}
    if nvidia:
        changes["registers"] = regs
    elif regs != total_regs:  # AMD: a what-if VGPR figure is the unified total
        changes.update(registers=regs, agprs=0)
    if gpu and gpu.arch != rec.target:
        changes["target"] = gpu.arch
    result = what_if(base, **changes)
    before, after = result.before, result.after

    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Occupancy (what-if)", f"{100 * after.occupancy:.0f}%",
              delta=f"{100 * result.occupancy_delta:+.0f} pts" if result.occupancy_delta else None)
    m2.metric("Blocks / SM" if nvidia else "Workgroups / CU", after.blocks_per_sm,
              delta=result.blocks_per_sm_delta or None)
    m3.metric("Active warps / SM" if nvidia else "Waves / CU", f"{after.active_warps} of {after.max_warps_per_sm}")
    m4.metric("Limited by", limiter_words(after.occupancy, after.limiters),
              help="At full occupancy no resource limits it: the limits only tie there.")
    unit = unit_name(rec.backend, plural=False)
    block = "block" if nvidia else "workgroup"
    st.button("Reset to compiled", key=f"wi.reset.{k}", on_click=_reset, args=(k,), icon=":material/restart_alt:",
              type="tertiary", help="Every slider back to the compiled kernel's figures.")
    if rec.grid and gpu:
        blocks = math.prod(rec.grid)
        w = waves(blocks, after.blocks_per_sm, gpu.sm_count)
        st.caption(f"Grid of {blocks} {block}s on {gpu.name} ({gpu.sm_count} {unit_name(rec.backend)}): "
                   f"{waves_words(w.fractional_waves)}, {percent_words(w.efficiency)} of the last wave's slots used. "
                   f"Compiled: {100 * before.occupancy:.0f} % ({before.blocks_per_sm} {block}s per {unit}, "
                   f"limited by {limiter_words(before.occupancy, before.limiters)}).")
    for note in after.notes:
        st.caption(note)

    curve_args = dict(agprs=0 if "agprs" in changes else base.agprs, sgprs=base.sgprs)
    target = str(changes.get("target", rec.target))
    now = occupancy_curves(target, warps, regs if nvidia or "registers" in changes else base.registers, smem,
                           **curve_args)
    compiled = None
    if result.occupancy_delta or changes.get("target") or (warps, regs, smem) != (base.num_warps, total_regs,
                                                                               base.shared):
        compiled = occupancy_curves(rec.target, base.num_warps, base.registers, base.shared, agprs=base.agprs,
                                    sgprs=base.sgprs)
    st.plotly_chart(curves_figure(now, base=compiled), key=f"wi.plot.{k}", config={"displayModeBar": False})
    with st.expander("Every figure of the what-if"):
        st.json(asdict(after), expanded=False)
