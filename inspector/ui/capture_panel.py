"""The app's side of captures: open a capture file (or a tritonparse trace) by upload or with
`streamlit run app.py -- --capture FILE`, see its kernels by launches (and GPU time when the run
measured it), and open one: its standalone file (the kernel, its helpers and an `example()` that
makes the captured launch) goes into the user's workspace as a file of its own and is compiled
like any other kernel there, so every stage, resources, occupancy and insight follow, for any
target, and the text is theirs to edit.

"Open by running" makes the capture itself: a command (a pytest node id, `pytest ...`, `python
script.py ...`) runs in a project folder the server opens, jailed (inspector.capture.by_running),
GPU-free under Triton's interpreter; what it launched appears here with its real arguments.

Drawn in the sidebar by `capture_panel()`; it keeps the loaded capture in the session only.
"""

from __future__ import annotations

import sys
from pathlib import Path

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


RUN_ERROR = "capture.run_error"


def project_folder(spec: str) -> Path:
    """The folder a command may run in: one of the folders this server opens (or inside one), as
    "Open by path" allows (`workspace.open_roots`); ValueError saying which otherwise."""
    from inspector.ui.workspace import OPEN_ROOTS_ENV, open_roots

    roots = open_roots()
    listed = ", ".join(str(r) for r in roots) or "(none)"
    p = Path(spec.strip() or ".").expanduser()
    real = (p if p.is_absolute() else (roots[0] / p if roots else p)).resolve()
    if not real.is_dir():
        raise ValueError(f"{spec}: no such folder")
    if not any(real == r or real.is_relative_to(r) for r in roots):
        raise ValueError(f"{spec} is outside the folders this server opens ({listed}); the operator can add one "
                         f"with ${OPEN_ROOTS_ENV}")
    return real


def _on_run() -> None:
    """Run the command in its project folder, jailed, and open what it launched as a capture."""
    from inspector.capture.by_running import run_program
    from inspector.ui import state

    ss = st.session_state
    ss.pop(RUN_ERROR, None)
    try:
        folder = project_folder(ss.get("capture.run_folder", ""))
        target = state.settings().target
        run = run_program(ss.get("capture.run_command", ""), target=target, cwd=folder, timeout=RUN_TIMEOUT,
                          jailed=True)
    except ValueError as e:
        ss[RUN_ERROR] = str(e)
        return
    if run.capture is None or not run.capture.kernels:
        ss[RUN_ERROR] = (f"The command ran (exit status {run.status}) and launched no Triton kernel. The end of "
                         f"its output:\n\n{run.output[-1500:]}")
        return
    ss[CAPTURE] = run.capture
    ss.pop(CAPTURE_ERROR, None)


RUN_TIMEOUT = 300  # seconds a command may run under the interpreter


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
    with st.expander("Open by running", expanded=bool(ss.get(RUN_ERROR))):
        st.text_input("Project folder", key="capture.run_folder",
                      help="a folder this server opens (TRITON_INSPECTOR_OPEN_ROOTS); the command runs there")
        st.text_input("Command", key="capture.run_command", placeholder="pytest tests/test_ops.py::test_x",
                      help="a pytest node id, `pytest ...` or `python script.py ...`: it runs GPU-free under "
                           "Triton's interpreter, in a sandbox, and every kernel it launches is recorded with "
                           "its real arguments; the kernels appear under Captured run")
        st.button("Run", key="capture.run", on_click=_on_run, icon=":material/play_arrow:")
        if ss.get(RUN_ERROR):
            st.error(ss[RUN_ERROR])
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
