"""The web app's panels and the state behind them (`app.py` lays them out).

Streamlit panels, each a function taking plain records:
    sidebar (pick: kernel, new kernel, upload, rename, target, options; call: kernel function,
    autotune config, argument overrides), editor (Ace, autosave, Ctrl+Enter, other-tab notices),
    history_panel (the file's saved versions, restore), error_view, resources_panel (the card),
    stages_panel (linked panes), occupancy_panel (what-if), insight_panel, autotune_panel,
    diff_panel, bench_panel, downloads, sandbox_banner (loud when compiles are not isolated).
Session and server plumbing: state (workspace key, settings, record, URL), compiling (thread
pool, live status, cancel), targets (native GPU, buildable targets).
No Streamlit inside: settings (a view and its URL form), workspace (each user's files and their
history), panes (the linked panes document; static/panes.js and panes.css), occupancy_plots
(plotly figures), linking (line maps from inspector.analysis).
"""
