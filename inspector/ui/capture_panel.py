"""The app's side of captures: open a capture file (or a tritonparse trace) by upload or with
`streamlit run app.py -- --capture FILE`, see its kernels by launches (and GPU time when the run
measured it), and open one: its standalone file (the kernel, its helpers and an `example()` that
makes the captured launch) goes into the user's workspace as a file of its own and is compiled
like any other kernel there, so every stage, resources, occupancy and insight follow, for any
target, and the text is theirs to edit.

Drawn in the sidebar by `capture_panel()`; it keeps the loaded capture in the session only.
"""

from __future__ import annotations

import sys

import streamlit as st

from inspector.capture import Capture, CaptureFileError, load, loads
from inspector.capture.reopen import file_name, specialisation_index
from inspector.capture.table import find, rows

CAPTURE = "capture.loaded"  # session key: the Capture this session has open
CAPTURE_ERROR = "capture.error"
MAX_CAPTURE_BYTES = 64 << 20


def capture_argument(argv: list[str] | None = None) -> str | None:
    """FILE from `streamlit run app.py -- --capture FILE` (or `--capture=FILE`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    for i, a in enumerate(args):
        if a == "--capture" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--capture="):
            return a.split("=", 1)[1]
    return None


def _on_upload() -> None:
    ss = st.session_state
    up = ss.get("capture.upload")
    if up is None:
        return
    data = up.getvalue()
    try:
        if len(data) > MAX_CAPTURE_BYTES:
            raise CaptureFileError(f"{up.name}: larger than {MAX_CAPTURE_BYTES >> 20} MiB")
        ss[CAPTURE] = loads(data, name=up.name)
        ss.pop(CAPTURE_ERROR, None)
    except CaptureFileError as e:
        ss[CAPTURE_ERROR] = str(e)


def _open(cap: Capture, spec: str) -> None:
    """Put the kernel's standalone file in the workspace and make it the open kernel."""
    from inspector.ui import state
    from inspector.ui.editor import save_pending

    entry = find(cap, spec)
    save_pending()
    ws = state.workspace_of_session()
    kf = ws.add_upload(file_name(entry, specialisation_index(cap, entry)), entry.reproducer.encode())
    state.switch_kernel(kf.id)


def capture_panel() -> None:
    """The sidebar's Capture section: load a capture, its kernel table, open a kernel."""
    ss = st.session_state
    if CAPTURE not in ss and not ss.get("capture.argv_done"):
        ss["capture.argv_done"] = True  # the command line's file, once per session
        path = capture_argument()
        if path:
            try:
                ss[CAPTURE] = load(path)
            except CaptureFileError as e:
                ss[CAPTURE_ERROR] = str(e)
    cap: Capture | None = ss.get(CAPTURE)
    with st.expander("Captured run", expanded=cap is not None):
        st.file_uploader(
            "Open a capture or a tritonparse trace",
            type=["inspector", "ndjson", "gz", "json"],
            key="capture.upload",
            on_change=_on_upload,
            help="python -m inspector capture -o run.inspector -- python train.py",
        )
        if ss.get(CAPTURE_ERROR):
            st.error(ss[CAPTURE_ERROR])
        if cap is None:
            st.caption("No capture open.")
            return
        launches = sum(k.launches for k in cap.kernels)
        st.caption(
            f"{len(cap.kernels)} kernels, {launches} launches; {cap.mode} run"
            + (f" on {cap.device}" if cap.device else "")
            + (f", Triton {cap.triton_version}" if cap.triton_version else "")
        )
        table = rows(cap)
        columns = (
            ["kernel", "launches"] + (["time_ms"] if cap.timed else []) + ["kind", "grid", "specialisation"]
        )
        st.dataframe([{c: r.get(c) for c in columns} for r in table], hide_index=True, key="capture.table")
        choice = st.selectbox("Kernel", [r["kernel"] for r in table], key="capture.pick")
        if choice is None:
            return
        entry = find(cap, choice)
        st.caption(f"{entry.file}:{entry.line}" if entry.file else entry.module)
        for note in entry.notes:
            st.caption(note)
        if entry.reproducer:
            st.button(
                "Open and edit",
                key="capture.open",
                on_click=_open,
                args=(cap, choice),
                help="a standalone copy (the kernel and an example() making the captured launch) goes into "
                "your workspace and compiles for the target you pick",
            )
        else:
            st.warning("The capture holds no standalone file for this kernel.")
