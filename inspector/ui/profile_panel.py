"""Profile: what a GPU measured for the shown launch, per line of the kernel file.

With an NVIDIA GPU and Nsight Compute here, a button profiles the shown record's launch (its
reproducer under `ncu` in the benchmark jail: `inspector.profile.run_ncu`; the record must be a
native compile). Anywhere, a profile saved by `python -m inspector profile --out P.json` opens
from an upload: a laptop reads a teammate's H100 profile. Shown: the kernel's figures, the
inspector's model against the measurement (a disagreement is a warning, never hidden), and a
sortable table of the lines the warps waited on.
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st

from inspector import places

from inspector.bench.plots import profiled_point_figure
from inspector.profile.measured import Profile
from inspector.profile.rate import describe_rate
from inspector.record import Inspection
from inspector.ui import target_picker

LOADED = "profile.loaded"  # session state: {kernel file path: Profile as a dict}


def _measure(rec: Inspection) -> Profile | None:
    from inspector.profile.measure import measure
    from inspector.profile.run_ncu import ProfileError

    try:
        got = measure(rec)
    except ProfileError as e:
        st.error(f"Could not profile `{rec.kernel}`: {e}")
        return None
    if got.fallback_reason:
        st.info(f"Nsight Compute could not measure it ({got.fallback_reason}); Proton timed the kernel instead: "
                "its duration only, no per-line counters.", icon=":material/info:")
    return got.profile


def _figures(prof: Profile) -> None:
    named = [("duration", "Duration"), ("dram_throughput", "DRAM throughput"),
             ("achieved_occupancy", "Achieved occupancy"), ("theoretical_occupancy", "Theoretical occupancy"),
             ("registers", "Registers / thread"), ("waves", "Waves per SM")]
    shown = [(label, prof.figures[key]) for key, label in named if key in prof.figures]
    cols = st.columns(max(len(shown), 1))
    for col, (label, fig) in zip(cols, shown):
        unit = fig["unit"].replace("register/thread", "")
        col.metric(label, f"{fig['value']:,.3g} {unit}".strip())


def _rate(prof: Profile) -> None:
    """The roofline point: what the launch did, how fast, and where it sits under the measured roofs."""
    rate = prof.figures.get("rate")
    if not rate:
        return
    cols = st.columns(4)
    if rate.get("tflops"):
        cols[0].metric("Achieved", f"{rate['tflops']:.3g} TFLOP/s")
    if rate.get("dram_gbps") is not None:
        share = rate.get("dram_of_ceiling")
        cols[1].metric("DRAM bandwidth", f"{rate['dram_gbps']:,.0f} GB/s",
                       help=None if share is None else f"{share * 100:.0f}% of the {rate['ceilings']['copy_gbps']:,.0f} "
                       f"GB/s measured on {rate['ceilings']['device']} (a large copy)")
    if rate.get("l2_gbps") is not None:
        cols[2].metric("L2 bandwidth", f"{rate['l2_gbps']:,.0f} GB/s")
    if rate.get("intensity"):
        cols[3].metric("Arithmetic intensity", f"{rate['intensity']:.3g} FLOP/B")
    st.caption(" ".join(s[:1].upper() + s[1:] + "." for s in describe_rate(rate)))
    fig = profiled_point_figure(prof.kernel, rate)
    if fig is not None:
        st.plotly_chart(fig, key="w.profile.roofline", config={"displayModeBar": False})


def _checks(prof: Profile) -> None:
    bad = prof.disagreements()
    for c in bad:
        st.warning(f"The inspector predicted **{c.predicted:g}** for {c.what}; Nsight Compute measured "
                   f"**{c.measured:g}**. {c.note}", icon=":material/warning:")
    agreed = [c for c in prof.checks if c.agrees]
    if agreed:
        st.caption("Agrees with the measurement: " + "; ".join(
            f"{c.what} ({c.measured:g})" for c in agreed))


def _lines(prof: Profile) -> None:
    rows = [{"line": l.line, "stall share %": round(l.share * 100, 1),
             "top stalls": ", ".join(f"{r} {n * 100 / max(l.samples, 1):.0f}%" for r, n in l.stalls[:3]),
             "instructions": l.instructions,
             "L2 sectors": l.sectors, "ideal sectors": l.ideal_sectors, "source": l.source}
            for l in sorted(prof.lines, key=lambda l: -l.samples)]
    st.dataframe(rows, hide_index=True, width="stretch")
    if prof.library_samples:
        share = prof.library_samples / max(prof.figures.get("stall_samples", 1), 1)
        st.caption(f"{share * 100:.1f}% of the stall samples fell in Triton's own inlined code (tl.max, tl.sum, ...).")


def _open(loaded: dict, rec: Inspection, prof: dict) -> None:
    """Keep `prof` for the shown file; a new one reruns the page, so the workbench (drawn above this
    view) shows its heat strip."""
    if loaded.get(rec.file) != prof:
        loaded[rec.file] = prof
        st.rerun()


@st.cache_data(show_spinner=False)
def _shipped(folder: str) -> list[tuple[str, str, str, str]]:
    """(path, kernel, file stem, device) of each profile shipped with the app (assets/profiles)."""
    out = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        out.append((str(path), str(data.get("kernel", "")), Path(str(data.get("file", ""))).stem,
                    str(data.get("device") or data.get("target", ""))))
    return out


def _shipped_for(rec: Inspection) -> list[tuple[str, str]]:
    """(label, path) of the shipped profiles of the shown kernel (a gallery kernel has them)."""
    stem = Path(rec.file).stem
    return [(f"{Path(path).name} · {kernel} on {device}", path)
            for path, kernel, file_stem, device in _shipped(str(places.assets_dir() / "profiles"))
            if kernel == rec.kernel and file_stem == stem]


def profile_panel(rec: Inspection) -> None:
    loaded: dict = st.session_state.setdefault(LOADED, {})
    gpu = target_picker.native()
    c1, c2 = st.columns([1, 2])
    if gpu.get("available") and str(gpu.get("target", "")).startswith("sm"):
        if rec.mode != "native":
            c1.caption("Compile for the native GPU to profile this launch here.")
        elif c1.button("Profile on this GPU", key="w.profile.run", icon=":material/speed:"):
            with st.spinner(f"Profiling {rec.kernel} under Nsight Compute…"):
                prof = _measure(rec)
            if prof is not None:
                _open(loaded, rec, prof.to_dict())
    else:
        shipped = _shipped_for(rec)
        c1.caption("No NVIDIA GPU here: open a profile saved with `python -m inspector profile --out P.json`"
                   + (", or one recorded on our GPU:" if shipped else "."))
        for i, (label, path) in enumerate(shipped):
            if c1.button(label, key=f"w.profile.shipped.{i}", icon=":material/folder_open:"):
                _open(loaded, rec, Profile.from_dict(json.loads(Path(path).read_text())).to_dict())
    upload = c2.file_uploader("Open a saved profile", type=["json"], key="w.profile.upload")
    if upload is not None:
        try:
            _open(loaded, rec, Profile.from_dict(json.loads(upload.getvalue())).to_dict())
        except (ValueError, TypeError, KeyError) as e:
            st.error(f"{upload.name} is not a profile the inspector saved ({type(e).__name__}: {e}).")
    saved = loaded.get(rec.file)
    if saved is None:
        return
    prof = Profile.from_dict(saved)
    if prof.kernel != rec.kernel:
        st.info(f"This profile is of `{prof.kernel}`; the shown kernel is `{rec.kernel}`.")
    st.markdown(f"**{prof.kernel}** on {prof.device or prof.target}, measured by {prof.tool} "
                f"(Triton {prof.triton_version})")
    _figures(prof)
    _rate(prof)
    if prof.note:
        st.caption(prof.note[:1].upper() + prof.note[1:] + ".")
    _checks(prof)
    if prof.kernel_stalls:
        stalled = sum(n for _, n in prof.kernel_stalls) or 1
        st.caption("Where the warps waited, over the whole kernel (PC sampling): " + ", ".join(
            f"{r} {n * 100 / stalled:.0f}%" for r, n in prof.kernel_stalls[:6]) + ".")
    if prof.lines:
        _lines(prof)
    if prof.seconds:
        st.caption("Taken in " + ", ".join(f"{k} {v:.1f} s" for k, v in prof.seconds.items()) + ".")
