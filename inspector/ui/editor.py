"""What goes with the editor (the editor itself is in the workbench, `inspector.ui.workbench`):
where the text is saved, notices when another tab changed the file, and the History list.

- Every pause in typing saves the text to the session's workspace (a new version in the file's
  history); Ctrl+Enter saves, then compiles: the file is on disk before the compile starts, and a
  failed compile never touches it.
- A bundled kernel is never written: the first edit makes the user's own copy in the workspace.
- Two tabs of one workspace may edit the same file: each save says whether the file still held the
  text this tab last saw; when another tab wrote in between, this tab's text still becomes the
  current one (the latest write wins, the other text stays in the history) and the page says so;
  a tab whose file changed under it is told, with a button to load the newer text.
"""

from __future__ import annotations

import streamlit as st

from inspector.ui import state
from inspector.ui.history_panel import history_panel

RERUN_APP = "editor_rerun_app"


def save_pending() -> None:
    """Save what the mounted editor sent last, if the script has not seen it yet."""
    from inspector.ui.workbench import save_pending as pending

    pending()


def editor_notes() -> None:
    """The save note, the other-tab notices and the History list of the current kernel."""
    ws = state.workspace_of_session()
    kf = state.current_kernel()
    _notices(ws, kf)
    where = ws.edit_path(kf)
    if kf.is_bundled:
        note = (f"your edited copy of the bundled example, kept in your workspace (`{where}`)" if ws.is_edited(kf)
                else "a bundled example: the file itself is never changed; your first edit becomes your own copy")
    else:
        origin = ws.origin_of(kf)
        note = ("your file" if where.exists() else "no longer in your workspace (renamed in another tab?): "
                "typing saves it again under this name") + f" (`{where}`)"
        if origin is not None:
            note += f", opened from `{origin}` and compiled as that file, inside its package"
    st.caption(f"`{kf.file_name}` · {note} · every version kept in History")
    history_panel(ws, kf)


def _load_current() -> None:
    state.load_editor()
    state.request_compile()


def _dismiss() -> None:
    st.session_state.pop(state.SAVE_NOTICE, None)


def _notices(ws, kf) -> None:
    """Tell this tab when another tab of its workspace changed the file."""
    ss = st.session_state
    notice = ss.get(state.SAVE_NOTICE)
    if notice and notice["kernel"] == kf.id:
        theirs = f"version {notice['replaced']}" if notice["replaced"] else "an earlier version"
        st.warning(f"`{kf.file_name}` had been changed in another tab since this one last saved it. Your text is "
                   f"now the current one; the other tab's text is kept as {theirs} in History below.",
                   icon=":material/sync_problem:")
        st.button("OK", key="w.notice.ok", on_click=_dismiss)
    elif ws.current_digest(kf) != ss.get(state.EDITOR_BASE):
        newest = ws.history(kf)
        when = f" (version {newest[0].number})" if newest else ""
        st.warning(f"`{kf.file_name}` was changed in another tab{when} since this editor loaded it. This editor "
                   "still shows your text, and typing here saves it as a new version; nothing is lost either way.",
                   icon=":material/sync_problem:")
        st.button("Load the newer text", key="w.notice.load", on_click=_load_current)
