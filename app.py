"""Triton Kernel Inspector, the web app: `streamlit run app.py`.

Page config, routing and layout only. Each panel is a function in `inspector/ui/` that takes
plain records; compiling goes through `inspector.compile.api.inspect_kernel`, which runs the user's file
in a sandboxed worker process, never in this server.
"""

from __future__ import annotations

import streamlit as st

from inspector.ui import state, targets
from inspector.ui.autotune_panel import autotune_panel
from inspector.ui.bench_panel import bench_panel
from inspector.ui.compiling import compile_with_status, take_cancelled
from inspector.ui.diff_panel import diff_panel
from inspector.ui.downloads import downloads
from inspector.ui.editor import editor
from inspector.ui.error_view import show_error
from inspector.ui.insight_panel import insight_panel
from inspector.ui.occupancy_panel import occupancy_panel
from inspector.ui.resources_panel import resources_card
from inspector.ui.sandbox_banner import sandbox_banner, sandbox_note
from inspector.ui.settings import VIEWS
from inspector.ui.sidebar import call, pick
from inspector.ui.stages_panel import stages_panel

VIEW_TITLES = {"stages": "Stages", "occupancy": "Occupancy", "insight": "Insight", "autotune": "Autotune grid",
               "diff": "Diff", "benchmarks": "Benchmarks"}
PANELS = {"stages": stages_panel, "occupancy": occupancy_panel, "insight": insight_panel, "autotune": autotune_panel,
          "diff": diff_panel, "benchmarks": bench_panel}

st.set_page_config(page_title="Triton Kernel Inspector", layout="wide")
targets.start_probe()
state.init(targets.default_target)
ss = st.session_state
sandbox_banner()

with st.sidebar:
    st.subheader("Triton Kernel Inspector")
    pick()

kf = state.current_kernel()
with st.expander(f"Source: {kf.file_name}", expanded=True, key="editor-box"):
    editor()

if ss[state.WANT_COMPILE]:
    ss[state.WANT_COMPILE] = False
    s = state.settings()
    state.remember(compile_with_status(state.workspace_of_session().source_path(kf), s.request(),
                                       f"{kf.file_name} for {targets.label(s.target)}"))
cancelled = take_cancelled()
if cancelled is not None:
    state.remember(cancelled)
rec = state.record()

with st.sidebar:
    call(rec)
    sandbox_note()

if rec is not None:
    show_error(rec)
shown = state.shown_record()
if shown is not None:
    if shown is not rec:
        st.caption(f"Showing the last successful compile of `{shown.kernel}` for `{shown.target}`.")
    resources_card(shown)
    ss["w.view"] = state.settings().view
    view = st.segmented_control("View", VIEWS, key="w.view", format_func=VIEW_TITLES.get, required=True,
                                on_change=state.set_setting, args=("w.view", "view", None, False),
                                label_visibility="collapsed")
    PANELS[view or VIEWS[0]](shown)

with st.expander("Downloads"):
    downloads(shown, state.workspace_of_session(), kf)
state.sync_url()
