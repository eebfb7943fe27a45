"""The kernel editor: Ace (streamlit-code-editor, bundled in its wheel, nothing fetched at run time)
with Python highlighting and line numbers; every pause in typing saves the text to the session's
workspace (a new version in the file's history), and the History list under it restores any.

Why it is built this way:
- It runs in a fragment, so a save reruns only the editor, not the page.
- A mounted editor keeps its own text: the component reads its `code` argument only when it
  mounts (its `allow_reset` stays off), so the autosaved text sent back on a rerun, possibly
  older than what was typed since, never overwrites a keystroke. The argument is still kept
  equal to the last saved text, because a browser reload may reattach to this same session and
  mount a fresh editor from it. Opening another kernel, reverting or uploading bumps the key.
- Ctrl+Enter (the component's "submit") saves the text it carries, then compiles: the file is on
  disk before the compile starts, and a failed compile never touches it.
- Two tabs of one workspace may edit the same file: each save says whether the file still held the
  text this tab last saw; when another tab wrote in between, this tab's text still becomes the
  current one (the latest write wins, the other text stays in the history) and the page says so;
  a tab whose file changed under it is told, with a button to load the newer text.
- The component's theme is forced to Ace's `chrome` (loaded from the component's own files): its
  "streamlit" themes import a web font from Google at run time, and its bundled `textmate` theme
  has no style sheet.
"""

from __future__ import annotations

import streamlit as st
from code_editor import code_editor

from inspector.ui import state
from inspector.ui.history_panel import history_panel

LAST_EVENT = "editor_last_event"
RERUN_APP = "editor_rerun_app"
DEBOUNCE_MS = 200  # a pause this long in typing saves the text
EDITOR_OPTIONS = {"showLineNumbers": True, "displayIndentGuides": True, "tabSize": 4, "useSoftTabs": True,
                  "fontSize": 13, "wrap": False}


def editor_key() -> str:
    """The mounted editor's component key (a new key mounts a new editor)."""
    return f"editor-{state.settings().kernel}-{st.session_state[state.EDITOR_GEN]}"


def _save(event: dict | None) -> bool:
    """Save the text an editor event carries, once per event; True for a new event."""
    ss = st.session_state
    if not event or not event.get("id") or event["id"] == ss.get(LAST_EVENT):
        return False
    ss[LAST_EVENT] = event["id"]
    if event.get("type") in ("change", "submit", "blur"):
        text = event.get("text", "")
        result = state.workspace_of_session().save_source(state.current_kernel(), text, base=ss.get(state.EDITOR_BASE))
        state.saved(text, result)
    return True


def save_pending() -> None:
    """Save what the mounted editor sent last, if the script has not seen it yet: called by the
    callbacks that replace the editor (another kernel, an upload), which run before the script,
    so a pause-less switch right after typing loses nothing."""
    _save(st.session_state.get(editor_key()))


@st.fragment
def editor() -> None:
    """The editor of the current kernel, with the autosave and Ctrl+Enter compile wiring."""
    ss = st.session_state
    if ss.pop(RERUN_APP, False):  # a restore or a load replaced the text: the whole page compiles it
        st.rerun(scope="app")
    kf = state.current_kernel()
    event = code_editor(
        ss[state.EDITOR_SEED], lang="python", height=[12, 24], response_mode=["debounce", "blur"],
        options=EDITOR_OPTIONS, props={"theme": "chrome", "debounceChangePeriod": DEBOUNCE_MS}, key=editor_key(),
    )
    if _save(event) and event.get("type") == "submit":
        state.request_compile()
        st.rerun(scope="app")

    ws = state.workspace_of_session()
    _notices(ws, kf)
    where = ws.edit_path(kf)
    note = ("your edited copy" if ws.is_edited(kf) else
            "the bundled file (your first edit makes a copy in your workspace)" if kf.is_bundled else
            "your file" if where.exists() else "no longer in your workspace (renamed in another tab?): "
            "typing saves it again under this name")
    st.caption(f"`{kf.file_name}` · {note} · saved as you type to `{where}`, every version kept · "
               "Ctrl+Enter compiles")
    history_panel(ws, kf)


def _load_current() -> None:
    state.load_editor()
    state.request_compile()
    st.session_state[RERUN_APP] = True


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
