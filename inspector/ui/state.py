"""One browser session's state: the Settings (from the URL on the first run), the last
inspection, the compile request flag, the editor's seed text; and the URL written back.

`Settings` in `st.session_state["settings"]` is the truth. Widgets write into it through their
on_change callbacks (`set_setting`), which run before the script, so a rerun always sees the
latest choices; every run ends by writing them back to the URL (`sync_url`).
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from inspector.record import Inspection
from inspector.ui import workspace
from inspector.ui.settings import Settings

SETTINGS = "settings"
RECORD = "record"
WANT_COMPILE = "want_compile"
EDITOR_GEN = "editor_gen"
EDITOR_SEED = "editor_seed"
FOCUS = "focus"  # {"pane": "source", "line": n}: a line the stage panes should select once
PIN = "pin"  # an Inspection kept as the diff's "A"
LAST_GOOD = "last_good"  # {kernel id: the last successful Inspection}, shown while an edit fails


def init(default_target: Callable[[], str]) -> None:
    """First run of a session: settings from the URL, the kernel's text from the workspace.

    `default_target()` may have to ask the worker for the native GPU (the first session of a
    server waits for the worker to start), hence the spinner."""
    ss = st.session_state
    if SETTINGS in ss:
        return
    with st.spinner("Starting the compiler worker…"):
        target = default_target()
    settings = Settings.from_query(st.query_params.to_dict(), default_target=target)
    if workspace.find(settings.kernel) is None:
        settings.kernel = Settings().kernel
    ss[SETTINGS] = settings
    ss[RECORD] = None
    ss[WANT_COMPILE] = True  # a link, or a reload, reopens the same view compiled (a repeat is a cache hit)
    ss[EDITOR_GEN] = 0
    load_editor()


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
    kf = workspace.find(settings().kernel)
    if kf is None:  # an upload deleted on disk since
        settings().kernel = Settings().kernel
        kf = workspace.find(settings().kernel)
        assert kf is not None, "the bundled kernels are missing"
    return kf


def request_compile() -> None:
    st.session_state[WANT_COMPILE] = True


def load_editor() -> None:
    """Put the current kernel's text into a fresh editor (after a kernel change, revert or upload)."""
    ss = st.session_state
    ss[EDITOR_SEED] = workspace.read_source(current_kernel())
    ss[EDITOR_GEN] = ss.get(EDITOR_GEN, 0) + 1


def switch_kernel(kernel_id: str) -> None:
    """Open another kernel: its own call and options start from its example call."""
    s = settings()
    if kernel_id == s.kernel:
        return
    s.kernel = kernel_id
    s.function, s.autotune = "", None
    s.consts, s.args = {}, {}
    load_editor()
    request_compile()


def set_setting(widget_key: str, attr: str, convert: Callable[[Any], Any] | None = None,
                compile: bool = True) -> None:
    """on_change callback: copy a widget's value into the settings (and ask for a compile)."""
    value = st.session_state[widget_key]
    setattr(settings(), attr, convert(value) if convert else value)
    if compile:
        request_compile()


def set_override(widget_key: str, kind: str, name: str) -> None:
    """on_change callback of a call override: kind is "consts" or "args"; empty clears it."""
    value = str(st.session_state[widget_key]).strip()
    table: dict[str, str] = getattr(settings(), kind)
    if value:
        table[name] = value
    else:
        table.pop(name, None)
    request_compile()


def sync_url() -> None:
    """Write the settings to the URL (only when they changed, to keep reruns quiet)."""
    wanted = settings().to_query()
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)
