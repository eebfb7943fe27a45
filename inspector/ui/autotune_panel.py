"""The autotune grid: every config of an autotuned kernel compiled (in parallel), in a sortable
table of registers, spills, shared memory and occupancy; pick two rows to diff them."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import streamlit as st

from inspector.record import Inspection
from inspector.ui import compiling, state, workspace
from inspector.ui.diff_panel import diff_view
from inspector.ui.resources_panel import LIMITER_WORDS

GRIDS = "autotune_grids"  # session state: grid key -> list of records


def grid_rows(records: list[Inspection]) -> list[dict[str, Any]]:
    """One table row per config record (None where a figure is unknown)."""
    rows = []
    for i, rec in enumerate(records):
        at = rec.autotune_index if rec.autotune_index is not None else i
        cfg = rec.autotune_configs[at] if at < len(rec.autotune_configs) else {}
        meta = {k: v for k, v in cfg.items() if k not in ("num_warps", "num_stages", "num_ctas")}
        occ = rec.occupancy or {}
        r = rec.resources
        amd = rec.backend == "hip"
        rows.append({
            "config": i,
            "parameters": ", ".join(f"{k}={v}" for k, v in meta.items()),
            "num_warps": cfg.get("num_warps", r.num_warps or None),
            "num_stages": cfg.get("num_stages", r.num_stages or None),
            "registers": (r.vgprs if amd else r.registers) if rec.ok else None,
            "spills": ((r.vgpr_spills or 0) + (r.sgpr_spills or 0) if amd else r.spills) if rec.ok else None,
            "shared KiB": round(r.shared_bytes / 1024, 1) if rec.ok else None,
            "blocks/SM": occ.get("blocks_per_sm"),
            "occupancy %": round(100 * occ["occupancy"], 1) if "occupancy" in occ else None,
            "limited by": ", ".join(LIMITER_WORDS.get(x, x) for x in occ.get("limiters", [])) or None,
            "compile s": round(rec.compile_seconds, 2),
            "error": rec.error.short() if rec.error else "",
        })
    return rows


def _grid_key(path, request: dict[str, Any]) -> str:
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        digest = ""
    body = {k: v for k, v in request.items() if k != "autotune_index"}
    return digest + json.dumps(body, sort_keys=True, default=str)


def autotune_panel(rec: Inspection) -> None:
    """The grid for the current kernel (compiled on request)."""
    n = len(rec.autotune_configs)
    if not n:
        st.info(f"`{rec.kernel}` is not autotuned: there is one configuration, shown in the other views.")
        return
    kf = state.current_kernel()
    path = workspace.source_path(kf)
    request = state.settings().request()
    request["passes"] = False
    key = _grid_key(path, request)
    grids: dict[str, list[Inspection]] = st.session_state.setdefault(GRIDS, {})
    if st.button(f"Compile all {n} configs", type="primary", key="w.grid.compile"):
        bar = st.progress(0.0, text=f"0 of {n} configs compiled")
        records = compiling.compile_many(
            path, [{**request, "autotune_index": i} for i in range(n)],
            progress=lambda done, total: bar.progress(done / total, text=f"{done} of {total} configs compiled"))
        bar.empty()
        grids[key] = records
    records = grids.get(key)
    if not records:
        st.caption(f"{n} configs; each compiles in its own worker process, all at once.")
        return
    st.caption("Click a column to sort; tick two rows to diff them.")
    event = st.dataframe(grid_rows(records), hide_index=True, on_select="rerun", selection_mode="multi-row",
                         key="w.grid.table", use_container_width=True)
    chosen = list(event.selection.rows) if event is not None else []
    if len(chosen) == 2:
        a, b = sorted(chosen)
        diff_view(records[a], records[b], f"config {a}", f"config {b}")
    elif len(chosen) > 2:
        st.caption("Pick exactly two rows to diff.")
