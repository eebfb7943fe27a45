"""The autotune grid: every config of an autotuned kernel compiled (in parallel), in a sortable
table of registers, spills, shared memory and occupancy; pick two rows to diff them. With a GPU
here, every config is also timed (one after another, at the file's largest benchmark size, its
autotuner pinned to that config) and the table gains a time column."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import streamlit as st

from inspector.record import InspectRequest, Inspection
from inspector.ui import compiling, state, target_picker
from inspector.ui.autotune_grid import grid_rows, time_configs
from inspector.ui.diff_view import diff_view

GRIDS = "autotune_grids"  # session state: grid key -> list of records
TIMES = "autotune_times"  # session state: grid key -> {"times": {config: ms or why not}, "label": ...}


def _grid_key(path, request: InspectRequest) -> str:
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        digest = ""
    body = {k: v for k, v in request.to_dict().items() if k != "autotune_index"}
    return digest + json.dumps(body, sort_keys=True, default=str)


def autotune_panel(rec: Inspection) -> None:
    """The grid for the current kernel (compiled on request)."""
    n = len(rec.autotune_configs)
    if not n:
        st.info(f"`{rec.kernel}` is not autotuned: there is one configuration, shown in the other views.")
        return
    kf = state.current_kernel()
    path = state.workspace_of_session().source_path(kf)
    request = state.settings().request(str(path), passes=False)
    key = _grid_key(path, request)
    grids: dict[str, list[Inspection]] = st.session_state.setdefault(GRIDS, {})
    if compiling.take_cancelled("grid") is not None:
        st.warning("The grid's compile was cancelled.")
    if st.button(f"Compile all {n} configs", type="primary", key="w.grid.compile"):
        bar = st.progress(0.0, text=f"0 of {n} configs compiled")
        records = compiling.compile_many(
            [dataclasses.replace(request, autotune_index=i) for i in range(n)],
            progress=lambda done, total: bar.progress(done / total, text=f"{done} of {total} configs compiled"))
        bar.empty()
        grids[key] = records
    records = grids.get(key)
    if not records:
        st.caption(f"{n} configs; each compiles in its own worker process, all at once.")
        return
    times = st.session_state.setdefault(TIMES, {}).get(key)
    if target_picker.native().get("available"):
        if st.button("Time every config on this GPU", key="w.grid.time"):
            bar = st.progress(0.0, text="timing config 0")
            got, label = time_configs(path, n, lambda done, total: bar.progress(
                done / total, text=f"{done} of {total} configs timed"))
            bar.empty()
            times = st.session_state[TIMES][key] = {"times": got, "label": label}
        if times:
            st.caption(f"Times: median of `do_bench` on {times['label']}, each config pinned in turn.")
    else:
        st.caption("No GPU here: configs can be compiled and compared, not timed.")
    st.caption("Click a column to sort; tick two rows to diff them.")
    event = st.dataframe(grid_rows(records, times["times"] if times else None), hide_index=True, on_select="rerun", selection_mode="multi-row",
                         key="w.grid.table", width="stretch")
    chosen = list(event.selection.rows) if event is not None else []
    if len(chosen) == 2:
        a, b = sorted(chosen)
        diff_view(records[a], records[b], f"config {a}", f"config {b}")
    elif len(chosen) > 2:
        st.caption("Pick exactly two rows to diff.")
