"""The whole diff of two inspections, drawn (`inspector.analysis.diff_inspections`): what changed
in the settings, resources and occupancy, which loads and stores changed width, the instruction
mix, and any stage's text (renumbered registers and SSA names ignored), highlighted. Used by the
Diff tab (a pinned compile, or another Triton release) and the autotune grid (two configs).
"""

from __future__ import annotations

import streamlit as st

from inspector.analysis import AccessChange, InspectionDiff, SharedChange, diff_inspections
from inspector.analysis.words import number_words, percent_words
from inspector.occupancy.words import limiter_words
from inspector.record import STAGE_TITLES, Inspection
from inspector.highlight import render_rows
from inspector.ui.panes import Pane, panes_document
from inspector.ui.resources_panel import kib

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
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "–"
    return str(value)


def change_rows(d: InspectionDiff) -> list[dict[str, str]]:
    """Settings, resources and occupancy in words, changed ones first. The limiter reads as the
    header says it ("nothing" at full occupancy)."""
    full = next((c for c in d.occupancy if c.name == "occupancy"), None)
    rows = []
    for c in [*d.settings, *d.resources, *d.occupancy]:
        if c.name == "limiters":
            a = limiter_words(full.a if full else None, c.a)
            b = limiter_words(full.b if full else None, c.b)
        else:
            a, b = value_words(c.name, c.a), value_words(c.name, c.b)
        rows.append({"": FIELD_WORDS.get(c.name, c.name), "A": a, "B": b, "changed": "●" if a != b else ""})
    return sorted(rows, key=lambda r: r["changed"] != "●")


def _pair(a: str, b: str) -> str:
    """One cell of both sides: the value once where they agree, else "A → B"."""
    return a if a == b else f"{a} → {b}"


def _sectors(f: dict) -> str:
    if not f or f.get("sectors_per_request") is None:
        return "–"
    return f"{number_words(f['sectors_per_request'])} (ideal {number_words(f.get('ideal_sectors_per_request'))})"


def _access_row(m: AccessChange) -> dict[str, str]:
    fa, fb = m.a_figures, m.b_figures
    width = _pair(*(f"{number_words(f.get('width_bits'))} bits" if f.get("width_bits") else "–" for f in (fa, fb)))
    return {"line": str(m.line_b if m.line_b is not None else m.line_a),
            "access": f"{m.op.replace('tt.', '')} {m.pointer or ''}".strip(),
            "verdict": _pair(m.a or "absent", m.b or "absent"), "width": width,
            "sectors / request": _pair(_sectors(fa), _sectors(fb)),
            "bytes used": _pair(percent_words(fa.get("sector_efficiency")), percent_words(fb.get("sector_efficiency"))),
            "shared wavefronts / request": "", "changed": "●" if m.changed else ""}


def _shared_row(c: SharedChange) -> dict[str, str]:
    def side(w, ideal, present, note):
        if not present:
            return "not modelled" if note else "absent"
        return f"{number_words(w)} (ideal {number_words(ideal)})"

    return {"line": str(c.line_b if c.line_b is not None else c.line_a), "access": f"shared {c.kind}",
            "verdict": "", "width": "", "sectors / request": "", "bytes used": "",
            "shared wavefronts / request": _pair(side(c.a_wavefronts, c.a_ideal, c.line_a is not None, c.a_note),
                                                 side(c.b_wavefronts, c.b_ideal, c.line_b is not None, c.b_note)),
            "changed": "●" if c.changed else ""}


def markdown_table(rows: list[dict[str, str]]) -> str:
    """Rows as a Markdown table, leaving out the columns no row fills."""
    cols = [c for c in rows[0] if any(r[c] for r in rows)]

    def cell(v: str) -> str:
        return v.replace("|", "\\|") or " "

    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(lines)


def access_rows(d: InspectionDiff) -> list[dict[str, str]]:
    """One row per memory access of either side: its verdict, width, sectors per warp request and
    share of moved bytes used (global), or wavefronts per request (shared), "A → B" where they
    differ; changed rows first, then by line."""
    rows = [*(_access_row(m) for m in d.memory), *(_shared_row(c) for c in d.shared)]
    return sorted(rows, key=lambda r: (r["changed"] != "●", int(r["line"]) if r["line"].isdigit() else 0))


@st.cache_data(max_entries=16, show_spinner=False)
def _hunk_rows(key: str, _hunks: tuple[str, ...]) -> str:
    return render_rows("\n".join(_hunks), "diff", "diff")


def diff_view(a: Inspection, b: Inspection, name_a: str = "A", name_b: str = "B") -> None:
    """The whole diff of two records."""
    d = diff_inspections(a, b)
    st.markdown(f"**A** = {name_a}: {_label(a)}  \n**B** = {name_b}: {_label(b)}")
    st.dataframe(change_rows(d), hide_index=True, width="stretch", key=f"w.diff.table.{name_a}.{name_b}")
    rows = access_rows(d)
    if rows:
        st.markdown("**Memory accesses**, A → B where they differ")
        st.markdown(markdown_table(rows))  # real text (a data grid is a canvas): findable, copyable
        for m in d.memory:
            if m.changed and m.b_reasons:
                st.caption(f"Line {m.line_b or m.line_a}, {m.op.replace('tt.', '')} {m.pointer or ''}: "
                           + "; ".join(m.b_reasons))
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
