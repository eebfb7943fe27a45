"""Insight: the advisor's findings, the memory-access table (128-bit or not, and why), the
instruction mix, and the TTGIR layouts in words; everything from `inspector.analysis`.

A finding or a table row with a source line links to it: the editor above selects that line
selected (and the lines it became highlighted in every pane).
"""

from __future__ import annotations

import html

import streamlit as st

from inspector.analysis import explain
from inspector.analysis.layouts import LayoutReport
from inspector.analysis.memory import MemoryReport
from inspector.analysis.mix import InstructionMix
from inspector.analysis.words import number_words, percent_words
from inspector.analysis.partitions import partitions, register_moves
from inspector.record import SEVERITIES, STAGE_TITLES, Inspection
from inspector.ui import state
from inspector.ui.markers import SHARED_KIND_WORDS, finding_icon

# The findings' icons on the gutter's scale (markers.SCALE_ICONS: orange costs speed, red only stops the kernel).
SEVERITY_ICONS = {s: finding_icon(s) for s in SEVERITIES}
VERDICT_WORDS = {"vectorised": "128-bit", "partial": "partly vectorised", "scalar": "scalar",
                 "tma": "TMA (bulk copy)", "none": "–"}


def _show_line(line: int) -> None:
    """on_click: select this source line in the editor (and the lines it became in the panes)."""
    st.session_state[state.FOCUS] = {"pane": "source", "line": int(line)}


def _line_button(line: int | None, key: str) -> None:
    if line:
        st.button(f"Show line {line}", key=key, on_click=_show_line, args=(line,), type="tertiary",
                  icon=":material/north_east:")


def findings(rec: Inspection, items) -> None:
    from inspector.ui.fix_panel import applied_notice, try_fixes_button

    st.markdown("##### Advisor")
    applied_notice()
    if not items:
        st.caption("Nothing to point out for this kernel on this target.")
    for i, f in enumerate(items):
        with st.container(border=True):
            c1, c2 = st.columns([6, 1])
            c1.markdown(f"{SEVERITY_ICONS.get(f.severity, '')} **{f.title}**")
            with c2:
                _line_button(f.line, f"w.finding.{i}")
            if f.evidence:
                c1.caption(" · ".join(f.evidence))
            if f.suggestion:
                c1.markdown(f.suggestion)
            if f.severity != "info" and rec.cache_key:
                try_fixes_button(rec, i)


def sector_words(a) -> str:
    """`32 (ideal 4)`, `uniform`, `TMA`, `4-32 (data)` or empty."""
    cz = a.coalescing
    if a.uniform:
        return "uniform"
    if cz is None:
        return ""
    if cz.status == "tma":
        return "TMA"
    if cz.sectors_range:
        return f"{number_words(cz.sectors_range[0])}-{number_words(cz.sectors_range[1])} (data)"
    if cz.sectors_per_request is None:
        return ""
    return f"{number_words(cz.sectors_per_request)} (ideal {number_words(cz.ideal_sectors_per_request)})"


def memory_table(rec: Inspection, report: MemoryReport) -> None:
    st.markdown("##### Memory accesses")
    if not report.accesses:
        st.caption("No loads or stores.")
        return
    rows = [{
        "line": a.line, "op": a.op.replace("tt.", ""), "pointer": a.pointer or "", "dtype": a.dtype,
        "masked": a.masked, "access": VERDICT_WORDS.get(a.verdict, a.verdict),
        "bits/thread": number_words(a.width_bits), "sectors/request": sector_words(a) or "–",
        "efficiency": "–" if a.uniform else percent_words(a.sector_efficiency),
        "as": ", ".join(a.lowered_as), "layout": a.layout or "",
        "why": "; ".join(a.causes or a.reasons) or (a.coalescing.note if a.coalescing else a.summary),
    } for a in report.accesses]
    event = st.dataframe(rows, hide_index=True, width="stretch", on_select="rerun",
                         selection_mode="single-row", key="w.memory.table",
                         column_config={"why": st.column_config.TextColumn(width="large"),
                                        "efficiency": st.column_config.TextColumn(
                                            "sector use",
                                            help="bytes a warp's request uses / bytes of the sectors it touches"),
                                        "sectors/request": st.column_config.TextColumn(
                                            help="32-byte sectors (AMD: cache lines) one warp's request touches, "
                                                 "and the fewest that hold its bytes")})
    picked = list(event.selection.rows) if event is not None else []
    if picked:
        _line_button(report.accesses[picked[0]].line, "w.memory.show")
    else:
        st.caption(f"Verdicts read from the {STAGE_TITLES.get(report.main_stage or '', report.main_stage)}; "
                   "select a row to jump to its line.")
    shared_table(report)
    if report.spills:
        st.warning(f"Local memory (spills): {report.spill_bytes} bytes per thread, at lines "
                   + ", ".join(str(s.line) for s in report.spills))


def shared_table(report: MemoryReport) -> None:
    """Shared memory per line and kind: wavefronts per request against the ideal, and why."""
    if report.shared_note and not report.shared:
        st.caption(report.shared_note)
    if not report.shared:
        return
    st.markdown("##### Shared memory")
    rows = [{
        "line": s.line, "kind": SHARED_KIND_WORDS.get(s.kind, s.kind), "instructions": s.instructions,
        "bytes/thread": s.bytes_per_thread,
        "wavefronts/request": number_words(s.shared_wavefronts), "ideal": number_words(s.ideal_shared_wavefronts),
        "conflict": "" if s.bank_conflict_ways is None else (f"{s.bank_conflict_ways}-way" if s.conflicted else "none"),
        "from": "; ".join(s.ops), "why": s.cause or ("address not modelled" if s.shared_wavefronts is None else ""),
    } for s in report.shared]
    event = st.dataframe(rows, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key="w.shared.table",
                         column_config={"why": st.column_config.TextColumn(width="large"),
                                        "wavefronts/request": st.column_config.TextColumn(
                                            help="128-byte shared-memory wavefronts one warp's instruction takes "
                                                 "(the mean over the line's instructions); Nsight Compute's "
                                                 "L1 Wavefronts Shared per request")})
    picked = list(event.selection.rows) if event is not None else []
    if picked:
        _line_button(report.shared[picked[0]].line, "w.shared.show")
    else:
        st.caption("From each lane's address in the PTX, by the bank rules Nsight Compute counts "
                   "(docs/shared-memory.md); select a row to jump to its line.")


# The instruction classes (inspector.analysis.instructions.CLASSES) as the page says them.
CLASS_WORDS = {
    "global_load": "global loads", "global_store": "global stores", "global_atomic": "global atomics",
    "shared_load": "shared loads", "shared_store": "shared stores", "shared_atomic": "shared atomics",
    "local_load": "local loads", "local_store": "local stores", "async_copy": "async copies", "tma": "TMA",
    "tensor_core": "tensor core", "fp": "floating point", "int": "integer", "special": "special functions",
    "conversion": "conversions", "shuffle": "shuffles", "barrier": "barriers", "branch": "branches",
    "move": "moves", "constant": "constants", "layout": "layout", "shape": "shape", "reduce": "reductions",
    "other": "other",
}


def mix_bars_html(counts: list[tuple[str, int]]) -> str:
    """Horizontal bars, one per instruction class, as plain HTML: drawn with the page, no chart
    library to load (a plotly chart here held the browser's main thread and delayed the first
    result: docs/performance.md#small-steps-of-an-inspection)."""
    top = max((n for _, n in counts), default=0) or 1
    rows = "".join(
        f'<div style="display:flex;align-items:center;gap:8px;margin:2px 0">'
        f'<span style="width:9em;text-align:right;font-size:0.85em;color:#555">{html.escape(CLASS_WORDS.get(c, c))}</span>'
        f'<span style="background:#4e79d9;height:14px;width:{max(1.0, 100 * n / top):.1f}%;max-width:70%"></span>'
        f'<span style="font-size:0.85em">{n}</span></div>' for c, n in counts)
    return f'<div class="tki-mix">{rows}<div style="font-size:0.8em;color:#777;margin-top:4px">' \
           f'instructions (static count)</div></div>'


def instruction_mix(rec: Inspection, mix: InstructionMix) -> None:
    st.markdown("##### Instruction mix")
    stages = [s for s in rec.stage_names() if s in mix.stages and mix.stages[s].total]
    if not stages:
        return
    default = "sass" if "sass" in stages else ("amdgcn" if "amdgcn" in stages else stages[-1])
    stage = st.segmented_control("Stage", stages, default=default, format_func=lambda s: STAGE_TITLES.get(s, s),
                                 key="w.mix.stage", label_visibility="collapsed") or default
    sm = mix.stages[stage]
    counts = sorted(sm.counts.items(), key=lambda kv: -kv[1])
    c1, c2 = st.columns([3, 2])
    with c1:
        st.html(mix_bars_html(counts))
        if "sass" in rec.deferred:
            st.caption("SASS is disassembled when first asked for: show the SASS pane to make it.")
    per_line = sorted(sm.line_totals().items(), key=lambda kv: -kv[1])[:12]
    lines = rec.compiled_source.split("\n")
    c2.dataframe([{"line": ln, "instructions": n, "source": lines[ln - 1].strip() if 0 < ln <= len(lines) else ""}
                  for ln, n in per_line], hide_index=True, width="stretch")
    c2.caption(f"{sm.total} instructions; {sm.unattributed} with no source line.")


def layouts(rec: Inspection, report: LayoutReport) -> None:
    st.markdown("##### Layouts (TTGIR)")
    if not report.layouts:
        st.caption("No distributed layouts in this TTGIR.")
    for lay in report.layouts:
        with st.expander(f"`{lay.name}` · {lay.kind}" + (f" · lines {', '.join(map(str, lay.source_lines[:6]))}"
                                                         if lay.source_lines else "")):
            st.markdown(lay.explanation)
            st.code(lay.definition, language=None)
    if report.conversions:
        st.markdown(f"{len(report.conversions)} layout conversions, {report.through_shared} through shared memory, "
                    f"{report.in_loops} inside loops")
        st.dataframe([{"TTGIR line": c.line, "source lines": ", ".join(map(str, c.source_lines)), "from": c.src,
                       "to": c.dst, "shape": "×".join(map(str, c.shape)), "in loop": c.in_loop,
                       "lowered through": c.lowering, "evidence": c.evidence} for c in report.conversions],
                     hide_index=True, width="stretch")


def partitions_table(rec: Inspection) -> None:
    """A warp-specialised kernel's partitions: warps and registers per thread each asks for."""
    parts = partitions(rec.stages.get("ttgir", ""))
    if not parts:
        return
    st.markdown("##### Warp-specialised partitions (TTGIR)")
    st.dataframe([{"partition": p.name, "warps": p.warps,
                   "registers per thread": p.registers if p.registers is not None else "what the others leave"}
                  for p in parts], hide_index=True, width="stretch")
    moves = sorted({n for _, n in register_moves(rec.stages.get("ptx", ""))}, reverse=True)
    st.caption(f"The kernel launches with {rec.resources.registers} registers per thread for every thread of the "
               f"block; each partition then moves to its own figure with `setmaxnreg`"
               + (f" (the PTX's values: {', '.join(map(str, moves))})." if moves else "."))


def insight_panel(rec: Inspection) -> None:
    """Everything the analysis says about the shown record."""
    ex = explain(rec)
    findings(rec, ex.findings)
    partitions_table(rec)
    if ex.memory is not None:
        memory_table(rec, ex.memory)
    if ex.mix is not None:
        instruction_mix(rec, ex.mix)
    if ex.layouts is not None:
        layouts(rec, ex.layouts)
