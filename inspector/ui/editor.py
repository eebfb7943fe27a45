"""The kernel editor: Ace (streamlit-code-editor, bundled in its wheel, nothing fetched at run time)
with Python highlighting and line numbers; every pause in typing saves the text to the workspace.

Why it is built this way:
- It runs in a fragment, so a save reruns only the editor, not the page.
- A mounted editor keeps its own text: the component reads its `code` argument only when it
  mounts (its `allow_reset` stays off), so the autosaved text sent back on a rerun, possibly
  older than what was typed since, never overwrites a keystroke. The argument is still kept
  equal to the last saved text, because a browser reload may reattach to this same session and
  mount a fresh editor from it. Opening another kernel, reverting or uploading bumps the key.
- Ctrl+Enter (the component's "submit") saves the text it carries, then compiles: the file is on
  disk before the compile starts, and a failed compile never touches it.
- The component's theme is forced to Ace's `chrome` (loaded from the component's own files): its
  "streamlit" themes import a web font from Google at run time, and its bundled `textmate` theme
  has no style sheet.
"""

from __future__ import annotations

import streamlit as st
from code_editor import code_editor

from inspector.ui import state, workspace

LAST_EVENT = "editor_last_event"
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
        workspace.save_source(state.current_kernel(), text)
        ss[state.EDITOR_SEED] = text
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
    kf = state.current_kernel()
    event = code_editor(
        ss[state.EDITOR_SEED], lang="python", height=[12, 24], response_mode=["debounce", "blur"],
        options=EDITOR_OPTIONS, props={"theme": "chrome", "debounceChangePeriod": DEBOUNCE_MS}, key=editor_key(),
    )
    if _save(event) and event.get("type") == "submit":
        state.request_compile()
        st.rerun(scope="app")
    where = workspace.source_path(kf)
    note = ("your edited copy" if workspace.is_edited(kf) else
            "the bundled file (your first edit makes a copy)" if kf.is_bundled else "your file")
    st.caption(f"`{kf.file_name}` · {note} · saved as you type to `{where}` · Ctrl+Enter compiles")
