"""The web app's panels and the state behind them (`app.py` lays them out).

Streamlit panels, each a function taking plain records:
    workbench (the editor beside one to three stage panes: one custom component, built from
    frontend/ into frontend/dist/; linking, markers and Share run in the browser), sidebar (pick:
    kernel, new kernel, upload, open by path or module, rename, target, options; call: kernel
    function, autotune config, argument overrides), editor (where the text is saved, other-tab
    notices), history_panel (the file's saved versions, restore), error_view (with the form for
    missing values), resources_panel (the line above the workbench), stages_panel (the panes'
    rows and line maps), occupancy_panel (what-if), insight_panel, autotune_panel, diff_panel,
    bench_panel, downloads, sandbox_banner (loud when compiles are not isolated).
Session and server plumbing: state (workspace key, settings, record, URL, shared links),
compiling (thread pool, live status, cancel), targets (native GPU, buildable targets).
No Streamlit inside: settings (a view and its URL form, the shared-link text), workspace (each
user's files and their history; the folders files may be opened from), markers (the verdicts
drawn in the gutters), panes (the diff's panes document; static/panes.js and panes.css),
occupancy_plots (plotly figures), linking (line maps from inspector.analysis).
"""
