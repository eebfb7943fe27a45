"""History: every saved version of the open file (newest first), to read, compare with the
current text, and restore. Restoring writes that text as a new version; nothing is deleted."""

from __future__ import annotations

import difflib
import time

import streamlit as st

from inspector.ui import state, workspace
from inspector.ui.state import RESTORED

SHOWN = 200  # versions offered in the list (all are kept on disk, up to the workspace's cap)
BOX = "history-box"  # the expander's key; its session state is whether it is open


def version_label(v: workspace.Version, current_digest: str) -> str:
    """"#12 · 14:03:21 · 1.2 KB · current"."""
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(v.time))
    size = f"{v.size} B" if v.size < 1024 else f"{v.size / 1024:.1f} KB"
    return f"#{v.number} · {when} · {size}" + (" · current" if v.digest == current_digest[:16] else "")


def _restore(kernel_id: str, number: int) -> None:
    """on_click: make version `number` the current text, reload the editor, compile."""
    from inspector.ui.workbench import save_pending

    ss = st.session_state
    save_pending()  # what was typed just before the click is a version too
    ws = state.workspace_of_session()
    kf = state.current_kernel()
    if kf.id != kernel_id:
        return
    version = next((v for v in ws.history(kf) if v.number == number), None)
    if version is None:
        ss[RESTORED] = None
        return
    ws.restore(kf, version, base=ss.get(state.EDITOR_BASE))
    state.load_editor()
    state.request_compile()
    ss[RESTORED] = number


def history_panel(ws: workspace.Workspace, kf: workspace.KernelFile) -> None:
    """The History expander under the editor."""
    ss = st.session_state
    versions = ws.history(kf)
    box = st.expander("History", icon=":material/history:", key=BOX, on_change="rerun")
    with box:
        if not box.open:  # drawn only when open: the editor reruns this on every pause in typing
            return
        restored = ss.get(RESTORED, False)  # kept through the compile's rerun; the next save clears it
        if restored:
            st.success(f"Restored version {restored} as a new version (#{versions[0].number if versions else '?'}).")
        elif restored is None:
            st.warning("That version is no longer kept.")
        if not versions:
            st.caption("No saved versions yet: each pause in typing that changes the text saves one, "
                       "and every version is kept (the bundled file is never written).")
            return
        current = ws.current_digest(kf)
        by_number = {v.number: v for v in versions[:SHOWN]}
        st.caption(f"{len(versions)} saved version{'' if len(versions) == 1 else 's'} of `{kf.file_name}`" +
                   (f" (the newest {SHOWN} listed)" if len(versions) > SHOWN else "") +
                   f"; each workspace keeps {workspace.HISTORY_LIMIT_BYTES // 2**20} MiB of history, "
                   "dropping the oldest versions beyond that.")
        key = f"w.history.{kf.id}"
        if ss.get(key) not in by_number:
            ss[key] = versions[0].number
        number = st.selectbox("Version", list(by_number), key=key,
                              format_func=lambda n: version_label(by_number[n], current))
        version = by_number[number]
        try:
            text = version.read()
        except OSError:
            st.warning("That version is no longer kept.")
            return
        mode = st.segmented_control("Show", ["Text", "Changes to the current text"], default="Text",
                                    key=f"w.history.mode.{kf.id}", label_visibility="collapsed")
        if mode == "Changes to the current text":
            diff = "".join(difflib.unified_diff(text.splitlines(keepends=True),
                                                ws.read_source(kf).splitlines(keepends=True),
                                                f"version {version.number}", "current"))
            st.code(diff or "(the same text)", language="diff")
        else:
            st.code(text, language="python", line_numbers=True, height=320)
        st.button(f"Restore version {version.number}", key=f"w.history.restore.{kf.id}", on_click=_restore,
                  args=(kf.id, version.number), disabled=version.digest == current[:16],
                  help="Makes this text the current one, as a new version; no version is deleted.")
