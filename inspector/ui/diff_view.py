"""The whole diff of two inspections, drawn (`inspector.analysis.diff_inspections`): what changed
in the settings, resources and occupancy, which loads and stores changed width, the instruction
mix, and any stage's text (renumbered registers and SSA names ignored), highlighted. Used by the
Diff tab (a pinned compile, or another Triton release) and the autotune grid (two configs).
"""

from __future__ import annotations

import streamlit as st

from inspector.analysis import InspectionDiff, diff_inspections
from inspector.record import STAGE_TITLES, Inspection
from inspector.highlight import render_rows
from inspector.ui.panes import Pane, panes_document
from inspector.ui.resources_panel import kib, limiter_list

DIFF_HEIGHT = 520


def _label(rec: Inspection) -> str:
    opts = rec.options or {}
    return f"{rec.kernel} · {rec.target} · {opts.get('num_warps', '?')} warps · {opts.get('num_stages', '?')} stages"


# The record's field names as the page says them (the analysis keeps the names; the CLI's JSON too).
FIELD_WORDS = {
    "triton": "Triton", "threads": "threads per block", "registers": "registers per thread",
    "spill_store_bytes": "spill stores", "spill_load_bytes": "spill loads", "local_bytes": "local memory per thread",
    "shared_bytes": "shared memory", "vgprs": "VGPRs", "agprs": "AGPRs", "sgprs": "SGPRs", "vgpr_spills": "VGPR spills",
    "sgpr_spills": "SGPR spills", "lds_bytes": "LDS", "scratch_bytes": "scratch per lane",
    "amd_occupancy": "waves per SIMD (compiler)", "blocks_per_sm": "blocks per SM", "active_warps": "active warps per SM",
    "limiters": "limited by",
}  # names not here (num_warps, num_stages, occupancy, ...) read as they are
_BYTES = {"spill_store_bytes", "spill_load_bytes", "local_bytes", "shared_bytes", "lds_bytes", "scratch_bytes"}


def value_words(name: str, value: object) -> str:
    """A diff cell as a reader says it: bytes with units, occupancy in %, limiters in words,
    a parameter's value with its specialisation (none: the value alone)."""
    if value is None:
        return "–"
    if name in _BYTES and isinstance(value, int):
        return kib(value)
    if name == "occupancy" and isinstance(value, (int, float)):
        return f"{100 * value:.1f}".rstrip("0").rstrip(".") + " %"
    if name == "limiters" and isinstance(value, (list, tuple)):
        return limiter_list(value) or "nothing"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "–"
    return str(value)


def change_rows(d: InspectionDiff) -> list[dict[str, str]]:
    """Settings, resources and occupancy in words, changed ones first."""
    rows = [{"": FIELD_WORDS.get(c.name, c.name), "A": value_words(c.name, c.a), "B": value_words(c.name, c.b),
             "changed": "●" if c.changed else ""}
            for c in [*d.settings, *d.resources, *d.occupancy]]
    return sorted(rows, key=lambda r: r["changed"] != "●")


@st.cache_data(max_entries=16, show_spinner=False)
def _hunk_rows(key: str, _hunks: tuple[str, ...]) -> str:
    return render_rows("\n".join(_hunks), "diff", "diff")


def diff_view(a: Inspection, b: Inspection, name_a: str = "A", name_b: str = "B") -> None:
    """The whole diff of two records."""
    d = diff_inspections(a, b)
    st.markdown(f"**A** = {name_a}: {_label(a)}  \n**B** = {name_b}: {_label(b)}")
    st.dataframe(change_rows(d), hide_index=True, width="stretch", key=f"w.diff.table.{name_a}.{name_b}")
    widened = [m for m in d.memory if m.a != m.b]
    for m in widened:
        st.markdown(f"- `{m.op}` at line {m.line_b or m.line_a}: **{m.a or 'absent'} → {m.b or 'absent'}** "
                    f"({m.b_summary or m.a_summary})" + (f": {'; '.join(m.b_reasons)}" if m.b_reasons else ""))
    stages = [s for s in b.stage_names() if s in d.stages]
    if not stages:
        st.caption("The two compiles share no stage (one is NVIDIA, the other AMD).")
        return
    labels = {s: f"{STAGE_TITLES.get(s, s)} (+{d.stages[s].added} −{d.stages[s].removed})" for s in stages}
    default = "ptx" if "ptx" in stages else stages[-1]
    stage = st.segmented_control("Stage", stages, default=default, format_func=labels.get,
                                 key=f"w.diff.stage.{name_a}.{name_b}") or default
    sd = d.stages[stage]
    rows = "" if sd.identical else _hunk_rows(f"{a.cache_key}|{b.cache_key}|{stage}", tuple(sd.hunks))
    pane = Pane("diff", f"{STAGE_TITLES.get(stage, stage)}: A → B", f"+{sd.added} −{sd.removed} lines", "diff", rows,
                "Identical once registers and SSA names are renumbered.")
    st.iframe(panes_document([pane], {}, storage_key="tki:diff"), height=DIFF_HEIGHT)
    if d.mix.get(stage):
        moved = {c: ab for c, ab in d.mix[stage].items() if ab[0] != ab[1]}
        if moved:
            st.caption("Instruction mix: " + ", ".join(f"{c} {x} → {y}" for c, (x, y) in sorted(moved.items())))
