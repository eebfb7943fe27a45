"""One browser session's state: its workspace key and the Settings (both from the URL on the
first run), the last inspection, the compile request flag, the editor's seed text and the digest
of the text it last saw on disk; and the URL written back.

The workspace key (`?ws=`) is the user's: a reload keeps it, a link with it opens the same
workspace (two tabs of one link share their files, and neither loses the other's text: see
`workspace`). The browser remembers its own workspace in a cookie (`COOKIE`, set by the page's
script: Streamlit cannot set one from Python), so the plain address and a share link opened later
lead back to the user's work; only a browser without one (or with a malformed one) gets a new key.
A `?ws=` link to another workspace opens it without changing the browser's own.

`Settings` in `st.session_state["settings"]` is the truth. Widgets write into it through their
on_change callbacks (`set_setting`), which run before the script, so a rerun always sees the
latest choices; every run ends by writing them back to the URL (`sync_url`).
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from inspector.record import Inspection
from inspector.ui import workspace
from inspector.ui.settings import Settings, shared_text

RESTORED = "history_restored"  # session state: the version number restored last (the History message)
FIX_APPLIED = "fix_applied"  # session state: the title of the candidate fix applied last (its notice)
SETTINGS = "settings"
RECORD = "record"
WANT_COMPILE = "want_compile"  # session state: compile at the end of this run (ON_OPENING: by itself, on opening)
ON_OPENING = "on opening"
HELD = "compile_held"  # session state: why the page did not compile on opening (a stopped compile)
COMPILING = "compiling_digest"  # session state: the compile in flight (`stopped.request_digest`)
EDITOR_GEN = "editor_gen"
EDITOR_SEED = "editor_seed"
EDITOR_BASE = "editor_base"  # text_digest of the text this session last loaded or saved
WORKSPACE = "workspace_key"
WS_PARAM = "ws"  # the URL parameter holding the workspace key
COOKIE = "triton_inspector_ws"  # the browser's own workspace key
COOKIE_SET = "workspace_cookie_set"  # session state: the browser had a valid cookie when this session began
FOCUS = "focus"  # {"pane": "source", "line": n}: a line the stage panes should select once
PIN = "pin"  # an Inspection kept as the diff's "A"
SAVE_NOTICE = "save_notice"  # {"kernel", "replaced": version number}: this tab saved over another's text
LAST_GOOD = "last_good"  # {kernel id: the last successful Inspection}, shown while an edit fails
FIX_REQUEST = "fix_request"  # (record key, finding index) a gutter mark's click asked fixes for
OVERRIDES_DROPPED = "overrides_dropped"  # notices of overrides a change of the file dropped (`overrides`)
SHARED_NOTICE = "shared_notice"  # what opening a shared link did (a new file's name, or why it could not)


def init(default_target: Callable[[], str]) -> None:
    """First run of a session: settings from the URL, the kernel's text from the workspace.

    A shared link (`src`, `name`: the text itself) opens as a new file of this session's
    workspace, under a name no file of it has: it never replaces the recipient's own work.

    `default_target()` asks the worker for the native GPU only on a machine with a GPU device
    node, so a GPU-free server paints its first page without waiting for the worker."""
    ss = st.session_state
    if SETTINGS in ss:
        return
    target = default_target()
    query = st.query_params.to_dict()
    key = query.get(WS_PARAM)
    own = browser_workspace()
    ss[WORKSPACE] = key if workspace.valid_key(key) else own or workspace.new_key()
    ss[COOKIE_SET] = own is not None
    settings = Settings.from_query(query, default_target=target)
    if query.get("src"):
        try:
            text = shared_text(str(query["src"]))
            kf = workspace_of_session().add_upload(str(query.get("name") or "shared.py"), text.encode("utf-8"))
            settings.kernel = kf.id
            ss[SHARED_NOTICE] = f"Opened the shared kernel as `{kf.file_name}`, a new file of your workspace."
        except ValueError as e:
            ss[SHARED_NOTICE] = f"The shared link could not be opened: {e}"
    if workspace_of_session().find(settings.kernel) is None:
        settings.kernel = Settings().kernel
    ss[SETTINGS] = settings
    ss[RECORD] = None
    # a link, or a reload, reopens the same view compiled (a repeat is a cache hit), unless that
    # compile was stopped before (`inspector/ui/stopped.py`)
    ss[WANT_COMPILE] = ON_OPENING
    ss[EDITOR_GEN] = 0
    load_editor()


def browser_workspace() -> str | None:
    """The workspace key this browser's cookie names, or None (no cookie, or not a key)."""
    try:
        key = st.context.cookies.get(COOKIE)
    except Exception:  # noqa: BLE001 - no browser behind this run (a script test)
        return None
    return key if workspace.valid_key(key) else None


def remember_workspace() -> None:
    """Write this session's workspace key into the browser's cookie where it had none (a year;
    the key is the workspace's only credential, as in the URL). Drawn on every run of such a
    session: an element drawn once can be replaced by a rerun before the browser mounts it."""
    ss = st.session_state
    if ss.get(COOKIE_SET):
        return
    key = ss[WORKSPACE]
    assert workspace.valid_key(key)  # 32 hex digits: nothing in it can break out of the script
    st.html(f"<script>document.cookie = '{COOKIE}={key}; path=/; max-age=31536000; SameSite=Strict';</script>",
            unsafe_allow_javascript=True, width=1)


def workspace_of_session() -> workspace.Workspace:
    """This session's workspace."""
    return workspace.Workspace(st.session_state[WORKSPACE])


def settings() -> Settings:
    return st.session_state[SETTINGS]


def record() -> Inspection | None:
    return st.session_state.get(RECORD)


def remember(rec: Inspection) -> None:
    """Keep the new record; a successful one is also the kernel's last good one."""
    ss = st.session_state
    ss[RECORD] = rec
    if rec.ok:
        ss.setdefault(LAST_GOOD, {})[settings().kernel] = rec


def shown_record() -> Inspection | None:
    """What the views draw: the last record if it succeeded, else this kernel's last good one
    (so a syntax error while editing does not blank the stages)."""
    rec = record()
    if rec is not None and rec.ok:
        return rec
    return st.session_state.get(LAST_GOOD, {}).get(settings().kernel)


def current_kernel() -> workspace.KernelFile:
    """The kernel this session has open. A file of the user's that another tab renamed stays open
    here under its name (the editor still holds its text, and the next save writes it again)."""
    ws = workspace_of_session()
    kernel_id = settings().kernel
    kf = ws.find(kernel_id)
    if kf is None and kernel_id.startswith(workspace.FILE_PREFIX):
        try:
            kf = ws.file_kernel(kernel_id[len(workspace.FILE_PREFIX):])
        except ValueError:
            kf = None
    if kf is None:
        settings().kernel = Settings().kernel
        kf = ws.find(settings().kernel)
        assert kf is not None, "the bundled kernels are missing"
    return kf


def compile_input(kf: workspace.KernelFile) -> tuple[str, dict[str, Any]]:
    """What to compile for this kernel: (file, extra inspect_kernel arguments).

    The text is this tab's (what its editor last loaded or saved), not whatever the file holds
    now: another tab of the workspace may have saved its own text since, and the panes must link
    to the text this editor shows. A file opened from a package compiles as that package's file."""
    ws = workspace_of_session()
    text = st.session_state.get(EDITOR_SEED)
    if text is None:
        text = ws.read_source(kf)
    origin = ws.origin_of(kf)
    return str(origin if origin is not None else ws.source_path(kf)), {"source": text}


def request_compile() -> None:
    st.session_state[WANT_COMPILE] = True


def load_editor() -> None:
    """Put the current kernel's text into a fresh editor (after a kernel change, revert or upload)."""
    ss = st.session_state
    text = workspace_of_session().read_source(current_kernel())
    ss[EDITOR_SEED] = text
    ss[EDITOR_BASE] = workspace.text_digest(text)
    ss.pop(SAVE_NOTICE, None)
    ss[EDITOR_GEN] = ss.get(EDITOR_GEN, 0) + 1


def saved(text: str, result: workspace.SaveResult) -> None:
    """After this session saved `text`: it is what the session has seen; a save over another
    tab's text leaves a notice for the editor to show."""
    ss = st.session_state
    ss[EDITOR_SEED] = text
    ss[EDITOR_BASE] = workspace.text_digest(text)
    if result.conflict:
        ss[SAVE_NOTICE] = {"kernel": settings().kernel,
                           "replaced": result.replaced.number if result.replaced else None}


# Messages about the kernel that was open: another kernel makes them old news.
KERNEL_MESSAGES = (SHARED_NOTICE, OVERRIDES_DROPPED, "open_error", "upload_error", "rename_error", RESTORED, FIX_APPLIED)
UPLOAD_GEN = "upload_gen"  # the uploader's generation: a new one is empty (it is an action, not a state)


def switch_kernel(kernel_id: str) -> None:
    """Open another kernel. What belonged to the last one does not follow it: its call (function,
    autotune config, overrides), its num_warps and num_stages, its record and its messages. The
    tool-wide choices stay: target, Triton release, panes, view, pass recording."""
    s = settings()
    if kernel_id == s.kernel:
        return
    ss = st.session_state
    s.kernel = kernel_id
    for name in KERNEL_MESSAGES:
        ss.pop(name, None)
    s.function, s.autotune = "", None
    s.num_warps, s.num_stages = None, None
    s.consts, s.args, s.basis = {}, {}, {}
    ss[RECORD] = None  # its error box must not stand over the new kernel while that one compiles
    ss[UPLOAD_GEN] = ss.get(UPLOAD_GEN, 0) + 1
    load_editor()
    request_compile()


def set_setting(widget_key: str, attr: str, convert: Callable[[Any], Any] | None = None,
                compile: bool = True) -> None:
    """on_change callback: copy a widget's value into the settings (and ask for a compile)."""
    value = st.session_state[widget_key]
    setattr(settings(), attr, convert(value) if convert else value)
    if compile:
        request_compile()


def sync_url() -> None:
    """Write the settings to the URL (only when they changed, to keep reruns quiet)."""
    wanted = {**settings().to_query(), WS_PARAM: st.session_state[WORKSPACE]}
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
