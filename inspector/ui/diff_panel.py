"""The diff of two inspections: resources and occupancy side by side, then any stage diffed.

"A" is a compile the user pinned (or an autotune row); "B" is the current compile (or the
other row).
"""

from __future__ import annotations

import difflib
from typing import Any

import streamlit as st

from inspector.highlight import render_rows
from inspector.record import STAGE_TITLES, Inspection
from inspector.ui import state
from inspector.ui.panes import Pane, panes_document
from inspector.ui.resources_panel import card_figures

DIFF_HEIGHT = 520


def _label(rec: Inspection) -> str:
    opts = rec.options or {}
    return f"{rec.kernel} · {rec.target} · {opts.get('num_warps', '?')} warps · {opts.get('num_stages', '?')} stages"


def resource_rows(a: Inspection, b: Inspection) -> list[dict[str, Any]]:
    """Figure by figure: A, B, and whether it changed."""
    fa, fb = card_figures(a), card_figures(b)
    rows = [{"": k, "A": fa.get(k, "–"), "B": fb.get(k, "–"), "changed": "●" if fa.get(k) != fb.get(k) else ""}
            for k in dict.fromkeys([*fa, *fb])]
    for k in ("num_warps", "num_stages"):
        va, vb = a.options.get(k), b.options.get(k)
        rows.append({"": k, "A": str(va), "B": str(vb), "changed": "●" if va != vb else ""})
    return rows


@st.cache_data(max_entries=16, show_spinner=False)
def _diff_rows(key: str, _a: str, _b: str) -> tuple[str, int, int]:
    lines = list(difflib.unified_diff(_a.splitlines(), _b.splitlines(), "A", "B", lineterm="", n=3))
    added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
    removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
    return render_rows("\n".join(lines), "diff", "diff") if lines else "", added, removed


def diff_view(a: Inspection, b: Inspection, name_a: str = "A", name_b: str = "B") -> None:
    """Resources, then the unified diff of one stage (chosen below), of two records."""
    st.markdown(f"**A** = {name_a}: {_label(a)}  \n**B** = {name_b}: {_label(b)}")
    st.dataframe(resource_rows(a, b), hide_index=True, use_container_width=True)
    stages = [s for s in ["source", *b.stage_names()] if s == "source" or s in a.stages]
    stage = st.segmented_control("Stage", stages, default="ptx" if "ptx" in stages else stages[-1],
                                 format_func=lambda s: STAGE_TITLES.get(s, s), key=f"w.diff.stage.{name_a}.{name_b}")
    stage = stage or stages[-1]
    text_a = a.source if stage == "source" else a.stages.get(stage, "")
    text_b = b.source if stage == "source" else b.stages.get(stage, "")
    rows, added, removed = _diff_rows(f"{a.cache_key}|{b.cache_key}|{stage}", text_a, text_b)
    meta = f"+{added} −{removed} lines"
    pane = Pane("diff", f"{STAGE_TITLES.get(stage, stage)}: A → B", meta, "diff", rows, "No difference.")
    st.iframe(panes_document([pane], {}, storage_key="tki:diff"), height=DIFF_HEIGHT)


def diff_panel(rec: Inspection) -> None:
    """Pin the current compile as A; diff it against whatever is compiled next."""
    pinned: Inspection | None = st.session_state.get(state.PIN)
    c1, c2 = st.columns([1, 3])
    if c1.button("Pin this compile as A", key="w.pin"):
        st.session_state[state.PIN] = pinned = rec
    if pinned is None:
        c2.caption("Pin a compile, change the source, target or options, compile again: the diff shows what "
                   "changed. The autotune grid diffs two configs the same way.")
        return
    if c2.button("Unpin", key="w.unpin"):
        st.session_state.pop(state.PIN, None)
        st.rerun()
    if pinned.cache_key == rec.cache_key:
        st.caption("A is the current compile: change something and compile to see a diff.")
    diff_view(pinned, rec, "pinned", "current")
