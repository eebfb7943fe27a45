"""Driving the app in-process with Streamlit's AppTest, for tests in any folder."""

from __future__ import annotations

from paths import REPO
from streamlit.testing.v1 import AppTest

APP = str(REPO / "inspector" / "ui" / "page.py")  # app.py serves it as an st.App
TIMEOUT = 240  # a cold compile on a loaded CI machine


def open_app(query: dict[str, str] | None = None, timeout: float = TIMEOUT) -> AppTest:
    """The page, run once (with `query` as its URL parameters); no exception allowed."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    if query:
        at.query_params.update(query)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def autosave(at: AppTest, kernel_id: str, text: str):
    """What the editor's autosave does for this session (inspector.ui.workbench.handle): the text
    saved to its workspace as a new version, and remembered as the text this tab shows (which is
    what Compile compiles). Returns the workspace's SaveResult."""
    from inspector.ui import state, workspace

    ws = workspace.Workspace(at.session_state[state.WORKSPACE])
    result = ws.save_source(ws.find(kernel_id), text, base=at.session_state[state.EDITOR_BASE])
    at.session_state[state.EDITOR_SEED] = text
    at.session_state[state.EDITOR_BASE] = workspace.text_digest(text)
    return result
