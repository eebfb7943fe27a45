"""Download buttons: every stage, the JSON report (the whole record), and the edited source.

The data are callables, generated only when a button is clicked, so a rerun registers no files."""

from __future__ import annotations

import streamlit as st

from inspector.record import STAGE_TITLES, Inspection
from inspector.ui import workspace

EXTENSIONS = {"ttir": "ttir", "ttgir": "ttgir", "llir": "ll", "ptx": "ptx", "sass": "sass", "amdgcn": "amdgcn"}


def downloads(rec: Inspection | None, ws: workspace.Workspace, kf: workspace.KernelFile) -> None:
    """A row of download buttons; the source is always offered, the rest when compiled."""
    buttons: list[tuple[str, object, str, str]] = [
        ("Source", lambda: ws.read_source(kf), kf.file_name, "text/x-python")]
    if rec is not None:
        stem = f"{rec.kernel or 'kernel'}.{rec.target or 'target'}"
        for stage in rec.stage_names():
            text = rec.stages[stage]
            buttons.append((STAGE_TITLES.get(stage, stage), lambda t=text: t, f"{stem}.{EXTENSIONS.get(stage, stage)}",
                            "text/plain"))
        buttons.append(("JSON report", lambda: rec.to_json(indent=1), f"{stem}.json", "application/json"))
    cols = st.columns(len(buttons))
    for col, (label, data, name, mime) in zip(cols, buttons):
        col.download_button(label, data=data, file_name=name, mime=mime, on_click="ignore", icon=":material/download:",
                            key=f"dl.{label}")
